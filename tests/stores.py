"""Store fixtures shared by the test suite: one parametrized ``store_url`` over every backend.

PostgreSQL tests use ``$AGENTMEM_TEST_PG_URL`` (default
``postgresql://postgres@127.0.0.1:5432/test``), each in a schema of its own that is dropped
afterwards. When the server is unreachable they skip, except under ``CI=true`` where they
fail: CI must never pass by silently skipping them.
"""

from __future__ import annotations

import functools
import os
import re
import uuid
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest
from langchain_core.embeddings import Embeddings

PG_URL = os.environ.get("AGENTMEM_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
HASH_DIMS = 384


class HashEmbeddings(Embeddings):
    """Deterministic embedder for tests about the store, not the model.

    Hashed character trigrams of the lower-cased words (signed, 384 dims): texts sharing
    words and word pieces land close, so rankings still mean something. Stable across
    processes (``zlib.crc32``, not ``hash``).
    """

    def __init__(self, dimensions: int = HASH_DIMS) -> None:
        self.dimensions = dimensions

    def _embed(self, text: str) -> list[float]:
        vec = np.zeros(self.dimensions, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            padded = f"#{word}#"
            for i in range(max(1, len(padded) - 2)):
                h = zlib.crc32(padded[i : i + 3].encode("utf-8", "surrogatepass"))
                vec[h % self.dimensions] += 1.0 if (h >> 16) & 1 else -1.0
        if not vec.any():
            # Text without word characters still gets a stable, non-zero vector.
            h = zlib.crc32(text.encode("utf-8", "surrogatepass"))
            vec[h % self.dimensions] = 1.0
        return [float(x) for x in vec / np.linalg.norm(vec)]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed texts to store."""
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed a query."""
        return self._embed(text)


def in_ci() -> bool:
    """Whether the suite runs in CI (``CI=true``), where nothing may skip silently."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


@functools.lru_cache(maxsize=1)
def _pg_error() -> str | None:
    try:
        with psycopg.connect(PG_URL, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return str(exc).strip() or type(exc).__name__
    return None


def require_postgres() -> None:
    """Skip (locally) or fail (in CI) when the test PostgreSQL is unreachable."""
    error = _pg_error()
    if error is None:
        return
    message = f"PostgreSQL at {PG_URL} is unreachable: {error}"
    if in_ci():
        pytest.fail(message + " (CI=true: PostgreSQL tests must run)", pytrace=False)
    pytest.skip(message)


def create_pg_schema_url() -> tuple[str, str]:
    """A store URL on a fresh, unique schema of the test database, and the schema name."""
    require_postgres()
    schema = f"agentmem_test_{os.getpid()}_{uuid.uuid4().hex[:10]}"
    sep = "&" if "?" in PG_URL else "?"
    return f"{PG_URL}{sep}schema={schema}", schema


def drop_pg_schema(schema: str) -> None:
    """Drop a schema made by :func:`create_pg_schema_url`, tables and all."""
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(
            psycopg.sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
                psycopg.sql.Identifier(schema)
            )
        )


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A PostgreSQL store URL on a schema of its own, dropped after the test."""
    url, schema = create_pg_schema_url()
    try:
        yield url
    finally:
        drop_pg_schema(schema)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A SQLite store URL on a fresh file."""
    return f"sqlite:///{tmp_path / 'store.db'}"


STORE_KINDS = [
    "memory",
    "sqlite",
    pytest.param("postgres", marks=pytest.mark.postgres),
]
SHARED_STORE_KINDS = STORE_KINDS[1:]
"""Stores that several processes (or ``AgentMemory`` objects) can share."""


def _store_url(kind: str, tmp_path: Path) -> Iterator[str]:
    if kind == "memory":
        yield ":memory:"
    elif kind == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
    else:
        url, schema = create_pg_schema_url()
        try:
            yield url
        finally:
            drop_pg_schema(schema)


@pytest.fixture(params=STORE_KINDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh store of each kind: ``:memory:``, a SQLite file, a PostgreSQL schema."""
    yield from _store_url(request.param, tmp_path)


@pytest.fixture(params=SHARED_STORE_KINDS)
def shared_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh store that several processes can open: a SQLite file, a PostgreSQL schema."""
    yield from _store_url(request.param, tmp_path)


@pytest.fixture(scope="session")
def hash_embeddings() -> HashEmbeddings:
    """The deterministic test embedder."""
    return HashEmbeddings()


def save_chat_threads(url: str, threads: list[tuple[str, str]]) -> Path:
    """Write ``(thread id, human text)`` conversations into ``url``'s ``agentmem chat``
    checkpoint file, as chat keys and saves them; returns that file."""
    import sqlite3

    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import MessagesState, StateGraph

    from langchain_agentmem.cli.chat.threads import chat_checkpoints

    path = chat_checkpoints(url)
    assert path is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    builder = StateGraph(MessagesState)
    builder.add_node("echo", lambda state: {"messages": [AIMessage("ok")]})
    builder.add_edge("__start__", "echo")
    with sqlite3.connect(path, check_same_thread=False) as conn:
        graph = builder.compile(checkpointer=SqliteSaver(conn))
        for thread_id, text in threads:
            graph.invoke(
                {"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread_id}}
            )
    return path
