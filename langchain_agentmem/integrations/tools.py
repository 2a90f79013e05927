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

from typing import Any

from langchain.tools import ToolRuntime, tool
from langchain_core.tools import BaseTool

from langchain_agentmem.integrations.graph import check_memory, run_thread, user_namespace
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.types import MemoryOp, MemoryRecord
from langchain_agentmem.validation import check_k, check_name


def _where(runtime: ToolRuntime[Any, Any], user_key: str) -> tuple[str, str | None]:
    return (
        user_namespace(runtime.config, user_key, context=runtime.context),
        run_thread(runtime.config),
    )


def _found(records: list[MemoryRecord]) -> str:
    if not records:
        return "No memories found."
    return "\n".join(f"[{r.id}] {r.text}" for r in records)


def _ops(ops: list[MemoryOp]) -> str:
    return "; ".join(f"{op.kind.value} {','.join(op.record_ids)}: {op.reason}" for op in ops)


def memory_tools(memory: AgentMemory, *, user_key: str = "user_id", k: int = 4) -> list[BaseTool]:
    """``search_memory``, ``save_memory`` and ``forget_memory`` tools over ``memory``.

    Each has a sync and an async implementation.

    Args:
        memory: The store.
        user_key: The ``configurable`` (or context) key naming the user.
        k: Most memories ``search_memory`` returns.
    """
    memory = check_memory(memory)
    user_key = check_name(user_key, what="user_key")
    k = check_k(k)

    def search(query: str, runtime: ToolRuntime[Any, Any]) -> str:
        namespace, _ = _where(runtime, user_key)
        return _found(memory.search(query, namespace=namespace, k=k))

    async def asearch(query: str, runtime: ToolRuntime[Any, Any]) -> str:
        namespace, _ = _where(runtime, user_key)
        return _found(await memory.asearch(query, namespace=namespace, k=k))

    def save(text: str, runtime: ToolRuntime[Any, Any]) -> str:
        namespace, thread = _where(runtime, user_key)
        ops = memory.add(text, namespace=namespace, thread=thread, metadata={"source": "tool"})
        return _ops(ops)

    async def asave(text: str, runtime: ToolRuntime[Any, Any]) -> str:
        namespace, thread = _where(runtime, user_key)
        ops = await memory.aadd(
            text, namespace=namespace, thread=thread, metadata={"source": "tool"}
        )
        return _ops(ops)

    def _forgot(memory_id: str, op: MemoryOp | None) -> str:
        if op is None:
            return f"No memory {memory_id!r}; search first to get the id in brackets."
        return _ops([op])

    # The check and the delete are one atomic step: two parallel calls on one id never
    # raise; the second finds it gone.
    def forget(memory_id: str, runtime: ToolRuntime[Any, Any]) -> str:
        namespace, _ = _where(runtime, user_key)
        return _forgot(memory_id, memory.delete(memory_id, namespace=namespace, missing_ok=True))

    async def aforget(memory_id: str, runtime: ToolRuntime[Any, Any]) -> str:
        namespace, _ = _where(runtime, user_key)
        op = await memory.adelete(memory_id, namespace=namespace, missing_ok=True)
        return _forgot(memory_id, op)

    def make(name: str, description: str, func: Any, coroutine: Any) -> BaseTool:
        func.__doc__ = coroutine.__doc__ = description
        made = tool(name, description=description)(func)
        made.coroutine = coroutine  # type: ignore[attr-defined]
        return made

    return [
        make(
            "search_memory",
            "Search the user's long-term memory. Returns matching memories as '[id] text' lines.",
            search,
            asearch,
        ),
        make(
            "save_memory",
            "Save a fact about the user to long-term memory (the memory policy decides "
            "whether it is kept).",
            save,
            asave,
        ),
        make(
            "forget_memory",
            "Delete one memory of the user by its id (the id in brackets from search_memory).",
            forget,
            aforget,
        ),
    ]
