"""``AgentMemoryStore``: LangGraph's store contract on AgentMemory (real model, real SQLite)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    PutOp,
    SearchOp,
)

from langchain_agentmem import (
    AgentMemory,
    AgentMemoryStore,
    InvalidInputError,
    InvalidTypeError,
    OpKind,
)
from tests.openai_server import ScriptedOpenAIServer, tool_call


@pytest.fixture
def store(memory: AgentMemory) -> AgentMemoryStore:
    return AgentMemoryStore(memory)


def test_put_get_update_delete(store: AgentMemoryStore, memory: AgentMemory) -> None:
    ns = ("memories", "alice")
    store.put(ns, "diet", {"text": "Alice is vegetarian.", "since": 2015})
    item = store.get(ns, "diet")
    assert item is not None
    assert (item.namespace, item.key, item.value) == (
        ns,
        "diet",
        {"text": "Alice is vegetarian.", "since": 2015},
    )
    time.sleep(0.01)
    store.put(ns, "diet", {"text": "Alice is vegan."})
    updated = store.get(ns, "diet")
    assert updated is not None
    assert updated.value == {"text": "Alice is vegan."}
    assert updated.created_at == item.created_at
    assert updated.updated_at > item.updated_at
    (record,) = memory.records(store.memory_namespace(ns))
    assert record.id == "diet"
    assert "vegan" in record.text
    assert [d.kind for d in memory.decisions(store.memory_namespace(ns))] == [
        OpKind.ADD,
        OpKind.UPDATE,
    ]
    store.delete(ns, "diet")
    assert store.get(ns, "diet") is None
    store.delete(ns, "diet")  # deleting what is gone is a no-op
    assert store.get(("memories", "bob"), "diet") is None


def test_namespaces_and_keys_never_collide(store: AgentMemoryStore) -> None:
    pairs = [
        (("a/b",), "k"),
        (("a", "b"), "k"),
        (("a%2Fb",), "k"),
        (("a", "b/k"), "x"),
        (("a", "b"), "k/x"),
    ]
    for i, (ns, key) in enumerate(pairs):
        store.put(ns, key, {"n": i})
    for i, (ns, key) in enumerate(pairs):
        got = store.get(ns, key)
        assert got is not None and got.value == {"n": i} and got.namespace == ns
    assert len({store.memory_namespace(ns) for ns, _ in pairs}) == 4
    assert store.list_namespaces() == [("a", "b"), ("a", "b/k"), ("a%2Fb",), ("a/b",)]
    with pytest.raises(InvalidNamespaceError, match="periods"):
        store.put(("a.b",), "k", {"n": 1})
    with pytest.raises(InvalidNamespaceError, match="periods"):
        store.batch([PutOp(("a.b",), "k", {"n": 1})])
    with pytest.raises(InvalidNamespaceError):
        store.put((), "k", {"n": 1})


def test_semantic_search_filter_and_paging(store: AgentMemoryStore) -> None:
    store.put(("u", "alice"), "pet", {"text": "My cat is called Miso.", "kind": "pet"})
    store.put(("u", "alice"), "job", {"text": "I work as a nurse in Leeds.", "kind": "work"})
    store.put(("u", "alice"), "food", {"text": "I love spicy ramen.", "kind": "food", "stars": 5})
    store.put(("u", "bob"), "pet", {"text": "My dog is called Rex.", "kind": "pet"})

    hits = store.search(("u", "alice"), query="What is the name of my cat?")
    assert hits[0].key == "pet"
    assert all(h.namespace == ("u", "alice") for h in hits)
    assert all(isinstance(h.score, float) for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)

    both = store.search(("u",), query="pets", filter={"kind": "pet"})
    assert {(h.namespace[1], h.key) for h in both} == {("alice", "pet"), ("bob", "pet")}
    assert store.search(("u",), filter={"stars": {"$gte": 4}})[0].key == "food"
    assert store.search(("u",), filter={"stars": {"$lt": 4}}) == []

    everything = store.search(("u",), limit=10)
    assert [h.key for h in everything] == ["pet", "food", "job", "pet"]  # newest first
    assert all(h.score is None for h in everything)
    assert [h.key for h in store.search(("u",), limit=2, offset=1)] == ["food", "job"]
    ranked = store.search(("u",), query="food I like", limit=2)
    paged = store.search(("u",), query="food I like", limit=1, offset=1)
    assert paged[0].key == ranked[1].key
    with pytest.raises(InvalidInputError, match="operator"):
        store.search(("u",), filter={"stars": {"$regex": "5"}})


def test_index_fields_and_unindexed_items(memory: AgentMemory) -> None:
    store = AgentMemoryStore(memory, fields=["text"])
    store.put(("docs",), "a", {"text": "Paris is the capital of France.", "tag": "geo"})
    with pytest.warns(UserWarning, match="none of the indexed fields"):
        store.put(("docs",), "b", {"note": "a value without the text field"})
    store.put(("docs",), "c", {"text": "Rome is in Italy."}, index=False)
    store.put(("docs",), "d", {"title": "Tides", "body": "The moon pulls the sea."}, index=["body"])
    ns = store.memory_namespace(("docs",))
    texts = {r.id: r.text for r in memory.records(ns)}
    assert texts["a"] == "Paris is the capital of France."
    assert texts["d"] == "The moon pulls the sea."
    hits = store.search(("docs",), query="Which city is the capital of France?", limit=10)
    assert hits[0].key == "a"
    assert [h.key for h in hits[-2:]] == ["c", "b"]  # unindexed: found, unranked, last
    assert hits[-1].score is None
    assert store.get(("docs",), "c") is not None


def test_list_namespaces(store: AgentMemoryStore) -> None:
    for ns in [
        ("users", "alice", "prefs"),
        ("users", "bob", "prefs"),
        ("users", "bob", "v1"),
        ("docs", "v1"),
    ]:
        store.put(ns, "k", {"x": 1})
    assert store.list_namespaces(prefix=("users",)) == [
        ("users", "alice", "prefs"),
        ("users", "bob", "prefs"),
        ("users", "bob", "v1"),
    ]
    assert store.list_namespaces(suffix=("v1",)) == [("docs", "v1"), ("users", "bob", "v1")]
    assert store.list_namespaces(prefix=("users", "*", "prefs")) == [
        ("users", "alice", "prefs"),
        ("users", "bob", "prefs"),
    ]
    assert store.list_namespaces(max_depth=2) == [
        ("docs", "v1"),
        ("users", "alice"),
        ("users", "bob"),
    ]
    assert store.list_namespaces(limit=1, offset=1) == [("users", "alice", "prefs")]
    # Memory namespaces that are not the store's never show up.
    store.memory.add("A plain memory.", namespace="alice")
    assert len(store.list_namespaces()) == 4
    other = AgentMemoryStore(store.memory, prefix="other")
    assert other.list_namespaces() == []
    assert other.get(("docs", "v1"), "k") is None


def test_batch_contract(store: AgentMemoryStore) -> None:
    store.put(("t",), "old", {"v": 0})
    results = store.batch(
        [
            PutOp(("t",), "new", {"v": 1}),
            GetOp(("t",), "new"),  # reads see the state before the batch's puts
            GetOp(("t",), "old"),
            PutOp(("t",), "new", {"v": 2}),  # the last put of a key wins
            SearchOp(("t",)),
            ListNamespacesOp(),
            PutOp(("t",), "old", None),
        ]
    )
    assert results[0] is None and results[1] is None and results[3] is None
    assert results[2] is not None and results[2].value == {"v": 0}  # type: ignore[union-attr]
    assert [i.key for i in results[4]] == ["old"]  # type: ignore[union-attr]
    assert results[5] == [("t",)]
    assert store.get(("t",), "new").value == {"v": 2}  # type: ignore[union-attr]
    assert store.get(("t",), "old") is None
    with pytest.raises(InvalidTypeError, match="unknown store op"):
        store.batch(["get"])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="positive number of minutes"):
        store.put(("t",), "x", {"v": 1}, ttl=-5)
    assert store.get(("t",), "x") is None
    with pytest.raises(InvalidTypeError, match="must be a dict"):
        store.batch([PutOp(("t",), "x", ["not", "a", "dict"])])  # type: ignore[arg-type]


async def test_async_twins(store: AgentMemoryStore) -> None:
    await store.aput(("a", "u1"), "k1", {"text": "I sail on weekends."})
    await store.aput(("a", "u1"), "k2", {"text": "I hate mushrooms."})
    got = await store.aget(("a", "u1"), "k1")
    assert got is not None and got.value["text"] == "I sail on weekends."
    hits = await store.asearch(("a",), query="boats and the sea", limit=1)
    assert hits[0].key == "k1"
    assert await store.alist_namespaces() == [("a", "u1")]
    await store.adelete(("a", "u1"), "k1")
    assert await store.aget(("a", "u1"), "k1") is None


def test_policy_decides_and_store_persists(tmp_path: Path, embeddings: Any) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with AgentMemory(url, embeddings=embeddings, policy="fifo", capacity=2) as memory:
        store = AgentMemoryStore(memory)
        for i in range(3):
            store.put(("notes",), f"n{i}", {"text": f"Note number {i}."})
        assert store.get(("notes",), "n0") is None  # forgotten by the FIFO policy
        kinds = [d.kind for d in memory.decisions(store.memory_namespace(("notes",)))]
        assert OpKind.DELETE in kinds
    with AgentMemory(url, embeddings=embeddings) as memory:
        store = AgentMemoryStore(memory)
        assert [i.key for i in store.search(("notes",))] == ["n2", "n1"]


def test_bad_arguments(memory: AgentMemory) -> None:
    with pytest.raises(InvalidTypeError, match="AgentMemory"):
        AgentMemoryStore({})  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="prefix"):
        AgentMemoryStore(memory, prefix="a/b")
    with pytest.raises(InvalidTypeError, match="fields"):
        AgentMemoryStore(memory, fields="text")


def test_create_agent_with_the_store(memory: AgentMemory) -> None:
    """Tools reach the store through ``runtime.store``; recall crosses threads, not users."""

    @tool
    def save_fact(fact: str, runtime: ToolRuntime) -> str:
        """Save a fact about the user."""
        user = runtime.config["configurable"]["user_id"]
        assert runtime.store is not None
        runtime.store.put(("facts", user), str(abs(hash(fact))), {"text": fact})
        return "saved"

    @tool
    def find_facts(query: str, runtime: ToolRuntime) -> str:
        """Find facts about the user."""
        user = runtime.config["configurable"]["user_id"]
        assert runtime.store is not None
        hits = runtime.store.search(("facts", user), query=query, limit=3)
        return "\n".join(h.value["text"] for h in hits) or "nothing"

    store = AgentMemoryStore(memory)
    with ScriptedOpenAIServer() as server:
        llm = ChatOpenAI(model="scripted", base_url=server.url, api_key="test", max_retries=0)
        agent = create_agent(llm, tools=[save_fact, find_facts], store=store)
        server.add(tool_call("save_fact", fact="Alice plays the oboe."), "Saved.")
        agent.invoke(
            {"messages": [HumanMessage("I play the oboe.")]},
            {"configurable": {"user_id": "alice", "thread_id": "1"}},
        )
        server.add(tool_call("find_facts", query="instrument"), "The oboe.")
        agent.invoke(
            {"messages": [HumanMessage("Which instrument?")]},
            {"configurable": {"user_id": "alice", "thread_id": "2"}},
        )
        assert server.requests[-1]["messages"][-1]["content"] == "Alice plays the oboe."
        server.add(tool_call("find_facts", query="instrument"), "No idea.")
        agent.invoke(
            {"messages": [HumanMessage("Which instrument?")]},
            {"configurable": {"user_id": "bob", "thread_id": "3"}},
        )
        assert server.requests[-1]["messages"][-1]["content"] == "nothing"
    assert store.list_namespaces() == [("facts", "alice")]
