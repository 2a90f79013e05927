"""The SQL backends' shared queries: :class:`SQLBackend`, under SQLite and PostgreSQL.

Queries are written with ``?`` markers. The tables' layout is
:mod:`~langchain_agentmem.backends.sql_schema`; writes inside a transaction are
:mod:`~langchain_agentmem.backends.sql_transaction`.
"""

from __future__ import annotations

import abc
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

from langchain_agentmem.backends.base import Backend, Change, Erased, RecordRow, Transaction
from langchain_agentmem.backends.encoding import epoch_to_datetime, to_blob
from langchain_agentmem.backends.sql_schema import (
    ERASE_KIND,
    LIVE,
    RECORD_COLUMNS,
    SCHEMA_VERSION,
    erase_marker,
    legacy_erase_marker,
    row_to_record,
)
from langchain_agentmem.backends.sql_transaction import SQLTransaction
from langchain_agentmem.errors import StoreError
from langchain_agentmem.types import Decision, OpKind, Vector

RECORD_CHANGING_KINDS = (OpKind.ADD.value, OpKind.UPDATE.value, OpKind.DELETE.value)

LAST_SEQ = (
    "SELECT MAX(s) FROM ("
    "SELECT MAX(seq + 0) AS s FROM agentmem_decisions WHERE namespace = ? UNION ALL "
    "SELECT MAX(seq + 0) FROM agentmem_decisions WHERE namespace IN (?, ?) AND kind = ?"
    ") AS found"
)
"""A namespace's newest change: its own entries' or an erasure marker's, each read from the
``(namespace, seq)`` index. Not ``MAX(seq)`` of one ``OR``, nor of the namespace alone:
PostgreSQL answers those by walking the whole log backwards from its newest entry until one
is the namespace's (0.2-0.3 s in a log of 780,000 entries, for a namespace last written long
ago); ``seq + 0`` leaves it only the namespace's own entries to read (25,000 in 10 ms)."""

CHANGES_SINCE = (
    "SELECT seq, kind, record_ids FROM agentmem_decisions "
    "WHERE namespace = ? AND seq > ? AND kind IN (?, ?, ?) UNION ALL "
    "SELECT seq, kind, record_ids FROM agentmem_decisions "
    "WHERE namespace IN (?, ?) AND seq > ? AND kind = ? ORDER BY 1"
)
"""A namespace's record changes after a sequence number, and erasures: each half reads the
``(namespace, seq)`` index from that number on, where one ``OR`` would walk every
namespace's entries after it."""
MAX_LIMIT = 2**62
"""Larger ``LIMIT`` values mean "all"; the drivers cannot bind them as 64-bit integers."""

VERSION_MARGIN = 5e-6
"""How far (seconds) an ``updated_at`` read back through a datetime may be from the stored
one and still name the same version."""


_ALL_ROWS = 2**62
"""A LIMIT that keeps every row (SQLite needs a LIMIT before an OFFSET)."""


class Cursor(Protocol):
    """The slice of DB-API cursors both drivers share."""

    @property
    def rowcount(self) -> int: ...

    def execute(self, sql: Any, params: Any = ..., /) -> Any: ...

    def executemany(self, sql: Any, params: Any, /) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


def migrate(
    cur: Cursor,
    where: str,
    migrations: Mapping[int, str],
    set_version: str,
    *,
    as_bytes: bool = False,
) -> None:
    """Bring the tables to :data:`SCHEMA_VERSION`, inside the caller's write transaction.

    Args:
        cur: A cursor of the transaction (the caller holds whatever lock migrating needs).
        where: The store, as error messages name it.
        migrations: Each version's statements, in the backend's dialect (``;``-separated).
        set_version: The statement that records the version (one parameter).
        as_bytes: Send each statement as bytes (psycopg: no client-side parameter parsing).

    Raises:
        StoreError: The store is at a newer version than this package understands.
    """
    cur.execute(
        "CREATE TABLE IF NOT EXISTS agentmem_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
    )
    row = cur.execute("SELECT value FROM agentmem_meta WHERE key = 'schema_version'").fetchone()
    current = 0 if row is None else int(row[0])
    if current > SCHEMA_VERSION:
        raise StoreError(
            f"store {where!r} has schema version {current}, newer than this "
            f"langchain-agentmem understands ({SCHEMA_VERSION}); upgrade the package"
        )
    for version in range(current + 1, SCHEMA_VERSION + 1):
        for statement in migrations[version].split(";"):
            if statement.strip():
                cur.execute(statement.encode() if as_bytes else statement)
    if current < SCHEMA_VERSION:
        cur.execute(set_version, (str(SCHEMA_VERSION),))


CLAIMS_KEPT = 86400.0
"""Seconds a claim is kept after it ran out (then any claim removes it)."""


class SQLBackend(Backend):
    """Queries shared by the SQL backends; subclasses provide connections and DDL."""

    placeholder = "?"

    def q(self, sql: str) -> str:
        """Adapt a query written with ``?`` markers to the driver's parameter style."""
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)

    def contains(self, column: str) -> str:
        """SQL true when ``column`` holds a substring (case-sensitive; see contains_param)."""
        return f"instr({column}, ?) > 0"

    def contains_param(self, needle: str) -> str:
        """The parameter :meth:`contains` compares with, for the substring ``needle``."""
        return needle

    @staticmethod
    def thread_key(namespace: str, thread: str) -> str:
        """The writer-lock key of a thread's message log."""
        return f"messages:{len(namespace)}:{namespace}:{thread}"

    def blob(self, vector: Vector) -> Any:
        """The driver's value for an embedding column."""
        return to_blob(vector)

    given_rid = ""
    """What an INSERT says between its columns and ``VALUES`` to set ``rid`` itself."""

    @abc.abstractmethod
    def new_rids(self, cur: Cursor, count: int, *, after: int) -> list[int]:
        """``count`` record keys never used in this store, each above ``after`` (the last key
        this transaction was handed), inside the write transaction of ``cur``."""

    def serialise_writers(self, cur: Cursor, key: str) -> None:
        """Make writers of ``key`` (a namespace's records, a thread) commit one at a time.

        The change sequence must become visible in order: a reader that has seen change
        ``n`` must never later see a change below ``n`` commit, or it would skip it. Stores
        whose write transactions are already serial (SQLite's ``BEGIN IMMEDIATE``) need
        nothing here; PostgreSQL takes a transaction-scoped advisory lock.
        """

    @abc.abstractmethod
    def _read(self) -> AbstractContextManager[Cursor]:
        """A cursor for reads (autocommit or a short read transaction)."""

    @abc.abstractmethod
    def _write(self) -> AbstractContextManager[Cursor]:
        """A cursor inside a write transaction, committed on success."""

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        with self._write() as cur:
            yield SQLTransaction(self, cur)

    def _fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._read() as cur:
            cur.execute(self.q(sql), tuple(params))
            return list(cur.fetchall())

    def _fetchone(self, sql: str, params: Sequence[Any] = ()) -> Any:
        with self._read() as cur:
            cur.execute(self.q(sql), tuple(params))
            return cur.fetchone()

    # -- records ---------------------------------------------------------------------------
    def get_record(self, namespace: str, record_id: str) -> RecordRow | None:
        row = self._fetchone(
            f"SELECT {RECORD_COLUMNS} FROM agentmem_records "
            f"WHERE namespace = ? AND id = ? AND {LIVE}",
            (namespace, record_id, time.time()),
        )
        return None if row is None else row_to_record(row)

    def get_records(self, namespace: str, record_ids: Sequence[str]) -> list[RecordRow]:
        out: list[RecordRow] = []
        ids = list(dict.fromkeys(record_ids))
        now = time.time()
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            rows = self._fetchall(
                f"SELECT {RECORD_COLUMNS} FROM agentmem_records "
                f"WHERE namespace = ? AND id IN ({marks}) AND {LIVE}",
                (namespace, *chunk, now),
            )
            out.extend(row_to_record(r) for r in rows)
        return out

    def find_records(self, record_id: str) -> list[RecordRow]:
        rows = self._fetchall(
            f"SELECT {RECORD_COLUMNS} FROM agentmem_records WHERE id = ? AND {LIVE} "
            "ORDER BY namespace",
            (record_id, time.time()),
        )
        return [row_to_record(r) for r in rows]

    def iter_records(
        self,
        namespace: str,
        *,
        limit: int | None = None,
        offset: int = 0,
        newest_first: bool = False,
    ) -> Iterator[RecordRow]:
        order = "created_at DESC, rid DESC" if newest_first else "created_at, rid"
        rows = self._fetchall(
            f"SELECT {RECORD_COLUMNS} FROM agentmem_records WHERE namespace = ? AND {LIVE} "
            f"ORDER BY {order} LIMIT ? OFFSET ?",
            (namespace, time.time(), _ALL_ROWS if limit is None else limit, offset),
        )
        return (row_to_record(r) for r in rows)

    def count_records(self, namespace: str) -> int:
        row = self._fetchone(
            f"SELECT COUNT(*) FROM agentmem_records WHERE namespace = ? AND {LIVE}",
            (namespace, time.time()),
        )
        return int(row[0])

    def set_expiry(
        self,
        namespace: str,
        record_ids: Sequence[str],
        at: float | None,
        *,
        versions: Sequence[float] | None = None,
    ) -> list[str]:
        if versions is not None:
            return self._set_expiry_of_versions(namespace, record_ids, at, versions)
        ids = list(dict.fromkeys(record_ids))
        if not ids:
            return []
        now = time.time()
        with self._write() as cur:
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ", ".join("?" for _ in chunk)
                cur.execute(
                    self.q(
                        "UPDATE agentmem_records SET expires_at = ? "
                        f"WHERE namespace = ? AND id IN ({marks}) AND {LIVE}"
                    ),
                    (at, namespace, *chunk, now),
                )
        return ids

    def _set_expiry_of_versions(
        self, namespace: str, record_ids: Sequence[str], at: float | None, versions: Sequence[float]
    ) -> list[str]:
        """:meth:`set_expiry` of records still at the version read, each checked and moved in
        one statement (atomic against any writer)."""
        moved: list[str] = []
        now = time.time()
        with self._write() as cur:
            for record_id, version in zip(record_ids, versions, strict=True):
                cur.execute(
                    self.q(
                        "UPDATE agentmem_records SET expires_at = ? WHERE namespace = ? AND "
                        f"id = ? AND {LIVE} AND updated_at BETWEEN ? AND ?"
                    ),
                    # updated_at came back through a datetime (microseconds): a margin
                    # far below the time between two writes of one record.
                    (
                        at,
                        namespace,
                        record_id,
                        now,
                        version - VERSION_MARGIN,
                        version + VERSION_MARGIN,
                    ),
                )
                if cur.rowcount > 0:
                    moved.append(record_id)
        return moved

    def next_expiry(self, namespace: str) -> float | None:
        row = self._fetchone(
            "SELECT MIN(expires_at) FROM agentmem_records "
            "WHERE namespace = ? AND expires_at IS NOT NULL",
            (namespace,),
        )
        return None if row is None or row[0] is None else float(row[0])

    def expiring_namespaces(self, now: float) -> list[str]:
        rows = self._fetchall(
            "SELECT DISTINCT namespace FROM agentmem_records WHERE expires_at <= ? ORDER BY 1",
            (now,),
        )
        return [r[0] for r in rows]

    def touch(self, rids: Sequence[int], at: float) -> None:
        if not rids:
            return
        with self._write() as cur:
            marks = ", ".join("?" for _ in rids)
            cur.execute(
                self.q(
                    "UPDATE agentmem_records SET access_count = access_count + 1, "
                    f"last_accessed_at = ? WHERE rid IN ({marks})"
                ),
                (at, *[int(r) for r in rids]),
            )

    def namespaces(self) -> list[str]:
        rows = self._fetchall(
            f"SELECT namespace FROM agentmem_records WHERE {LIVE} UNION "
            "SELECT namespace FROM agentmem_messages ORDER BY 1",
            (time.time(),),
        )
        return [r[0] for r in rows]

    # -- change sequence and audit log ---------------------------------------------------------
    def last_seq(self, namespace: str) -> int:
        row = self._fetchone(
            LAST_SEQ,
            (namespace, erase_marker(namespace), legacy_erase_marker(namespace), ERASE_KIND),
        )
        return 0 if row is None or row[0] is None else int(row[0])

    def changes_since(self, namespace: str, seq: int) -> list[Change]:
        rows = self._fetchall(
            CHANGES_SINCE,
            (
                namespace,
                seq,
                *RECORD_CHANGING_KINDS,
                erase_marker(namespace),
                legacy_erase_marker(namespace),
                seq,
                ERASE_KIND,
            ),
        )
        return [
            Change(int(r[0]), OpKind.DELETE, (), erased=True)
            if r[1] == ERASE_KIND
            else Change(int(r[0]), OpKind(r[1]), tuple(json.loads(r[2])))
            for r in rows
        ]

    def decisions(self, namespace: str, *, limit: int | None = None) -> list[Decision]:
        cols = "seq, namespace, kind, record_ids, reason, policy, text, at"
        if limit is None:
            rows = self._fetchall(
                f"SELECT {cols} FROM agentmem_decisions WHERE namespace = ? ORDER BY seq",
                (namespace,),
            )
        else:
            rows = self._fetchall(
                f"SELECT {cols} FROM agentmem_decisions WHERE namespace = ? "
                "ORDER BY seq DESC LIMIT ?",
                (namespace, min(int(limit), MAX_LIMIT)),
            )
            rows.reverse()
        return [
            Decision(
                seq=int(r[0]),
                namespace=r[1],
                kind=OpKind(r[2]),
                record_ids=tuple(json.loads(r[3])),
                reason=r[4],
                policy=r[5],
                text=r[6],
                at=epoch_to_datetime(float(r[7])),
            )
            for r in rows
        ]

    # -- chat messages ---------------------------------------------------------------------
    def append_messages(self, namespace: str, thread: str, payloads: Sequence[str]) -> None:
        if not payloads:
            return
        now = time.time()
        with self._write() as cur:
            # One batch stays contiguous in the thread even with concurrent appenders.
            self.serialise_writers(cur, self.thread_key(namespace, thread))
            for payload in payloads:
                cur.execute(
                    self.q(
                        "INSERT INTO agentmem_messages (namespace, thread, message, created_at) "
                        "VALUES (?, ?, ?, ?)"
                    ),
                    (namespace, thread, payload, now),
                )

    def get_messages(self, namespace: str, thread: str, *, last: int | None = None) -> list[str]:
        if last is None:
            rows = self._fetchall(
                "SELECT message FROM agentmem_messages WHERE namespace = ? AND thread = ? "
                "ORDER BY seq",
                (namespace, thread),
            )
            return [r[0] for r in rows]
        rows = self._fetchall(
            "SELECT message FROM agentmem_messages WHERE namespace = ? AND thread = ? "
            "ORDER BY seq DESC LIMIT ?",
            (namespace, thread, min(int(last), MAX_LIMIT)),
        )
        return [r[0] for r in reversed(rows)]

    def clear_messages(self, namespace: str, thread: str) -> int:
        with self._write() as cur:
            cur.execute(
                self.q("DELETE FROM agentmem_messages WHERE namespace = ? AND thread = ?"),
                (namespace, thread),
            )
            return int(cur.rowcount)

    def threads(self, namespace: str) -> list[str]:
        rows = self._fetchall(
            "SELECT thread, MIN(seq) FROM agentmem_messages WHERE namespace = ? "
            "GROUP BY thread ORDER BY 2",
            (namespace,),
        )
        return [r[0] for r in rows]

    def iter_messages(self, namespace: str) -> Iterator[tuple[str, str, float]]:
        rows = self._fetchall(
            "SELECT thread, message, created_at FROM agentmem_messages WHERE namespace = ? "
            "ORDER BY seq",
            (namespace,),
        )
        return ((r[0], r[1], float(r[2])) for r in rows)

    # -- erasure ---------------------------------------------------------------------------
    def claim(
        self, namespace: str, record_id: str, holder: str, *, until: float, now: float
    ) -> bool:
        with self._write() as cur:
            cur.execute(
                self.q(
                    "INSERT INTO agentmem_claims (namespace, record_id, holder, held_until) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT (namespace, record_id) DO UPDATE SET "
                    "holder = excluded.holder, held_until = excluded.held_until "
                    "WHERE agentmem_claims.holder = excluded.holder "
                    "OR agentmem_claims.held_until <= ?"
                ),
                (namespace, record_id, holder, until, now),
            )
            granted = cur.rowcount > 0
            # Claims of records nobody annotates any more (a process that died holding them).
            cur.execute(
                self.q("DELETE FROM agentmem_claims WHERE held_until < ?"), (now - CLAIMS_KEPT,)
            )
            return granted

    def release(self, namespace: str, record_id: str, holder: str) -> None:
        with self._write() as cur:
            cur.execute(
                self.q(
                    "DELETE FROM agentmem_claims "
                    "WHERE namespace = ? AND record_id = ? AND holder = ?"
                ),
                (namespace, record_id, holder),
            )

    def erase_namespace(self, namespace: str, *, at: float) -> Erased:
        with self._write() as cur:
            self.serialise_writers(cur, "records:" + namespace)
            cur.execute(self.q("DELETE FROM agentmem_claims WHERE namespace = ?"), (namespace,))
            counts = []
            for table in ("agentmem_records", "agentmem_messages", "agentmem_decisions"):
                # An earlier release's marker of another namespace may sit under this name.
                spare = " AND kind <> ?" if table == "agentmem_decisions" else ""
                cur.execute(
                    self.q(f"DELETE FROM {table} WHERE namespace = ?{spare}"),
                    (namespace, ERASE_KIND) if spare else (namespace,),
                )
                counts.append(max(cur.rowcount, 0))
            erased = Erased(records=counts[0], messages=counts[1], decisions=counts[2])
            if any(counts):
                # Processes holding a cached view learn of the erasure from this entry; it
                # carries neither text nor ids, and names the namespace only by digest.
                cur.execute(
                    self.q(
                        "INSERT INTO agentmem_decisions "
                        "(namespace, kind, record_ids, reason, policy, text, at) "
                        "VALUES (?, ?, '[]', 'namespace erased', 'user', NULL, ?)"
                    ),
                    (erase_marker(namespace), ERASE_KIND, at),
                )
            return erased
