"""The namespace access that ``AgentMemory``'s reads and writes share: the live view of a
namespace, expiry sweeps and the one transactional write path."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_agentmem.annotator import Annotator
from langchain_agentmem.backends import Backend, RecordRow
from langchain_agentmem.cache import NamespaceCache
from langchain_agentmem.errors import RecordNotFoundError
from langchain_agentmem.ops import Decide, Lookup, apply_batch, expired_op
from langchain_agentmem.policies import MemoryPolicy
from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.types import MemoryOp, OpKind, Vector
from langchain_agentmem.validation import Limits, check_namespace, check_record_id
from langchain_agentmem.view import NamespaceView

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
        def decide(view: NamespaceView, lookup: Lookup) -> list[MemoryOp]:
            expired = lookup.expired()
            return [expired_op(expired)] if expired else []

        (applied,) = self._write(namespace, [decide], sweep=False)
        return sum(len(op.record_ids) for op in applied)

    def _write(
        self,
        namespace: str,
        items: Sequence[Callable[[NamespaceView, Lookup], Sequence[MemoryOp]]],
        *,
        sweep: bool = True,
        terms: Mapping[str, Counter[str]] | None = None,
    ) -> list[list[MemoryOp]]:
        """Apply the ops of each item in one transaction, the cache following item by item.

        Each item is called inside the transaction, after the namespace's writer lock, with
        the namespace's view as the store holds it then plus the items before it, and a
        :class:`Lookup` of the store: the state a policy (or an upsert) sees is the one its
        ops apply to, whatever other processes do. Expired records of a cached namespace
        are swept first (``sweep``). ``terms`` holds added texts tokenised beforehand (by id).
        """
        with self._cache.lock(namespace):
            if sweep:
                cached = self._cache.peek(namespace)
                if cached is not None and cached.due(time.time()):
                    self._live_view(namespace)
            views: list[NamespaceView] = []

            def step(item: Callable[[NamespaceView, Lookup], Sequence[MemoryOp]]) -> Decide:
                def run(lookup: Lookup) -> Sequence[MemoryOp]:
                    if not views:
                        views.append(self._cache.view(namespace))
                    return item(views[0], lookup)

                return run

            def mirror(ops: list[MemoryOp], rids: list[int], at: float) -> None:
                views[0].apply(namespace, ops, rids, at, terms)

            try:
                out, seq = apply_batch(
                    self.backend, namespace, [step(i) for i in items], on_applied=mirror
                )
            except BaseException:
                # The view may hold ops that were rolled back: reload it when next used.
                self._cache.discard(namespace)
                raise
            if views:
                self._cache.committed(namespace, views[0], seq)
            if self.annotator is not None:
                self._offer(namespace, out)
            if any(_moves_text(op) for ops in out for op in ops):
                # The saved index holds a vector just replaced or deleted: not on disk.
                self._cache.discard_saved(namespace)
                # Nor in the store's write-ahead log (best effort: a reader may hold it).
                self.backend.truncate_log()
            return out

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


def _moves_text(op: MemoryOp) -> bool:
    """Whether ``op`` replaced or deleted a record's text and vector (not metadata alone)."""
    return op.kind is OpKind.DELETE or (op.kind is OpKind.UPDATE and op.text is not None)
