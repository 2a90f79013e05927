"""A forgetting policy shared by several processes: decisions never race each other."""

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
