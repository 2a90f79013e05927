"""Memory tools for agents that manage their memory themselves: search, save, forget.

The user is read from the run (``config["configurable"]["user_id"]`` or the run context),
never from the model's arguments, so a model cannot read or write another user's memory.
Save goes through the memory's policy like every other write; forget only deletes a
record of the calling user.

Usage:
    .. code-block:: python

        from langchain.agents import create_agent
        from langchain_agentmem import AgentMemory, memory_tools

        agent = create_agent(llm, tools=memory_tools(AgentMemory()))
        agent.invoke({"messages": [("user", "Remember that I am allergic to nuts.")]},
                     {"configurable": {"user_id": "alice"}})
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from langchain.tools import ToolRuntime, tool
from langchain_core.tools import BaseTool, ToolException

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.integrations.prompt import (
    SEARCH_HEADER,
    MemoryFormatter,
    cap_recalled,
    check_formatter,
    format_memories,
    render,
)
from langchain_agentmem.integrations.runs import check_memory, run_thread, user_namespace
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.types import MemoryOp, MemoryRecord
from langchain_agentmem.validation import DEFAULT_MAX_RECALL_CHARS, check_k, check_name


def _where(runtime: ToolRuntime[Any, Any], user_key: str) -> tuple[str, str | None]:
    return (
        user_namespace(runtime.config, user_key, context=runtime.context),
        run_thread(runtime.config),
    )


def found_text(
    records: list[MemoryRecord],
    formatter: MemoryFormatter | None = None,
    *,
    max_chars: int = DEFAULT_MAX_RECALL_CHARS,
) -> str:
    """What ``search_memory`` returns: the records as one fenced block of dated,
    attributed, quoted memories, each with its id (by ``formatter`` when given), at most
    ``max_chars`` characters of their words."""
    records = cap_recalled(records, max_chars)
    if formatter is None:
        text = format_memories(records, SEARCH_HEADER, with_ids=True)
    else:
        text = render(records, formatter, max_chars=max_chars) if records else ""
    return text or "No memories found."


@contextmanager
def models_arguments() -> Iterator[None]:
    """A bad value the model passed goes back to it as the tool's answer (a
    ``ToolException``, answered with ``status="error"``), not up through the run."""
    try:
        yield
    except (InvalidInputError, InvalidTypeError) as exc:
        raise ToolException(f"{exc}; nothing was changed") from None


def _ops(ops: list[MemoryOp]) -> str:
    return "; ".join(f"{op.kind.value} {','.join(op.record_ids)}: {op.reason}" for op in ops)


def memory_tools(
    memory: AgentMemory,
    *,
    user_key: str = "user_id",
    k: int = 4,
    formatter: MemoryFormatter | None = None,
) -> list[BaseTool]:
    """``search_memory``, ``save_memory`` and ``forget_memory`` tools over ``memory``.

    Each has a sync and an async implementation. ``search_memory`` returns what it finds
    as the prompt shows memories (:func:`format_memories`: fenced, dated, attributed,
    quoted), each line starting with the record's id for ``forget_memory``.

    Args:
        memory: The store.
        user_key: The ``configurable`` (or context) key naming the user.
        k: Most memories ``search_memory`` returns.
        formatter: Replaces :func:`format_memories` for ``search_memory`` (a function of
            a list of ``MemoryRecord`` returning a str); show each ``record.id`` in it, or
            the model has no id to pass to ``forget_memory``.
    """
    memory = check_memory(memory)
    user_key = check_name(user_key, what="user_key")
    k = check_k(k)
    formatter = check_formatter(formatter)

    def search(query: str, runtime: ToolRuntime[Any, Any]) -> str:
        namespace, _ = _where(runtime, user_key)
        with models_arguments():
            found = memory.search(query, namespace=namespace, k=k)
        return found_text(found, formatter, max_chars=memory.limits.max_recall_chars)

    async def asearch(query: str, runtime: ToolRuntime[Any, Any]) -> str:
        namespace, _ = _where(runtime, user_key)
        with models_arguments():
            found = await memory.asearch(query, namespace=namespace, k=k)
        return found_text(found, formatter, max_chars=memory.limits.max_recall_chars)

    def save(text: str, runtime: ToolRuntime[Any, Any]) -> str:
        namespace, thread = _where(runtime, user_key)
        with models_arguments():
            ops = memory.add(text, namespace=namespace, thread=thread, metadata={"source": "tool"})
        return _ops(ops)

    async def asave(text: str, runtime: ToolRuntime[Any, Any]) -> str:
        namespace, thread = _where(runtime, user_key)
        with models_arguments():
            ops = await memory.aadd(
                text, namespace=namespace, thread=thread, metadata={"source": "tool"}
            )
        return _ops(ops)

    # The check and the delete are one atomic step: two parallel calls on one id never
    # raise; the second finds it gone.
    def forget(memory_id: str, runtime: ToolRuntime[Any, Any]) -> str:
        namespace, _ = _where(runtime, user_key)
        with models_arguments():
            op = memory.delete(memory_id, namespace=namespace, missing_ok=True)
        return _forgot(memory_id, op)

    async def aforget(memory_id: str, runtime: ToolRuntime[Any, Any]) -> str:
        namespace, _ = _where(runtime, user_key)
        with models_arguments():
            op = await memory.adelete(memory_id, namespace=namespace, missing_ok=True)
        return _forgot(memory_id, op)

    return [
        _make("search_memory", SEARCH_MEMORY, search, asearch),
        _make("save_memory", SAVE_MEMORY, save, asave),
        _make("forget_memory", FORGET_MEMORY, forget, aforget),
    ]


SEARCH_MEMORY = (
    "Search the user's long-term memory. Returns the matching memories as quoted "
    "data, one per line, each with its id, date and speaker."
)
SAVE_MEMORY = (
    "Save one short fact about the user to long-term memory, written in the third "
    'person as a note about them ("The user is allergic to nuts."), not in their '
    "words nor yours; one fact per call. The memory policy decides whether it is kept."
)
FORGET_MEMORY = (
    "Delete one memory of the user by its id (the id search_memory shows with it, "
    "without the quotes)."
)


def _make(name: str, description: str, func: Any, coroutine: Any) -> BaseTool:
    """A tool of ``func`` and its async ``coroutine``, its errors told to the model."""
    func.__doc__ = coroutine.__doc__ = description
    made = tool(name, description=description)(func)
    made.coroutine = coroutine  # type: ignore[attr-defined]
    made.handle_tool_error = True  # models_arguments: the message goes to the model
    return made


def _forgot(memory_id: str, op: MemoryOp | None) -> str:
    """What ``forget_memory`` answers: the op, or an error answer for an unknown id."""
    if op is None:  # an error answer (status "error", MCP's isError), not a raise
        raise ToolException(
            f"No memory {memory_id!r}; search first to get the id shown with each memory."
        )
    return _ops([op])
