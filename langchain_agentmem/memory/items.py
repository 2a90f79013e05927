"""Pure helpers of ``AgentMemory``'s reads and writes: checked items, expiries, user ops."""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np

from langchain_agentmem.annotation.annotations import ANNOTATOR
from langchain_agentmem.backends import RecordRow
from langchain_agentmem.backends.encoding import epoch_to_datetime
from langchain_agentmem.collector import collector_paused
from langchain_agentmem.embedding.embeddings import normalize
from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.types import (
    LATEST,
    NEVER,
    Candidate,
    MemoryOp,
    MemoryRecord,
    OpKind,
    Vector,
    with_embedding,
)
from langchain_agentmem.validation import (
    Limits,
    check_metadata,
    check_namespace,
    check_optional_name,
    check_record_id,
    check_text,
    check_time,
)

USER_POLICY = "user"
"""Policy name logged for ops a caller asked for directly (update / delete)."""

_NO_VECTOR: Vector = np.zeros(0, dtype=np.float32)
"""Placeholder embedding of a checked item until it is embedded."""


def to_record(
    row: RecordRow, *, score: float | None = None, embedding: Vector | None = None
) -> MemoryRecord:
    """The public view of a stored row."""
    return MemoryRecord(
        id=row.id,
        namespace=row.namespace,
        text=row.text,
        thread=row.thread,
        metadata=row.metadata,
        created_at=epoch_to_datetime(row.created_at),
        updated_at=epoch_to_datetime(row.updated_at),
        score=score,
        embedding=row.embedding if embedding is None else embedding,
        expires_at=None if row.expires_at is None else epoch_to_datetime(row.expires_at),
    )


def check_expiry(ttl: object, expires_at: object) -> datetime | None:
    """An item's expiry from a TTL (seconds or a ``timedelta``) or an absolute time.

    Raises:
        InvalidInputError: both given, a TTL that is not positive, a time already past.
        InvalidTypeError: values of the wrong type.
    """
    if ttl is not None and expires_at is not None:
        raise InvalidInputError(
            f"pass ttl ({ttl!r}) or expires_at ({expires_at!r}), not both; one expiry per item"
        )
    now = datetime.fromtimestamp(time.time(), timezone.utc)
    if ttl is not None:
        if isinstance(ttl, timedelta):
            seconds = ttl.total_seconds()
        elif isinstance(ttl, (int, float)) and not isinstance(ttl, bool):
            seconds = float(ttl)
        else:
            raise InvalidTypeError(
                f"ttl must be seconds (int or float) or a timedelta, got {type(ttl).__name__}"
            )
        if not seconds > 0 or seconds != seconds or seconds == float("inf"):
            raise InvalidInputError(
                f"ttl must be a finite number of seconds > 0, got {ttl!r}; leave it out for "
                "a record that never expires"
            )
        if seconds > (LATEST - now).total_seconds():
            raise InvalidInputError(
                f"ttl {ttl!r} ends past {LATEST:%Y-%m-%d}, the latest time a record can carry; "
                "pass a shorter ttl, or none for a record that never expires"
            )
        return now + timedelta(seconds=seconds)
    if expires_at is None:
        return None
    if not isinstance(expires_at, datetime):
        raise InvalidTypeError(
            f"expires_at must be a datetime or None, got {type(expires_at).__name__}"
        )
    expires_at = check_time(expires_at, what="expires_at")
    if expires_at <= now:
        raise InvalidInputError(
            f"expires_at {expires_at.isoformat()} is already past; pass a future time"
        )
    return expires_at


def check_vector(embedding: object) -> Vector:
    """One finite vector, L2-normalised, as a (1, dims) array."""
    try:
        vector = normalize(np.asarray(embedding, dtype=np.float32))
    except (TypeError, ValueError):
        raise InvalidTypeError(
            f"embedding must be a list of floats, got {type(embedding).__name__}"
        ) from None
    if vector.ndim != 2 or vector.shape[0] != 1 or not np.isfinite(vector).all():
        raise InvalidInputError(
            "embedding must be one finite vector; embed the query with memory.embeddings"
        )
    return vector


def make_candidate(
    limits: Limits,
    text: object,
    namespace: object,
    thread: object,
    metadata: object,
    timestamp: object,
    record_id: object,
    expires: datetime | None = None,
) -> Candidate:
    """A checked item, not yet embedded (its embedding is filled in later)."""
    if timestamp is not None and not isinstance(timestamp, datetime):
        raise InvalidTypeError(
            f"timestamp must be a datetime or None, got {type(timestamp).__name__}"
        )
    if timestamp is not None:
        timestamp = check_time(timestamp, what="timestamp")
    rid = uuid.uuid4().hex if record_id is None else check_record_id(record_id)
    return Candidate(
        id=rid,
        namespace=check_namespace(namespace),
        text=limits.text(check_text(text)),
        embedding=_NO_VECTOR,
        thread=check_optional_name(thread, what="thread"),
        metadata=limits.metadata(check_metadata(metadata)),
        timestamp=timestamp,
        expires_at=expires,
    )


def make_candidates(
    limits: Limits,
    texts: object,
    namespace: object,
    thread: object,
    metadatas: object,
    record_ids: object,
    expires: datetime | None = None,
    timestamp: datetime | None = None,
) -> list[Candidate]:
    """Checked items of a batch (one per text, ids unique, said at ``timestamp``: ``None``
    for when they are stored), not yet embedded."""
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise InvalidTypeError(
            f"texts must be a list of str, got {type(texts).__name__}; "
            "wrap a single text in a list or call add()"
        )
    n = len(texts)

    def per_text(value: object, name: str) -> Sequence[object]:
        if value is None:
            return [None] * n
        if isinstance(value, str) or not isinstance(value, Sequence) or len(value) != n:
            raise InvalidInputError(
                f"{name} must be a list with one entry per text ({n}), got {value!r:.60}"
            )
        return value

    with collector_paused():
        items = [
            make_candidate(limits, text, namespace, thread, meta, timestamp, rid, expires)
            for text, meta, rid in zip(
                texts,
                per_text(metadatas, "metadatas"),
                per_text(record_ids, "record_ids"),
                strict=True,
            )
        ]
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise InvalidInputError(f"record id {item.id!r} appears twice; pass unique ids")
        seen.add(item.id)
    return items


def put_candidates(
    limits: Limits,
    texts: object,
    namespace: object,
    record_ids: object,
    metadatas: object,
    thread: object,
) -> list[Candidate]:
    """Checked items of ``put_many`` (ids required), not yet embedded."""
    if record_ids is None:
        raise InvalidInputError("put_many() needs record_ids (one per text); use add_many()")
    return make_candidates(limits, texts, namespace, thread, metadatas, record_ids)


def with_vectors(items: Sequence[Candidate], vectors: Iterable[Vector]) -> list[Candidate]:
    """The items with their embeddings filled in, in order."""
    return [with_embedding(item, vector) for item, vector in zip(items, vectors, strict=True)]


def update_args(
    limits: Limits, text: object, metadata: object, ttl: object, expires_at: object
) -> tuple[str, dict[str, Any] | None, datetime | None]:
    """The checked text, metadata (``None``: keep) and expiry of an update."""
    text = limits.text(check_text(text))
    meta = None if metadata is None else limits.metadata(check_metadata(metadata))
    return text, meta, check_expiry(ttl, expires_at)


def update_op(
    record_id: str,
    text: str,
    vector: Vector,
    metadata: dict[str, Any] | None,
    expires: datetime | None,
) -> MemoryOp:
    """The UPDATE a caller asks for."""
    return MemoryOp(
        kind=OpKind.UPDATE,
        record_ids=(record_id,),
        reason="updated by caller",
        text=text,
        metadata=metadata,
        embedding=vector,
        policy=USER_POLICY,
        expires_at=expires,
    )


def upsert_op(candidate: Candidate) -> MemoryOp:
    """The UPDATE of a put whose id exists (expiry replaced, cleared when none is given)."""
    return MemoryOp(
        kind=OpKind.UPDATE,
        record_ids=(candidate.id,),
        reason="updated by caller",
        text=candidate.text,
        metadata=candidate.metadata,
        embedding=candidate.embedding,
        policy=USER_POLICY,
        expires_at=candidate.expires_at or NEVER,
    )


def delete_op(record_id: str) -> MemoryOp:
    """The DELETE a caller asks for."""
    return MemoryOp(
        kind=OpKind.DELETE,
        record_ids=(record_id,),
        reason="deleted by caller",
        policy=USER_POLICY,
    )


def with_offered_expiry(ops: list[MemoryOp], candidate: Candidate) -> list[MemoryOp]:
    """A policy that builds its own ADD still gives the item the expiry it was offered with."""
    if candidate.expires_at is None:
        return ops
    return [
        dataclasses.replace(op, expires_at=candidate.expires_at)
        if op.kind is OpKind.ADD and op.record_ids == (candidate.id,) and op.expires_at is None
        else op
        for op in ops
    ]


def annotation_op(
    record_id: str, metadata: dict[str, Any], model: str, replaces: Sequence[tuple[str, str]]
) -> MemoryOp:
    """The UPDATE of a record's metadata alone that stores a model's annotation."""
    about = ", ".join(metadata.get("annotation", {}).get("about", [])) or "nothing"
    reason = f"{model} noted what it is about: {about}"
    if replaces:
        reason += "; it replaces " + "; ".join(f"{rid} ({why})" for rid, why in replaces)
    return MemoryOp(
        kind=OpKind.UPDATE,
        record_ids=(record_id,),
        metadata=metadata,
        reason=reason,
        policy=ANNOTATOR,
    )
