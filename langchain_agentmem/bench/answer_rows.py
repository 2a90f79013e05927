"""The rows of the answers table: each a way of telling a chat model what it knows.

Every row asks the same model the same question under the same system prompt
(:data:`ANSWER_SYSTEM`); what differs is what is added to it:

- ``no-memory``: nothing;
- a memory row (``agentmem-hybrid``): the shipped ``AgentMemoryMiddleware`` recalls and
  writes its block, in a ``create_agent`` agent, exactly as an application runs it;
- a row of given memories (``seed-faiss-l2``, a policy under a budget): the same
  middleware writes the block, of the memories the row picks instead of its search;
- ``full-context``: the whole conversation, dated, oldest first, cut from the oldest end to
  the model's context.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import faiss
import numpy as np
from langchain.agents import create_agent
from langchain.agents.middleware.types import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage

from langchain_agentmem.bench.answer_cache import LATENCY_KEY
from langchain_agentmem.bench.runner import turn_adds
from langchain_agentmem.embedding.embeddings import embed_texts, normalize
from langchain_agentmem.integrations.middleware import AgentMemoryMiddleware, AgentMemoryState
from langchain_agentmem.integrations.prompt import SHOW_TODAY, today_line
from langchain_agentmem.locomo import Conversation, Question, Turn, turn_text
from langchain_agentmem.memory import AgentMemory

ANSWER_SYSTEM = (
    "You are a helpful assistant who remembers past conversations. Answer the question in "
    "a short phrase (a name, a date, a place or a few words), using the exact words you "
    "remember where you can. If you cannot know, give your best guess."
)
"""The system prompt of every row: the application's own, before what a memory adds."""

ANSWER_TOKENS = 64
"""Most tokens of an answer (LoCoMo's gold answers are a few words)."""


@dataclass
class Asked:
    """One answer and what it took."""

    answer: str
    prompt_tokens: int
    latency_s: float | None
    shown: list[str] = field(default_factory=list)
    """The dia ids of the turns the model was shown (in the order shown)."""


@dataclass
class ConversationRun:
    """What every row may use of one conversation: its turns in a memory, and more."""

    conv: Conversation
    memory: AgentMemory
    namespace: str
    dia_ids: dict[str, str] = field(default_factory=dict)
    """Record id -> the dia id of the turn it holds."""
    today: datetime | None = None
    """The day the questions are asked, where a row tells it: LongMemEval's question date;
    a LoCoMo conversation's last session (its questions come after it)."""

    @classmethod
    def of(cls, conv: Conversation, memory: AgentMemory, namespace: str) -> ConversationRun:
        """The run of ``conv``, stored in ``memory`` under ``namespace`` (each record's
        ``dia_id`` names its turn), asked on the day of its last session."""
        records = memory.records(namespace)
        ids = {r.id: str(r.metadata.get("dia_id", "")) for r in records}
        dates = [t.date for t in conv.turns if t.date is not None]
        return cls(conv, memory, namespace, ids, today=max(dates, default=None))

    def clock(self) -> Callable[[], datetime] | None:
        """A clock stopped at :attr:`today` (``None``: the memory's own)."""
        today = self.today
        return None if today is None else lambda: today

    def __post_init__(self) -> None:
        self.record_ids = {d: r for r, d in reversed(list(self.dia_ids.items()))}
        """Dia id -> the (first) record that holds that turn."""

    def record_id(self, dia_id: str) -> str:
        """The id of the record that holds turn ``dia_id`` (as ``agentmem bench locomo``
        stores it, where no record does)."""
        return self.record_ids.get(dia_id, f"{self.conv.sample_id}:{dia_id}")


def _prompt_tokens(message: AIMessage, sent: str) -> int:
    usage = message.usage_metadata
    if usage and usage.get("input_tokens"):
        return int(usage["input_tokens"])
    return approx_tokens(sent)  # a server that does not count


CHARS_PER_TOKEN = 3.5
"""Characters of English prose a token holds at most, about (to size a prompt before it
is sent; the server's own count is reported after)."""


def approx_tokens(text: str) -> int:
    """About how many tokens ``text`` takes (:data:`CHARS_PER_TOKEN`, rounded up)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


class _Recorder(AgentMiddleware[AgentMemoryState, Any]):
    """Innermost middleware: notes what the model call was sent (the memories' ids, the
    system prompt's length)."""

    state_schema = AgentMemoryState

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.sent = ""

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        ids = request.state.get("agentmem_memories")
        self.ids = [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []
        system = request.system_message
        self.sent = (str(system.text) if system is not None else "") + "".join(
            str(m.text) for m in request.messages
        )
        return handler(request)


class _GivenMemories(AgentMemoryMiddleware):
    """The shipped middleware showing the memories a row picked (``context["shown"]``)
    instead of searching for them; the block is built by the same code."""

    def before_agent(self, state: AgentMemoryState, runtime: Any) -> dict[str, Any]:
        shown = (runtime.context or {}).get("shown", [])
        return {"agentmem_memories": list(shown), "agentmem_remembered": []}


class AnswerRow:
    """A row: how the model is told what it knows (subclasses say how)."""

    name = "row"
    system = ANSWER_SYSTEM
    """The application's system prompt, before what a memory adds (set it on an instance
    for another benchmark's questions)."""

    def start(self, run: ConversationRun, model: BaseChatModel) -> None:
        """Get ready for ``run``'s questions (called once per conversation)."""

    def ask(self, run: ConversationRun, question: Question) -> Asked:
        """The model's answer to ``question``."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """What the row did beyond its scores (JSON-ready), e.g. what was cut."""
        return {}


def _answer(
    agent: Any, recorder: _Recorder, run: ConversationRun, question: str, **context: Any
) -> Asked:
    result = agent.invoke(
        {"messages": [HumanMessage(question)]},
        {"configurable": {"user_id": run.namespace}},
        context=context or None,
    )
    message = result["messages"][-1]
    assert isinstance(message, AIMessage)  # the agent has no tools: its last word is the model's
    latency = message.response_metadata.get(LATENCY_KEY)
    return Asked(
        answer=str(message.text).strip(),
        prompt_tokens=_prompt_tokens(message, recorder.sent),
        latency_s=float(latency) if isinstance(latency, int | float) else None,
        shown=[run.dia_ids.get(i, i) for i in recorder.ids],
    )


class NoMemory(AnswerRow):
    """The question alone, under the same system prompt."""

    name = "no-memory"

    def start(self, run: ConversationRun, model: BaseChatModel) -> None:
        self.recorder = _Recorder()
        self.agent = create_agent(model, system_prompt=self.system, middleware=[self.recorder])

    def ask(self, run: ConversationRun, question: Question) -> Asked:
        return _answer(self.agent, self.recorder, run, question.question)


class MemoryRow(AnswerRow):
    """The shipped middleware on the run's memory (``middleware`` holds any non-default
    arguments of ``AgentMemoryMiddleware``: ``k``, ``header``, ``formatter`` ...)."""

    def __init__(self, name: str = "agentmem-hybrid", **middleware: Any) -> None:
        self.name = name
        self.middleware = middleware

    def _memory(self, run: ConversationRun) -> AgentMemory:
        return run.memory

    def start(self, run: ConversationRun, model: BaseChatModel) -> None:
        self.recorder = _Recorder()
        memory = AgentMemoryMiddleware(
            self._memory(run), remember=False, clock=run.clock(), **self.middleware
        )
        self.agent = create_agent(
            model, system_prompt=self.system, middleware=[memory, self.recorder]
        )

    def ask(self, run: ConversationRun, question: Question) -> Asked:
        return _answer(self.agent, self.recorder, run, question.question)


class AnnotatedRow(MemoryRow):
    """The shipped middleware on ``memory``, a memory with a chat model
    (``AgentMemory(model=...)``): each conversation is stored there too, and every
    statement annotated (or given up on) before its questions are asked."""

    def __init__(
        self,
        memory: AgentMemory,
        name: str = "agentmem-hybrid+annotate",
        *,
        timeout: float | None = None,
        **middleware: Any,
    ) -> None:
        super().__init__(name, **middleware)
        self.memory = memory
        self.timeout = timeout
        self.stored: set[str] = set()

    def store(self, conv: Conversation, namespace: str) -> AgentMemory:
        """The memory, holding ``conv`` under ``namespace`` (stored once, each statement
        annotated or given up on before this returns)."""
        if namespace not in self.stored:
            for add in turn_adds(conv, namespace):
                self.memory.add(**add)
            self.memory.wait_annotated(self.timeout)
            self.stored.add(namespace)
        return self.memory

    def _memory(self, run: ConversationRun) -> AgentMemory:
        return self.store(run.conv, run.namespace)


Picker = Callable[[ConversationRun, int], list[str]]
"""The dia ids a row shows for a conversation's question (its index), best first."""


class GivenRow(AnswerRow):
    """The block of the memories ``pick`` chooses, written by the shipped middleware."""

    def __init__(self, name: str, pick: Picker, **middleware: Any) -> None:
        self.name = name
        self.pick = pick
        self.middleware = middleware

    def start(self, run: ConversationRun, model: BaseChatModel) -> None:
        self.recorder = _Recorder()
        given = _GivenMemories(run.memory, remember=False, clock=run.clock(), **self.middleware)
        self.agent = create_agent(
            model, system_prompt=self.system, middleware=[given, self.recorder]
        )
        self.index = {q: i for i, q in enumerate(run.conv.questions)}

    def ask(self, run: ConversationRun, question: Question) -> Asked:
        ids = [run.record_id(d) for d in self.pick(run, self.index[question])]
        return _answer(self.agent, self.recorder, run, question.question, shown=ids)


SEED_K = 10
"""Memories the seed's plain RAG shows."""


def seed_faiss_l2(k: int = SEED_K) -> Picker:
    """The seed's RAG: exact faiss L2 over the run's record vectors (the bundled MiniLM),
    the question embedded as a query, the ``k`` nearest turns."""
    built: dict[str, tuple[faiss.IndexFlatL2, list[str]]] = {}

    def pick(run: ConversationRun, qi: int) -> list[str]:
        if run.namespace not in built:
            records = [r for r in run.memory.records(run.namespace) if r.embedding is not None]
            rows = [np.asarray(r.embedding, dtype=np.float32) for r in records]
            vectors = normalize(np.stack(rows))
            index = faiss.IndexFlatL2(vectors.shape[1])
            index.add(vectors)
            built.clear()  # one conversation at a time
            built[run.namespace] = (index, [run.dia_ids.get(r.id, r.id) for r in records])
        index, dia_ids = built[run.namespace]
        question = run.conv.questions[qi].question
        vector = np.asarray(embed_texts(run.memory.embeddings, [question]), dtype=np.float32)
        _, found = index.search(vector.reshape(1, -1), k)
        return [dia_ids[i] for i in found[0] if i >= 0]

    return pick


def memory_rows() -> list[AnswerRow]:
    """The rows of every bench that read the run's memory: the seed's plain RAG, the
    defaults, and the defaults with the clock's other setting (what telling today changes)."""
    other = "agentmem-hybrid" + ("-no-today" if SHOW_TODAY else "+today")
    return [
        GivenRow("seed-faiss-l2", seed_faiss_l2(SEED_K), show_today=SHOW_TODAY),
        MemoryRow(),
        MemoryRow(other, show_today=not SHOW_TODAY),
    ]


def when(turn: Turn) -> str:
    """A turn's session date as people write it: ``8 May 2023, 1:56 pm``."""
    if turn.date is None:
        return "undated"
    clock = turn.date.strftime("%I:%M %p").lstrip("0").lower()
    return f"{turn.date.day} {turn.date:%B %Y}, {clock}"


def transcript(turns: Sequence[Turn]) -> str:
    """``turns`` as a dated transcript, oldest first: a line per session, then its turns."""
    lines: list[str] = []
    session = None
    for turn in turns:
        if turn.session != session:
            session = turn.session
            lines.append(f"\nSession {turn.session}, {when(turn)}:")
        lines.append(turn_text(turn))
    return "<conversation>" + "\n".join(lines) + "\n</conversation>"


TEMPLATE_TOKENS = 64
"""Tokens a chat template adds around the messages, at most (room kept for them)."""


class FullContext(AnswerRow):
    """The whole conversation in the system prompt, the question last; the oldest turns
    cut until it fits ``context_tokens`` (with room for the question and the answer)."""

    name = "full-context"

    def __init__(self, context_tokens: int | None, *, show_today: bool = False) -> None:
        self.context_tokens = context_tokens
        self.show_today = show_today
        self.cut: dict[str, dict[str, int]] = {}

    def _fit(self, turns: Sequence[Turn], questions: Sequence[Question]) -> int:
        """How many of the oldest turns to leave out so the prompt fits."""
        if self.context_tokens is None:
            return 0
        longest = max((approx_tokens(q.question) for q in questions), default=0)
        room = self.context_tokens - approx_tokens(self.system) - longest - ANSWER_TOKENS
        room -= TEMPLATE_TOKENS
        low, high = 0, len(turns)  # the fewest turns cut that fit lies in [low, high]
        while low < high:
            middle = (low + high) // 2
            if approx_tokens(transcript(turns[middle:])) <= room:
                high = middle
            else:
                low = middle + 1
        return low

    def start(self, run: ConversationRun, model: BaseChatModel) -> None:
        turns = run.conv.turns
        start = self._fit(turns, run.conv.questions)
        self.kept = {t.dia_id for t in turns[start:]}
        self.cut[run.conv.sample_id] = {"turns": len(turns), "cut": start}
        self.recorder = _Recorder()
        today = f"\n\n{today_line(run.today)}" if self.show_today and run.today else ""
        system = f"{self.system}{today}\n\n{transcript(turns[start:])}"
        self.agent = create_agent(model, system_prompt=system, middleware=[self.recorder])

    def ask(self, run: ConversationRun, question: Question) -> Asked:
        asked = _answer(self.agent, self.recorder, run, question.question)
        asked.shown = [t.dia_id for t in run.conv.turns if t.dia_id in self.kept]
        return asked

    def describe(self) -> dict[str, Any]:
        turns = sum(c["turns"] for c in self.cut.values())
        cut = sum(c["cut"] for c in self.cut.values())
        return {
            "context_tokens": self.context_tokens,
            "turns": turns,
            "turns_cut": cut,
            "cut_by_conversation": {k: v["cut"] for k, v in self.cut.items() if v["cut"]},
        }


__all__ = [
    "ANSWER_SYSTEM",
    "AnnotatedRow",
    "AnswerRow",
    "Asked",
    "ConversationRun",
    "FullContext",
    "GivenRow",
    "MemoryRow",
    "NoMemory",
    "memory_rows",
    "seed_faiss_l2",
    "transcript",
]
