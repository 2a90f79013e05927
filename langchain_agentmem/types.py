"""Plain data passed between the memory, its policies, backends and adapters."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]

Clock = Callable[[], datetime]
"""What a memory takes as now: a function of no arguments returning a datetime (naive
ones are UTC). The wall clock by default; a replay, a test or a benchmark passes its own."""


def wall_clock() -> datetime:
    """Now, in UTC: the default :data:`Clock`."""
    return datetime.now(timezone.utc)


NEVER = datetime.max.replace(tzinfo=timezone.utc)
"""An expiry that never comes: an UPDATE carrying it clears the record's expiry."""


EARLIEST = datetime(1, 1, 2, tzinfo=timezone.utc)
"""The earliest time a record may carry (a day inside year 1, whatever its time zone)."""

LATEST = datetime(9999, 12, 30, tzinfo=timezone.utc)
"""The latest time a record may carry: a day short of the largest datetime, so no time zone
and no float rounding of its epoch seconds carries it past year 9999."""


def from_epoch(value: float) -> datetime:
    """UTC epoch seconds as an aware datetime, held within [:data:`EARLIEST`,
    :data:`LATEST`]: a stored time out of range (written by an older version, or by hand)
    reads as the nearest end, never as an error that breaks every read of its user."""
    low, high = EARLIEST.timestamp(), LATEST.timestamp()
    seconds = float(value)
    if seconds != seconds:  # NaN
        seconds = low
    return datetime.fromtimestamp(min(max(seconds, low), high), tz=timezone.utc)


def to_epoch(value: datetime | None, default: float) -> float:
    """A datetime as UTC epoch seconds (naive datetimes are UTC; ``None``: ``default``)."""
    if value is None:
        return default
    return (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).timestamp()


def expiry_epoch(value: datetime | None) -> float | None:
    """An expiry as UTC epoch seconds (``None`` and :data:`NEVER`: never; naive is UTC)."""
    if value is None or value == NEVER:
        return None
    return to_epoch(value, 0.0)


class OpKind(str, enum.Enum):
    """What a policy decided to do with a memory item."""

    ADD = "ADD"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    NOOP = "NOOP"


@dataclass(frozen=True)
class MemoryRecord:
    """One long-term memory item of a namespace."""

    id: str
    """Stable record id (a string; unique within its namespace)."""
    namespace: str
    """The user (or agent) the record belongs to."""
    text: str
    """The remembered text."""
    thread: str | None = None
    """The conversation it came from, if any."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """Free-form JSON-serialisable metadata."""
    created_at: datetime | None = None
    """When the item was first remembered (caller-supplied timestamps are kept)."""
    updated_at: datetime | None = None
    """When the text last changed."""
    score: float | None = None
    """Similarity to the query when returned by ``search``; ``None`` otherwise."""
    embedding: Vector | None = field(default=None, repr=False, compare=False)
    """The stored embedding (float32, L2-normalised)."""
    expires_at: datetime | None = None
    """When the record expires (``None``: never); an expired record is never read again."""


@dataclass(frozen=True)
class MemoryOp:
    """A decision about memory: ADD / UPDATE / DELETE / NOOP, with its reason."""

    kind: OpKind
    """What to do."""
    record_ids: tuple[str, ...] = ()
    """Ids the op touches: the new id for ADD, the targets for UPDATE / DELETE."""
    reason: str = ""
    """Why the policy decided this; lands in the audit log."""
    text: str | None = None
    """The text to store (ADD, UPDATE). An UPDATE without text or embedding but with
    ``metadata`` changes the metadata alone (a model's annotation)."""
    metadata: Mapping[str, Any] | None = None
    """Metadata to store (ADD, UPDATE); ``None`` keeps existing metadata on UPDATE."""
    thread: str | None = None
    """The thread the item came from (ADD)."""
    timestamp: datetime | None = None
    """The item's own time (ADD); defaults to now."""
    embedding: Vector | None = field(default=None, repr=False, compare=False)
    """The embedding of ``text`` (ADD, UPDATE)."""
    policy: str = ""
    """Name of the policy that decided this op."""
    updated_at: datetime | None = None
    """When the text last changed (ADD of a restored record); defaults to ``timestamp``."""
    expires_at: datetime | None = None
    """When the record expires (ADD, UPDATE). On UPDATE ``None`` keeps the record's expiry
    and :data:`NEVER` clears it."""


@dataclass(frozen=True)
class Decision:
    """One entry of the audit log: an op that was applied, when and why."""

    seq: int
    """Position in the store's change sequence (monotonic)."""
    namespace: str
    kind: OpKind
    record_ids: tuple[str, ...]
    reason: str
    policy: str
    at: datetime
    """When the op was applied."""
    text: str | None = None
    """The text an ADD / UPDATE stored, for reading the log; ``None`` once that record is
    deleted or updated again, and for NOOP and DELETE entries (nothing of theirs is kept)."""


_Frozen = TypeVar("_Frozen")


def with_embedding(item: _Frozen, embedding: Vector | None) -> _Frozen:
    """A copy of a frozen ``item`` (a :class:`Candidate` or :class:`MemoryOp`) with another
    ``embedding``: ``dataclasses.replace`` without re-running ``__init__``, several times
    cheaper for the writes of a batch (the vector is checked where it is stored)."""
    copied: _Frozen = object.__new__(type(item))
    fields = copied.__dict__
    fields.update(item.__dict__)
    fields["embedding"] = embedding
    return copied


@dataclass(frozen=True)
class Candidate:
    """An item offered to long-term memory, before a policy decides on it."""

    id: str
    """The id it will get if added."""
    namespace: str
    text: str
    embedding: Vector
    thread: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    timestamp: datetime | None = None
    expires_at: datetime | None = None
    """When the item expires if it is kept (``None``: never)."""


@dataclass(frozen=True)
class RecordStat:
    """What a policy may know about a stored record without touching the store."""

    id: str
    created_at: datetime
    updated_at: datetime
    last_accessed_at: datetime | None = None
    access_count: int = 0
    text: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    thread: str | None = None


@dataclass(frozen=True)
class MemoryState:
    """A read-only snapshot of a namespace given to a policy."""

    namespace: str
    size: int
    """Number of records in the namespace now."""
    capacity: int | None
    """Most records the namespace may hold (``None``: unbounded)."""
    records: tuple[RecordStat, ...] = ()
    """Stats of the stored records, oldest first (filled when the policy needs them)."""
    neighbours: tuple[tuple[str, float], ...] = ()
    """Ids of the records most similar to the candidate, with cosine similarity."""
    asked_before: tuple[str, float] | None = None
    """When the candidate only asks: the id of a record that only asks, said by the same
    speaker, whose cosine to it (given) reaches the policy's ``repeated_question``."""


@dataclass(frozen=True)
class ErasedNamespace:
    """What :meth:`AgentMemory.delete_namespace` removed (all zero for an unknown namespace)."""

    namespace: str
    records: int = 0
    """Long-term records deleted."""
    messages: int = 0
    """Chat messages deleted, over every thread."""
    decisions: int = 0
    """Audit log entries deleted."""
    index_files: int = 0
    """Saved index files deleted."""


@dataclass(frozen=True)
class RecordChanges:
    """What changed in a namespace after a version (:meth:`AgentMemory.changes`)."""

    touched: tuple[str, ...]
    """The ids of the records written or deleted since, in order, once each."""
    records: dict[str, MemoryRecord]
    """The current record of each touched id still live (deleted ones are missing)."""
    version: int
    """The namespace's version after these changes."""
