"""SQLite backend: the embedded default (WAL mode, safe across processes)."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from langchain_agentmem.backends.sql import SCHEMA_VERSION, Cursor, SQLBackend
from langchain_agentmem.errors import StoreError

_DDL = """
CREATE TABLE IF NOT EXISTS agentmem_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS agentmem_records (
    rid INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    namespace TEXT NOT NULL,
    thread TEXT,
    text TEXT NOT NULL,
    metadata TEXT NOT NULL,
    embedding BLOB NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    last_accessed_at REAL,
    access_count INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS agentmem_records_ns ON agentmem_records (namespace, created_at);
CREATE TABLE IF NOT EXISTS agentmem_decisions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace TEXT NOT NULL,
    kind TEXT NOT NULL,
    record_ids TEXT NOT NULL,
    reason TEXT NOT NULL,
    policy TEXT NOT NULL,
    text TEXT,
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS agentmem_decisions_ns ON agentmem_decisions (namespace, seq);
CREATE TABLE IF NOT EXISTS agentmem_messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace TEXT NOT NULL,
    thread TEXT NOT NULL,
    message TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS agentmem_messages_thread ON agentmem_messages (namespace, thread, seq);
"""


class SQLiteBackend(SQLBackend):
    """A SQLite file (or ``:memory:``) holding records, the audit log and messages.

    One connection per backend, guarded by a lock so threads (and ``asyncio.to_thread``)
    can share it; other processes share the file through WAL and a busy timeout.

    Deleted content is overwritten with zeros (``secure_delete``), and closing checkpoints
    the write-ahead log into the file and truncates it, so nothing deleted stays readable in
    the files. A new store file is created readable by its owner only (0600, in a 0700
    folder when the folder is new too); SQLite gives its ``-wal`` and ``-shm`` files the
    same mode.
    """

    def __init__(self, path: str | Path, *, timeout: float = 30.0) -> None:
        self.path = str(path)
        self.url = "sqlite:///" + self.path if self.path != ":memory:" else ":memory:"
        if self.path != ":memory:":
            create_private(Path(self.path))
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(
            self.path, timeout=timeout, isolation_level=None, check_same_thread=False
        )
        self._conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        self._conn.execute("PRAGMA secure_delete = ON")
        if self.path != ":memory:":
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
        self._closed = False
        self._migrate()

    def _migrate(self) -> None:
        with self._write() as cur:
            for statement in _DDL.split(";"):
                if statement.strip():
                    cur.execute(statement)
            row = cur.execute(
                "SELECT value FROM agentmem_meta WHERE key = 'schema_version'"
            ).fetchone()
            if row is None:
                cur.execute(
                    "INSERT INTO agentmem_meta (key, value) VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
            elif int(row[0]) > SCHEMA_VERSION:
                raise StoreError(
                    f"store {self.path!r} has schema version {row[0]}, newer than this "
                    f"langchain-agentmem understands ({SCHEMA_VERSION}); upgrade the package"
                )

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"store {self.url!r} is closed; open a new AgentMemory")

    @contextmanager
    def _read(self) -> Iterator[Cursor]:
        with self._lock:
            self._check_open()
            cur = self._conn.cursor()
            try:
                yield cur
            finally:
                cur.close()

    @contextmanager
    def _write(self) -> Iterator[Cursor]:
        with self._lock:
            self._check_open()
            cur = self._conn.cursor()
            # IMMEDIATE takes the write lock up front: no deadlock on lock upgrade.
            cur.execute("BEGIN IMMEDIATE")
            try:
                yield cur
            except BaseException:
                self._conn.rollback()
                raise
            else:
                self._conn.commit()
            finally:
                cur.close()

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                # Old page images (deleted text among them) live in the WAL until a
                # checkpoint; TRUNCATE leaves it empty. Busy (another process is reading):
                # the last connection to close checkpoints and removes the WAL.
                with suppress(sqlite3.Error):
                    self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                self._conn.close()


def create_private(path: Path) -> None:
    """Create the store file (0600) and any missing folders (0700) before SQLite opens it."""
    missing = []
    folder = path.parent
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for new in reversed(missing):
        with suppress(FileExistsError):
            new.mkdir(mode=0o700)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    os.close(fd)
