"""SQLite backend: the embedded default (WAL mode, safe across processes)."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from langchain_agentmem.backends.sql import Cursor, SQLBackend, migrate
from langchain_agentmem.errors import StoreError
from langchain_agentmem.files import check_adopted, create_private_file, shared_folder

_V1 = """
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

# SQLite cannot drop a UNIQUE constraint: the records table is rebuilt, rids kept (they
# key the saved indexes) and the AUTOINCREMENT counter carried over so none is reused.
_V2 = """
CREATE TABLE agentmem_records_v2 (
    rid INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL,
    namespace TEXT NOT NULL,
    thread TEXT,
    text TEXT NOT NULL,
    metadata TEXT NOT NULL,
    embedding BLOB NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    last_accessed_at REAL,
    access_count INTEGER NOT NULL DEFAULT 0,
    expires_at REAL,
    UNIQUE (namespace, id)
);
INSERT INTO agentmem_records_v2 (rid, id, namespace, thread, text, metadata, embedding,
    created_at, updated_at, last_accessed_at, access_count)
    SELECT rid, id, namespace, thread, text, metadata, embedding, created_at, updated_at,
    last_accessed_at, access_count FROM agentmem_records;
DELETE FROM sqlite_sequence WHERE name = 'agentmem_records_v2';
INSERT INTO sqlite_sequence (name, seq)
    SELECT 'agentmem_records_v2', seq FROM sqlite_sequence WHERE name = 'agentmem_records';
DROP TABLE agentmem_records;
ALTER TABLE agentmem_records_v2 RENAME TO agentmem_records;
CREATE INDEX agentmem_records_ns ON agentmem_records (namespace, created_at);
CREATE INDEX agentmem_records_expiry ON agentmem_records (namespace, expires_at)
    WHERE expires_at IS NOT NULL;
CREATE INDEX agentmem_records_id ON agentmem_records (id)
"""

_V3 = """
CREATE TABLE IF NOT EXISTS agentmem_claims (
    namespace TEXT NOT NULL,
    record_id TEXT NOT NULL,
    holder TEXT NOT NULL,
    held_until REAL NOT NULL,
    PRIMARY KEY (namespace, record_id)
)
"""

_V4 = """
CREATE INDEX IF NOT EXISTS agentmem_decisions_text ON agentmem_decisions (namespace)
    WHERE text IS NOT NULL
"""

_V5 = """
ALTER TABLE agentmem_decisions ADD COLUMN text_of TEXT;
UPDATE agentmem_decisions SET text_of = json_extract(record_ids, '$[0]')
    WHERE text IS NOT NULL AND json_array_length(record_ids) = 1;
DROP INDEX IF EXISTS agentmem_decisions_text;
CREATE INDEX IF NOT EXISTS agentmem_decisions_text_of ON agentmem_decisions (namespace, text_of)
    WHERE text IS NOT NULL;
CREATE INDEX IF NOT EXISTS agentmem_records_thread
    ON agentmem_records (namespace, thread, created_at)
"""

_V6 = """
ALTER TABLE agentmem_records ADD COLUMN terms TEXT
"""

_MIGRATIONS: dict[int, str] = {1: _V1, 2: _V2, 3: _V3, 4: _V4, 5: _V5, 6: _V6}
"""Schema steps: ``_MIGRATIONS[v]`` brings a store from version ``v - 1`` to ``v``."""


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
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            self._conn.execute("PRAGMA secure_delete = ON")
            if self.path != ":memory:":
                _busy_retry(lambda: self._conn.execute("PRAGMA journal_mode = WAL"), timeout)
                self._conn.execute("PRAGMA synchronous = NORMAL")
            self._closed = False
            self._migrate()
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            hint = (
                ""
                if isinstance(exc, sqlite3.OperationalError)  # locked, unreadable: say so as is
                else "; pass the path of an agentmem store or of a new file (it was not changed)"
            )
            raise StoreError(f"cannot open SQLite store {self.path!r}: {exc}{hint}") from exc

    def schema_version(self) -> int:
        """The schema version the store is at."""
        row = self._fetchone("SELECT value FROM agentmem_meta WHERE key = 'schema_version'")
        return 0 if row is None else int(row[0])

    def _migrate(self) -> None:
        with self._write() as cur:
            migrate(
                cur,
                self.path,
                _MIGRATIONS,
                "INSERT OR REPLACE INTO agentmem_meta (key, value) VALUES ('schema_version', ?)",
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

    def new_rids(self, cur: Cursor, count: int, *, after: int) -> list[int]:
        # BEGIN IMMEDIATE: no other writer until commit. Above every key the table holds
        # and every key it ever held (AUTOINCREMENT's sqlite_sequence), and above the keys
        # this transaction was handed before.
        row = cur.execute(
            "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence "
            "WHERE name = 'agentmem_records'), 0), "
            "COALESCE((SELECT MAX(rid) FROM agentmem_records), 0))"
        ).fetchone()
        start = max(int(row[0]), after) + 1
        return list(range(start, start + count))

    def truncate_log(self) -> bool:
        """Checkpoint the WAL into the file and truncate it (the old page images of deleted
        text live there until then); ``False`` when another process's reader kept it."""
        if self.path == ":memory:":
            return True
        with self._lock:
            if self._closed:
                return True
            try:
                row = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except sqlite3.Error:
                return False
        return row is not None and row[0] == 0

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


def _busy_retry(step: Callable[[], object], timeout: float) -> None:
    """Run ``step``, retrying while the file is locked, for up to ``timeout`` seconds.

    Switching to WAL, or opening a WAL file while another process closes it, can report
    "database is locked" at once, without waiting on the busy timeout.
    """
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def create_private(path: Path) -> None:
    """Create the store file (0600) and any missing folders (0700) before SQLite opens it
    (:func:`~langchain_agentmem.files.create_private_file`: in a folder others can write in,
    an existing file is used only when it is this account's and nobody else can write it).

    Raises:
        StoreError: the file, a folder, or the file's ``-wal`` / ``-shm`` / ``-journal``
            sibling is not safe to use: a symbolic link in a folder others can write in
            (planted there, it would make SQLite write elsewhere), or a file another account
            put there for this one to write into.
    """
    create_private_file(path)
    if not shared_folder(path.parent):
        return  # links in the user's own folder are the user's own
    for name in (path.with_name(path.name + s) for s in ("-wal", "-shm", "-journal")):
        if os.path.lexists(name):
            check_adopted(name)
