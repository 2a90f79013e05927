"""Open a backend from a store URL: SQLite, or PostgreSQL with the ``postgres`` extra."""

from __future__ import annotations

import os

from langchain_agentmem.backends.base import Backend
from langchain_agentmem.backends.sqlite import SQLiteBackend
from langchain_agentmem.backends.url import IN_MEMORY, default_store_url, redact_url, sqlite_file
from langchain_agentmem.errors import InvalidTypeError, UnknownStoreError, missing_extra


def open_backend(url: str | os.PathLike[str] | None) -> Backend:
    """Open the store named by ``url``.

    Accepted: ``None`` (the default file), ``":memory:"``, ``"sqlite:///path"`` (or
    ``"sqlite://:memory:"``), a plain path ending in ``.db`` / ``.sqlite``,
    ``"postgresql://..."`` (the ``postgres`` extra: without it, a ``MissingExtraError``).
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
    if url in IN_MEMORY:
        return SQLiteBackend(":memory:")
    if url == "sqlite:///":
        raise UnknownStoreError(f"store url {url!r} names no file; use 'sqlite:///path/to.db'")
    path = sqlite_file(url)
    if path is not None:
        return SQLiteBackend(path)
    if url.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        try:
            from langchain_agentmem.backends.postgres import PostgresBackend
        except ModuleNotFoundError as exc:  # the postgres extra
            raise missing_extra("postgres", "A PostgreSQL store", exc) from None
        backend: Backend = PostgresBackend(url)
        return backend
    raise UnknownStoreError(
        f"unknown store url {redact_url(url)!r}; use ':memory:', 'sqlite:///path/to/memory.db' or "
        "'postgresql://user@host/db'"
    )
