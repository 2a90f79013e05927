"""SQL shared by the SQLite and PostgreSQL backends (queries written with ``?`` markers)."""

from __future__ import annotations

import abc
import hashlib
import json
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime, timezone
from typing import Any, Protocol

import numpy as np

from langchain_agentmem.backends.base import (
    KEEP,
    Backend,
    Change,
    Erased,
    Expiry,
    RecordRow,
    Transaction,
)
from langchain_agentmem.replies import REPLY_TO
from langchain_agentmem.types import Decision, OpKind, Vector
from langchain_agentmem.validation import STORE_MARK

SCHEMA_VERSION = 2
"""1: ids unique across the store. 2: ids unique per namespace; records may expire."""

RECORD_COLUMNS = (
    "rid, id, namespace, thread, text, metadata, embedding, created_at, updated_at, "
    "last_accessed_at, access_count, expires_at"
)
LIVE = "(expires_at IS NULL OR expires_at > ?)"
"""The condition every read puts on records: expired ones are invisible at once."""
RECORD_CHANGING_KINDS = (OpKind.ADD.value, OpKind.UPDATE.value, OpKind.DELETE.value)
ERASE_KIND = "ERASE"
"""Kind of the change-log entry that marks a namespace as erased (see :func:`erase_marker`)."""
MAX_LIMIT = 2**62
"""Larger ``LIMIT`` values mean "all"; the drivers cannot bind them as 64-bit integers."""


class Cursor(Protocol):
    """The slice of DB-API cursors both drivers share."""

    @property
    def rowcount(self) -> int: ...

    def execute(self, sql: Any, params: Any = ..., /) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


def to_blob(vector: Vector) -> bytes:
    """Serialise an embedding (float32, little-endian)."""
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes | memoryview) -> Vector:
    """Deserialise an embedding written by :func:`to_blob`."""
    return np.frombuffer(bytes(blob), dtype="<f4").astype(np.float32)


def dump_json(value: Any) -> str:
    """JSON for storage, ASCII-escaped so lone surrogates round-trip (a high and a low
    surrogate held as two code points come back as one character; metadata refuses them)."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), sort_keys=True)


def erase_marker(namespace: str) -> str:
    """The namespace column of a namespace's erasure markers: a digest, not the name.

    It starts with two :data:`~langchain_agentmem.validation.STORE_MARK` characters: no
    caller's namespace may start with one, and a store's start with one and then its prefix,
    which never holds the mark, so no namespace anyone can write to shares it.
    """
    return 2 * STORE_MARK + "erased:" + hashlib.sha256(namespace.encode("utf-8")).hexdigest()


def legacy_erase_marker(namespace: str) -> str:
    """The marker namespace of earlier releases, which a user could spell: only its ERASE
    entries are read (and never deleted by another namespace's erasure)."""
    return "erased:" + hashlib.sha256(namespace.encode("utf-8")).hexdigest()


VERSION_MARGIN = 5e-6
"""How far (seconds) an ``updated_at`` read back through a datetime may be from the stored
one and still name the same version."""


def epoch_to_datetime(value: float) -> datetime:
    """UTC epoch seconds to an aware datetime."""
    return datetime.fromtimestamp(value, tz=timezone.utc)


def row_to_record(row: Sequence[Any]) -> RecordRow:
    """Build a :class:`RecordRow` from a row selected with ``RECORD_COLUMNS``."""
    return RecordRow(
        rid=int(row[0]),
        id=row[1],
        namespace=row[2],
        thread=row[3],
        text=row[4],
        metadata=json.loads(row[5]),
        embedding=from_blob(row[6]),
        created_at=float(row[7]),
        updated_at=float(row[8]),
        last_accessed_at=None if row[9] is None else float(row[9]),
        access_count=int(row[10]),
        expires_at=None if row[11] is None else float(row[11]),
    )


class SQLTransaction(Transaction):
    """Writes through one cursor inside an open transaction."""

    def __init__(self, backend: SQLBackend, cur: Cursor) -> None:
        self._b = backend
        self._cur = cur
        self._serialised: set[str] = set()

    def _serialise(self, namespace: str) -> None:
        """Take the namespace's writer lock once per transaction, before its first write."""
        if namespace not in self._serialised:
            self._b.serialise_writers(self._cur, "records:" + namespace)
            self._serialised.add(namespace)

    def lock_namespace(self, namespace: str) -> None:
        self._serialise(namespace)

    def _exec(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        self._cur.execute(self._b.q(sql), tuple(params))
        return self._cur

    def insert_record(
        self,
        *,
        record_id: str,
        namespace: str,
        thread: str | None,
        text: str,
        metadata: dict[str, Any],
        embedding: Vector,
        created_at: float,
        updated_at: float | None = None,
        expires_at: float | None = None,
    ) -> int:
        self._serialise(namespace)
        cur = self._exec(
            "INSERT INTO agentmem_records (id, namespace, thread, text, metadata, embedding, "
            "created_at, updated_at, access_count, expires_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?) RETURNING rid",
            (
                record_id,
                namespace,
                thread,
                text,
                dump_json(metadata),
                self._b.blob(embedding),
                created_at,
                created_at if updated_at is None else updated_at,
                expires_at,
            ),
        )
        return int(cur.fetchone()[0])

    def update_record(
        self,
        *,
        record_id: str,
        namespace: str,
        text: str,
        metadata: dict[str, Any] | None,
        embedding: Vector,
        updated_at: float,
        expires_at: Expiry = KEEP,
    ) -> bool:
        self._serialise(namespace)
        sets = ["text = ?", "embedding = ?", "updated_at = ?"]
        params: list[Any] = [text, self._b.blob(embedding), updated_at]
        if metadata is not None:
            sets.append("metadata = ?")
            params.append(dump_json(metadata))
        if expires_at is not KEEP:
            sets.append("expires_at = ?")
            params.append(expires_at)
        cur = self._exec(
            f"UPDATE agentmem_records SET {', '.join(sets)} "
            f"WHERE namespace = ? AND id = ? AND {LIVE}",
            (*params, namespace, record_id, updated_at),
        )
        return cur.rowcount > 0

    def delete_record(self, *, record_id: str, namespace: str) -> bool:
        self._serialise(namespace)
        cur = self._exec(
            "DELETE FROM agentmem_records WHERE namespace = ? AND id = ?", (namespace, record_id)
        )
        return cur.rowcount > 0

    def log_decision(
        self,
        *,
        namespace: str,
        kind: OpKind,
        record_ids: Sequence[str],
        reason: str,
        policy: str,
        text: str | None,
        at: float,
    ) -> int:
        self._serialise(namespace)
        cur = self._exec(
            "INSERT INTO agentmem_decisions (namespace, kind, record_ids, reason, policy, text, at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            (namespace, kind.value, dump_json(list(record_ids)), reason, policy, text, at),
        )
        return int(cur.fetchone()[0])

    def redact_text(self, *, namespace: str, record_ids: Sequence[str]) -> int:
        self._serialise(namespace)
        redacted = 0
        for record_id in dict.fromkeys(record_ids):
            # The id as it appears inside the JSON list of record_ids, quotes included.
            needle = json.dumps(record_id, ensure_ascii=True)
            cur = self._exec(
                "UPDATE agentmem_decisions SET text = NULL WHERE namespace = ? "
                f"AND text IS NOT NULL AND {self._b.contains('record_ids')}",
                (namespace, self._b.contains_param(needle)),
            )
            redacted += max(cur.rowcount, 0)
        return redacted

    def replying_copies(self, *, namespace: str, record_ids: Sequence[str]) -> list[RecordRow]:
        sources = [
            self._exec(
                "SELECT thread, text, created_at FROM agentmem_records "
                "WHERE namespace = ? AND id = ?",
                (namespace, record_id),
            ).fetchone()
            for record_id in record_ids
        ]
        sources = [s for s in sources if s is not None]
        if not sources:
            return []
        since = min(float(s[2]) for s in sources)
        rows = self._exec(
            f"SELECT {RECORD_COLUMNS} FROM agentmem_records WHERE namespace = ? "
            "AND created_at >= ? AND metadata LIKE ?",
            (namespace, since, '%"' + REPLY_TO + '"%'),
        ).fetchall()
        gone = set(record_ids)
        out = []
        for row in rows:
            record = row_to_record(row)
            copied = record.metadata.get(REPLY_TO)
            if record.id in gone or not isinstance(copied, str) or not copied.strip():
                continue
            if any(
                s[0] == record.thread and record.created_at >= float(s[2]) and copied in s[1]
                for s in sources
            ):
                out.append(record)
        return out

    def _serialise_thread(self, namespace: str, thread: str) -> None:
        key = self._b.thread_key(namespace, thread)
        if key not in self._serialised:
            self._b.serialise_writers(self._cur, key)
            self._serialised.add(key)

    def thread_messages(self, *, namespace: str, thread: str) -> list[str]:
        self._serialise_thread(namespace, thread)
        rows = self._exec(
            "SELECT message FROM agentmem_messages WHERE namespace = ? AND thread = ? ORDER BY seq",
            (namespace, thread),
        ).fetchall()
        return [r[0] for r in rows]

    def insert_messages(
        self, *, namespace: str, thread: str, payloads: Sequence[str], created_at: Sequence[float]
    ) -> None:
        self._serialise_thread(namespace, thread)
        for payload, at in zip(payloads, created_at, strict=True):
            self._exec(
                "INSERT INTO agentmem_messages (namespace, thread, message, created_at) "
                "VALUES (?, ?, ?, ?)",
                (namespace, thread, payload, at),
            )

    def embedding_dimensions(self, namespace: str) -> int | None:
        self._serialise(namespace)
        row = self._exec(
            "SELECT LENGTH(embedding) FROM agentmem_records WHERE namespace = ? LIMIT 1",
            (namespace,),
        ).fetchone()
        return None if row is None else int(row[0]) // 4

    def record_exists(self, namespace: str, record_id: str, now: float) -> bool:
        self._serialise(namespace)
        row = self._exec(
            f"SELECT 1 FROM agentmem_records WHERE namespace = ? AND id = ? AND {LIVE}",
            (namespace, record_id, now),
        ).fetchone()
        return row is not None

    def expired_ids(self, namespace: str, now: float) -> list[str]:
        self._serialise(namespace)
        rows = self._exec(
            "SELECT id FROM agentmem_records WHERE namespace = ? AND expires_at <= ? ORDER BY rid",
            (namespace, now),
        ).fetchall()
        return [str(r[0]) for r in rows]


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

    def iter_records(self, namespace: str) -> Iterator[RecordRow]:
        rows = self._fetchall(
            f"SELECT {RECORD_COLUMNS} FROM agentmem_records WHERE namespace = ? AND {LIVE} "
            "ORDER BY created_at, rid",
            (namespace, time.time()),
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
            "SELECT MAX(seq) FROM agentmem_decisions WHERE namespace = ? "
            "OR (namespace IN (?, ?) AND kind = ?)",
            (namespace, erase_marker(namespace), legacy_erase_marker(namespace), ERASE_KIND),
        )
        return 0 if row is None or row[0] is None else int(row[0])

    def changes_since(self, namespace: str, seq: int) -> list[Change]:
        rows = self._fetchall(
            "SELECT seq, kind, record_ids FROM agentmem_decisions WHERE seq > ? AND "
            "((namespace = ? AND kind IN (?, ?, ?)) OR (namespace IN (?, ?) AND kind = ?)) "
            "ORDER BY seq",
            (
                seq,
                namespace,
                *RECORD_CHANGING_KINDS,
                erase_marker(namespace),
                legacy_erase_marker(namespace),
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
    def erase_namespace(self, namespace: str, *, at: float) -> Erased:
        with self._write() as cur:
            self.serialise_writers(cur, "records:" + namespace)
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
