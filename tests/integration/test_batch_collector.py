"""Batches of writes pause Python's cyclic collector (``langchain_agentmem.collector``):
pausing loses nothing (a batch makes no reference cycles) and the collector is always
left as it was found, in every thread, whatever the batch does."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from langchain_agentmem import AgentMemory
from langchain_agentmem.collector import collector_paused
from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.memory.transfer import export_namespace
from tests.stores import HashEmbeddings


@pytest.fixture
def collector_on() -> Iterator[None]:
    """The collector enabled, as a process starts, and enabled again afterwards."""
    was = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        if was:
            gc.enable()
        else:
            gc.disable()


def _texts(n: int, start: int = 0) -> list[str]:
    return [
        f"Dana: note {i} about the garden, the bikes and trip {i % 7}." for i in range(start, n)
    ]


def _cycles_left_by(work: object) -> int:
    """Objects in reference cycles that ``work()`` left behind, the collector off meanwhile."""
    gc.collect()
    gc.disable()
    try:
        work()  # type: ignore[operator]
        return gc.collect()
    finally:
        gc.enable()


def test_a_batch_leaves_no_reference_cycles(
    store_url: str, hash_embeddings: HashEmbeddings, tmp_path: Path, collector_on: None
) -> None:
    """Adds that forget (a full FIFO), puts that replace, and an import: nothing for the
    cyclic collector to free afterwards, so pausing it during them kept no memory."""
    with AgentMemory(store_url, embeddings=hash_embeddings, policy="fifo", capacity=40) as mem:
        mem.add_many(_texts(10), namespace="warm")  # caches, lazy imports, first statements
        export = tmp_path / "u.jsonl"

        def work() -> None:
            mem.add_many(_texts(120), namespace="u", thread="t1")
            mem.put_many(_texts(30), namespace="u", record_ids=[f"p{i}" for i in range(30)])
            mem.put_many(_texts(60, 30), namespace="u", record_ids=[f"p{i}" for i in range(30)])
            export_namespace(mem.backend, mem.embeddings, "u", str(export), embeddings=True)
            mem.import_namespace(str(export), namespace="v")

        assert _cycles_left_by(work) == 0
        assert len(mem.records("u")) == 40
        assert len(mem.records("v")) == 40


def test_a_batch_embedded_by_the_bundled_model_leaves_no_reference_cycles(
    memory: AgentMemory, collector_on: None
) -> None:
    memory.add_many(["Dana: warming up. Second sentence here."], namespace="warm")
    turns = [f"Dana: I moved to Porto in {2000 + i}. The flat has a balcony." for i in range(40)]
    assert _cycles_left_by(lambda: memory.add_many(turns, namespace="u")) == 0
    assert len(memory.records("u")) == 40


def test_the_collector_is_left_as_it_was(
    hash_embeddings: HashEmbeddings, sqlite_url: str, collector_on: None
) -> None:
    with AgentMemory(sqlite_url, embeddings=hash_embeddings) as mem:
        mem.add_many(_texts(20), namespace="u")
        assert gc.isenabled()
        gc.disable()
        try:
            mem.add_many(_texts(40, 20), namespace="u")
            assert not gc.isenabled(), "a batch turned on a collector its host had turned off"
        finally:
            gc.enable()
        # A batch refused at its checks, and one that fails inside its transaction.
        with pytest.raises(InvalidInputError, match="appears twice"):
            mem.add_many(["Dana: one", "Dana: two"], namespace="u", record_ids=["x", "x"])
        assert gc.isenabled()
        with pytest.raises(InvalidInputError):
            mem.put_many(
                ["Dana: fine", "Dana: also fine"],
                namespace="u",
                record_ids=["y", "y"],
            )
        assert gc.isenabled()
        stored = len(mem.records("u"))
        failing = mem.backend.transaction

        def broken() -> object:
            raise RuntimeError("the store went away")

        mem.backend.transaction = broken  # type: ignore[method-assign]
        try:
            with pytest.raises(RuntimeError, match="went away"):
                mem.add_many(_texts(5), namespace="u")
        finally:
            mem.backend.transaction = failing  # type: ignore[method-assign]
        assert gc.isenabled()
        assert len(mem.records("u")) == stored


def test_batches_in_threads_leave_the_collector_on(
    hash_embeddings: HashEmbeddings, sqlite_url: str, collector_on: None
) -> None:
    """Threads share one collector: the last batch to end turns it back on, not the first."""
    with AgentMemory(sqlite_url, embeddings=hash_embeddings) as mem:
        errors: list[BaseException] = []

        def writer(k: int) -> None:
            try:
                for r in range(3):
                    mem.add_many(_texts(50), namespace=f"user-{k}-{r}")
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert gc.isenabled()
        assert all(len(mem.records(f"user-{k}-2")) == 50 for k in range(4))


def test_overlapping_pauses_end_with_the_last(collector_on: None) -> None:
    first, second = collector_paused(), collector_paused()
    first.__enter__()
    second.__enter__()
    assert not gc.isenabled()
    first.__exit__(None, None, None)
    assert not gc.isenabled(), "the first batch to end turned the collector on under another"
    second.__exit__(None, None, None)
    assert gc.isenabled()
    with pytest.raises(ValueError, match="inside"), collector_paused():
        raise ValueError("raised inside")
    assert gc.isenabled()


def test_batches_that_never_stop_overlapping_still_collect(
    collector_on: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Threads writing all the time keep a batch running: the collector still runs, once
    per ``MAX_PAUSED`` seconds, in the batch that ends then."""
    from langchain_agentmem import collector

    monkeypatch.setattr(collector, "MAX_PAUSED", 0.0)
    full: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            full.append(1)

    first = collector_paused()
    first.__enter__()
    gc.callbacks.append(seen)
    try:
        with collector_paused():
            pass
        assert full, "a batch ended after the pause ran past MAX_PAUSED and nothing collected"
        assert not gc.isenabled(), "the first batch still runs: the collector stays paused"
    finally:
        gc.callbacks.remove(seen)
        first.__exit__(None, None, None)
    assert gc.isenabled()


def test_a_long_import_collects_as_it_goes(
    collector_on: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An import of many records keeps one batch open: it collects once per ``MAX_PAUSED``
    seconds on the way, and its embedding runs with the collector as the host set it."""
    from langchain_agentmem import collector

    monkeypatch.setattr(collector, "MAX_PAUSED", 0.0)
    with AgentMemory(f"sqlite:///{tmp_path / 'a.db'}", embeddings=HashEmbeddings()) as source:
        source.add_many(_texts(40), namespace="dana")
        export = tmp_path / "dana.jsonl"
        source.export_namespace("dana", export)
    full: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2 and not gc.isenabled():
            full.append(1)  # a full collection while the import held the collector paused

    gc.callbacks.append(seen)
    try:
        with AgentMemory(f"sqlite:///{tmp_path / 'b.db'}", embeddings=HashEmbeddings()) as mem:
            mem.import_namespace(export, namespace="dana")
            assert len(mem.records("dana")) == 40
    finally:
        gc.callbacks.remove(seen)
    assert len(full) >= 20
    assert gc.isenabled()
