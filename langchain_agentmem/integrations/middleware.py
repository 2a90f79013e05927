"""``AgentMemoryMiddleware``: long-term memory for ``langchain.agents.create_agent``.

Before the agent runs, the memories of the user relevant to the newest human message are
recalled (one search per turn; what the conversation already holds is not recalled
again); every model call of the turn sees them appended to its system prompt as one
fenced block of dated, attributed memories (see
:mod:`langchain_agentmem.integrations.prompt`); they are not added to the conversation,
and the agent's state keeps only their record ids. After the agent, the user's words of
the turn (and the agent's answer, when asked for) are offered to long-term memory, where
the memory's policy decides ADD / UPDATE / DELETE / NOOP and logs why.

The user comes from ``config["configurable"]["user_id"]`` or from the run context
(``context={"user_id": ...}`` or a context object with that attribute); the key name is
configurable. A run without a user id raises ``InvalidInputError``: memory is never
written to a namespace nobody named.

Documented no-ops: a newest human message without text (only images, say) recalls
nothing and offers nothing; messages without text are never offered. A message the
memory cannot keep (longer than ``memory.limits.max_text_chars``, say), the user's or the
agent's, is not offered: the turn goes on with the message in it, and one warning is logged
(logger ``langchain_agentmem.integrations.offers``; the rule of every adapter). Adding the
same middleware class twice to one agent is refused by ``create_agent`` ("Please remove
duplicate middleware instances"); one instance serves every user and thread.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Annotated, Any

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
    PrivateStateAttr,
)
from langchain_core.messages import SystemMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime
from typing_extensions import NotRequired

from langchain_agentmem.integrations.offers import offered
from langchain_agentmem.integrations.prompt import (
    DEFAULT_HEADER,
    RECALL_K,
    SHOW_TODAY,
    MemoryFormatter,
    check_formatter,
    render,
)
from langchain_agentmem.integrations.recall import arecall, recall, shown_texts
from langchain_agentmem.integrations.runs import check_memory, run_thread, user_namespace
from langchain_agentmem.integrations.tools import memory_tools
from langchain_agentmem.integrations.turns import (
    DEFAULT_REMEMBER_ROLES,
    TurnItem,
    check_positive_int,
    check_roles,
    keeps_replies,
    latest_query,
    trim_start,
    turn_items,
    turn_start,
)
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.ranking import check_mode
from langchain_agentmem.types import Clock, MemoryRecord
from langchain_agentmem.validation import (
    check_clock,
    check_flag,
    check_k,
    check_min_score,
    check_name,
    read_clock,
)


class AgentMemoryState(AgentState[Any]):
    """The agent state with what the middleware keeps between hooks (private)."""

    agentmem_memories: NotRequired[Annotated[list[str], PrivateStateAttr]]
    """Ids of the memories recalled for the current turn (never their text, so a
    checkpoint holds no copy of a memory that is later forgotten)."""
    agentmem_remembered: NotRequired[Annotated[list[str], PrivateStateAttr]]
    """Ids of the messages of the latest turn already offered to long-term memory."""


def with_memories(system: SystemMessage | None, text: str) -> SystemMessage:
    """``system`` with ``text`` appended (a new system message when there is none)."""
    if system is None:
        return SystemMessage(content=text)
    if isinstance(system.content, str):
        merged = f"{system.content}\n\n{text}" if system.content else text
        return SystemMessage(content=merged)
    blocks = [*system.content, {"type": "text", "text": text}]
    return SystemMessage(content=blocks)


class AgentMemoryMiddleware(AgentMiddleware[AgentMemoryState, Any]):
    """Recall a user's long-term memories into an agent's prompt; remember each turn.

    Setup:
        ``pip install langchain-agentmem`` (``langchain`` comes with it).

    Instantiate:
        .. code-block:: python

            from langchain_agentmem import AgentMemory, AgentMemoryMiddleware

            memory = AgentMemory("sqlite:///memory.db")
            middleware = AgentMemoryMiddleware(memory, k=4, tools=True)

    Usage:
        .. code-block:: python

            from langchain.agents import create_agent
            from langgraph.checkpoint.memory import InMemorySaver

            agent = create_agent(llm, tools=[], middleware=[middleware],
                                 checkpointer=InMemorySaver())
            agent.invoke({"messages": [("user", "I am vegetarian.")]},
                         {"configurable": {"user_id": "alice", "thread_id": "t1"}})
            # later, another thread: the prompt holds "I am vegetarian."
            agent.invoke({"messages": [("user", "Suggest a dinner.")]},
                         {"configurable": {"user_id": "alice", "thread_id": "t2"}})

    Args:
        memory: The store.
        k: Most memories recalled per turn.
        min_score: Drop recalled memories scoring below this.
        mode: Search mode: ``"hybrid"``, ``"dense"`` or ``"lexical"``.
        user_key: The ``configurable`` (or context) key naming the user.
        header: The line written inside the memories block before the memories.
        remember: Offer each turn to long-term memory after the agent runs.
        remember_roles: Message types offered (default: the user's words,
            ``("human",)``; add ``"ai"`` to keep answers, stored as the assistant's).
        formatter: Replaces the default :func:`format_memories` (a function of a list
            of ``MemoryRecord`` returning a str), in the prompt and in what
            ``search_memory`` returns (show each ``record.id`` there for ``forget_memory``).
        tools: Also give the agent ``search_memory`` / ``save_memory`` /
            ``forget_memory`` tools, to manage memory itself.
        history_tokens: Most tokens of the conversation each model call is sent (counted
            approximately, about four characters a token): the newest whole turns that fit,
            and always the current turn. The thread's state keeps every message; ``None``
            (the default): every message is sent. Set it below the model's context size,
            less the system prompt, the memories and the reply, so a long thread (or one
            runaway reply) never overflows the model's context.
        show_today: Tell the model today's date in the block of memories (by ``clock``), so
            "how many days ago" and "last month" can be answered from the memories' dates.
        clock: The clock that says what day it is (default: the memory's ``clock``, the
            wall clock unless the memory was given another).
    """

    state_schema = AgentMemoryState

    def __init__(
        self,
        memory: AgentMemory,
        *,
        k: int = RECALL_K,
        min_score: float | None = None,
        mode: str = "hybrid",
        user_key: str = "user_id",
        header: str | None = DEFAULT_HEADER,
        remember: bool = True,
        remember_roles: Sequence[str] = DEFAULT_REMEMBER_ROLES,
        tools: bool = False,
        formatter: MemoryFormatter | None = None,
        history_tokens: int | None = None,
        show_today: bool = SHOW_TODAY,
        clock: Clock | None = None,
    ) -> None:
        super().__init__()
        self.memory = check_memory(memory)
        self.k = check_k(k)
        self.min_score = check_min_score(min_score)
        self.mode = check_mode(mode)
        self.user_key = check_name(user_key, what="user_key")
        self.header = header
        self.remember = bool(remember)
        self.remember_roles = check_roles(remember_roles)
        self.formatter = check_formatter(formatter)
        self.history_tokens = (
            None
            if history_tokens is None
            else check_positive_int(
                history_tokens, what="history_tokens", meaning="tokens of history sent"
            )
        )
        self.show_today = check_flag(show_today, what="show_today")
        self.clock = None if clock is None else check_clock(clock)
        self.tools = (
            memory_tools(self.memory, user_key=self.user_key, k=self.k, formatter=self.formatter)
            if tools
            else []
        )

    # -- who and where -----------------------------------------------------------------------
    def _namespace(self, runtime: Runtime[Any]) -> tuple[str, str | None]:
        try:
            config = get_config()
        except RuntimeError:  # called outside a graph run
            config = {}
        namespace = user_namespace(config, self.user_key, context=runtime.context)
        return namespace, run_thread(config)

    # -- recall ----------------------------------------------------------------------------
    def _said(self, state: AgentMemoryState) -> list[TurnItem]:
        """The user's words that start the turn, offered before any middleware (a
        summarizer, say) can take them out of the state."""
        if not self.remember:
            return []
        items = self._items(state["messages"], state.get("agentmem_remembered") or ())
        return [item for item in items if item.message.type == "human"]

    def _started(
        self, state: AgentMemoryState, found: list[str], said: list[TurnItem]
    ) -> dict[str, Any]:
        done = [*(state.get("agentmem_remembered") or ())]
        done += [item.message.id for item in said if item.message.id is not None]
        return {"agentmem_memories": found, "agentmem_remembered": done}

    def _recall_args(self, state: AgentMemoryState, namespace: str) -> dict[str, Any]:
        return {
            "namespace": namespace,
            "k": self.k,
            "mode": self.mode,
            "min_score": self.min_score,
            "shown": shown_texts(state["messages"]),
        }

    def _offer_args(
        self, items: list[TurnItem], namespace: str, thread: str | None
    ) -> dict[str, Any] | None:
        """``add_many``'s arguments for what of ``items`` the memory keeps (``None``: none)."""
        texts, metadatas = offered(
            self.memory.limits,
            [(item.message.type, item.text, item.metadata("agent")) for item in items],
        )
        if not texts:
            return None
        return {"texts": texts, "namespace": namespace, "thread": thread, "metadatas": metadatas}

    def before_agent(self, state: AgentMemoryState, runtime: Runtime[Any]) -> dict[str, Any]:
        """Recall the memories relevant to the newest human message (their ids), then offer
        that message to long-term memory."""
        namespace, thread = self._namespace(runtime)
        query = latest_query(state["messages"])
        found = (
            []
            if query is None
            else recall(self.memory, query, **self._recall_args(state, namespace))
        )
        said = self._said(state)
        offer = self._offer_args(said, namespace, thread)
        if offer:
            self.memory.add_many(**offer)
        return self._started(state, [r.id for r in found], said)

    async def abefore_agent(self, state: AgentMemoryState, runtime: Runtime[Any]) -> dict[str, Any]:
        """Async :meth:`before_agent`."""
        namespace, thread = self._namespace(runtime)
        query = latest_query(state["messages"])
        found = (
            []
            if query is None
            else await arecall(self.memory, query, **self._recall_args(state, namespace))
        )
        said = self._said(state)
        offer = self._offer_args(said, namespace, thread)
        if offer:
            await self.memory.aadd_many(**offer)
        return self._started(state, [r.id for r in found], said)

    @staticmethod
    def _ids(request: ModelRequest[Any]) -> list[str]:
        ids = request.state.get("agentmem_memories")
        return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []

    def _records(self, request: ModelRequest[Any]) -> list[MemoryRecord]:
        ids = self._ids(request)
        if not ids:
            return []
        namespace, _ = self._namespace(request.runtime)
        # One read; a record forgotten since the turn began is left out, so not told.
        return self.memory.get_many(ids, namespace=namespace)

    async def _arecords(self, request: ModelRequest[Any]) -> list[MemoryRecord]:
        ids = self._ids(request)
        if not ids:
            return []
        namespace, _ = self._namespace(request.runtime)
        return await self.memory.aget_many(ids, namespace=namespace)

    def _today(self) -> datetime | None:
        """The day the block tells (``None``: ``show_today`` is off)."""
        if not self.show_today:
            return None
        return read_clock(self.memory.clock if self.clock is None else self.clock)

    def _request(
        self, request: ModelRequest[Any], records: list[MemoryRecord]
    ) -> ModelRequest[Any]:
        changes: dict[str, Any] = {}
        if self.history_tokens is not None:
            cut = trim_start(request.messages, max_tokens=self.history_tokens)
            if cut:
                changes["messages"] = request.messages[cut:]
        limit = self.memory.limits.max_recall_chars
        today = self._today() if records else None
        text = (
            render(records, self.formatter, header=self.header, max_chars=limit, today=today)
            if records
            else ""
        )
        if text:
            changes["system_message"] = with_memories(request.system_message, text)
        return request.override(**changes) if changes else request

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        """Append the recalled memories to the system prompt of each model call."""
        return handler(self._request(request, self._records(request)))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        """Async :meth:`wrap_model_call`."""
        return await handler(self._request(request, await self._arecords(request)))

    # -- remember --------------------------------------------------------------------------
    def _items(self, messages: list[Any], skip: Sequence[str]) -> list[TurnItem]:
        return turn_items(messages, self.remember_roles, skip, replies=keeps_replies(self.memory))

    def _turn(self, state: AgentMemoryState) -> tuple[list[TurnItem], dict[str, Any]]:
        messages = state["messages"]
        items = self._items(messages, state.get("agentmem_remembered") or ())
        start = turn_start(messages)
        done = [] if start is None else [m.id for m in messages[start:] if m.id is not None]
        return items, {"agentmem_remembered": done}

    def after_agent(self, state: AgentMemoryState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Offer the turn to long-term memory (the policy decides what is kept)."""
        if not self.remember:
            return None
        namespace, thread = self._namespace(runtime)
        items, update = self._turn(state)
        offer = self._offer_args(items, namespace, thread)
        if offer:
            self.memory.add_many(**offer)
        return update

    async def aafter_agent(
        self, state: AgentMemoryState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async :meth:`after_agent`."""
        if not self.remember:
            return None
        namespace, thread = self._namespace(runtime)
        items, update = self._turn(state)
        offer = self._offer_args(items, namespace, thread)
        if offer:
            await self.memory.aadd_many(**offer)
        return update

    def __repr__(self) -> str:
        return (
            f"AgentMemoryMiddleware({self.memory!r}, k={self.k}, user_key={self.user_key!r}, "
            f"remember={self.remember}, tools={bool(self.tools)})"
        )
