"""``AgentMemoryStore`` under races, on every store: one key written from many threads,
asyncio tasks and processes, update and delete of one key at once, and an agent turn whose
parallel tool calls update and delete one item (LangGraph's ``BaseStore`` contract:
last writer wins, deleting a missing key is a no-op).
"""

from __future__ import annotations

import asyncio
import multiprocessing
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage

from langchain_agentmem import (
    AgentMemory,
    AgentMemoryStore,
    AgentMemoryVectorStore,
    OpKind,
    memory_tools,
)
from tests.contract.store_parts import EMB, PUTS_PER_THREAD, THREADS, TRIALS, run_threads


# -- races -----------------------------------------------------------------------------------
def test_threads_putting_one_new_key(store: AgentMemoryStore, memory: AgentMemory) -> None:
    ns = ("race", "one")

    def put(i: int) -> None:
        for j in range(PUTS_PER_THREAD):
            store.put(ns, "key", {"writer": i, "n": j})

    errors = run_threads(THREADS, put)
    assert errors == []
    item = store.get(ns, "key")
    assert item is not None and item.value["n"] == PUTS_PER_THREAD - 1
    assert len(memory.records(store.memory_namespace(ns))) == 1
    kinds = [d.kind for d in memory.decisions(store.memory_namespace(ns))]
    assert kinds.count(OpKind.ADD) == 1
    assert len(kinds) == THREADS * PUTS_PER_THREAD


def test_update_and_delete_of_one_key(store: AgentMemoryStore) -> None:
    ns = ("race", "ud")
    for trial in range(TRIALS):
        store.put(ns, "key", {"trial": trial})
        value = {"trial": trial, "updated": True}

        def update_or_delete(i: int, value: dict[str, Any] = value) -> None:
            if i == 0:
                store.put(ns, "key", value)
            else:
                store.delete(ns, "key")

        assert run_threads(2, update_or_delete) == []
        item = store.get(ns, "key")
        assert item is None or item.value == value


async def test_asyncio_tasks_on_one_key(store: AgentMemoryStore) -> None:
    ns = ("race", "async")
    await store.aput(ns, "key", {"v": -1})
    for trial in range(TRIALS // 2):
        results = await asyncio.gather(
            *(store.aput(ns, "key", {"v": i}) for i in range(4)),
            store.adelete(ns, "key"),
            store.aget(ns, "key"),
            return_exceptions=True,
        )
        assert [r for r in results if isinstance(r, BaseException)] == [], trial
    await store.aput(ns, "key", {"v": "last"})
    assert (await store.aget(ns, "key")).value == {"v": "last"}  # type: ignore[union-attr]


def test_vector_store_and_forget_tool_race_on_one_id(memory: AgentMemory) -> None:
    vs = AgentMemoryVectorStore(memory, namespace="alice")
    for trial in range(TRIALS // 2):

        def add_or_delete(i: int, trial: int = trial) -> None:
            if i % 2 == 0:
                vs.add_texts([f"fact {i} of trial {trial}"], ids=["same"])
            else:
                vs.delete(["same"])

        assert run_threads(4, add_or_delete) == []
    assert len(memory.records("alice")) <= 1


def test_agent_turn_with_parallel_forget_calls_on_one_id(memory: AgentMemory) -> None:
    """The middleware's (and memory_tools') forget tool, called four times at once."""
    calls = [
        {"name": "forget_memory", "args": {"memory_id": "pin"}, "id": f"c{i}"} for i in range(4)
    ]
    llm = ToolCallingFake(messages=iter([AIMessage("", tool_calls=calls), AIMessage("Done.")]))
    agent = create_agent(llm, tools=memory_tools(memory))
    memory.put("pin", "My PIN is 1234.", namespace="alice")
    out = agent.invoke(
        {"messages": [HumanMessage("Forget my PIN.")]}, {"configurable": {"user_id": "alice"}}
    )
    results = [str(m.content) for m in out["messages"] if m.type == "tool"]
    assert len(results) == 4
    assert sum(r.startswith("DELETE pin") for r in results) == 1
    assert sum(r.startswith("No memory 'pin'") for r in results) == 3
    assert memory.get_many(["pin"], namespace="alice") == []


def _process_puts(url: str, worker: int, n: int) -> int:
    """Put one key ``n`` times from a fresh process; the number of errors raised."""
    errors = 0
    with AgentMemory(url, embeddings=EMB) as mem:
        store = AgentMemoryStore(mem)
        for j in range(n):
            try:
                if j % 5 == 4:
                    store.delete(("race", "procs"), "key")
                else:
                    store.put(("race", "procs"), "key", {"writer": worker, "n": j})
            except Exception:
                errors += 1
    return errors


@pytest.mark.slow
def test_processes_putting_and_deleting_one_key(shared_store_url: str) -> None:
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        errors = pool.starmap(_process_puts, [(shared_store_url, w, 25) for w in range(4)])
    assert errors == [0, 0, 0, 0]
    with AgentMemory(shared_store_url, embeddings=EMB) as mem:
        store = AgentMemoryStore(mem)
        ns = store.memory_namespace(("race", "procs"))
        assert len(mem.records(ns)) <= 1
        kinds = [d.kind for d in mem.decisions(ns)]
        # Every put is logged (ADD or UPDATE); a delete is logged when the key was there.
        assert kinds.count(OpKind.ADD) + kinds.count(OpKind.UPDATE) == 4 * 20
        assert kinds.count(OpKind.DELETE) <= 4 * 5


# -- an agent turn whose parallel tool calls touch one id ---------------------------------------
class ToolCallingFake(GenericFakeChatModel):
    """A fake chat model that accepts tools (its scripted messages carry the tool calls)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolCallingFake:  # type: ignore[override]
        return self


@tool
def manage_memory(runtime: ToolRuntime, action: str, id: str, content: str | None = None) -> str:
    """Create, update or delete a memory (LangMem's manage-memory tool, in short)."""
    assert runtime.store is not None
    ns = ("memories", runtime.config["configurable"]["user_id"])
    if action == "delete":
        runtime.store.delete(ns, id)
        return f"deleted {id}"
    runtime.store.put(ns, id, {"content": content})
    return f"{action}d {id}"


def test_agent_turn_with_parallel_update_and_delete_of_one_id(store: AgentMemoryStore) -> None:
    turns = 10
    replies: list[AIMessage] = []
    for turn in range(turns):
        replies.append(
            AIMessage(
                "",
                tool_calls=[
                    {
                        "name": "manage_memory",
                        "args": {"action": "update", "id": "m1", "content": f"turn {turn}"},
                        "id": f"u{turn}",
                    },
                    {
                        "name": "manage_memory",
                        "args": {"action": "delete", "id": "m1"},
                        "id": f"d{turn}",
                    },
                    {
                        "name": "manage_memory",
                        "args": {"action": "update", "id": "m1", "content": f"again {turn}"},
                        "id": f"a{turn}",
                    },
                ],
            )
        )
        replies.append(AIMessage("Done."))
    llm = ToolCallingFake(messages=iter(replies))
    agent = create_agent(llm, tools=[manage_memory], store=store)
    store.put(("memories", "alice"), "m1", {"content": "start"})
    for turn in range(turns):
        out = agent.invoke(
            {"messages": [HumanMessage(f"turn {turn}")]},
            {"configurable": {"user_id": "alice", "thread_id": f"t{turn}"}},
        )
        tool_results = [m.content for m in out["messages"] if m.type == "tool"]
        assert sorted(tool_results) == sorted(["updated m1", "deleted m1", "updated m1"]), (
            tool_results
        )
    final = store.get(("memories", "alice"), "m1")
    assert final is None or final.value["content"] in {f"turn {turns - 1}", f"again {turns - 1}"}
