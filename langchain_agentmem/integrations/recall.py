"""Recall without repeats: search a user's memory for a prompt, leaving out what it shows.

What the conversation in front of the model already holds is not recalled again
(:func:`recall` drops records whose text is one of the shown messages, compared case- and
whitespace-blind). Nor is a record a later one found with it replaces (a model's
annotation), unless the query asks about the past ("Where did I live before?"): a small
model told both "I live in Lyon." and "I moved to Porto." answers Lyon, marked out of date
or not. How recalled records are put into the prompt is
:mod:`langchain_agentmem.integrations.prompt`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from langchain_core.messages import BaseMessage

from langchain_agentmem.integrations.offers import recall_query
from langchain_agentmem.integrations.prompt import replaced_ids
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.ranking.newer_first import PAST_WORDS
from langchain_agentmem.types import MemoryRecord


def normal(text: str) -> str:
    """``text`` compared case- and whitespace-blind, to tell whether it is already shown."""
    return " ".join(text.split()).casefold()


def shown_texts(messages: Iterable[BaseMessage | str]) -> set[str]:
    """The (normalised) texts of the messages a model is shown."""
    out = set()
    for m in messages:
        text = m if isinstance(m, str) else str(m.text)
        if text.strip():
            out.add(normal(text))
    return out


def current(found: Sequence[MemoryRecord], query: str) -> list[MemoryRecord]:
    """``found`` without the records another of them replaces and ranks above, for a query
    about now (search ranks a successor above only for a query about what it changed, so a
    link a model drew between two things that both still hold drops nothing elsewhere)."""
    if PAST_WORDS.search(query):
        return list(found)
    out, above = [], set()
    for record in found:
        if record.id not in above:
            out.append(record)
        above |= replaced_ids([record])
    return out


def pick(
    found: Sequence[MemoryRecord], k: int, min_score: float | None, shown: set[str]
) -> list[MemoryRecord]:
    """The best ``k`` of ``found`` that score at least ``min_score`` and are not shown."""
    out = []
    for r in found:
        if min_score is not None and (r.score is None or r.score < min_score):
            continue
        if normal(r.text) in shown:
            continue
        out.append(r)
        if len(out) == k:
            break
    return out


def _wider(k: int, shown: set[str]) -> int:
    # Each shown text can hide at most one distinct hit, usually none: ask for a few more.
    return k + min(len(shown), 4 * k)


def recall(
    memory: AgentMemory,
    query: str,
    *,
    namespace: str,
    k: int,
    mode: str = "hybrid",
    min_score: float | None = None,
    shown: set[str] | None = None,
) -> list[MemoryRecord]:
    """Search ``namespace`` and keep the best ``k`` hits the prompt does not already show.

    ``query`` is a conversation's message, searched as :func:`recall_query` cleans it (a
    message search would refuse recalls by its other words; one with none recalls nothing).
    """
    shown = shown or set()
    searched = recall_query(query)
    if searched is None:
        return []
    found = memory.search(searched, namespace=namespace, k=_wider(k, shown), mode=mode)
    return pick(current(found, searched), k, min_score, shown)


async def arecall(
    memory: AgentMemory,
    query: str,
    *,
    namespace: str,
    k: int,
    mode: str = "hybrid",
    min_score: float | None = None,
    shown: set[str] | None = None,
) -> list[MemoryRecord]:
    """Async :func:`recall`."""
    shown = shown or set()
    searched = recall_query(query)
    if searched is None:
        return []
    found = await memory.asearch(searched, namespace=namespace, k=_wider(k, shown), mode=mode)
    return pick(current(found, searched), k, min_score, shown)


__all__ = ["arecall", "pick", "recall", "shown_texts"]
