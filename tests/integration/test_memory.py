"""AgentMemory against the real model and a real SQLite file."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from langchain_agentmem import (
    AgentMemory,
    InvalidInputError,
    InvalidTypeError,
    OpKind,
    RecordNotFoundError,
    SentenceTransformerEmbeddings,
    UnknownPolicyError,
    UnknownStoreError,
)

ALICE = [
    "My name is Alice and I love playing chess.",
    "I live in Paris and work as a software engineer.",
    "My favourite food is sushi.",
]


def test_seed_rag_example_recalls_name(memory: AgentMemory) -> None:
    for sentence in ALICE:
        memory.add(sentence, namespace="alice")
    hits = memory.search("What is your name?", namespace="alice", k=1)
    assert [h.text for h in hits] == ["My name is Alice and I love playing chess."]
    assert hits[0].score is not None and 0 < hits[0].score <= 1.0001


def test_add_returns_ops_and_audit_log(memory: AgentMemory) -> None:
    ops = memory.add("I have a cat named Tom.", namespace="u", thread="t1", metadata={"a": 1})
    assert [op.kind for op in ops] == [OpKind.ADD]
    (record_id,) = ops[0].record_ids
    record = memory.get(record_id, namespace="u")
    assert record.text == "I have a cat named Tom."
    assert record.thread == "t1" and record.metadata == {"a": 1}
    assert record.created_at is not None and record.created_at.tzinfo is not None
    log = memory.decisions("u")
    assert [(d.kind, d.record_ids, d.policy) for d in log] == [
        (OpKind.ADD, (record_id,), "keep_all")
    ]
    assert log[0].reason


def test_update_reembeds_and_reindexes(memory: AgentMemory) -> None:
    (op,) = memory.add("I live in Lisbon.", namespace="u")
    rid = op.record_ids[0]
    before = memory.get(rid, namespace="u").embedding
    memory.update(rid, "We moved to Berlin last spring.", namespace="u")
    after = memory.get(rid, namespace="u")
    assert after.text == "We moved to Berlin last spring."
    assert before is not None and after.embedding is not None
    assert not np.allclose(before, after.embedding)
    assert after.updated_at is not None and after.created_at is not None
    assert after.updated_at >= after.created_at
    hits = memory.search("Which city in Germany?", namespace="u", k=1)
    assert hits[0].id == rid and "Berlin" in hits[0].text
    assert [d.kind for d in memory.decisions("u")] == [OpKind.ADD, OpKind.UPDATE]


def test_delete_removes_from_search(memory: AgentMemory) -> None:
    ids = [memory.add(t, namespace="u")[0].record_ids[0] for t in ALICE]
    memory.delete(ids[0], namespace="u")
    assert all(h.id != ids[0] for h in memory.search("name", namespace="u", k=3))
    with pytest.raises(RecordNotFoundError):
        memory.get(ids[0], namespace="u")
    assert len(memory.records("u")) == 2


def test_namespaces_are_partitions(memory: AgentMemory) -> None:
    (a,) = memory.add("Alice's secret is the blue door.", namespace="alice")
    memory.add("Bob likes trains.", namespace="bob")
    assert all(r.namespace == "bob" for r in memory.search("secret door", namespace="bob", k=5))
    with pytest.raises(RecordNotFoundError):
        memory.delete(a.record_ids[0], namespace="bob")
    with pytest.raises(RecordNotFoundError):
        memory.update(a.record_ids[0], "stolen", namespace="bob")
    assert memory.get(a.record_ids[0], namespace="alice").text == "Alice's secret is the blue door."


def test_caller_timestamp_kept(memory: AgentMemory) -> None:
    when = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    (op,) = memory.add("We went hiking.", namespace="u", timestamp=when)
    assert memory.get(op.record_ids[0], namespace="u").created_at == when


def test_fifo_keeps_newest(db_path: Path, embeddings: SentenceTransformerEmbeddings) -> None:
    mem = AgentMemory(f"sqlite:///{db_path}", embeddings=embeddings, policy="fifo", capacity=2)
    for text in ["first fact", "second fact", "third fact"]:
        mem.add(text, namespace="u")
    assert [r.text for r in mem.records("u")] == ["second fact", "third fact"]
    kinds = [d.kind for d in mem.decisions("u")]
    assert kinds == [OpKind.ADD, OpKind.ADD, OpKind.DELETE, OpKind.ADD]
    assert "capacity 2" in mem.decisions("u")[2].reason


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({"text": "", "namespace": "u"}, InvalidInputError, "empty"),
        ({"text": "   \n", "namespace": "u"}, InvalidInputError, "empty"),
        ({"text": 42, "namespace": "u"}, InvalidTypeError, "int"),
        ({"text": "ok", "namespace": ""}, InvalidInputError, "namespace"),
        ({"text": "ok", "namespace": 7}, InvalidTypeError, "namespace"),
        ({"text": "ok", "namespace": "u", "thread": ""}, InvalidInputError, "thread"),
        ({"text": "ok", "namespace": "u", "metadata": [1]}, InvalidTypeError, "metadata"),
    ],
)
def test_bad_add_input_is_refused_and_loses_nothing(
    memory: AgentMemory, kwargs: dict[str, object], error: type[Exception], fragment: str
) -> None:
    memory.add("keep me", namespace="u")
    with pytest.raises(error, match=fragment):
        memory.add(**kwargs)  # type: ignore[arg-type]
    assert [r.text for r in memory.records("u")] == ["keep me"]
    assert isinstance(error("x"), (ValueError, TypeError))


def test_bad_search_input(memory: AgentMemory) -> None:
    with pytest.raises(InvalidInputError, match="k must be >= 1"):
        memory.search("q", namespace="u", k=0)
    with pytest.raises(InvalidInputError, match="query"):
        memory.search(" ", namespace="u")
    with pytest.raises(InvalidTypeError):
        memory.search(None, namespace="u")  # type: ignore[arg-type]
    assert memory.search("anything", namespace="empty") == []


def test_unknown_store_and_policy() -> None:
    with pytest.raises(UnknownStoreError, match="mysql"):
        AgentMemory("mysql://x")
    with pytest.raises(UnknownPolicyError, match="keep_all"):
        AgentMemory(":memory:", policy="nope")
    with pytest.raises(InvalidInputError, match="capacity"):
        AgentMemory(":memory:", policy="fifo", capacity=0)
    with pytest.raises(InvalidInputError, match="fifo"):
        AgentMemory(":memory:", policy="keep_all", capacity=5)


def test_duplicate_record_id_refused(memory: AgentMemory) -> None:
    memory.add("one", namespace="a", record_id="r1")
    with pytest.raises(InvalidInputError, match="already exists in namespace 'a'"):
        memory.add("two", namespace="a", record_id="r1")
    memory.add("other", namespace="b", record_id="r1")  # ids are unique per namespace
    assert memory.get("r1", namespace="a").text == "one"
    assert memory.get("r1", namespace="b").text == "other"


def test_default_url_under_agentmem_home(tmp_path: Path) -> None:
    mem = AgentMemory()
    assert mem.url == "sqlite:///" + str(tmp_path / "agentmem-home" / "memory.db")
    mem.close()


def test_survives_restart_and_second_process(db_path: Path, embeddings: object) -> None:
    first = AgentMemory(f"sqlite:///{db_path}", embeddings=embeddings)  # type: ignore[arg-type]
    first.add("My name is Alice and I love playing chess.", namespace="alice", thread="A")
    first.close()
    script = textwrap.dedent(
        f"""
        from langchain_agentmem import AgentMemory
        m = AgentMemory("sqlite:///{db_path}")
        hits = m.search("What is my name?", namespace="alice", k=1)
        print(hits[0].text)
        m.add("Second process fact.", namespace="alice", thread="B")
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert "Alice" in out.stdout
    again = AgentMemory(f"sqlite:///{db_path}", embeddings=embeddings)  # type: ignore[arg-type]
    assert {r.text for r in again.records("alice")} == {
        "My name is Alice and I love playing chess.",
        "Second process fact.",
    }


def test_index_catches_up_with_other_writer(db_path: Path, embeddings: object) -> None:
    reader = AgentMemory(f"sqlite:///{db_path}", embeddings=embeddings)  # type: ignore[arg-type]
    writer = AgentMemory(f"sqlite:///{db_path}", embeddings=embeddings)  # type: ignore[arg-type]
    assert reader.search("pets", namespace="u") == []
    (op,) = writer.add("I have two dogs.", namespace="u")
    assert [h.id for h in reader.search("pets", namespace="u", k=1)] == list(op.record_ids)
    writer.delete(op.record_ids[0], namespace="u")
    assert reader.search("pets", namespace="u") == []


async def test_async_twins(memory: AgentMemory) -> None:
    ops = await memory.aadd("I play the violin.", namespace="u", thread="t")
    rid = ops[0].record_ids[0]
    hits = await memory.asearch("music instrument", namespace="u", k=1)
    assert hits[0].id == rid
    await memory.aupdate(rid, "I play the cello.", namespace="u")
    assert (await memory.aget(rid, namespace="u")).text == "I play the cello."
    assert len(await memory.arecords("u")) == 1
    await memory.adelete(rid, namespace="u")
    assert await memory.arecords("u") == []
    assert [d.kind for d in await memory.adecisions("u")] == [
        OpKind.ADD,
        OpKind.UPDATE,
        OpKind.DELETE,
    ]
