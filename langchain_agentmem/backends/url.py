"""Open a backend from a store URL."""

from __future__ import annotations

import os
from pathlib import Path

from langchain_agentmem.backends.base import Backend
from langchain_agentmem.errors import InvalidTypeError, UnknownStoreError


def agentmem_home() -> Path:
    """``$AGENTMEM_HOME``, default ``~/.agentmem``."""
    home = os.environ.get("AGENTMEM_HOME", "").strip()
    return Path(home).expanduser() if home else Path.home() / ".agentmem"


def default_store_url() -> str:
    """The embedded default store: ``sqlite:///$AGENTMEM_HOME/memory.db``."""
    return "sqlite:///" + str(agentmem_home() / "memory.db")


def open_backend(url: str | os.PathLike[str] | None) -> Backend:
    """Open the store named by ``url``.

    Accepted: ``None`` (the default file), ``":memory:"``, ``"sqlite:///path"`` (or
    ``"sqlite://:memory:"``), a plain path ending in ``.db`` / ``.sqlite``,
    ``"postgresql://..."``.
    """
    if url is None:
        url = default_store_url()
    if isinstance(url, os.PathLike):
        url = os.fspath(url)
    if not isinstance(url, str):
        raise InvalidTypeError(
            f"store url must be a str, got {type(url).__name__}; pass e.g. "
            "'sqlite:///memory.db' or ':memory:'"
        )
    from langchain_agentmem.backends.sqlite import SQLiteBackend

    if url in (":memory:", "sqlite://", "sqlite://:memory:", "sqlite:///:memory:"):
        return SQLiteBackend(":memory:")
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///") :]
        if not path:
            raise UnknownStoreError(f"store url {url!r} names no file; use 'sqlite:///path/to.db'")
        return SQLiteBackend(Path(path).expanduser())
    if url.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        try:
            from langchain_agentmem.backends.postgres import PostgresBackend
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise UnknownStoreError(f"store url {url!r} needs psycopg: {exc}") from None
        backend: Backend = PostgresBackend(url)
        return backend
    if "://" not in url and url.endswith((".db", ".sqlite", ".sqlite3")):
        return SQLiteBackend(Path(url).expanduser())
    raise UnknownStoreError(
        f"unknown store url {url!r}; use ':memory:', 'sqlite:///path/to/memory.db' or "
        "'postgresql://user@host/db'"
    )
