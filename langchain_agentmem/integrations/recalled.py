"""The memories a recall node found: kept in graph state by reference, read back by id.

:func:`~langchain_agentmem.integrations.graph.recall_node` keeps only record ids and scores
in the graph state (:func:`memory_ref`; a checkpoint must not keep a copy of a memory that
is later forgotten); these read the texts from the memory, for the user of the run, as it
holds them now.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from langchain_core.messages import SystemMessage
from langgraph.config import get_config

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.integrations.prompt import (
    DEFAULT_HEADER,
    SHOW_TODAY,
    MemoryFormatter,
    as_records,
    check_formatter,
    render,
)
from langchain_agentmem.integrations.runs import check_memory, run_context, user_namespace
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.types import Clock, MemoryRecord, wall_clock
from langchain_agentmem.validation import (
    DEFAULT_MAX_RECALL_CHARS,
    check_clock,
    check_flag,
    check_name,
    check_namespace,
    read_clock,
)


def memory_ref(record: MemoryRecord) -> dict[str, Any]:
    """A recalled record as a graph state keeps it: its id and score, never its text.

    Graph state is checkpointed; a copy of the text there would outlive the record's
    deletion. The text is read from the memory by id when the prompt is built.
    """
    return {"id": record.id, "score": record.score}


MemoryItem = MemoryRecord | Mapping[str, Any]
"""What a prompt can be built from: records, references (``{"id", "score"}``) or
graph-state dicts that carry their ``text``."""


def check_memory_items(memories: object) -> list[MemoryItem]:
    """``memories`` as a list of records and mappings, else a clear error.

    ``None`` is an empty list. A mapping needs a str ``id`` (a reference) or a str ``text``.

    Raises:
        InvalidTypeError: not a list, or an item that is neither a record nor a mapping,
            or an id that is not a str.
        InvalidInputError: a mapping with neither an id nor a text.
    """
    if memories is None:
        return []
    if isinstance(memories, (str, bytes, Mapping)) or not isinstance(memories, Iterable):
        raise InvalidTypeError(
            f"memories must be a list of references ({{'id': ..., 'score': ...}}, as "
            f"recall_node writes them) or MemoryRecord, got {type(memories).__name__}; pass "
            "state['memories']"
        )
    out: list[MemoryItem] = []
    for i, item in enumerate(memories):
        if isinstance(item, MemoryRecord):
            out.append(item)
            continue
        if not isinstance(item, Mapping):
            raise InvalidTypeError(
                f"memories[{i}] must be a reference dict or a MemoryRecord, got "
                f"{type(item).__name__}"
            )
        rid = item.get("id")
        if rid is not None and not isinstance(rid, str):
            raise InvalidTypeError(
                f"memories[{i}]['id'] must be a record id (str), got {type(rid).__name__}"
            )
        if not rid and not isinstance(item.get("text"), str):
            raise InvalidInputError(
                f"memories[{i}] has neither an 'id' nor a 'text' (keys: "
                f"{sorted(map(str, item))}); pass the references recall_node wrote"
            )
        out.append(item)
    return out


def item_id(item: MemoryItem) -> str | None:
    """The record id of a memory item (``None`` when it names none)."""
    rid = item.id if isinstance(item, MemoryRecord) else item.get("id")
    return rid if isinstance(rid, str) and rid else None


def item_score(item: MemoryItem) -> float | None:
    """The recall score a memory item carries, if any."""
    score = item.score if isinstance(item, MemoryRecord) else item.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        return None
    return float(score)


def resolve_items(items: Sequence[MemoryItem], found: Iterable[MemoryRecord]) -> list[MemoryRecord]:
    """``items`` as the memory holds them now, in their order.

    An item with an id becomes the record ``found`` holds under that id (with the
    item's score), or is left out when there is none (forgotten since it was recalled);
    an id listed twice is told once. An item without an id is a text given by the caller,
    kept as it is.
    """
    by_id = {r.id: r for r in found}
    out: list[MemoryRecord] = []
    seen: set[str] = set()
    for item in items:
        rid = item_id(item)
        if rid is None:
            out.extend(as_records([item]))
            continue
        record = by_id.get(rid)
        if record is None or rid in seen:
            continue
        seen.add(rid)
        out.append(replace(record, score=item_score(item), embedding=None))
    return out


def _run_namespace(
    config: Mapping[str, Any] | None,
    context: object,
    namespace: str | None,
    user_key: str,
    what: str,
) -> str:
    """The namespace the memories are read from: ``namespace``, else the run's user (from
    its config or context, as the nodes read it)."""
    if namespace is not None:
        if config is not None or context is not None:
            given = "config=" if config is not None else "context="
            raise InvalidInputError(
                f"{what} got both {given} and namespace={namespace!r}; pass one (the run's "
                "config or context names the user)"
            )
        return check_namespace(namespace)
    if context is None:
        context = run_context()
    if config is None:
        try:
            config = get_config()
        except RuntimeError:  # called outside a graph run
            if context is None:
                raise InvalidInputError(
                    f"{what} reads the memories from the memory and needs to know whose they "
                    "are: call it inside a graph node, or pass config= (the run's config), "
                    "context= (the run's context) or namespace="
                ) from None
            config = {}
    return user_namespace(config, check_name(user_key, what="user_key"), context=context)


def _plan(
    memories: object,
    memory: AgentMemory | None,
    config: Mapping[str, Any] | None,
    context: object,
    namespace: str | None,
    user_key: str,
    what: str,
) -> tuple[list[MemoryItem], str | None, list[str]]:
    """The items, the namespace to read them from, and the ids to read (checked)."""
    items = check_memory_items(memories)
    if memory is None:
        for i, item in enumerate(items):
            if isinstance(item, Mapping) and not isinstance(item.get("text"), str):
                raise InvalidInputError(
                    f"memories[{i}] is a reference without text (recall_node keeps only "
                    "record ids in the graph state, never the text); pass the memory to "
                    f"read it from: {what}(state['memories'], memory)"
                )
        return items, None, []
    check_memory(memory)
    ids = list(dict.fromkeys(rid for rid in map(item_id, items) if rid is not None))
    if not ids:
        return items, None, []
    return items, _run_namespace(config, context, namespace, user_key, what), ids


def recalled_memories(
    memories: Sequence[Mapping[str, Any] | MemoryRecord] | None,
    memory: AgentMemory,
    *,
    config: Mapping[str, Any] | None = None,
    context: object = None,
    namespace: str | None = None,
    user_key: str = "user_id",
) -> list[MemoryRecord]:
    """The records ``state["memories"]`` refers to, as the memory holds them now.

    :func:`recall_node` keeps only record ids and scores in the graph state (state is
    checkpointed, and a checkpoint must not keep a copy of a memory that is later
    forgotten); this reads the texts by id, in the recalled order, with their scores. A
    record deleted since it was recalled is left out. Dicts without an ``id`` that
    carry a ``text`` are taken as they are.

    Args:
        memories: ``state["memories"]`` as filled by :func:`recall_node` (references,
            records, or dicts with ``text``).
        memory: The store the recall node searched.
        config: The run's config; default: the config of the graph run this is called in.
        context: The run's context (``runtime.context``); default: the context of the
            graph run this is called in.
        namespace: The user's namespace, instead of reading it from the config or context.
        user_key: The ``configurable`` (or context) key that names the user (as given to
            :func:`recall_node`).

    Raises:
        InvalidTypeError: ``memories`` is not a list of references or records, or
            ``memory`` is not an ``AgentMemory``.
        InvalidInputError: the user cannot be told (outside a graph run without
            ``config``, ``context`` or ``namespace``; no user id in the config or context,
            or two that disagree).
    """
    what = "recalled_memories"
    items, ns, ids = _plan(
        memories, check_memory(memory), config, context, namespace, user_key, what
    )
    found = memory.get_many(ids, namespace=ns) if ns is not None else []
    return resolve_items(items, found)


async def arecalled_memories(
    memories: Sequence[Mapping[str, Any] | MemoryRecord] | None,
    memory: AgentMemory,
    *,
    config: Mapping[str, Any] | None = None,
    context: object = None,
    namespace: str | None = None,
    user_key: str = "user_id",
) -> list[MemoryRecord]:
    """Async :func:`recalled_memories`."""
    what = "arecalled_memories"
    items, ns, ids = _plan(
        memories, check_memory(memory), config, context, namespace, user_key, what
    )
    found = await memory.aget_many(ids, namespace=ns) if ns is not None else []
    return resolve_items(items, found)


def told_today(
    show_today: object, clock: Clock | None, memory: AgentMemory | None
) -> datetime | None:
    """The day a block tells: by ``clock``, else ``memory``'s, else the wall clock;
    ``None`` when ``show_today`` is off."""
    if not check_flag(show_today, what="show_today"):
        return None
    if clock is not None:
        return read_clock(check_clock(clock))
    return read_clock(wall_clock if memory is None else memory.clock)


def _message(
    records: Sequence[MemoryRecord],
    formatter: MemoryFormatter | None,
    header: str | None,
    memory: AgentMemory | None,
    today: datetime | None,
) -> SystemMessage | None:
    limit = DEFAULT_MAX_RECALL_CHARS if memory is None else memory.limits.max_recall_chars
    text = (
        render(records, formatter, header=header, max_chars=limit, today=today) if records else ""
    )
    return SystemMessage(content=text) if text else None


def memories_message(
    memories: Sequence[Mapping[str, Any] | MemoryRecord] | None,
    memory: AgentMemory | None = None,
    *,
    config: Mapping[str, Any] | None = None,
    context: object = None,
    namespace: str | None = None,
    user_key: str = "user_id",
    header: str | None = DEFAULT_HEADER,
    formatter: MemoryFormatter | None = None,
    show_today: bool = SHOW_TODAY,
    clock: Clock | None = None,
) -> SystemMessage | None:
    """A system message holding the recalled memories, fenced, or ``None`` when none.

    In a graph node, ``memories_message(state["memories"], memory)``: the state holds
    only record ids (see :func:`recall_node`), so the texts are read from ``memory`` now,
    for the user of the run (its config or context); a memory deleted since it was
    recalled is not told. Without ``memory``, only records or dicts that carry their
    ``text`` can be told.

    Args:
        memories: ``state["memories"]`` as filled by :func:`recall_node` (or records).
        memory: The store the recall node searched.
        config: The run's config; default: the config of the graph run this is called in.
        context: The run's context (``runtime.context``); default: the context of the
            graph run this is called in.
        namespace: The user's namespace, instead of reading it from the config or context.
        user_key: The ``configurable`` (or context) key that names the user (as given to
            :func:`recall_node`).
        header: The line written inside the block before the memories.
        formatter: Replaces :func:`format_memories` (a function of a list of
            ``MemoryRecord`` returning a str).
        show_today: Tell today's date in the block (by ``clock``).
        clock: What day it is (default: ``memory``'s clock, else the wall clock).

    Raises:
        InvalidInputError: references without ``memory``; or the user cannot be told
            (outside a graph run without ``config``, ``context`` or ``namespace``, no user
            id in the config or context, or two that disagree).
        InvalidTypeError: ``memories`` is not a list of references or records.
    """
    formatter = check_formatter(formatter)
    items, ns, ids = _plan(
        memories, memory, config, context, namespace, user_key, "memories_message"
    )
    today = told_today(show_today, clock, memory)
    if memory is None:
        return _message(as_records(items), formatter, header, None, today)
    found = memory.get_many(ids, namespace=ns) if ns is not None else []
    return _message(resolve_items(items, found), formatter, header, memory, today)


async def amemories_message(
    memories: Sequence[Mapping[str, Any] | MemoryRecord] | None,
    memory: AgentMemory | None = None,
    *,
    config: Mapping[str, Any] | None = None,
    context: object = None,
    namespace: str | None = None,
    user_key: str = "user_id",
    header: str | None = DEFAULT_HEADER,
    formatter: MemoryFormatter | None = None,
    show_today: bool = SHOW_TODAY,
    clock: Clock | None = None,
) -> SystemMessage | None:
    """Async :func:`memories_message` (reads the texts without blocking the event loop)."""
    formatter = check_formatter(formatter)
    items, ns, ids = _plan(
        memories, memory, config, context, namespace, user_key, "amemories_message"
    )
    today = told_today(show_today, clock, memory)
    if memory is None:
        return _message(as_records(items), formatter, header, None, today)
    found = await memory.aget_many(ids, namespace=ns) if ns is not None else []
    return _message(resolve_items(items, found), formatter, header, memory, today)
