"""Shared fixtures: the real bundled embedding model and real stores."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from langchain_agentmem import AgentMemory, SentenceTransformerEmbeddings

# store_url / shared_store_url / pg_url / hash_embeddings: one fixture over every backend.
pytest_plugins = ("tests.stores",)


@pytest.fixture(scope="session")
def embeddings() -> SentenceTransformerEmbeddings:
    """The bundled all-MiniLM-L6-v2, loaded once per test session."""
    emb = SentenceTransformerEmbeddings()
    emb.embed_query("warm up")
    return emb


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A fresh SQLite file path."""
    return tmp_path / "memory.db"


@pytest.fixture
def memory(db_path: Path, embeddings: SentenceTransformerEmbeddings) -> Iterator[AgentMemory]:
    """An AgentMemory on a real SQLite file with the real model."""
    mem = AgentMemory(f"sqlite:///{db_path}", embeddings=embeddings)
    yield mem
    mem.close()


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never touch the user's real ~/.agentmem from tests."""
    monkeypatch.setenv("AGENTMEM_HOME", str(tmp_path / "agentmem-home"))
