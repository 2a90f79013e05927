"""The namespace access that ``AgentMemory``'s reads and writes share: the live view of a
namespace, expiry sweeps and the one transactional write path."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_agentmem.annotation.annotator import Annotator
from langchain_agentmem.backends import Backend, RecordRow, Transaction
from langchain_agentmem.errors import RecordNotFoundError
from langchain_agentmem.memory.decisions import Decider, Expiry
from langchain_agentmem.namespace.cache import NamespaceCache
from langchain_agentmem.namespace.ops import Writer, without_embeddings
from langchain_agentmem.namespace.view import NamespaceView
from langchain_agentmem.policies import MemoryPolicy
from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.types import Clock, MemoryOp, OpKind, Vector, wall_clock
from langchain_agentmem.validation import Limits, check_namespace, check_record_id, read_clock

MAX_LABEL_VECTORS = 50_000
"""Most label and attribute-name embeddings a memory keeps (searches match labels, the
annotator compares names)."""


class MemoryCore:
    """What every part of ``AgentMemory`` holds and the namespace access they share."""

    hybrid: HybridConfig
    limits: Limits
    policy: MemoryPolicy
    embeddings: Embeddings
    backend: Backend
    _cache: NamespaceCache
    _label_vectors: dict[str, Vector]
    """Embeddings of the labels searches matched queries with (see ``reads``)."""
    _holder: str
    """Names this memory in the store's annotation claims (unique per instance)."""
    annotator: Annotator | None
    """What annotates stored statements with a chat model (``None``: no model)."""
    label_queries: bool
    """Whether each search also asks the model what its query is about (``AgentMemory``'s
    ``label_queries``)."""
    clock: Clock
    """What the memory takes as now (``AgentMemory``'s ``clock``)."""

    def now(self) -> datetime:
        """What this memory's clock says now (UTC): the time a record written without one is
        said at, and the day a prompt of recalled memories calls today."""
        return read_clock(self.clock)

    def _said_at(self) -> datetime | None:
        """The time of a record written without one: the clock's, or ``None`` for the wall
        clock (the store then stamps it as it commits, so a thread's order is its commits')."""
        return None if self.clock is wall_clock else self.now()

    def _remember_labels(self, labels: Sequence[str], vectors: np.ndarray) -> None:
        """Keep the embeddings of ``labels`` or attribute names (a bounded cache: cleared
        when full)."""
        if len(self._label_vectors) + len(labels) > MAX_LABEL_VECTORS:
            self._label_vectors.clear()
        self._label_vectors.update(zip(labels, np.asarray(vectors, dtype=np.float32), strict=True))

    def _namespace(self, namespace: object) -> str:
        return check_namespace(namespace)

    def _live_view(self, namespace: str) -> NamespaceView:
        """The namespace's cache with no expired record in it (swept first when one is due)."""
        with self._cache.lock(namespace):
            view = self._cache.view(namespace)
            now = time.time()
            # Another writer may have moved an expiry earlier (set_expiry logs no change).
            view.expiry_at_most(self.backend.next_expiry(namespace))
            if not view.due(now):
                return view
            self._sweep(namespace)
            view = self._cache.view(namespace)
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

    def _sweep(self, namespace: str) -> int:
        (applied,) = self._write(namespace, [Expiry()], sweep=False)
        # Not the UPDATEs that drop copies of a forgotten text from the replies quoting it.
        return sum(len(op.record_ids) for op in applied if op.kind is OpKind.DELETE)

    def _write(
        self,
        namespace: str,
        items: Sequence[Decider],
        *,
        sweep: bool = True,
        terms: Mapping[str, Counter[str]] | None = None,
        expected: Sequence[str] = (),
    ) -> list[list[MemoryOp]]:
        """Decide and apply the ops of each item in one transaction (see :meth:`_batch`).

        Returns:
            Each item's ops as applied.
        """
        with self._batch(namespace, sweep=sweep, terms=terms, expected=expected) as batch:
            for item in items:
                batch.apply(item)
        return batch.out

    @contextmanager
    def _batch(
        self,
        namespace: str,
        *,
        sweep: bool = True,
        terms: Mapping[str, Counter[str]] | None = None,
        expected: Sequence[str] = (),
    ) -> Iterator[WriteBatch]:
        """One transaction of writes to ``namespace``, its cached view following item by item.

        Inside, the namespace is locked (in this process and in the store), and each item
        applied with :meth:`WriteBatch.apply` is decided on the view as the store holds it
        then plus the items before it: the state a policy (or an upsert) sees is the one its
        ops apply to, whatever other processes do. Expired records of a cached namespace are
        swept first (``sweep``). ``terms`` holds added texts tokenised beforehand (by id);
        ``expected``, the ids the items are about to add (asked about in one query).

        On exit the batch commits, the cache takes the view, and what was stored is offered
        for annotation; if anything fails, nothing of the batch is kept, in the store or in
        the cache (the view reloads when next used).
        """
        with self._cache.lock(namespace):
            if sweep:
                cached = self._cache.peek(namespace)
                if cached is not None and cached.due(time.time()):
                    self._live_view(namespace)
            try:
                with self.backend.transaction() as tx:
                    writer = Writer(tx, namespace, expected)
                    batch = WriteBatch(tx, writer, self._cache.view(namespace), terms)
                    yield batch
                    seq = writer.finish()
            except BaseException:
                self._cache.discard(namespace)
                raise
            self._cache.committed(namespace, batch.view, seq)
            if self.annotator is not None:
                self._offer(namespace, batch.out)
            if any(_moves_text(op) for ops in batch.out for op in ops):
                # The saved index holds a vector just replaced or deleted: not on disk.
                self._cache.discard_saved(namespace)
                # Nor in the store's write-ahead log (best effort: a reader may hold it).
                self.backend.truncate_log()

    def _offer(self, namespace: str, out: list[list[MemoryOp]]) -> None:
        """Queue the statements just stored, or whose text just changed, for annotation."""
        assert self.annotator is not None
        for ops in out:
            for op in ops:
                if op.text is not None and op.kind in (OpKind.ADD, OpKind.UPDATE):
                    for record_id in op.record_ids:
                        self.annotator.offer(namespace, record_id, op.text, op.metadata)

    def _owned(self, record_id: object, namespace: object) -> RecordRow:
        rid = check_record_id(record_id)
        ns = self._namespace(namespace)
        row = self.backend.get_record(ns, rid)
        if row is None:
            raise RecordNotFoundError(
                f"no record {rid!r} in namespace {ns!r}; list ids with records(namespace)"
            )
        return row


class WriteBatch:
    """The items of one write transaction (see :meth:`MemoryCore._batch`): each decided on
    the namespace's view, applied by the writer, and the view following."""

    def __init__(
        self,
        tx: Transaction,
        writer: Writer,
        view: NamespaceView,
        terms: Mapping[str, Counter[str]] | None,
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
