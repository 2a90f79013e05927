"""The one place where memory ops are applied to a store."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from langchain_agentmem.annotation.annotations import ANNOTATOR, reason_without, without_links
from langchain_agentmem.backends.base import (
    KEEP,
    Backend,
    Expiry,
    LogEntry,
    NewRecord,
    RecordRow,
    Transaction,
)
from langchain_agentmem.errors import InvalidInputError, RecordNotFoundError
from langchain_agentmem.index.text import TextTerms, stored_terms
from langchain_agentmem.text.replies import REPLY_TO, REPLY_TO_ID, question_of
from langchain_agentmem.types import MemoryOp, OpKind, expiry_epoch, to_epoch, with_embedding

EXPIRY_POLICY = "expiry"
"""Policy name logged for records deleted because they expired."""


def check_embedding(
    vector: np.ndarray[Any, Any], dimensions: int | None, *, record_ids: Sequence[str]
) -> int:
    """Refuse an embedding that is not a finite vector of the namespace's length.

    Returns:
        Its length.
    """
    if vector.ndim != 1 or vector.shape[0] == 0:
        raise InvalidInputError(
            f"embedding of {list(record_ids)} has shape {vector.shape}; the embedding model "
            "must return one non-empty vector per text"
        )
    if dimensions is not None and vector.shape[0] != dimensions:
        raise InvalidInputError(
            f"embedding of {list(record_ids)} has {vector.shape[0]} dimensions but the "
            f"namespace holds {dimensions}-dim ones; use the same embedding model for one "
            "store, or open a new store"
        )
    if not np.isfinite(vector).all():
        raise InvalidInputError(
            f"embedding of {list(record_ids)} holds NaN or infinite values; check the "
            "embedding model"
        )
    return int(vector.shape[0])


class Lookup:
    """What a decision may read of the namespace it is made for, as its writer holds it."""

    def __init__(self, writer: Writer, now: float) -> None:
        self._writer = writer
        self.namespace = writer.namespace
        self.now = now
        """The transaction's clock (epoch seconds)."""

    def exists(self, record_id: str) -> bool:
        """Whether the namespace holds a live (unexpired) record ``record_id``."""
        return self._writer.exists(record_id, self.now)

    def expired(self) -> list[str]:
        """Ids of the namespace's records that have expired but are not yet deleted."""
        return self._writer.expired(self.now)


def expired_op(record_ids: Sequence[str]) -> MemoryOp:
    """The DELETE op of records whose time has come."""
    return MemoryOp(
        kind=OpKind.DELETE,
        record_ids=tuple(record_ids),
        reason="expired",
        policy=EXPIRY_POLICY,
    )


@dataclass(frozen=True)
class Applied:
    """What one item's ops did: each op as applied, embeddings kept (an ADD that took the id
    of an expired record comes after that record's DELETE, reason "expired"; an op that
    dropped copies of a record's text is followed by the UPDATEs that dropped them), and
    the store key of each new record, in order."""

    ops: list[MemoryOp]
    rids: list[int]


def apply_batch(
    backend: Backend, namespace: str, batch: Sequence[Sequence[MemoryOp]]
) -> tuple[list[list[MemoryOp]], int]:
    """Apply the ops of several items to ``namespace`` in ONE transaction, each logged.

    Either the whole batch lands (every op with its decision log entry) or none of it does.
    ``AgentMemory`` writes through :class:`Writer` itself, deciding each item on the state
    the items before it made; this applies ops already decided.

    Returns:
        Each item's ops as applied (embeddings dropped), and the change sequence of the
        last audit log entry written (0 if none).

    Raises:
        RecordNotFoundError: an UPDATE / DELETE targets an id that is not in ``namespace``.
        InvalidInputError: an ADD reuses an id that already exists in ``namespace``.
    """
    with backend.transaction() as tx:
        writer = Writer(tx, namespace)
        out = [writer.apply_all(ops, time.time()).ops for ops in batch]
        return [without_embeddings(ops) for ops in out], writer.finish()


def without_embeddings(ops: Sequence[MemoryOp]) -> list[MemoryOp]:
    """``ops`` as returned to callers: vectors left in the store."""
    return [with_embedding(op, None) if op.embedding is not None else op for op in ops]


_ABSENT = object()
"""In :attr:`Writer._stored`: the namespace holds no record of that id."""


class Writer:
    """The writes of one batch to a namespace, inside a transaction: one method per op kind.

    The namespace's writer lock is taken when the writer is made. A record's text is kept in
    one place besides the record: the audit entry of the ADD or UPDATE that stored it. When
    a record is updated or deleted, every earlier entry naming it loses its text, so
    forgetting a record forgets it in the log too; NOOP and DELETE entries never keep text.

    New records and audit entries are written together, each kind in one statement (before
    any other statement, which may read them, and at :meth:`finish`); each new record's
    store key is handed out when it is added (keys for all of ``expected`` asked for at
    once), so the view can index it before it is written. Which ids the namespace holds is
    asked once for ``expected`` (the ids a batch is about to add) and then followed op by
    op, so a batch of ADDs costs a few statements, not a few per record.
    """

    def __init__(
        self,
        tx: Transaction,
        namespace: str,
        expected: Sequence[str] = (),
        terms: Mapping[str, TextTerms] | None = None,
    ) -> None:
        tx.lock_namespace(namespace)
        self.tx = tx
        self.namespace = namespace
        self._terms = terms or {}
        """Added texts read beforehand (by id): their rows' terms are written from them."""
        self.dims: int | None = None
        """The namespace's embedding length, once an op carried one."""
        self._last_seq = 0
        self._entries: list[LogEntry] = []
        self._rows: list[NewRecord] = []
        """Records added, not yet written."""
        self._rids: list[int] = []
        """Store keys handed out by the transaction, not yet used (last first)."""
        self._unasked = len(expected)
        """How many of ``expected`` have no key asked for yet."""
        self._stored: dict[str, object] = dict.fromkeys(expected, _ABSENT)
        """Ids whose state is known: their expiry (``None``: never), or ``_ABSENT``."""
        if expected:
            self._stored.update(tx.stored_expiry(namespace, list(self._stored)))

    def lookup(self, now: float) -> Lookup:
        """What a decision made now may read of the namespace."""
        return Lookup(self, now)

    def exists(self, record_id: str, now: float) -> bool:
        """Whether the namespace holds a live record ``record_id`` at ``now``."""
        state = self._state(record_id)
        return state is not _ABSENT and (state is None or float(state) > now)  # type: ignore[arg-type]

    def expired(self, now: float) -> list[str]:
        """Ids of the namespace's records expired at ``now``, not yet deleted."""
        self._flush()
        return self.tx.expired_ids(self.namespace, now)

    def apply_all(self, ops: Sequence[MemoryOp], now: float) -> Applied:
        """Apply and log ``ops`` (one item's) at ``now``."""
        applied = Applied([], [])
        for op in ops:
            self._apply(op, now, applied)
        return applied

    def finish(self) -> int:
        """Write what is pending; returns the change sequence of the last entry (0: none)."""
        self._flush()
        return self._last_seq

    def _state(self, record_id: str) -> object:
        state = self._stored.get(record_id)
        if record_id not in self._stored:
            found = self.tx.stored_expiry(self.namespace, [record_id])
            state = self._stored[record_id] = found.get(record_id, _ABSENT)
        return state

    def _flush(self) -> None:
        if self._rows:
            self.tx.insert_records(self.namespace, self._rows)
            self._rows = []
        if self._entries:
            self._last_seq = self.tx.log_decisions(namespace=self.namespace, entries=self._entries)
            self._entries = []

    def _apply(self, op: MemoryOp, now: float, applied: Applied) -> None:
        moves_text = op.kind is OpKind.DELETE or (op.kind is OpKind.UPDATE and op.text is not None)
        if op.kind is not OpKind.ADD and op.kind is not OpKind.NOOP:
            self._flush()  # what follows reads or changes the records and the log
        # Copies of the text it held as what another record replies to go with it
        # (found now, while it is there; dropped once the op is applied).
        copies = (
            self.tx.replying_copies(namespace=self.namespace, record_ids=op.record_ids)
            if moves_text
            else []
        )
        if op.embedding is not None:
            # Checked before writing: one bad vector would poison the namespace's index.
            if self.dims is None:
                self.dims = self.tx.embedding_dimensions(self.namespace)
            self.dims = check_embedding(op.embedding, self.dims, record_ids=op.record_ids)
        if op.kind is OpKind.ADD:
            applied.rids.append(self._add(op, now, applied.ops))
        elif op.kind is OpKind.UPDATE:
            self._update(op, now)
        elif op.kind is OpKind.DELETE:
            self._delete(op)
        self._log(op, now)
        applied.ops.append(op)
        for copy in copies:
            applied.ops.append(self._unquote(copy, now))
        if moves_text:
            applied.ops.extend(self._unlink(op, now))

    def _add(self, op: MemoryOp, now: float, applied: list[MemoryOp]) -> int:
        (record_id,) = op.record_ids
        if op.text is None or op.embedding is None:
            raise InvalidInputError(f"ADD of {record_id!r} carries no text or embedding")
        if self.exists(record_id, now):
            raise InvalidInputError(
                f"record id {record_id!r} already exists in namespace {self.namespace!r}; "
                "pass a new id, or update the existing record"
            )
        if self._state(record_id) is not _ABSENT:
            # An expired record not yet swept gives its id up, on the record; the DELETE is
            # one of the item's ops, so its vector leaves saved indexes.
            self._flush()
            self.tx.delete_record(record_id=record_id, namespace=self.namespace)
            self.tx.redact_text(namespace=self.namespace, record_ids=[record_id])
            applied.append(expired_op([record_id]))
            self._log(applied[-1], now)
        created = to_epoch(op.timestamp, now)
        expires = expiry_epoch(op.expires_at)
        rid = self._new_rid()
        metadata = self._quoting(op, created)
        self._rows.append(
            NewRecord(
                rid,
                record_id,
                op.thread,
                op.text,
                metadata,
                op.embedding,
                created,
                to_epoch(op.updated_at, created),
                expires,
                stored_terms(op.text, self._terms.get(record_id)),
            )
        )
        self._stored[record_id] = expires
        return rid

    def _quoting(self, op: MemoryOp, created: float) -> dict[str, Any]:
        """``op``'s metadata, naming the record its ``reply_to`` copies (the newest earlier
        record of its thread, this batch's first, whose question it is) as ``reply_to_id``,
        so forgetting that record finds the copy by id; a ``reply_to_id`` given is never
        kept as it came."""
        metadata = {k: v for k, v in (op.metadata or {}).items() if k != REPLY_TO_ID}
        copied = metadata.get(REPLY_TO)
        if not isinstance(copied, str) or not copied.strip():
            return metadata
        question = question_of(copied)
        source = next(
            (
                row.id
                for row in reversed(self._rows)
                if row.thread == op.thread
                and row.created_at <= created
                and question_of(row.text) == question
            ),
            None,
        )
        if source is None:
            source = self.tx.quoted_record(
                namespace=self.namespace, thread=op.thread, question=question, until=created
            )
        if source is not None:
            metadata[REPLY_TO_ID] = source
        return metadata

    def _new_rid(self) -> int:
        """A store key for a new record (asked for the rest of ``expected`` at once)."""
        if not self._rids:
            count = max(1, self._unasked)
            self._unasked = max(0, self._unasked - count)
            self._rids = self.tx.new_rids(count)[::-1]
        return self._rids.pop()

    def _update(self, op: MemoryOp, now: float) -> None:
        if op.text is None and op.embedding is None and op.metadata is not None:
            self._set_metadata(op, now)
            return
        if op.text is None or op.embedding is None:
            raise InvalidInputError(f"UPDATE of {op.record_ids} carries no text")
        expires: Expiry = KEEP if op.expires_at is None else expiry_epoch(op.expires_at)
        for record_id in op.record_ids:
            found = self.tx.update_record(
                record_id=record_id,
                namespace=self.namespace,
                text=op.text,
                metadata=None if op.metadata is None else dict(op.metadata),
                embedding=op.embedding,
                updated_at=now,
                expires_at=expires,
            )
            if not found:
                raise self._missing(record_id)
            if expires is not KEEP:
                self._stored[record_id] = expires
        self.tx.redact_text(namespace=self.namespace, record_ids=op.record_ids)

    def _set_metadata(self, op: MemoryOp, now: float) -> None:
        """An UPDATE of metadata alone (a model's annotation): text, vector, times, the log's
        earlier entries and the replies that quote the record stay as they are."""
        assert op.metadata is not None
        for record_id in op.record_ids:
            found = self.tx.set_metadata(
                record_id=record_id, namespace=self.namespace, metadata=dict(op.metadata), now=now
            )
            if not found:
                raise self._missing(record_id)

    def _delete(self, op: MemoryOp) -> None:
        for record_id in op.record_ids:
            if not self.tx.delete_record(record_id=record_id, namespace=self.namespace):
                raise self._missing(record_id)
            self._stored[record_id] = _ABSENT
        self.tx.redact_text(namespace=self.namespace, record_ids=op.record_ids)

    def _unquote(self, copy: RecordRow, now: float) -> MemoryOp:
        """Take from ``copy`` the text it quoted of a record just changed or forgotten."""
        unquoted = _unquote(copy)
        self.tx.update_record(
            record_id=copy.id,
            namespace=self.namespace,
            text=copy.text,
            metadata=dict(unquoted.metadata or {}),
            embedding=copy.embedding,
            updated_at=now,
            expires_at=KEEP,
        )
        self.tx.redact_text(namespace=self.namespace, record_ids=[copy.id])
        self._log(unquoted, now)
        return unquoted

    def _unlink(self, op: MemoryOp, now: float) -> list[MemoryOp]:
        """Take the words of records ``op`` forgot or changed out of what a model's links
        keep of them: links to a forgotten record are dropped and a changed one's cut to
        the attribute, on the records that carry them and in the annotator's log reasons."""
        gone = set(op.record_ids)
        dropped = op.kind is OpKind.DELETE
        out = []
        for row in self.tx.linking_records(namespace=self.namespace, record_ids=op.record_ids):
            if row.id in gone:
                continue
            metadata = without_links(row.metadata, gone, dropped=dropped)
            if metadata is None:
                continue
            relinked = MemoryOp(
                kind=OpKind.UPDATE,
                record_ids=(row.id,),
                metadata=metadata,
                reason="a record it replaced was changed or forgotten: the link keeps no "
                "words of it",
                policy=UNQUOTE_POLICY,
            )
            self._update(relinked, now)
            self._log(relinked, now)
            out.append(relinked)
        for record_id in op.record_ids:
            for seq, reason in self.tx.reasons_naming(
                namespace=self.namespace, policy=ANNOTATOR, record_id=record_id
            ):
                cut = reason_without(reason, record_id)
                if cut != reason:
                    self.tx.set_reason(namespace=self.namespace, seq=seq, reason=cut)
        return out

    def _missing(self, record_id: str) -> RecordNotFoundError:
        return RecordNotFoundError(
            f"no record {record_id!r} in namespace {self.namespace!r}; "
            "list ids with records(namespace)"
        )

    def _log(self, op: MemoryOp, now: float) -> None:
        text = op.text if op.kind in (OpKind.ADD, OpKind.UPDATE) else None
        self._entries.append(LogEntry(op.kind, op.record_ids, op.reason, op.policy, text, now))


UNQUOTE_POLICY = "forgetting"
"""Policy name logged for a record that lost the copy of a forgotten record's text."""


def _unquote(row: RecordRow) -> MemoryOp:
    """The UPDATE that takes from ``row`` what it replies to (its text and vector kept)."""
    return MemoryOp(
        kind=OpKind.UPDATE,
        record_ids=(row.id,),
        text=row.text,
        embedding=row.embedding,
        metadata={k: v for k, v in row.metadata.items() if k not in (REPLY_TO, REPLY_TO_ID)},
        reason="what it replied to was changed or forgotten: that copy is dropped",
        policy=UNQUOTE_POLICY,
    )
