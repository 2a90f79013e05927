"""What an adapter reads through the public API: a namespace's version, what changed since
one, and the namespaces a LangGraph store keeps."""

from __future__ import annotations

import pytest

from langchain_agentmem import AgentMemory, AgentMemoryStore, InvalidInputError


def test_changes_since_a_version_name_what_moved(memory: AgentMemory) -> None:
    assert memory.version("ana") == 0
    memory.put("home", "Ana lives in Lyon.", namespace="ana")
    memory.put("pet", "Ana has a cat called Miso.", namespace="ana")
    seen = memory.version("ana")
    assert seen > 0
    assert memory.changes("ana", seen) == memory.changes("ana", seen)  # nothing moved
    unchanged = memory.changes("ana", seen)
    assert unchanged is not None and unchanged.touched == () and unchanged.version == seen

    memory.put("home", "Ana moved to Porto.", namespace="ana")
    memory.delete("pet", namespace="ana")
    memory.put("job", "Ana works at a bakery.", namespace="bo")  # another namespace
    changed = memory.changes("ana", seen)
    assert changed is not None
    assert changed.touched == ("home", "pet")
    assert set(changed.records) == {"home"}  # the deleted one is gone
    assert changed.records["home"].text == "Ana moved to Porto."
    assert changed.version == memory.version("ana") > seen

    memory.delete_namespace("ana")
    assert memory.changes("ana", seen) is None  # erased: read it whole again


async def test_the_async_twins_read_the_same(memory: AgentMemory) -> None:
    memory.put("home", "Ana lives in Lyon.", namespace="ana")
    assert await memory.aversion("ana") == memory.version("ana")
    assert await memory.achanges("ana", 0) == memory.changes("ana", 0)


def test_store_namespaces_are_the_stores_own(memory: AgentMemory) -> None:
    store = AgentMemoryStore(memory)
    store.put(("users", "ana"), "home", {"text": "Ana lives in Lyon."})
    memory.add("Bo likes tea.", namespace="bo")
    listed = memory.store_namespaces(store.memory_namespace(("users",))[:1])
    assert [store.store_namespace(name) for name in listed] == [("users", "ana")]
    assert memory.namespaces() == ["bo"]  # a store's namespaces are not a user's
    with pytest.raises(InvalidInputError, match="not a store namespace prefix"):
        memory.store_namespaces("bo")
