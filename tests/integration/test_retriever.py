"""``AgentMemoryRetriever`` on the real model and a real SQLite file."""

from __future__ import annotations

from datetime import datetime

import pytest
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda

from langchain_agentmem import (
    AgentMemory,
    AgentMemoryRetriever,
    InvalidInputError,
    InvalidTypeError,
)

ALICE = [
    "Alice moved to Lyon in 2021.",
    "Alice's dog is called Pixel.",
    "Alice works as a nurse at the city hospital.",
    "Alice is allergic to peanuts.",
    "Alice plays the cello on Sundays.",
]
BOB = ["Bob's dog is called Rex.", "Bob lives in Oslo.", "Bob plays the drums."]


@pytest.fixture
def filled(memory: AgentMemory) -> AgentMemory:
    memory.add_many(
        ALICE, namespace="alice", thread="t1", metadatas=[{"n": i} for i in range(len(ALICE))]
    )
    memory.add_many(BOB, namespace="bob", thread="t9")
    return memory


def test_documents_carry_text_id_and_provenance(filled: AgentMemory) -> None:
    retriever = AgentMemoryRetriever(memory=filled, namespace="alice", k=2, mode="dense")
    docs = retriever.invoke("What is the name of Alice's dog?")
    top = docs[0]
    assert top.page_content == "Alice's dog is called Pixel."
    record = filled.get(top.id or "", namespace="alice")
    assert top.metadata["id"] == top.id == record.id
    assert top.metadata["n"] == 1  # the record's own metadata
    assert top.metadata["thread"] == "t1"
    assert top.metadata["namespace"] == "alice"
    assert datetime.fromisoformat(top.metadata["created_at"]) == record.created_at
    assert datetime.fromisoformat(top.metadata["updated_at"]) == record.updated_at
    scores = [d.metadata["score"] for d in docs]
    assert scores == sorted(scores, reverse=True) and 0 < scores[0] <= 1.0001


def test_k_from_constructor_and_per_call(filled: AgentMemory) -> None:
    retriever = AgentMemoryRetriever(memory=filled, namespace="alice")
    assert retriever.k == 4
    assert len(retriever.invoke("Alice")) == 4
    assert len(retriever.invoke("Alice", k=2)) == 2
    # More than the namespace holds: everything it holds, and nothing of Bob's.
    docs = retriever.invoke("Alice", k=50)
    assert sorted(d.page_content for d in docs) == sorted(ALICE)


@pytest.mark.parametrize("mode", ["dense", "lexical", "hybrid"])
def test_mode_is_passed_to_the_memory(filled: AgentMemory, mode: str) -> None:
    query = "Who is called Pixel?"
    retriever = AgentMemoryRetriever(memory=filled, namespace="alice", k=3, mode=mode)
    docs = retriever.invoke(query)
    expected = filled.search(query, namespace="alice", k=3, mode=mode)
    assert [(d.id, d.metadata["score"]) for d in docs] == [(r.id, r.score) for r in expected]
    assert docs[0].page_content == "Alice's dog is called Pixel."


def test_default_mode_is_the_memorys_and_per_call_mode(filled: AgentMemory) -> None:
    query = "Where does Alice live?"
    retriever = AgentMemoryRetriever(memory=filled, namespace="alice", k=5)
    default = [r.id for r in filled.search(query, namespace="alice", k=5)]
    assert [d.id for d in retriever.invoke(query)] == default
    lexical = [r.id for r in filled.search(query, namespace="alice", k=5, mode="lexical")]
    assert [d.id for d in retriever.invoke(query, mode="lexical")] == lexical


def test_namespaces_never_mix(filled: AgentMemory) -> None:
    for mode in ("dense", "lexical", "hybrid"):
        bob = AgentMemoryRetriever(memory=filled, namespace="bob", k=10, mode=mode)
        docs = bob.invoke("What is Alice's dog called?")
        assert {d.metadata["namespace"] for d in docs} <= {"bob"}
        assert not {d.page_content for d in docs} & set(ALICE)
    empty = AgentMemoryRetriever(memory=filled, namespace="carol")
    assert empty.invoke("anything at all") == []


def test_sees_updates_and_deletes(filled: AgentMemory) -> None:
    retriever = AgentMemoryRetriever(memory=filled, namespace="alice", k=1, mode="dense")
    (doc,) = retriever.invoke("Where does Alice live?")
    assert doc.page_content == "Alice moved to Lyon in 2021."
    filled.update(doc.id or "", "Alice moved to Marseille in 2024.", namespace="alice")
    (after,) = retriever.invoke("Where does Alice live?")
    assert after.id == doc.id and after.page_content == "Alice moved to Marseille in 2024."
    assert after.metadata["updated_at"] >= after.metadata["created_at"]
    filled.delete(doc.id or "", namespace="alice")
    assert doc.id not in {d.id for d in retriever.invoke("Where does Alice live?", k=10)}


async def test_async_matches_sync(filled: AgentMemory) -> None:
    retriever = AgentMemoryRetriever(memory=filled, namespace="alice", k=3, mode="dense")
    query = "Does Alice have any allergies?"
    sync_docs = retriever.invoke(query)
    async_docs = await retriever.ainvoke(query)
    assert async_docs == sync_docs
    assert async_docs[0].page_content == "Alice is allergic to peanuts."
    assert len(await retriever.ainvoke(query, k=1)) == 1


def test_in_a_chain(filled: AgentMemory) -> None:
    retriever = AgentMemoryRetriever(memory=filled, namespace="alice", k=1, mode="dense")

    def context(docs: list[Document]) -> str:
        return "\n".join(d.page_content for d in docs)

    chain = retriever | RunnableLambda(context)
    assert chain.invoke("What instrument does Alice play?") == "Alice plays the cello on Sundays."
    assert chain.batch(["What is Alice's job?", "Which animal does Alice own?"]) == [
        "Alice works as a nurse at the city hospital.",
        "Alice's dog is called Pixel.",
    ]


def test_reserved_metadata_keys_come_from_the_record(memory: AgentMemory) -> None:
    memory.add("Alice likes tea.", namespace="alice", metadata={"id": "mine", "source": "chat"})
    (doc,) = AgentMemoryRetriever(memory=memory, namespace="alice").invoke("tea")
    assert doc.metadata["id"] == doc.id != "mine"
    assert doc.metadata["source"] == "chat"


@pytest.mark.parametrize(
    ("query", "error"),
    [("", InvalidInputError), ("   ", InvalidInputError), (42, InvalidTypeError)],
)
def test_bad_query(filled: AgentMemory, query: object, error: type[Exception]) -> None:
    retriever = AgentMemoryRetriever(memory=filled, namespace="alice")
    with pytest.raises(error, match="query"):
        retriever.invoke(query)  # type: ignore[arg-type]


async def test_bad_query_async(filled: AgentMemory) -> None:
    retriever = AgentMemoryRetriever(memory=filled, namespace="alice")
    with pytest.raises(InvalidInputError, match="query"):
        await retriever.ainvoke("")


def test_bad_k_and_mode(filled: AgentMemory) -> None:
    with pytest.raises(InvalidInputError, match="k must be >= 1"):
        AgentMemoryRetriever(memory=filled, namespace="alice", k=0)
    with pytest.raises(InvalidTypeError, match="k must be an int"):
        AgentMemoryRetriever(memory=filled, namespace="alice", k="3")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="unknown search mode 'semantic'"):
        AgentMemoryRetriever(memory=filled, namespace="alice", mode="semantic")
    retriever = AgentMemoryRetriever(memory=filled, namespace="alice")
    with pytest.raises(InvalidInputError, match="k must be >= 1"):
        retriever.invoke("Alice", k=0)
    with pytest.raises(InvalidInputError, match="unknown search mode 'fuzzy'"):
        retriever.invoke("Alice", mode="fuzzy")
    assert len(filled.records("alice")) == len(ALICE)


def test_bad_memory_and_namespace(filled: AgentMemory) -> None:
    with pytest.raises(InvalidTypeError, match="memory must be an AgentMemory"):
        AgentMemoryRetriever(memory="sqlite:///x.db", namespace="alice")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="namespace is empty"):
        AgentMemoryRetriever(memory=filled, namespace="")
