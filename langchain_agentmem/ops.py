"""The one place where memory ops are applied to a store."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from langchain_agentmem.backends.base import KEEP, Backend, Expiry, RecordRow, Transaction
from langchain_agentmem.errors import InvalidInputError, RecordNotFoundError
from langchain_agentmem.replies import REPLY_TO
from langchain_agentmem.types import MemoryOp, OpKind, expiry_epoch, to_epoch

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
    """What a decision made inside :func:`apply_batch` may read: the locked namespace now."""

    def __init__(self, tx: Transaction, namespace: str, now: float) -> None:
        self._tx = tx
        self.namespace = namespace
        self.now = now
        """The transaction's clock (epoch seconds)."""

    def exists(self, record_id: str) -> bool:
        """Whether the namespace holds a live (unexpired) record ``record_id``."""
        return self._tx.record_exists(self.namespace, record_id, self.now)

    def expired(self) -> list[str]:
        """Ids of the namespace's records that have expired but are not yet deleted."""
        return self._tx.expired_ids(self.namespace, self.now)


def expired_op(record_ids: Sequence[str]) -> MemoryOp:
    """The DELETE op of records whose time has come."""
    return MemoryOp(
        kind=OpKind.DELETE,
        record_ids=tuple(record_ids),
        reason="expired",
        policy=EXPIRY_POLICY,
    )


Decide = Callable[[Lookup], Sequence[MemoryOp]]
"""A decision (a policy's, an upsert's), called inside the transaction once the namespace
is locked, with a :class:`Lookup` of the namespace as it is then: a check such as "does
this id exist" and the write it leads to are one atomic step."""
Applied = Callable[[list[MemoryOp], list[int], float], None]
"""Told, inside the transaction, the ops of each item as applied (embeddings kept), the
store keys of its ADDs and the clock read for it."""


def apply_batch(
    backend: Backend,
    namespace: str,
    batch: Sequence[Sequence[MemoryOp] | Decide],
    *,
    on_applied: Applied | None = None,
) -> tuple[list[list[MemoryOp]], int]:
    """Apply the ops of several items to ``namespace`` in ONE transaction, item by item,
    and write each to the audit log.

    Either the whole batch lands (every op with its decision log entry) or none of it does.
    An item may be a function of a :class:`Lookup` returning the ops (a policy's decision,
    an upsert): it is called inside the transaction, after the namespace's writer lock is
    taken, so concurrent writers never decide on a state that another one has already
    changed. Each item's decision is called after the previous item's ops are applied (and
    passed to ``on_applied``, so the caller's view of the namespace can follow), so a
    policy decides every item on the state it changes.

    Returns:
        Each item's ops as applied (embeddings dropped; an ADD that takes the id of an
        expired record comes after that record's DELETE, reason "expired"), and the change
        sequence of the last audit log entry written (0 if none).

    Raises:
        RecordNotFoundError: an UPDATE / DELETE targets an id that is not in ``namespace``.
        InvalidInputError: an ADD reuses an id that already exists in ``namespace``.
    """
    with backend.transaction() as tx:
        return apply_batch_in(tx, namespace, batch, on_applied=on_applied)


def apply_batch_in(
    tx: Transaction,
    namespace: str,
    batch: Sequence[Sequence[MemoryOp] | Decide],
    *,
    on_applied: Applied | None = None,
) -> tuple[list[list[MemoryOp]], int]:
    """:func:`apply_batch` inside a transaction the caller opened (and commits or rolls back).

    A record's text is kept in one place besides the record: the audit entry of the ADD or
    UPDATE that stored it. When a record is updated or deleted, every earlier entry naming
    it loses its text, so forgetting a record forgets it in the log too; NOOP and DELETE
    entries never keep text.
    """
    tx.lock_namespace(namespace)
    writer = _Writer(tx, namespace)
    out: list[list[MemoryOp]] = []
    for item in batch:
        # The clock is read under the lock: records added without a timestamp are
        # then dated in the order they commit, so "oldest" means first in (fifo, lru)
        # even when writers in several processes queue for the lock.
        now = time.time()
        ops = list(item(Lookup(tx, namespace, now))) if callable(item) else list(item)
        applied: list[MemoryOp] = []
        rids: list[int] = []
        for op in ops:
            writer.apply(op, now, applied, rids)
        if on_applied is not None:
            on_applied(applied, rids, now)
        out.append([replace(op, embedding=None) for op in applied])
    return out, writer.last_seq


@dataclass
class _Writer:
    """The writes of one batch to a locked namespace: one method per op kind."""

    tx: Transaction
    namespace: str
    dims: int | None = None
    """The namespace's embedding length, once an op carried one."""
    last_seq: int = 0
    """The change sequence of the last audit entry written."""

    def apply(self, op: MemoryOp, now: float, applied: list[MemoryOp], rids: list[int]) -> None:
        """Apply and log ``op``, appending it (and what it led to) to ``applied`` and the key
        of a new record to ``rids``."""
        # Copies of the text it held as what another record replies to go with it
        # (found now, while it is there; dropped once the op is applied).
        copies = (
            self.tx.replying_copies(namespace=self.namespace, record_ids=op.record_ids)
            if op.kind is OpKind.DELETE or (op.kind is OpKind.UPDATE and op.text is not None)
            else []
        )
        if op.embedding is not None:
            # Checked before writing: one bad vector would poison the namespace's index.
            if self.dims is None:
                self.dims = self.tx.embedding_dimensions(self.namespace)
            self.dims = check_embedding(op.embedding, self.dims, record_ids=op.record_ids)
        if op.kind is OpKind.ADD:
            rids.append(self._add(op, now, applied))
        elif op.kind is OpKind.UPDATE:
            self._update(op, now)
        elif op.kind is OpKind.DELETE:
            self._delete(op)
        self._log(op, now)
        applied.append(op)
        for copy in copies:
            applied.append(self._unquote(copy, now))

    def _add(self, op: MemoryOp, now: float, applied: list[MemoryOp]) -> int:
        (record_id,) = op.record_ids
        if op.text is None or op.embedding is None:
            raise InvalidInputError(f"ADD of {record_id!r} carries no text or embedding")
        if self.tx.record_exists(self.namespace, record_id, now):
            raise InvalidInputError(
                f"record id {record_id!r} already exists in namespace {self.namespace!r}; "
                "pass a new id, or update the existing record"
            )
        if self.tx.delete_record(record_id=record_id, namespace=self.namespace):
            # An expired record not yet swept gives its id up, on the record; the DELETE is
            # one of the item's ops, so its vector leaves saved indexes.
            self.tx.redact_text(namespace=self.namespace, record_ids=[record_id])
            applied.append(expired_op([record_id]))
            self._log(applied[-1], now)
        created = to_epoch(op.timestamp, now)
        return self.tx.insert_record(
            record_id=record_id,
            namespace=self.namespace,
            thread=op.thread,
            text=op.text,
            metadata=dict(op.metadata or {}),
            embedding=op.embedding,
            created_at=created,
            updated_at=to_epoch(op.updated_at, created),
            expires_at=expiry_epoch(op.expires_at),
        )

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

    def _missing(self, record_id: str) -> RecordNotFoundError:
        return RecordNotFoundError(
            f"no record {record_id!r} in namespace {self.namespace!r}; "
            "list ids with records(namespace)"
        )

    def _log(self, op: MemoryOp, now: float) -> None:
        self.last_seq = self.tx.log_decision(
            namespace=self.namespace,
            kind=op.kind,
            record_ids=op.record_ids,
            reason=op.reason,
            policy=op.policy,
            text=op.text if op.kind in (OpKind.ADD, OpKind.UPDATE) else None,
            at=now,
        )


UNQUOTE_POLICY = "forgetting"
"""Policy name logged for a record that lost the copy of a forgotten record's text."""


def _unquote(row: RecordRow) -> MemoryOp:
    """The UPDATE that takes from ``row`` what it replies to (its text and vector kept)."""
    return MemoryOp(
        kind=OpKind.UPDATE,
        record_ids=(row.id,),
        text=row.text,
        embedding=row.embedding,
        metadata={k: v for k, v in row.metadata.items() if k != REPLY_TO},
        reason="what it replied to was changed or forgotten: that copy is dropped",
        policy=UNQUOTE_POLICY,
    )
