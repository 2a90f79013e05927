"""A forgetting policy shared by several processes: decisions never race each other, and
every process decides as one process alone would on the same store."""

from __future__ import annotations

import multiprocessing as mp
from typing import Any

import pytest

from langchain_agentmem import AgentMemory, OpKind
from tests.stores import HashEmbeddings

WRITERS = 4
PER_WRITER = 40
CAPACITY = 10
NAMESPACE = "bounded"

ctx = mp.get_context("forkserver")
ctx.set_forkserver_preload([__name__])


def _fifo_writer(url: str, writer: int, start: Any) -> None:
    mem = AgentMemory(url, embeddings=HashEmbeddings(), policy="fifo", capacity=CAPACITY)
    start.wait()
    for i in range(PER_WRITER):
        mem.add(f"writer {writer} fact {i}", namespace=NAMESPACE, record_id=f"w{writer}-{i}")
    mem.close()


@pytest.mark.slow
def test_fifo_capacity_holds_under_concurrent_writers(shared_store_url: str) -> None:
    start = ctx.Barrier(WRITERS + 1)
    procs = [ctx.Process(target=_fifo_writer, args=(shared_store_url, w, start)) for w in range(4)]
    for p in procs:
        p.start()
    start.wait(120)
    for p in procs:
        p.join(240)
    # A writer that decided on a stale state would try to evict a record another writer
    # already evicted and die with RecordNotFoundError.
    assert [p.exitcode for p in procs] == [0] * WRITERS

    mem = AgentMemory(shared_store_url, embeddings=HashEmbeddings())
    records = mem.records(NAMESPACE)
    assert len(records) == CAPACITY
    log = mem.decisions(NAMESPACE)
    adds = [d for d in log if d.kind is OpKind.ADD]
    deleted = [rid for d in log if d.kind is OpKind.DELETE for rid in d.record_ids]
    assert len(adds) == WRITERS * PER_WRITER
    assert len(deleted) == len(set(deleted)) == WRITERS * PER_WRITER - CAPACITY
    # The survivors are exactly the last CAPACITY adds of the log: newest kept, in order.
    assert {r.id for r in records} == {d.record_ids[0] for d in adds[-CAPACITY:]}
    mem.close()


NAMES = ["Anna", "Bob", "Chen", "Dara", "Eli"]
CITIES = ["Paris", "Lisbon", "Osaka", "Lima"]


def fact(writer: int, i: int) -> str:
    """Texts that differ in what the policies score (names, numbers, dates, length, asks)."""
    name, city = NAMES[(writer + i) % 5], CITIES[(writer * 3 + i) % 4]
    if i % 5 == 0:
        return f"writer {writer} fact {i}: ok, thanks!"
    if i % 5 == 1:
        return f"writer {writer} fact {i}: did {name} like {city}?"
    return f"writer {writer} fact {i}: {name} moved to {city} on May {i % 28 + 1}, 20{10 + i % 14}"


def _policy_writer(url: str, policy: str, writer: int, start: Any) -> None:
    mem = AgentMemory(url, embeddings=HashEmbeddings(), policy=policy, capacity=CAPACITY)
    start.wait()
    for i in range(PER_WRITER):
        mem.add(
            fact(writer, i), namespace=NAMESPACE, thread=f"t{writer}", record_id=f"w{writer}-{i}"
        )
    mem.close()


def _turn_taking_writer(url: str, policy: str, writer: int, turn: Any, cond: Any, out: Any) -> None:
    """Add this writer's items when it is their turn: writer w adds item i at turn i*W + w."""
    mem = AgentMemory(url, embeddings=HashEmbeddings(), policy=policy, capacity=CAPACITY)
    for i in range(PER_WRITER):
        with cond:
            assert cond.wait_for(lambda i=i: turn.value == i * WRITERS + writer, timeout=120)
        ops = mem.add(
            fact(writer, i), namespace="turns", thread=f"t{writer}", record_id=f"w{writer}-{i}"
        )
        out.put((f"w{writer}-{i}", [(op.kind.value, op.record_ids) for op in ops]))
        with cond:
            turn.value += 1
            cond.notify_all()
    mem.close()


@pytest.mark.slow
@pytest.mark.parametrize(
    "policy", ["fifo", "lru", "random", "importance", "novelty", "forgetting_curve", "learned"]
)
def test_every_policy_holds_capacity_under_concurrent_writers(
    shared_store_url: str, policy: str
) -> None:
    start = ctx.Barrier(WRITERS + 1)
    procs = [
        ctx.Process(target=_policy_writer, args=(shared_store_url, policy, w, start))
        for w in range(WRITERS)
    ]
    for p in procs:
        p.start()
    start.wait(120)
    for p in procs:
        p.join(240)
    # A writer that decided on a stale state would die with RecordNotFoundError.
    assert [p.exitcode for p in procs] == [0] * WRITERS
    mem = AgentMemory(shared_store_url, embeddings=HashEmbeddings())
    records = mem.records(NAMESPACE)
    log = mem.decisions(NAMESPACE)
    mem.close()
    assert len(records) <= CAPACITY
    deleted = [rid for d in log if d.kind is OpKind.DELETE for rid in d.record_ids]
    assert len(deleted) == len(set(deleted))
    decided = [d for d in log if d.kind is not OpKind.DELETE]  # one per item offered
    assert len(decided) == WRITERS * PER_WRITER
    added = {d.record_ids[0] for d in log if d.kind is OpKind.ADD}
    assert {r.id for r in records} <= added


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["fifo", "lru", "importance", "novelty", "learned"])
def test_every_process_decides_as_one_process_alone(shared_store_url: str, policy: str) -> None:
    """Writers take turns, so each item is decided by a process that did not write the one
    before it; one process alone, offered the same items in the same order, decides the same:
    what a policy reads comes from the store, not from what one process happened to see.
    (``random`` draws per process and ``forgetting_curve`` reads each process's clock.)"""
    turn, cond, out = ctx.Value("i", 0), ctx.Condition(), ctx.Queue()
    procs = [
        ctx.Process(target=_turn_taking_writer, args=(shared_store_url, policy, w, turn, cond, out))
        for w in range(WRITERS)
    ]
    for p in procs:
        p.start()
    decided = dict(out.get(timeout=240) for _ in range(WRITERS * PER_WRITER))
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0] * WRITERS
    alone = AgentMemory(":memory:", embeddings=HashEmbeddings(), policy=policy, capacity=CAPACITY)
    for i in range(PER_WRITER):
        for w in range(WRITERS):
            rid = f"w{w}-{i}"
            ops = alone.add(fact(w, i), namespace="turns", thread=f"t{w}", record_id=rid)
            assert [(op.kind.value, op.record_ids) for op in ops] == decided[rid], rid
    shared = AgentMemory(shared_store_url, embeddings=HashEmbeddings())
    assert [r.id for r in shared.records("turns")] == [r.id for r in alone.records("turns")]
    kinds = {kind for ops in decided.values() for kind, _ in ops}
    assert "DELETE" in kinds  # the memory filled up and the policy chose what to forget
    shared.close()
    alone.close()
