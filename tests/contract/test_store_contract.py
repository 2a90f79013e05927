"""The store contract: the same behaviour on ``:memory:``, a SQLite file and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from langchain_agentmem import (
    AgentMemory,
    InvalidInputError,
    OpKind,
    RecordNotFoundError,
    SentenceTransformerEmbeddings,
    StoreError,
)

ALICE = [
    "My name is Alice and I love playing chess.",
    "I live in Paris and work as a software engineer.",
    "My favourite food is sushi.",
]


def test_add_then_search_ranks_by_meaning(mem: AgentMemory) -> None:
    ids = [mem.add(t, namespace="alice")[0].record_ids[0] for t in ALICE]
    hits = mem.search("What is your name?", namespace="alice", k=3)
    assert hits[0].id == ids[0]
    assert sorted(h.id for h in hits) == sorted(ids)
    scores = [h.score for h in hits]
    assert all(s is not None and -1.0001 <= s <= 1.0001 for s in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    assert mem.search("Where do I live?", namespace="alice", k=1)[0].id == ids[1]


def test_get_round_trips_every_field(mem: AgentMemory) -> None:
    when = datetime(2023, 5, 8, 13, 56, 7, tzinfo=timezone.utc)
    meta = {"source": "chat", "tags": ["a", "b"], "nested": {"x": 1.5, "y": None}, "é": "ü"}
    (op,) = mem.add(
        "Tomorrow I fly to Oslo.", namespace="u", thread="t-1", metadata=meta, timestamp=when
    )
    record = mem.get(op.record_ids[0], namespace="u")
    assert (record.text, record.namespace, record.thread) == ("Tomorrow I fly to Oslo.", "u", "t-1")
    assert record.metadata == meta
    assert record.created_at == when
    assert record.embedding is not None and record.embedding.dtype == np.float32
    assert abs(float(np.linalg.norm(record.embedding)) - 1.0) < 1e-4
    assert record.id in [r.id for r in mem.records("u")]


def test_update_replaces_text_and_reindexes(mem: AgentMemory) -> None:
    (op,) = mem.add("I live in Lisbon.", namespace="u", metadata={"v": 1})
    rid = op.record_ids[0]
    before = mem.get(rid, namespace="u").embedding
    mem.update(rid, "We moved to Berlin last spring.", namespace="u")
    after = mem.get(rid, namespace="u")
    assert after.text == "We moved to Berlin last spring." and after.metadata == {"v": 1}
    assert before is not None and after.embedding is not None
    assert not np.allclose(before, after.embedding)
    assert mem.search("Which city in Germany?", namespace="u", k=1)[0].text == after.text
    mem.update(rid, "We moved to Munich.", namespace="u", metadata={"v": 2})
    assert mem.get(rid, namespace="u").metadata == {"v": 2}
    assert [d.kind for d in mem.decisions("u")] == [OpKind.ADD, OpKind.UPDATE, OpKind.UPDATE]


def test_delete_forgets_everywhere(mem: AgentMemory) -> None:
    ids = [mem.add(t, namespace="u")[0].record_ids[0] for t in ALICE]
    mem.delete(ids[0], namespace="u")
    assert ids[0] not in [h.id for h in mem.search("name", namespace="u", k=10)]
    assert [r.id for r in mem.records("u")] == ids[1:]
    with pytest.raises(RecordNotFoundError):
        mem.get(ids[0], namespace="u")
    with pytest.raises(RecordNotFoundError):
        mem.delete(ids[0], namespace="u")
    assert mem.delete(ids[0], namespace="u", missing_ok=True) is None


def test_audit_log_is_ordered_and_complete(mem: AgentMemory) -> None:
    a = mem.add("one fact", namespace="u")[0].record_ids[0]
    b = mem.add("two fact", namespace="u")[0].record_ids[0]
    mem.update(a, "one fact, revised", namespace="u")
    mem.delete(b, namespace="u")
    mem.add("other user", namespace="v")
    log = mem.decisions("u")
    assert [(d.kind, d.record_ids) for d in log] == [
        (OpKind.ADD, (a,)),
        (OpKind.ADD, (b,)),
        (OpKind.UPDATE, (a,)),
        (OpKind.DELETE, (b,)),
    ]
    seqs = [d.seq for d in log]
    assert seqs == sorted(set(seqs))
    assert all(d.namespace == "u" and d.reason and d.at.tzinfo is not None for d in log)
    assert [d.seq for d in mem.decisions("u", limit=2)] == seqs[-2:]
    assert [d.kind for d in mem.decisions("v")] == [OpKind.ADD]


def test_messages_round_trip_in_order(mem: AgentMemory) -> None:
    batch = [
        SystemMessage("Be brief."),
        HumanMessage("Hi, I'm Bob."),
        AIMessage("Hello Bob!", additional_kwargs={"x": [1, 2]}),
    ]
    mem.add_messages(batch, namespace="bob", thread="t1")
    mem.add_messages([HumanMessage("Second thread")], namespace="bob", thread="t2")
    mem.add_messages([HumanMessage("Still here?")], namespace="bob", thread="t1")
    got = mem.messages(namespace="bob", thread="t1")
    assert [type(m) for m in got] == [SystemMessage, HumanMessage, AIMessage, HumanMessage]
    assert [m.content for m in got] == ["Be brief.", "Hi, I'm Bob.", "Hello Bob!", "Still here?"]
    assert got[2].additional_kwargs == {"x": [1, 2]}
    assert [m.content for m in mem.messages(namespace="bob", thread="t1", last=2)] == [
        "Hello Bob!",
        "Still here?",
    ]
    assert mem.threads("bob") == ["t1", "t2"]
    assert mem.messages(namespace="alice", thread="t1") == []
    assert mem.clear_messages(namespace="bob", thread="t1") == 4
    assert mem.messages(namespace="bob", thread="t1") == []
    assert [m.content for m in mem.messages(namespace="bob", thread="t2")] == ["Second thread"]


def test_namespaces_are_hard_partitions(mem: AgentMemory) -> None:
    (a,) = mem.add("Alice's secret is the blue door.", namespace="alice")
    mem.add("Bob likes trains.", namespace="bob")
    mem.add_messages([HumanMessage("hi")], namespace="carol", thread="t")
    assert mem.namespaces() == ["alice", "bob", "carol"]
    hits = mem.search("secret blue door", namespace="bob", k=10)
    assert [h.namespace for h in hits] == ["bob"]
    secret = a.record_ids[0]
    with pytest.raises(RecordNotFoundError):
        mem.delete(secret, namespace="bob")
    with pytest.raises(RecordNotFoundError):
        mem.update(secret, "stolen", namespace="bob")
    with pytest.raises(RecordNotFoundError):
        mem.get(secret, namespace="bob")
    assert mem.get(secret, namespace="alice").text == "Alice's secret is the blue door."
    assert [d.kind for d in mem.decisions("bob")] == [OpKind.ADD]


def test_ids_are_unique_per_namespace(mem: AgentMemory) -> None:
    mem.add("one", namespace="a", record_id="r1")
    # Another namespace's id is another record: nothing tells b that a holds r1.
    mem.add("two", namespace="b", record_id="r1")
    with pytest.raises(InvalidInputError, match="already exists"):
        mem.add("three", namespace="a", record_id="r1")
    assert mem.get("r1", namespace="a").text == "one"
    assert mem.get("r1", namespace="b").text == "two"
    mem.delete("r1", namespace="b")
    assert mem.get("r1", namespace="a").text == "one"
    assert [r.namespace for r in mem.admin_find_record("r1")] == ["a"]


def test_store_keys_are_never_handed_out_twice(memory: AgentMemory) -> None:
    """A batch's records take their keys before they are written (the view indexes them
    first): keys stay unique across batches, namespaces and deletes of the newest record,
    and a batch that fails leaves no record and no key in use."""
    store = memory.backend

    def keys(namespace: str) -> list[int]:
        rows = store.get_records(namespace, [r.id for r in memory.records(namespace)])
        return sorted(row.rid for row in rows)

    memory.add_many(["one", "two", "three"], namespace="a", record_ids=["p", "q", "r"])
    memory.add_many(["four", "five"], namespace="b")
    newest = max(keys("a") + keys("b"))
    memory.delete(memory.records("b")[-1].id, namespace="b")
    with pytest.raises(InvalidInputError, match="already exists"):
        memory.add_many(["six", "seven"], namespace="a", record_ids=["x", "q"])
    assert "x" not in [r.id for r in memory.records("a")]
    memory.add_many(["eight", "nine"], namespace="a", record_ids=["x", "y"])
    later = keys("a")[-2:]
    assert min(later) > newest and len(set(keys("a") + keys("b"))) == 6
    with store.transaction() as tx:
        first, second = tx.new_rids(3), tx.new_rids(2)
    assert len(set(first + second)) == 5 and min(first + second) > max(later)
    assert memory.search("nine", namespace="a", k=1)[0].id == "y"


def test_a_record_is_claimed_for_annotation_by_one_holder(memory: AgentMemory) -> None:
    (op,) = memory.add("I live in Lyon.", namespace="u")
    memory.add("Bob likes trains.", namespace="v", record_id=op.record_ids[0])
    rid, store, now = op.record_ids[0], memory.backend, 1_000.0
    assert store.claim("u", rid, "one", until=now + 60, now=now)
    assert not store.claim("u", rid, "two", until=now + 60, now=now + 59)
    assert store.claim("v", rid, "two", until=now + 1_000, now=now)  # another namespace's
    assert store.claim("u", rid, "one", until=now + 120, now=now + 30)  # its holder renews
    store.release("u", rid, "two")  # not two's to release
    assert not store.claim("u", rid, "two", until=now + 200, now=now + 100)
    assert store.claim("u", rid, "two", until=now + 200, now=now + 120)  # one's ran out
    store.release("u", rid, "two")
    assert store.claim("u", rid, "one", until=now + 300, now=now + 130)
    memory.delete_namespace("u")  # erasure takes the namespace's claims with it
    assert store.claim("u", rid, "two", until=now + 300, now=now + 140)
    assert not store.claim("v", rid, "one", until=now + 300, now=now + 140)


def test_fifo_policy_on_every_store(
    store_url: str, embeddings: SentenceTransformerEmbeddings
) -> None:
    with AgentMemory(store_url, embeddings=embeddings, policy="fifo", capacity=2) as mem:
        for text in ["first fact", "second fact", "third fact"]:
            mem.add(text, namespace="u")
        assert [r.text for r in mem.records("u")] == ["second fact", "third fact"]
        assert [d.kind for d in mem.decisions("u")] == [
            OpKind.ADD,
            OpKind.ADD,
            OpKind.DELETE,
            OpKind.ADD,
        ]
        assert [h.text for h in mem.search("fact", namespace="u", k=5)] != []
        assert "first fact" not in [h.text for h in mem.search("first", namespace="u", k=5)]


async def test_async_twins(mem: AgentMemory) -> None:
    rid = (await mem.aadd("I play the violin.", namespace="u", thread="t"))[0].record_ids[0]
    assert (await mem.asearch("music instrument", namespace="u", k=1))[0].id == rid
    await mem.aupdate(rid, "I play the cello.", namespace="u")
    assert (await mem.aget(rid, namespace="u")).text == "I play the cello."
    await mem.aadd_messages([HumanMessage("hello")], namespace="u", thread="t")
    assert [m.content for m in await mem.amessages(namespace="u", thread="t")] == ["hello"]
    await mem.adelete(rid, namespace="u")
    assert await mem.arecords("u") == []
    assert [d.kind for d in await mem.adecisions("u")] == [
        OpKind.ADD,
        OpKind.UPDATE,
        OpKind.DELETE,
    ]


def test_two_objects_on_one_store_catch_up(
    shared_store_url: str, embeddings: SentenceTransformerEmbeddings
) -> None:
    reader = AgentMemory(shared_store_url, embeddings=embeddings)
    writer = AgentMemory(shared_store_url, embeddings=embeddings)
    try:
        assert reader.search("pets", namespace="u") == []
        (op,) = writer.add("I have two dogs.", namespace="u")
        rid = op.record_ids[0]
        assert [h.id for h in reader.search("pets", namespace="u", k=1)] == [rid]
        reader.update(rid, "I have a parrot that talks.", namespace="u")
        assert writer.search("bird", namespace="u", k=1)[0].text == "I have a parrot that talks."
        writer.add("I drive a red car.", namespace="u")
        writer.delete(rid, namespace="u")
        assert [h.text for h in reader.search("pets", namespace="u", k=5)] == ["I drive a red car."]
        writer.add_messages([HumanMessage("from writer")], namespace="u", thread="t")
        assert [m.content for m in reader.messages(namespace="u", thread="t")] == ["from writer"]
        assert [d.seq for d in reader.decisions("u")] == [d.seq for d in writer.decisions("u")]
    finally:
        reader.close()
        writer.close()


def test_restart_keeps_everything(
    shared_store_url: str, embeddings: SentenceTransformerEmbeddings
) -> None:
    with AgentMemory(shared_store_url, embeddings=embeddings) as first:
        ids = [first.add(t, namespace="alice", thread="A")[0].record_ids[0] for t in ALICE]
        first.delete(ids[2], namespace="alice")
        first.add_messages([HumanMessage("remember me")], namespace="alice", thread="A")
        log = first.decisions("alice")
    with AgentMemory(shared_store_url, embeddings=embeddings) as again:
        assert [r.id for r in again.records("alice")] == ids[:2]
        assert again.search("What is my name?", namespace="alice", k=1)[0].id == ids[0]
        assert [m.content for m in again.messages(namespace="alice", thread="A")] == ["remember me"]
        assert again.decisions("alice") == log
        again.add("after restart", namespace="alice")
        assert again.decisions("alice")[-1].seq > log[-1].seq


def test_newer_schema_is_refused(
    shared_store_url: str, embeddings: SentenceTransformerEmbeddings
) -> None:
    with AgentMemory(shared_store_url, embeddings=embeddings) as first:
        first.add("kept", namespace="u")
        backend = first.backend
        with backend._write() as cur:  # type: ignore[attr-defined]
            cur.execute(
                backend.q("UPDATE agentmem_meta SET value = ? WHERE key = 'schema_version'"),  # type: ignore[attr-defined]
                ("99",),
            )
    with pytest.raises(StoreError, match="schema version 99"):
        AgentMemory(shared_store_url, embeddings=embeddings)


def test_closed_store_says_so(store_url: str, embeddings: SentenceTransformerEmbeddings) -> None:
    mem = AgentMemory(store_url, embeddings=embeddings)
    mem.close()
    with pytest.raises(StoreError, match="closed"):
        mem.records("u")
