"""Many processes on one store: nothing lost, nothing duplicated, nothing leaked, crash-safe.

Writer processes embed with the deterministic ``HashEmbeddings``: these tests are about the
store, and eight copies of the real model on two cores would only measure the model.
"""

from __future__ import annotations

import itertools
import json
import multiprocessing as mp
import re
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pytest
from langchain_core.messages import HumanMessage

from langchain_agentmem import AgentMemory
from langchain_agentmem.backends import open_backend
from langchain_agentmem.namespace.ops import apply_batch
from langchain_agentmem.types import MemoryOp, OpKind
from tests.stores import HashEmbeddings

WRITERS = 8
PER_WRITER = 200
PRIVATE_PER_WRITER = 20
SHARED_NS = "shared"
THREAD = "t"
TOPICS = ["coffee", "mountains", "violin", "trains", "gardening", "chess", "sushi", "rain"]

# Children fork from a server that imported this module once: no re-import per writer, and
# no fork of a parent that runs pool threads.
ctx = mp.get_context("forkserver")
ctx.set_forkserver_preload([__name__])


# -- writer processes (module level: spawned children import them) ----------------------------
def _append_messages(url: str, writer: int, n: int, start: Any) -> None:
    mem = AgentMemory(url, embeddings=HashEmbeddings())
    start.wait()
    for i in range(n):
        mem.add_messages([HumanMessage(f"w{writer}-{i}")], namespace=SHARED_NS, thread=THREAD)
    mem.close()


def _add_records(url: str, writer: int, n: int, start: Any) -> None:
    mem = AgentMemory(url, embeddings=HashEmbeddings())
    start.wait()
    for i in range(n):
        topic = TOPICS[(writer + i) % len(TOPICS)]
        mem.add(
            f"writer {writer} note {i} about {topic}",
            namespace=SHARED_NS,
            record_id=f"w{writer}-{i}",
        )
        if i % (n // PRIVATE_PER_WRITER) == 0:
            mem.add(f"private {writer} {i} {topic}", namespace=f"private-{writer}")
    mem.close()


def _run_writers(target: Any, url: str) -> None:
    start = ctx.Barrier(WRITERS + 1)
    procs = [ctx.Process(target=target, args=(url, w, PER_WRITER, start)) for w in range(WRITERS)]
    for p in procs:
        p.start()
    start.wait(120)  # every writer has its store open: they start together
    for p in procs:
        p.join(240)
    assert [p.exitcode for p in procs] == [0] * WRITERS


def _tally(seen: Sequence[str]) -> dict[str, int]:
    """Lost, duplicated and out-of-order items among ``w{writer}-{i}`` labels."""
    counts = Counter(seen)
    expected = {f"w{w}-{i}" for w in range(WRITERS) for i in range(PER_WRITER)}
    order_breaks = 0
    for w in range(WRITERS):
        mine = [int(s.split("-")[1]) for s in seen if s.startswith(f"w{w}-")]
        order_breaks += sum(1 for a, b in itertools.pairwise(mine) if b <= a)
    return {
        "lost": len(expected - set(counts)),
        "duplicated": sum(c - 1 for c in counts.values()),
        "unexpected": len(set(counts) - expected),
        "order_breaks": order_breaks,
    }


def _index_ids(mem: AgentMemory, namespace: str) -> list[str]:
    hits = mem.search("note about anything", namespace=namespace, k=100_000, mode="dense")
    return [h.id for h in hits]


def _assert_index_matches_store(mem: AgentMemory, namespace: str) -> None:
    """The in-process index holds exactly the store's records and ranks like brute force."""
    stored = mem.records(namespace)
    hits = mem.search("a note about coffee and chess", namespace=namespace, k=100_000, mode="dense")
    assert sorted(h.id for h in hits) == sorted(r.id for r in stored)
    assert all(h.namespace == namespace for h in hits)
    if stored:
        query = np.asarray(HashEmbeddings().embed_query("a note about coffee and chess"))
        matrix = np.stack([r.embedding for r in stored])  # type: ignore[misc]
        exact = np.sort(matrix @ query)[::-1][:10]
        got = np.asarray([h.score for h in hits[:10]], dtype=np.float64)
        assert np.allclose(got, exact, atol=1e-5)


# -- 8 x 200 -------------------------------------------------------------------------------
@pytest.mark.slow
def test_eight_processes_append_to_one_thread(shared_store_url: str) -> None:
    _run_writers(_append_messages, shared_store_url)
    with AgentMemory(shared_store_url, embeddings=HashEmbeddings()) as mem:
        seen = [str(m.content) for m in mem.messages(namespace=SHARED_NS, thread=THREAD)]
    tally = _tally(seen)
    print(f"messages {len(seen)}: {tally}")
    assert len(seen) == WRITERS * PER_WRITER
    assert tally == {"lost": 0, "duplicated": 0, "unexpected": 0, "order_breaks": 0}


@pytest.mark.slow
def test_eight_processes_add_to_one_namespace(shared_store_url: str) -> None:
    observer = AgentMemory(shared_store_url, embeddings=HashEmbeddings())
    observer.add("observer seed about rain", namespace=SHARED_NS, record_id="seed")
    assert _index_ids(observer, SHARED_NS) == ["seed"]  # its index exists before the writers

    _run_writers(_add_records, shared_store_url)

    records = [r.id for r in observer.records(SHARED_NS)]
    adds = [d for d in observer.decisions(SHARED_NS) if d.kind is OpKind.ADD]
    assert len(adds) == len(records) == WRITERS * PER_WRITER + 1
    # The audit log (the change sequence) keeps each writer's order.
    tally = _tally([d.record_ids[0] for d in adds if d.record_ids[0] != "seed"])
    leaked = 0
    for w in range(WRITERS):
        private = observer.search("private note", namespace=f"private-{w}", k=1000)
        leaked += sum(1 for h in private if not h.text.startswith(f"private {w} "))
        assert len(private) == PRIVATE_PER_WRITER
    leaked += sum(
        1
        for h in observer.search("private", namespace=SHARED_NS, k=5000)
        if h.namespace != SHARED_NS or h.id.startswith("private")
    )
    print(f"records {len(records)}: {tally}, leaked {leaked}")
    assert tally == {"lost": 0, "duplicated": 0, "unexpected": 0, "order_breaks": 0}
    assert leaked == 0
    # An index built before the writers caught up; a fresh one is rebuilt: both match.
    _assert_index_matches_store(observer, SHARED_NS)
    with AgentMemory(shared_store_url, embeddings=HashEmbeddings()) as fresh:
        _assert_index_matches_store(fresh, SHARED_NS)
    observer.close()


# -- SIGKILL ---------------------------------------------------------------------------------
class _StallingOps(Sequence[MemoryOp]):
    """Ops that stall, inside the transaction, after the first ``before`` were applied."""

    def __init__(self, ops: list[MemoryOp], before: int, ready: Any) -> None:
        self._ops, self._before, self._ready = ops, before, ready

    def __len__(self) -> int:
        return len(self._ops)

    def __getitem__(self, i: Any) -> Any:
        return self._ops[i]

    def __iter__(self) -> Iterator[MemoryOp]:
        for i, op in enumerate(self._ops):
            if i == self._before:
                self._ready.set()
                time.sleep(600)
            yield op


class _StallingPayloads(Sequence[str]):
    """A message batch that stalls, inside the transaction, after ``before`` rows."""

    def __init__(self, payloads: list[str], before: int, ready: Any) -> None:
        self._payloads, self._before, self._ready = payloads, before, ready

    def __len__(self) -> int:
        return len(self._payloads)

    def __getitem__(self, i: Any) -> Any:
        return self._payloads[i]

    def __iter__(self) -> Iterator[str]:
        for i, p in enumerate(self._payloads):
            if i == self._before:
                self._ready.set()
                time.sleep(600)
            yield p


def _op(record_id: str) -> MemoryOp:
    vec = np.asarray(HashEmbeddings().embed_query(f"killed batch {record_id}"), dtype=np.float32)
    return MemoryOp(
        OpKind.ADD, (record_id,), "batch", text=f"killed {record_id}", embedding=vec, policy="test"
    )


def _stall_in_record_batch(url: str, ready: Any) -> None:
    backend = open_backend(url)
    apply_batch(backend, SHARED_NS, [_StallingOps([_op(f"k{i}") for i in range(5)], 3, ready)])


def _stall_in_message_batch(url: str, ready: Any) -> None:
    backend = open_backend(url)
    payloads = [json.dumps({"type": "human", "data": {"content": f"k{i}"}}) for i in range(5)]
    backend.append_messages(SHARED_NS, THREAD, _StallingPayloads(payloads, 3, ready))


def _busy_writer(url: str, writer: int, ready: Any) -> None:
    mem = AgentMemory(url, embeddings=HashEmbeddings())
    for b in range(10_000):
        batch = [HumanMessage(f"b{writer}.{b}-{j}") for j in range(40)]
        mem.add_messages(batch, namespace=SHARED_NS, thread=THREAD)
        for i in range(5):
            mem.add(f"busy {writer} {b} {i} about trains", namespace=SHARED_NS)
        if b == 2:
            ready.set()


def _assert_consistent(url: str, observer: AgentMemory) -> None:
    """Replaying the audit log gives the records exactly; batches landed whole or not at all."""
    live: dict[str, str] = {}
    for d in observer.decisions(SHARED_NS):
        if d.kind is OpKind.ADD:
            assert d.record_ids[0] not in live
            live[d.record_ids[0]] = d.text or ""
        elif d.kind is OpKind.UPDATE:
            live.update(dict.fromkeys(d.record_ids, d.text or ""))
        elif d.kind is OpKind.DELETE:
            for rid in d.record_ids:
                del live[rid]
    assert {r.id: r.text for r in observer.records(SHARED_NS)} == live
    batches = Counter(
        str(m.content).split("-")[0] for m in observer.messages(namespace=SHARED_NS, thread=THREAD)
    )
    assert batches.pop("seed") == 1
    assert all(re.fullmatch(r"b\d+\.\d+", batch) and n == 40 for batch, n in batches.items()), (
        batches
    )
    _assert_index_matches_store(observer, SHARED_NS)
    with AgentMemory(url, embeddings=HashEmbeddings()) as fresh:
        _assert_index_matches_store(fresh, SHARED_NS)


@pytest.mark.slow
def test_sigkill_mid_transaction_leaves_store_consistent(shared_store_url: str) -> None:
    observer = AgentMemory(shared_store_url, embeddings=HashEmbeddings())
    observer.add("before the crash about rain", namespace=SHARED_NS, record_id="before")
    observer.add_messages([HumanMessage("seed-0")], namespace=SHARED_NS, thread=THREAD)
    assert _index_ids(observer, SHARED_NS) == ["before"]

    # Killed inside the write transaction, part of the batch already sent to the store.
    for target in (_stall_in_record_batch, _stall_in_message_batch):
        ready = ctx.Event()
        proc = ctx.Process(target=target, args=(shared_store_url, ready))
        proc.start()
        assert ready.wait(60), "the writer never reached its batch"
        # Part of the batch is in the open transaction: readers must not see it.
        assert [r.id for r in observer.records(SHARED_NS)] == ["before"]
        assert len(observer.messages(namespace=SHARED_NS, thread=THREAD)) == 1
        proc.kill()
        proc.join(30)
        assert proc.exitcode == -9
    # The store is writable again at once (no lock left behind), and nothing partial shows.
    observer.add("after the crash about trains", namespace=SHARED_NS, record_id="after")
    assert [r.id for r in observer.records(SHARED_NS)] == ["before", "after"]
    assert [m.content for m in observer.messages(namespace=SHARED_NS, thread=THREAD)] == ["seed-0"]

    # Killed at a random moment of a busy loop, three times, then checked.
    for round_ in range(3):
        ready = ctx.Event()
        proc = ctx.Process(target=_busy_writer, args=(shared_store_url, round_, ready))
        proc.start()
        assert ready.wait(60)
        time.sleep(0.05 + 0.1 * round_)
        proc.kill()
        proc.join(30)
        assert proc.exitcode == -9
        _assert_consistent(shared_store_url, observer)
    observer.close()
