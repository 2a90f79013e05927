"""The one place where memory ops are applied to a store."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timezone

from langchain_agentmem.backends.base import Backend
from langchain_agentmem.errors import InvalidInputError, RecordNotFoundError
from langchain_agentmem.types import MemoryOp, OpKind


def to_epoch(value: datetime | None, default: float) -> float:
    """A datetime as UTC epoch seconds (naive datetimes are taken as UTC)."""
    if value is None:
        return default
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.timestamp()


def apply_ops(backend: Backend, namespace: str, ops: Sequence[MemoryOp]) -> list[MemoryOp]:
    """Apply ``ops`` to ``namespace`` in one transaction and write each to the audit log.

    Either every op lands (with its decision log entry) or none does.

    Returns:
        The ops as applied.

    Raises:
        RecordNotFoundError: an UPDATE / DELETE targets an id that is not in ``namespace``.
        InvalidInputError: an ADD reuses an id that already exists.
    """
    now = time.time()
    applied: list[MemoryOp] = []
    with backend.transaction() as tx:
        for op in ops:
            if op.kind is OpKind.ADD:
                (record_id,) = op.record_ids
                if op.text is None or op.embedding is None:
                    raise InvalidInputError(f"ADD of {record_id!r} carries no text or embedding")
                owner = tx.record_namespace(record_id)
                if owner is not None:
                    raise InvalidInputError(
                        f"record id {record_id!r} already exists"
                        + (" in another namespace" if owner != namespace else "")
                        + "; pass a new id, or update the existing record"
                    )
                tx.insert_record(
                    record_id=record_id,
                    namespace=namespace,
                    thread=op.thread,
                    text=op.text,
                    metadata=dict(op.metadata or {}),
                    embedding=op.embedding,
                    created_at=to_epoch(op.timestamp, now),
                )
            elif op.kind is OpKind.UPDATE:
                if op.text is None or op.embedding is None:
                    raise InvalidInputError(f"UPDATE of {op.record_ids} carries no text")
                for record_id in op.record_ids:
                    found = tx.update_record(
                        record_id=record_id,
                        namespace=namespace,
                        text=op.text,
                        metadata=None if op.metadata is None else dict(op.metadata),
                        embedding=op.embedding,
                        updated_at=now,
                    )
                    if not found:
                        raise RecordNotFoundError(
                            f"no record {record_id!r} in namespace {namespace!r}; "
                            "list ids with records(namespace)"
                        )
            elif op.kind is OpKind.DELETE:
                for record_id in op.record_ids:
                    if not tx.delete_record(record_id=record_id, namespace=namespace):
                        raise RecordNotFoundError(
                            f"no record {record_id!r} in namespace {namespace!r}; "
                            "list ids with records(namespace)"
                        )
            tx.log_decision(
                namespace=namespace,
                kind=op.kind,
                record_ids=op.record_ids,
                reason=op.reason,
                policy=op.policy,
                text=op.text,
                at=now,
            )
            applied.append(replace(op, embedding=None))
    return applied
