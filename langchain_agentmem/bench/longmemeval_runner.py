"""The LongMemEval retrieval bench: each question's haystack stored as an application stores
it, then the question asked of each search mode and of the baselines.

A haystack (:func:`~langchain_agentmem.bench.longmemeval.haystacks`) goes to its own
namespace through :class:`~langchain_agentmem.integrations.chat_history.
BufferChatMessageHistory` with ``remember=True``: each session a thread, each exchange (a
user's message and the reply to it) appended as ``RunnableWithMessageHistory`` appends it,
the memory's clock at the session's date; the question is then asked with the clock at the
question's date. What is kept (:data:`KEEPS`) is the adapter's ``remember_roles``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from tqdm import tqdm

from langchain_agentmem.bench.longmemeval import ABSTENTION, QUESTION_TYPES, Haystack, Session
from langchain_agentmem.bench.metrics import hit_at_k
from langchain_agentmem.bench.runner import (
    Asked,
    BareIndexes,
    Scores,
    Timings,
    _bare_encoder,
    timing_summary,
)
from langchain_agentmem.integrations.chat_history import BufferChatMessageHistory
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.ranking import SEARCH_MODES
from langchain_agentmem.types import MemoryRecord, wall_clock

KEEPS: dict[str, tuple[str, ...]] = {
    "user": ("human",),
    "user+assistant": ("human", "ai"),
}
"""What of a conversation long-term memory is offered, by name: the adapters'
``remember_roles``."""

GROUPS = (*QUESTION_TYPES, ABSTENTION)
"""The groups figures are split by: the six types, then the abstention questions."""


class ReplayClock:
    """A memory's clock set by hand: the time a replayed conversation is at."""

    def __init__(self, at: datetime | None = None) -> None:
        self.at = wall_clock() if at is None else at

    def __call__(self) -> datetime:
        return self.at


def exchanges(session: Session) -> Iterator[list[tuple[str, BaseMessage]]]:
    """``session``'s turns as an application appends them: each user message with the
    replies that follow it (a reply before any user message alone), each message with the id
    of its turn."""
    group: list[tuple[str, BaseMessage]] = []
    for turn in session.turns:
        if turn.role == "user" and group:
            yield group
            group = []
        message = HumanMessage(turn.text) if turn.role == "user" else AIMessage(turn.text)
        group.append((turn.id, message))
    if group:
        yield group


def store_haystack(
    memory: AgentMemory,
    clock: ReplayClock,
    haystack: Haystack,
    namespace: str,
    roles: Sequence[str],
    timings: Timings | None = None,
) -> dict[str, list[str]]:
    """Store ``haystack`` in ``namespace`` through the chat history adapter (each session a
    thread, at its date; ``roles`` remembered).

    Returns:
        Each stored record's id -> the ids of the turns it holds (its thread's turns with its
        text).
    """
    for session in haystack.sessions:
        clock.at = session.date
        history = BufferChatMessageHistory(
            memory, namespace=namespace, thread=session.key, remember=True, remember_roles=roles
        )
        for group in exchanges(session):
            t0 = time.perf_counter()
            history.add_messages([message for _, message in group])
            if timings is not None:
                timings.add.append(time.perf_counter() - t0)
                timings.turns += len(group)
    by_text: dict[tuple[str, str], list[str]] = {}
    for session in haystack.sessions:
        for turn in session.turns:
            by_text.setdefault((session.key, turn.text.strip()), []).append(turn.id)
    return {
        r.id: by_text.get((r.thread or "", r.text.strip()), []) for r in memory.records(namespace)
    }


def session_of(turn: str) -> str:
    """The session key of a turn id (``<question>/<session>:<turn>``)."""
    return turn.rsplit(":", 1)[0]


@dataclass
class _Extra:
    """The measures beside evidence recall: session hit@k, and on knowledge updates
    whether the latest statement ranks above the earlier ones."""

    ks: Sequence[int]
    sessions: dict[str, Scores] = field(default_factory=dict)
    updates: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, method: str, haystack: Haystack, ranked: list[str]) -> None:
        question = haystack.question
        scores = self.sessions.setdefault(method, Scores(self.ks, GROUPS, key="types"))
        answer = set(question.answer_sessions)
        if answer:
            sessions = [session_of(t) for t in ranked]
            for cut in self.ks:
                hit = hit_at_k(sessions, list(answer), cut)
                scores.add_measure(question.group, f"session@{cut}", hit)
            scores.count(question.group)
        latest, earlier = update_evidence(haystack)
        if latest and earlier:
            where = {turn: i for i, turn in reversed(list(enumerate(ranked)))}
            first_latest = min((where.get(t, len(ranked)) for t in latest), default=len(ranked))
            first_earlier = min((where.get(t, len(ranked)) for t in earlier), default=len(ranked))
            tally = self.updates.setdefault(
                method, {"questions": 0, "latest_first": 0, "earlier_first": 0, "neither": 0}
            )
            tally["questions"] += 1
            if first_latest == first_earlier == len(ranked):
                tally["neither"] += 1
            elif first_latest < first_earlier:
                tally["latest_first"] += 1
            else:
                tally["earlier_first"] += 1

    def with_sessions(self, method: str, evidence: Scores) -> dict[str, Any]:
        """``method``'s evidence figures with its session@k beside them, overall and per type."""
        result = evidence.result()
        sessions = self.sessions[method].result() if method in self.sessions else {}
        result.update({k: v for k, v in sessions.items() if k.startswith("session@")})
        for group, figures in sessions.get("types", {}).items():
            result["types"][group].update(
                {k: v for k, v in figures.items() if k.startswith("session@")}
            )
        return result


def update_evidence(haystack: Haystack) -> tuple[list[str], list[str]]:
    """A knowledge-update question's evidence turns in its latest session, and in the earlier
    ones (both empty for another type, or evidence all in one session)."""
    question = haystack.question
    if question.type != "knowledge-update" or question.abstention:
        return [], []
    dated = {s.key: s.date for s in question.sessions}
    marked = [t for t in question.evidence if session_of(t) in dated]
    if len({dated[session_of(t)] for t in marked}) < 2:
        return [], []
    last = max(dated[session_of(t)] for t in marked)
    latest = [t for t in marked if dated[session_of(t)] == last]
    return latest, [t for t in marked if dated[session_of(t)] != last]


def run_longmemeval(
    stacks: Sequence[Haystack],
    *,
    memory: AgentMemory,
    clock: ReplayClock,
    keep: str = "user",
    ks: Sequence[int] = (1, 5, 10, 20),
    modes: Sequence[str] = SEARCH_MODES,
    progress: bool = True,
    after: Callable[[AgentMemory, Haystack, str, dict[str, list[str]]], object] | None = None,
) -> dict[str, Any]:
    """Store each haystack (what ``keep`` names of it, :data:`KEEPS`), then ask its question.

    ``memory`` holds every haystack, each in its namespace (``lme-<keep>-<question id>``);
    its clock must be ``clock``. Questions without evidence turns (most abstention ones)
    are left out of recall. ``after`` is called with the memory, the haystack, its
    namespace and the turns each record holds once its question is scored (the answers
    bench).

    Returns:
        A JSON-ready dict: ``retrieval`` (method -> evidence recall@k / hit@k and session@k,
        overall and per type), ``updates`` (knowledge updates: the latest statement first),
        ``timing`` and what was stored.
    """
    ks = sorted(set(ks))
    depth = max(ks)
    roles = KEEPS[keep]
    methods = [f"agentmem-{mode}" for mode in modes] + ["seed-faiss-l2", "bm25-plain"]
    scores = {method: Scores(ks, GROUPS, key="types") for method in methods}
    extra = _Extra(ks)
    timings = Timings(search={mode: [] for mode in modes})
    encode = _bare_encoder(memory)
    stored = {"records": 0, "chars": 0, "assistant_records": 0, "assistant_chars": 0}
    bar = tqdm(total=len(stacks), desc=f"longmemeval {keep}", disable=not progress)
    try:
        for haystack in stacks:
            question = haystack.question
            namespace = f"lme-{keep}-{question.id}"
            turns_of = store_haystack(memory, clock, haystack, namespace, roles, timings)
            records = memory.records(namespace)
            _tally(stored, records)
            clock.at = question.date
            if question.evidence:
                key_of = _turn_key(turns_of)
                keys = [key_of(r) for r in records]
                indexes = BareIndexes(keys, records, [r.text for r in records], [])
                asked = Asked(
                    memory, namespace, modes, depth, timings, encode, indexes, True, key_of
                )
                ranked = asked.rankings(question.question)
                for method in methods:
                    scores[method].add(
                        question.group, ranked[method], question.evidence, whole=False
                    )
                    extra.add(method, haystack, ranked[method])
            if after is not None:
                after(memory, haystack, namespace, turns_of)
            bar.update(1)
    finally:
        bar.close()
    return {
        "keep": keep,
        "remember_roles": list(roles),
        "haystacks": len(stacks),
        "questions": sum(1 for h in stacks if h.question.evidence),
        "distractors_mean": round(sum(h.distractors for h in stacks) / max(len(stacks), 1), 2),
        "ks": ks,
        "stored": stored,
        "retrieval": {method: extra.with_sessions(method, scores[method]) for method in methods},
        "updates": extra.updates,
        "timing": timing_summary(timings) if timings.bare_embed_doc else _ingest_timing(timings),
    }


def _turn_key(turns_of: dict[str, list[str]]) -> Callable[[MemoryRecord], str]:
    """The turn a record holds (the first, where a session says the same twice)."""

    def key(record: MemoryRecord) -> str:
        turns = turns_of.get(record.id)
        return turns[0] if turns else record.id

    return key


def ingest_cost(
    stacks: Sequence[Haystack], embeddings: Embeddings, folder: Path
) -> dict[str, dict[str, float]]:
    """What storing ``stacks`` costs, cold (the model embeds every text), for each thing
    kept: each in a fresh SQLite store in ``folder``, beside a bare embedding of each stored
    text (the model alone, one pass, no sentences), and the store's size on disk."""
    out: dict[str, dict[str, float]] = {}
    for keep, roles in KEEPS.items():
        clock = ReplayClock()
        path = folder / f"ingest-{keep}.db"
        memory = AgentMemory(f"sqlite:///{path}", embeddings=embeddings, clock=clock)
        try:
            encode = _bare_encoder(memory)
            encode("warm up")
            timings = Timings()
            texts: list[str] = []
            for i, stack in enumerate(stacks):
                namespace = f"ingest-{i}"
                store_haystack(memory, clock, stack, namespace, roles, timings)
                texts += [r.text for r in memory.records(namespace)]
            bare = 0.0
            for text in texts:
                t0 = time.perf_counter()
                encode(text)
                bare += time.perf_counter() - t0
        finally:
            memory.close()
        ingest = sum(timings.add)
        out[keep] = {
            "records": len(texts),
            "sessions": sum(len(s.sessions) for s in stacks),
            "ingest_s": round(ingest, 2),
            "records_per_s": round(len(texts) / ingest, 2) if ingest else 0.0,
            "bare_embed_s": round(bare, 2),
            "bare_records_per_s": round(len(texts) / bare, 2) if bare else 0.0,
            "ingest_over_bare": round(ingest / bare, 3) if bare else 0.0,
            "store_bytes": sum(
                f.stat().st_size for f in folder.glob(f"ingest-{keep}.db*") if f.is_file()
            ),
        }
    return out


def _tally(stored: dict[str, int], records: Sequence[MemoryRecord]) -> None:
    for r in records:
        stored["records"] += 1
        stored["chars"] += len(r.text)
        if r.metadata.get("role") == "ai":
            stored["assistant_records"] += 1
            stored["assistant_chars"] += len(r.text)


def _ingest_timing(t: Timings) -> dict[str, Any]:
    """Ingest throughput (embeddings memoised: the store's own cost) and search times."""
    from langchain_agentmem.bench.metrics import percentile_ms

    return {
        "exchanges": len(t.add),
        "turns": t.turns,
        "ingest_s": round(sum(t.add), 2),
        "search": {
            mode: {
                "p50_ms": round(percentile_ms(values, 50), 3),
                "p95_ms": round(percentile_ms(values, 95), 3),
            }
            for mode, values in t.search.items()
        },
    }


__all__ = [
    "GROUPS",
    "KEEPS",
    "ReplayClock",
    "exchanges",
    "ingest_cost",
    "run_longmemeval",
    "session_of",
    "store_haystack",
    "update_evidence",
]
