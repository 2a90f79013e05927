"""AGENTMEM_FAISS_THREADS and AGENTMEM_HNSW_THRESHOLD: read when an index is made, checked."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import faiss
import numpy as np
import pytest

from langchain_agentmem import InvalidInputError
from langchain_agentmem.index import dense
from langchain_agentmem.index.dense import DenseIndex
from langchain_agentmem.models import load_env

VARIABLES = ("AGENTMEM_FAISS_THREADS", "AGENTMEM_HNSW_THRESHOLD")


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(dense, "_threads", threading.local())
    yield
    faiss.omp_set_num_threads(1)  # as the rest of the suite expects


def test_bad_values_do_not_break_help() -> None:
    env = {**os.environ, "AGENTMEM_FAISS_THREADS": "", "AGENTMEM_HNSW_THRESHOLD": "lots"}
    run = subprocess.run(
        [sys.executable, "-m", "langchain_agentmem.cli", "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "usage: agentmem" in run.stdout


def test_empty_values_are_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VARIABLES:
        monkeypatch.setenv(name, " ")
    assert DenseIndex(8).hnsw_threshold == 20000
    assert faiss.omp_get_max_threads() == 1


@pytest.mark.parametrize(
    ("name", "value", "accepts"),
    [
        ("AGENTMEM_HNSW_THRESHOLD", "lots", "a whole number >= 0 (default 20000)"),
        ("AGENTMEM_HNSW_THRESHOLD", "-3", "a whole number >= 0 (default 20000)"),
        ("AGENTMEM_FAISS_THREADS", "two", "a whole number >= 1 (default 1)"),
        ("AGENTMEM_FAISS_THREADS", "0", "a whole number >= 1 (default 1)"),
    ],
)
def test_a_bad_value_is_named_when_an_index_is_made(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, accepts: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(InvalidInputError) as info:
        DenseIndex(8)
    (line,) = str(info.value).splitlines()
    assert line.startswith(f"{name}={value!r} ") and accepts in line


def test_values_from_dotenv_apply(tmp_path: Path) -> None:
    # Read when an index is made, after the package was imported: `.env` is read by then.
    (tmp_path / ".env").write_text("AGENTMEM_HNSW_THRESHOLD=5\nAGENTMEM_FAISS_THREADS=2\n")
    try:
        load_env(tmp_path / ".env")
        assert DenseIndex(8).hnsw_threshold == 5
        assert faiss.omp_get_max_threads() == 2
    finally:
        for name in VARIABLES:
            os.environ.pop(name, None)


def test_every_thread_that_searches_gets_the_setting() -> None:
    """OpenMP keeps the thread count per thread: ``asearch`` runs in worker threads."""
    index = DenseIndex(8)
    index.add([1], np.ones((1, 8), dtype=np.float32) / np.sqrt(8))
    seen: list[int] = []

    def search() -> None:
        faiss.omp_set_num_threads(4)  # what a fresh thread may start with
        index.search(np.ones(8, dtype=np.float32) / np.sqrt(8), 1)
        seen.append(faiss.omp_get_max_threads())

    worker = threading.Thread(target=search)
    worker.start()
    worker.join()
    assert seen == [1]
