"""The SQL backends' :class:`~langchain_agentmem.backends.base.Transaction`: writes through
one cursor inside an open transaction (queries written with ``?`` markers)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langchain_agentmem.backends.base import (
    KEEP,
    Expiry,
    LogEntry,
    NewRecord,
    RecordRow,
    Transaction,
)
from langchain_agentmem.backends.encoding import dump_json
from langchain_agentmem.backends.sql_schema import LIVE, RECORD_COLUMNS, row_to_record
from langchain_agentmem.index.text import stored_terms
from langchain_agentmem.text.replies import REPLY_TO, REPLY_TO_ID, question_of
from langchain_agentmem.types import Vector

if TYPE_CHECKING:
    from langchain_agentmem.backends.sql import Cursor, SQLBackend

STORED_CHUNK = 500
"""Ids asked about in one query (well under both drivers' parameter limits)."""


QUOTED_LOOKBACK = 16
"""Newest records of a thread read to find the one a reply quotes (it answers a recent one)."""


class SQLTransaction(Transaction):
    """Writes through one cursor inside an open transaction."""

    def __init__(self, backend: SQLBackend, cur: Cursor) -> None:
        self._b = backend
        self._cur = cur
        self._serialised: set[str] = set()
        self._last_rid = 0
        """The highest key :meth:`new_rids` handed out (not yet inserted, perhaps)."""

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

    def new_rids(self, count: int) -> list[int]:
        rids = self._b.new_rids(self._cur, count, after=self._last_rid)
        if rids:
            self._last_rid = max(self._last_rid, rids[-1])
        return rids

    def insert_records(self, namespace: str, rows: Sequence[NewRecord]) -> None:
        if not rows:
            return
        self._serialise(namespace)
        self._cur.executemany(
            self._b.q(
                "INSERT INTO agentmem_records (rid, id, namespace, thread, text, metadata, "
                "embedding, created_at, updated_at, access_count, expires_at, terms)"
                f"{self._b.given_rid} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)"
            ),
            [
                (
                    row.rid,
                    row.id,
                    namespace,
                    row.thread,
                    row.text,
                    dump_json(row.metadata),
                    self._b.blob(row.embedding),
                    row.created_at,
                    row.updated_at,
                    row.expires_at,
                    stored_terms(row.text) if row.terms is None else row.terms,
                )
                for row in rows
            ],
        )

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
        sets = ["text = ?", "terms = ?", "embedding = ?", "updated_at = ?"]
        params: list[Any] = [text, stored_terms(text), self._b.blob(embedding), updated_at]
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

    def set_metadata(
        self, *, record_id: str, namespace: str, metadata: dict[str, Any], now: float
    ) -> bool:
        self._serialise(namespace)
        cur = self._exec(
            f"UPDATE agentmem_records SET metadata = ? WHERE namespace = ? AND id = ? AND {LIVE}",
            (dump_json(metadata), namespace, record_id, now),
        )
        return cur.rowcount > 0

    def delete_record(self, *, record_id: str, namespace: str) -> bool:
        self._serialise(namespace)
        cur = self._exec(
            "DELETE FROM agentmem_records WHERE namespace = ? AND id = ?", (namespace, record_id)
        )
        return cur.rowcount > 0

    def log_decisions(self, *, namespace: str, entries: Sequence[LogEntry]) -> int:
        if not entries:
            return 0
        self._serialise(namespace)
        self._cur.executemany(
            self._b.q(
                "INSERT INTO agentmem_decisions "
                "(namespace, kind, record_ids, reason, policy, text, text_of, at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            ),
            [
                (
                    namespace,
                    e.kind.value,
                    dump_json(list(e.record_ids)),
                    e.reason,
                    e.policy,
                    e.text,
                    _text_of(e),
                    e.at,
                )
                for e in entries
            ],
        )
        # The namespace's writers are serialised: its newest entry is the last one written.
        row = self._exec(
            "SELECT MAX(seq) FROM agentmem_decisions WHERE namespace = ?", (namespace,)
        ).fetchone()
        return int(row[0])

    def redact_text(self, *, namespace: str, record_ids: Sequence[str]) -> int:
        self._serialise(namespace)
        ids = list(dict.fromkeys(record_ids))
        redacted = 0
        for at in range(0, len(ids), STORED_CHUNK):
            chunk = ids[at : at + STORED_CHUNK]
            cur = self._exec(
                "UPDATE agentmem_decisions SET text = NULL WHERE namespace = ? "
                f"AND text IS NOT NULL AND text_of IN ({', '.join('?' for _ in chunk)})",
                (namespace, *chunk),
            )
            redacted += max(cur.rowcount, 0)
        # An entry holding a text for several records names none in text_of (this package
        # writes none such); it is found by its list of ids.
        several = self._exec(
            "SELECT 1 FROM agentmem_decisions WHERE namespace = ? "
            "AND text IS NOT NULL AND text_of IS NULL LIMIT 1",
            (namespace,),
        ).fetchone()
        for record_id in ids if several else ():
            # The id as it appears inside the JSON list of record_ids, quotes included.
            needle = json.dumps(record_id, ensure_ascii=True)
            cur = self._exec(
                "UPDATE agentmem_decisions SET text = NULL WHERE namespace = ? AND text IS NOT "
                f"NULL AND text_of IS NULL AND {self._b.contains('record_ids')}",
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
        # A copy is in the source's thread, stored after it: only those rows are read (the
        # threads of a large sweep are not spelled out: its rows are filtered below).
        threads = {s[0] for s in sources}
        named = sorted(t for t in threads if t is not None)
        where = [f"thread IN ({', '.join('?' for _ in named)})"] if named else []
        if None in threads:
            where.append("thread IS NULL")
        if len(named) > STORED_CHUNK:
            where, named = ["1 = 1"], []
        rows = self._exec(
            f"SELECT {RECORD_COLUMNS} FROM agentmem_records WHERE namespace = ? "
            f"AND created_at >= ? AND ({' OR '.join(where)}) AND metadata LIKE ?",
            (namespace, since, *named, '%"' + REPLY_TO + '"%'),
        ).fetchall()
        gone = set(record_ids)
        out = []
        for row in rows:
            record = row_to_record(row)
            copied = record.metadata.get(REPLY_TO)
            if record.id in gone or not isinstance(copied, str) or not copied.strip():
                continue
            source = record.metadata.get(REPLY_TO_ID)
            if isinstance(source, str):
                if source in gone:  # by identity: what it was made from
                    out.append(record)
                continue
            # Written before copies named their source: the copy is the source's question
            # (or, stored whole by an older release, part of its text).
            if any(
                s[0] == record.thread
                and record.created_at >= float(s[2])
                and (copied in s[1] or copied == question_of(s[1]))
                for s in sources
            ):
                out.append(record)
        return out

    def linking_records(self, *, namespace: str, record_ids: Sequence[str]) -> list[RecordRow]:
        out: dict[str, RecordRow] = {}
        for record_id in dict.fromkeys(record_ids):
            rows = self._exec(
                f"SELECT {RECORD_COLUMNS} FROM agentmem_records WHERE namespace = ? "
                f"AND {self._b.contains('metadata')} AND {self._b.contains('metadata')}",
                (
                    namespace,
                    self._b.contains_param('"replaces"'),
                    self._b.contains_param(json.dumps(record_id, ensure_ascii=False)),
                ),
            ).fetchall()
            for row in rows:
                record = row_to_record(row)
                out.setdefault(record.id, record)
        return list(out.values())

    def reasons_naming(
        self, *, namespace: str, policy: str, record_id: str
    ) -> list[tuple[int, str]]:
        rows = self._exec(
            "SELECT seq, reason FROM agentmem_decisions WHERE namespace = ? AND policy = ? "
            f"AND {self._b.contains('reason')}",
            (namespace, policy, self._b.contains_param(record_id)),
        ).fetchall()
        return [(int(seq), str(reason)) for seq, reason in rows]

    def set_reason(self, *, namespace: str, seq: int, reason: str) -> None:
        self._exec(
            "UPDATE agentmem_decisions SET reason = ? WHERE namespace = ? AND seq = ?",
            (reason, namespace, seq),
        )

    def quoted_record(
        self, *, namespace: str, thread: str | None, question: str, until: float
    ) -> str | None:
        where = "thread IS NULL" if thread is None else "thread = ?"
        rows = self._exec(
            f"SELECT id, text FROM agentmem_records WHERE namespace = ? AND {where} "
            "AND created_at <= ? ORDER BY created_at DESC, rid DESC LIMIT ?",
            (namespace, *(() if thread is None else (thread,)), until, QUOTED_LOOKBACK),
        ).fetchall()
        for record_id, text in rows:
            if question_of(str(text)) == question:
                return str(record_id)
        return None

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

    def stored_expiry(self, namespace: str, record_ids: Sequence[str]) -> dict[str, float | None]:
        self._serialise(namespace)
        found: dict[str, float | None] = {}
        ids = list(dict.fromkeys(record_ids))
        for start in range(0, len(ids), STORED_CHUNK):
            chunk = ids[start : start + STORED_CHUNK]
            marks = ", ".join("?" * len(chunk))
            rows = self._exec(
                f"SELECT id, expires_at FROM agentmem_records WHERE namespace = ? "
                f"AND id IN ({marks})",
                (namespace, *chunk),
            ).fetchall()
            found.update((str(r[0]), None if r[1] is None else float(r[1])) for r in rows)
        return found

    def expired_ids(self, namespace: str, now: float) -> list[str]:
        self._serialise(namespace)
        rows = self._exec(
            "SELECT id FROM agentmem_records WHERE namespace = ? AND expires_at <= ? ORDER BY rid",
            (namespace, now),
        ).fetchall()
        return [str(r[0]) for r in rows]


def _text_of(entry: LogEntry) -> str | None:
    """The record whose text a log entry holds (``None``: no text, or several records)."""
    return entry.record_ids[0] if entry.text is not None and len(entry.record_ids) == 1 else None
