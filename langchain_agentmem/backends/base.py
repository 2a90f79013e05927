"""The backend contract: transactional writes, plain reads, no policy logic."""

from __future__ import annotations

import abc
import enum
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from langchain_agentmem.types import Decision, OpKind, Vector


@dataclass(frozen=True)
class RecordRow:
    """A record as the store keeps it (times as UTC epoch seconds)."""

    rid: int
    """Internal integer key; the faiss id."""
    id: str
    namespace: str
    thread: str | None
    text: str
    metadata: dict[str, Any]
    embedding: Vector
    created_at: float
    updated_at: float
    last_accessed_at: float | None
    access_count: int
    expires_at: float | None = None
    """When the record expires (``None``: never); stores never return expired rows."""
    terms: str | None = None
    """What the row keeps of its text for the lexical index
    (:func:`~langchain_agentmem.index.text.stored_terms`); ``None``: read from the text."""


class Keep(enum.Enum):
    """Marker for "leave this column as it is"."""

    KEEP = 0


KEEP = Keep.KEEP
"""Passed as ``expires_at`` to :meth:`Transaction.update_record`: keep the expiry."""

Expiry = float | None | Literal[Keep.KEEP]


@dataclass(frozen=True)
class Change:
    """One entry of the change sequence that touches records."""

    seq: int
    kind: OpKind
    record_ids: tuple[str, ...]
    erased: bool = False
    """The whole namespace was erased here: drop every cached view of it."""


@dataclass(frozen=True)
class Erased:
    """What erasing a namespace removed from the store."""

    records: int
    messages: int
    decisions: int


class LogEntry(NamedTuple):
    """One audit log entry (see :meth:`Transaction.log_decisions`)."""

    kind: OpKind
    record_ids: Sequence[str]
    reason: str
    policy: str
    text: str | None
    """The text an ADD or UPDATE stored (``None`` for other kinds)."""
    at: float


class NewRecord(NamedTuple):
    """A record to insert (see :meth:`Transaction.insert_records`)."""

    rid: int
    """Its store key, from :meth:`Transaction.new_rids`."""
    id: str
    thread: str | None
    text: str
    metadata: dict[str, Any]
    embedding: Vector
    created_at: float
    updated_at: float
    expires_at: float | None
    terms: str | None = None
    """Its text's terms as the row keeps them
    (:func:`~langchain_agentmem.index.text.stored_terms`); ``None``: read from the text."""


class Transaction(abc.ABC):
    """Writes inside one store transaction: the ops an ``ops.Writer`` applies (the one
    place ops reach a store) and, for an import, the checks and messages of ``transfer``."""

    @abc.abstractmethod
    def lock_namespace(self, namespace: str) -> None:
        """Serialise writers of ``namespace`` until this transaction ends."""

    @abc.abstractmethod
    def new_rids(self, count: int) -> list[int]:
        """``count`` store keys no record of the store has held, for this transaction's
        :meth:`insert_records` (keys left unused are never handed out again)."""

    @abc.abstractmethod
    def insert_records(self, namespace: str, rows: Sequence[NewRecord]) -> None:
        """Insert records, in one statement where the store allows; each id must not exist in
        ``namespace`` yet and each key must come from :meth:`new_rids`."""

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
        """Insert one record (``updated_at`` defaults to created).

        Returns its store key (``rid``).
        """
        (rid,) = self.new_rids(1)
        updated = created_at if updated_at is None else updated_at
        row = NewRecord(
            rid, record_id, thread, text, metadata, embedding, created_at, updated, expires_at
        )
        self.insert_records(namespace, [row])
        return rid

    @abc.abstractmethod
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
        """Replace text (and metadata unless ``None``); False if no such record in namespace.

        An expired record counts as absent: it is replaced as if it were gone.
        """

    @abc.abstractmethod
    def set_metadata(
        self, *, record_id: str, namespace: str, metadata: dict[str, Any], now: float
    ) -> bool:
        """Replace a live record's metadata alone (text, vector and times kept); False if
        no such record in namespace."""

    @abc.abstractmethod
    def delete_record(self, *, record_id: str, namespace: str) -> bool:
        """Delete a record; False if no such record in namespace."""

    @abc.abstractmethod
    def log_decisions(self, *, namespace: str, entries: Sequence[LogEntry]) -> int:
        """Append ``entries`` to the audit log, in order; returns the change sequence
        number of the last (0 when there is none)."""

    @abc.abstractmethod
    def redact_text(self, *, namespace: str, record_ids: Sequence[str]) -> int:
        """Drop the text of every audit entry naming one of ``record_ids``; returns how many."""

    @abc.abstractmethod
    def replying_copies(self, *, namespace: str, record_ids: Sequence[str]) -> list[RecordRow]:
        """The other records of ``namespace`` that keep part of the text of one of
        ``record_ids`` as what they reply to (``metadata["reply_to"]``): same thread, stored
        at or after it, naming it as ``metadata["reply_to_id"]`` (or, written before that
        key was, copying its question)."""

    @abc.abstractmethod
    def linking_records(self, *, namespace: str, record_ids: Sequence[str]) -> list[RecordRow]:
        """Records of ``namespace`` whose metadata names one of ``record_ids`` among the
        records it replaces (a model's links; the caller reads which)."""

    @abc.abstractmethod
    def reasons_naming(
        self, *, namespace: str, policy: str, record_id: str
    ) -> list[tuple[int, str]]:
        """``(seq, reason)`` of the audit entries of ``policy`` whose reason names
        ``record_id``."""

    @abc.abstractmethod
    def set_reason(self, *, namespace: str, seq: int, reason: str) -> None:
        """Rewrite the reason of one audit entry (the words of a forgotten record out)."""

    @abc.abstractmethod
    def quoted_record(
        self, *, namespace: str, thread: str | None, question: str, until: float
    ) -> str | None:
        """The id of the newest record of ``thread`` stored at or before ``until`` whose
        question (``replies.question_of`` of its text) is ``question``, or ``None``."""

    @abc.abstractmethod
    def thread_messages(self, *, namespace: str, thread: str) -> list[str]:
        """A thread's serialised messages, read after taking the thread's writer lock."""

    @abc.abstractmethod
    def insert_messages(
        self, *, namespace: str, thread: str, payloads: Sequence[str], created_at: Sequence[float]
    ) -> None:
        """Append serialised messages to a thread with their own times (restoring an export)."""

    @abc.abstractmethod
    def record_exists(self, namespace: str, record_id: str, now: float) -> bool:
        """Whether ``namespace`` holds a live (unexpired) record ``record_id``."""

    @abc.abstractmethod
    def stored_expiry(self, namespace: str, record_ids: Sequence[str]) -> dict[str, float | None]:
        """The expiry of each of ``record_ids`` that ``namespace`` holds, expired or not
        (``None``: never); ids it does not hold are left out."""

    @abc.abstractmethod
    def expired_ids(self, namespace: str, now: float) -> list[str]:
        """Ids of the records of ``namespace`` expired at ``now`` (not yet swept)."""

    def embedding_dimensions(self, namespace: str) -> int | None:
        """Length of the embeddings a namespace holds (``None``: empty, or not known)."""
        return None


class Backend(abc.ABC):
    """A durable store of records, the decision log and chat messages."""

    url: str

    @abc.abstractmethod
    def transaction(self) -> AbstractContextManager[Transaction]:
        """Open a write transaction: committed on normal exit, rolled back on error."""

    # -- records (reads never return expired rows) --------------------------------------------
    @abc.abstractmethod
    def get_record(self, namespace: str, record_id: str) -> RecordRow | None:
        """One record of ``namespace`` by id, or ``None``."""

    @abc.abstractmethod
    def get_records(self, namespace: str, record_ids: Sequence[str]) -> list[RecordRow]:
        """The records of ``namespace`` among ``record_ids`` that exist (any order)."""

    @abc.abstractmethod
    def find_records(self, record_id: str) -> list[RecordRow]:
        """The records with this id in every namespace (administration only)."""

    @abc.abstractmethod
    def iter_records(
        self,
        namespace: str,
        *,
        limit: int | None = None,
        offset: int = 0,
        newest_first: bool = False,
    ) -> Iterator[RecordRow]:
        """The live records of a namespace, oldest first (``newest_first``: newest first),
        ``offset`` of them skipped, at most ``limit`` (``None``: all)."""

    @abc.abstractmethod
    def count_records(self, namespace: str) -> int:
        """How many records a namespace holds."""

    @abc.abstractmethod
    def set_expiry(
        self,
        namespace: str,
        record_ids: Sequence[str],
        at: float | None,
        *,
        versions: Sequence[float] | None = None,
    ) -> list[str]:
        """Move the expiry of live records (a refreshed TTL); not a memory op.

        With ``versions`` (each record's ``updated_at`` as it was read), only a record still
        at that version moves: a write that landed since keeps its own expiry. Returns the
        ids moved.
        """

    @abc.abstractmethod
    def next_expiry(self, namespace: str) -> float | None:
        """The earliest expiry among a namespace's stored records (``None``: none expire).

        Read on every use of a cached view: :meth:`set_expiry` writes no change, so this is
        how a process learns that another one moved an expiry earlier.
        """

    @abc.abstractmethod
    def expiring_namespaces(self, now: float) -> list[str]:
        """Namespaces holding records expired at ``now``."""

    @abc.abstractmethod
    def touch(self, rids: Sequence[int], at: float) -> None:
        """Note that records were recalled (access count and time)."""

    @abc.abstractmethod
    def namespaces(self) -> list[str]:
        """Namespaces that hold records or messages."""

    # -- change sequence and audit log ---------------------------------------------------------
    @abc.abstractmethod
    def last_seq(self, namespace: str) -> int:
        """Highest change sequence number of a namespace (0 when none)."""

    @abc.abstractmethod
    def changes_since(self, namespace: str, seq: int) -> list[Change]:
        """Record-touching changes of a namespace after ``seq``, in order."""

    def changed_records(
        self, namespace: str, seq: int
    ) -> tuple[list[str], dict[str, RecordRow], int] | None:
        """What changed in a namespace after ``seq``: the record ids touched (in order, once
        each), the current rows of those still live, and the last change's sequence number
        (``seq`` when none); ``None`` when the namespace was erased meanwhile."""
        changes = self.changes_since(namespace, seq)
        if any(change.erased for change in changes):
            return None
        touched = list(dict.fromkeys(i for change in changes for i in change.record_ids))
        rows = {row.id: row for row in self.get_records(namespace, touched)} if touched else {}
        return touched, rows, changes[-1].seq if changes else seq

    @abc.abstractmethod
    def decisions(self, namespace: str, *, limit: int | None = None) -> list[Decision]:
        """The audit log of a namespace, oldest first (the newest ``limit`` when given)."""

    # -- chat messages ---------------------------------------------------------------------
    @abc.abstractmethod
    def append_messages(self, namespace: str, thread: str, payloads: Sequence[str]) -> None:
        """Append serialised messages to a thread, in order, in one transaction."""

    @abc.abstractmethod
    def get_messages(self, namespace: str, thread: str, *, last: int | None = None) -> list[str]:
        """Serialised messages of a thread, oldest first (only the newest ``last``)."""

    @abc.abstractmethod
    def clear_messages(self, namespace: str, thread: str) -> int:
        """Delete a thread's messages; returns how many were deleted."""

    @abc.abstractmethod
    def threads(self, namespace: str) -> list[str]:
        """Threads of a namespace that hold messages."""

    @abc.abstractmethod
    def iter_messages(self, namespace: str) -> Iterator[tuple[str, str, float]]:
        """Every message of a namespace as ``(thread, payload, created_at)``, in order."""

    # -- annotation claims -------------------------------------------------------------------
    @abc.abstractmethod
    def claim(
        self, namespace: str, record_id: str, holder: str, *, until: float, now: float
    ) -> bool:
        """Take the claim on annotating a record until ``until`` (epoch seconds): granted
        when nobody holds one, ``holder`` holds it, or the one held ran out by ``now``.

        Two processes sharing a store annotate a statement once: the one granted the claim.
        Claims of an erased namespace go with it (:meth:`erase_namespace`).
        """

    @abc.abstractmethod
    def release(self, namespace: str, record_id: str, holder: str) -> None:
        """Drop ``holder``'s claim on a record (nothing when another holds it)."""

    # -- erasure ---------------------------------------------------------------------------
    @abc.abstractmethod
    def erase_namespace(self, namespace: str, *, at: float) -> Erased:
        """Delete a namespace's records, messages, audit entries and annotation claims in
        one transaction.

        When anything was removed, an erasure marker (no text, no ids, not the namespace's
        name) enters the change sequence so other processes drop their cached views.
        """

    def truncate_log(self) -> bool:
        """Best effort: leave nothing deleted in a write-ahead log file beside the store.

        Returns:
            Whether the log is empty now (``True`` where the store keeps no such file).
        """
        return True

    @abc.abstractmethod
    def close(self) -> None:
        """Release connections."""
