"""A namespace loaded past the HNSW threshold is searched exactly at once; its graph is built
in the background, taken only when no write came meanwhile, and saved once taken."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langchain_agentmem import AgentMemory, HybridConfig
from langchain_agentmem.index.persist import IndexFiles
from langchain_agentmem.namespace import cache as cache_module
from langchain_agentmem.namespace.view import NamespaceView
from tests.stores import HashEmbeddings

SMALL = HybridConfig(hnsw_threshold=8)
TEXTS = [f"note {i} about {topic}" for i in range(6) for topic in ("tea", "rowing", "Lisbon")]


class Gate:
    """Holds the background graph builds until opened (a build otherwise ends in ms)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.open = threading.Event()
        self.started = threading.Event()
        real = cache_module.build_graph

        def held(*args: Any) -> Any:
            self.started.set()
            assert self.open.wait(30), "the test never opened the gate"
            return real(*args)

        monkeypatch.setattr(cache_module, "build_graph", held)


@pytest.fixture
def url(shared_store_url: str) -> Iterator[str]:
    with AgentMemory(
        shared_store_url, embeddings=HashEmbeddings(), hybrid=SMALL, persist_indexes=False
    ) as writer:
        writer.add_many(TEXTS, namespace="u", thread="t")
    yield shared_store_url


def _view(memory: AgentMemory, namespace: str = "u") -> NamespaceView:
    view = memory._access.cache.peek(namespace)
    assert view is not None
    return view


def test_a_cold_search_is_exact_and_the_graph_comes_after(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(monkeypatch)
    with AgentMemory(url, embeddings=HashEmbeddings(), hybrid=SMALL, persist_indexes=False) as m:
        exact = m.search("rowing", namespace="u", k=18, mode="dense")
        assert gate.started.wait(10)
        assert not _view(m).dense.approximate  # answered without waiting for the graph
        assert len(exact) == len(TEXTS)
        gate.open.set()
        assert m._access.cache.wait_graphs(10)
        assert _view(m).dense.approximate
        after = m.search("rowing", namespace="u", k=18, mode="dense")
        assert [h.id for h in after[:6]] == [h.id for h in exact[:6]]


def test_a_write_during_the_build_keeps_the_graph_out(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(monkeypatch)
    with AgentMemory(url, embeddings=HashEmbeddings(), hybrid=SMALL, persist_indexes=False) as m:
        gone = m.search("Lisbon", namespace="u", k=1)[0]
        assert gate.started.wait(10)
        m.delete(gone.id, namespace="u")  # the graph being built still holds it
        gate.open.set()
        assert m._access.cache.wait_graphs(10)
        view = _view(m)
        assert not view.dense.approximate and gone.id not in view.rid_of
        assert gone.id not in {h.id for h in m.search("Lisbon", namespace="u", k=18)}
        m.add("one more note about tea", namespace="u", thread="t")  # a write builds it
        assert _view(m).dense.approximate


def test_the_graph_is_saved_once_taken(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with AgentMemory(
        sqlite_url, embeddings=HashEmbeddings(), hybrid=SMALL, persist_indexes=False
    ) as writer:
        writer.add_many(TEXTS, namespace="u", thread="t")
    with AgentMemory(sqlite_url, embeddings=HashEmbeddings(), hybrid=SMALL) as m:
        m.search("tea", namespace="u")
        assert m._access.cache.wait_graphs(10)
        paths = IndexFiles.beside(tmp_path / "store.db").paths("u")
        assert paths is not None and paths[0].exists()
        assert json.loads(paths[1].read_text())["approximate"] is True


def test_close_drops_the_builds_not_started(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = Gate(monkeypatch)
    with AgentMemory(url, embeddings=HashEmbeddings(), hybrid=SMALL, persist_indexes=False) as w:
        w.add_many(TEXTS, namespace="v", thread="t")
    m = AgentMemory(url, embeddings=HashEmbeddings(), hybrid=SMALL, persist_indexes=False)
    m.search("tea", namespace="u")
    m.search("tea", namespace="v")  # queued behind u's build
    assert gate.started.wait(10)
    threading.Timer(0.2, gate.open.set).start()
    m.close()  # waits for u's build, drops v's
    assert _view(m, "u").dense.approximate
    assert not _view(m, "v").dense.approximate


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_a_forked_process_builds_its_own_graphs(url: str) -> None:
    """A child forked while the parent's builder thread lives gets a thread of its own."""
    with AgentMemory(url, embeddings=HashEmbeddings(), hybrid=SMALL, persist_indexes=False) as w:
        w.add_many(TEXTS, namespace="v", thread="t")
    m = AgentMemory(url, embeddings=HashEmbeddings(), hybrid=SMALL, persist_indexes=False)
    try:
        m.search("tea", namespace="u")
        assert m._access.cache.wait_graphs(10)
        pid = os.fork()
        if pid == 0:  # the child: its own builder, then out without the parent's cleanup
            ok = False
            try:
                m.search("tea", namespace="v")
                ok = m._access.cache.wait_graphs(10) and _view(m, "v").dense.approximate
            finally:
                os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    finally:
        m.close()
