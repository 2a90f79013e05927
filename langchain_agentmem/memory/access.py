"""``NamespaceAccess``: what every part of ``AgentMemory`` reaches a namespace through (its
lock, its live view, expiry sweeps and the one transactional write path)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime

from langchain_agentmem.backends import Backend, RecordRow, Transaction
from langchain_agentmem.errors import RecordNotFoundError
from langchain_agentmem.index.text import TextTerms
from langchain_agentmem.memory.decisions import Decider, Expiry
from langchain_agentmem.namespace.cache import NamespaceCache
from langchain_agentmem.namespace.ops import Writer, without_embeddings
from langchain_agentmem.namespace.view import NamespaceView
from langchain_agentmem.types import Clock, MemoryOp, OpKind, wall_clock
from langchain_agentmem.validation import check_namespace, check_record_id, read_clock

OnStored = Callable[[str, list[list[MemoryOp]]], None]
"""Called with a namespace and the ops a write just committed there (``AgentMemory`` offers
what was stored to its annotator so)."""


class NamespaceAccess:
    """What every part of ``AgentMemory`` reaches a namespace through: its lock, its live
    view, expiry sweeps and the one transactional write path.

    Args:
        backend: The store.
        cache: The cache of namespace views over it.
        clock: What the memory takes as now.
        holder: Names the memory in the store's annotation claims (unique per instance).
        on_stored: Called after each write commits, with what it stored (``None``: nothing
            is called).
    """

    def __init__(
        self,
        backend: Backend,
        cache: NamespaceCache,
        *,
        clock: Clock = wall_clock,
        holder: str = "",
        on_stored: OnStored | None = None,
    ) -> None:
        self.backend = backend
        self.cache = cache
        self.clock = clock
        self.holder = holder
        self._on_stored = on_stored

    def now(self) -> datetime:
        """What the clock says now (UTC): the time a record written without one is said at,
        and the day a prompt of recalled memories calls today."""
        return read_clock(self.clock)

    def said_at(self) -> datetime | None:
        """The time of a record written without one: the clock's, or ``None`` for the wall
        clock (the store then stamps it as it commits, so a thread's order is its commits')."""
        return None if self.clock is wall_clock else self.now()

    def lock(self, namespace: str) -> AbstractContextManager[None]:
        """The namespace's lock in this process (reentrant)."""
        return self.cache.lock(namespace)

    def live_view(self, namespace: str) -> NamespaceView:
        """The namespace's cache with no expired record in it (swept first when one is due)."""
        with self.cache.lock(namespace):
            view = self.cache.view(namespace)
            now = time.time()
            # Another writer may have moved an expiry earlier (set_expiry logs no change).
            view.expiry_at_most(self.backend.next_expiry(namespace))
            if not view.due(now):
                return view
            self.sweep(namespace)
            view = self.cache.view(namespace)
            # Rows cached as expired that the store kept (their expiry was moved by
            # another writer) are read again; the rest are gone.
            stale = [
                row.id
                for row in view.rows.values()
                if row.expires_at is not None and row.expires_at <= now
            ]
            current = {row.id: row for row in self.backend.get_records(namespace, stale)}
            for record_id in stale:
                view.drop(record_id)
                if record_id in current:
                    view.put(current[record_id])
            view.recount_expiry()
            return view

    def sweep(self, namespace: str) -> int:
        """Delete the records of ``namespace`` whose expiry has passed; how many."""
        (applied,) = self.write(namespace, [Expiry()], sweep=False)
        # Not the UPDATEs that drop copies of a forgotten text from the replies quoting it.
        return sum(len(op.record_ids) for op in applied if op.kind is OpKind.DELETE)

    def write(
        self,
        namespace: str,
        items: Sequence[Decider],
        *,
        sweep: bool = True,
        terms: Mapping[str, TextTerms] | None = None,
        expected: Sequence[str] = (),
    ) -> list[list[MemoryOp]]:
        """Decide and apply the ops of each item in one transaction (see :meth:`batch`).

        Returns:
            Each item's ops as applied.
        """
        with self.batch(namespace, sweep=sweep, terms=terms, expected=expected) as batch:
            for item in items:
                batch.apply(item)
        return batch.out

    @contextmanager
    def batch(
        self,
        namespace: str,
        *,
        sweep: bool = True,
        terms: Mapping[str, TextTerms] | None = None,
        expected: Sequence[str] = (),
    ) -> Iterator[WriteBatch]:
        """One transaction of writes to ``namespace``, its cached view following item by item.

        Inside, the namespace is locked (in this process and in the store), and each item
        applied with :meth:`WriteBatch.apply` is decided on the view as the store holds it
        then plus the items before it: the state a policy (or an upsert) sees is the one its
        ops apply to, whatever other processes do. Expired records of a cached namespace are
        swept first (``sweep``). ``terms`` holds added texts read beforehand (by id);
        ``expected``, the ids the items are about to add (asked about in one query).

        On exit the batch commits, the cache takes the view, and what was stored is handed
        to ``on_stored``; if anything fails, nothing of the batch is kept, in the store or in
        the cache (the view reloads when next used).
        """
        with self.cache.lock(namespace):
            if sweep:
                cached = self.cache.peek(namespace)
                if cached is not None and cached.due(time.time()):
                    self.live_view(namespace)
            try:
                with self.backend.transaction() as tx:
                    writer = Writer(tx, namespace, expected, terms)
                    batch = WriteBatch(tx, writer, self.cache.view(namespace), terms)
                    yield batch
                    seq = writer.finish()
            except BaseException:
                self.cache.discard(namespace)
                raise
            self.cache.committed(namespace, batch.view, seq)
            if self._on_stored is not None:
                self._on_stored(namespace, batch.out)
            if any(_moves_text(op) for ops in batch.out for op in ops):
                # The saved index holds a vector just replaced or deleted: not on disk.
                self.cache.discard_saved(namespace)
                # Nor in the store's write-ahead log (best effort: a reader may hold it).
                self.backend.truncate_log()

    def owned(self, record_id: object, namespace: object) -> RecordRow:
        """The stored record ``record_id`` of ``namespace`` (both checked).

        Raises:
            RecordNotFoundError: no such record in ``namespace`` (or it expired).
        """
        rid = check_record_id(record_id)
        ns = check_namespace(namespace)
        row = self.backend.get_record(ns, rid)
        if row is None:
            raise RecordNotFoundError(
                f"no record {rid!r} in namespace {ns!r}; list ids with records(namespace)"
            )
        return row


class WriteBatch:
    """The items of one write transaction (see :meth:`NamespaceAccess.batch`): each decided on
    the namespace's view, applied by the writer, and the view following."""

    def __init__(
        self,
        tx: Transaction,
        writer: Writer,
        view: NamespaceView,
        terms: Mapping[str, TextTerms] | None,
    ) -> None:
        self.tx = tx
        """The open transaction (an import writes its messages through it)."""
        self.writer = writer
        self.view = view
        self._terms = terms
        self.out: list[list[MemoryOp]] = []
        """Each item's ops as applied, in order."""

    def apply(self, item: Decider) -> list[MemoryOp]:
        """Decide an item on the state the items before it made, and apply it."""
        # The clock is read under the lock: records added without a timestamp are dated
        # in the order they commit, so "oldest" means first in (fifo, lru) even across
        # processes.
        now = time.time()
        return self.apply_ops(item.decide(self.view, self.writer.lookup(now)), now)

    def apply_ops(self, ops: Sequence[MemoryOp], now: float | None = None) -> list[MemoryOp]:
        """Apply an item's ops, already decided."""
        at = time.time() if now is None else now
        applied = self.writer.apply_all(ops, at)
        self.view.apply(self.writer.namespace, applied.ops, applied.rids, at, self._terms)
        self.out.append(without_embeddings(applied.ops))
        return self.out[-1]


def _moves_text(op: MemoryOp) -> bool:
    """Whether ``op`` replaced or deleted a record's text and vector (not metadata alone)."""
    return op.kind is OpKind.DELETE or (op.kind is OpKind.UPDATE and op.text is not None)
