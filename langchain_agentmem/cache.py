"""The in-process cache of namespaces: their indexes and record stats, kept in step with the store.

The store is the source of truth; a namespace's cache (:class:`NamespaceView`) can always be
rebuilt from it. A view is caught up with the store's change log before it is read, so
writes by other processes show up; a saved dense index (see ``index.persist``) is reused
when it matches the store.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from langchain_agentmem.backends import Backend, RecordRow
from langchain_agentmem.backends.sql import epoch_to_datetime
from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.index import (
    DenseIndex,
    HybridConfig,
    LexicalIndex,
    ThreadOrder,
    hybrid_search,
    lexical_text,
)
from langchain_agentmem.index.persist import IndexFiles
from langchain_agentmem.policies import MemoryPolicy
from langchain_agentmem.types import Candidate, MemoryState, RecordStat, Vector


def record_stat(row: RecordRow) -> RecordStat:
    """What a policy sees of a stored row."""
    return RecordStat(
        id=row.id,
        created_at=epoch_to_datetime(row.created_at),
        updated_at=epoch_to_datetime(row.updated_at),
        last_accessed_at=None
        if row.last_accessed_at is None
        else epoch_to_datetime(row.last_accessed_at),
        access_count=row.access_count,
        text=row.text,
    )


@dataclass
class NamespaceView:
    """The cache of one namespace: the dense and lexical indexes and record stats."""

    config: HybridConfig = field(default_factory=HybridConfig)
    index: DenseIndex | None = None
    lexical: LexicalIndex = field(default_factory=LexicalIndex)
    order: ThreadOrder = field(default_factory=ThreadOrder)
    last_seq: int = 0
    rid_of: dict[str, int] = field(default_factory=dict)
    rows: dict[int, RecordRow] = field(default_factory=dict)
    saved_seq: int = -1
    """Change sequence of the index file on disk (-1: none written by this process)."""

    def put(self, row: RecordRow, *, dense: bool = True) -> None:
        dims = int(row.embedding.shape[0])
        if self.index is None:
            self.index = DenseIndex(dims)
        elif self.index.dimensions != dims:
            raise InvalidInputError(
                f"record {row.id!r} has a {dims}-dim embedding but namespace "
                f"{row.namespace!r} holds {self.index.dimensions}-dim ones; use the same "
                "embedding model for one store, or open a new store"
            )
        if dense:
            self.index.add([row.rid], row.embedding.reshape(1, -1))
        self.lexical.add(
            [row.rid], [lexical_text(row.text, row.created_at, dates=self.config.dates)]
        )
        self.order.add(row.rid, row.thread, row.created_at)
        self.rid_of[row.id] = row.rid
        # Keep stats light: the embedding lives in the index.
        self.rows[row.rid] = row

    def drop(self, record_id: str) -> None:
        rid = self.rid_of.pop(record_id, None)
        if rid is not None:
            self.rows.pop(rid, None)
            self.lexical.remove([rid])
            self.order.remove(rid)
            if self.index is not None:
                self.index.remove([rid])

    def fill(self, rows: list[RecordRow]) -> None:
        """Index ``rows`` in bulk (one faiss call; an HNSW graph is built in one go)."""
        for row in rows:
            self.put(row, dense=False)
        index = DenseIndex(int(rows[0].embedding.shape[0]))
        index.add([r.rid for r in rows], np.stack([r.embedding for r in rows]))
        self.index = index

    def hybrid(self, query: str, vector: Vector, k: int) -> list[tuple[int, float]]:
        """Dense and BM25 scores on absolute scales, lifted by thread neighbours."""
        if self.index is None:
            return []
        return hybrid_search(
            query,
            vector,
            k,
            dense=self.index,
            lexical=self.lexical,
            order=self.order,
            embedding_of=lambda rid: self.rows[rid].embedding,
            config=self.config,
        )

    def state(self, policy: MemoryPolicy, candidate: Candidate) -> MemoryState:
        """What ``policy`` sees of this namespace when ``candidate`` is offered."""
        records: tuple[RecordStat, ...] = ()
        if policy.needs_records:
            ordered = sorted(self.rows.values(), key=lambda r: (r.created_at, r.rid))
            records = tuple(record_stat(r) for r in ordered)
        neighbours: tuple[tuple[str, float], ...] = ()
        if policy.needs_neighbours and self.index is not None:
            hits = self.index.search(candidate.embedding, policy.needs_neighbours)
            neighbours = tuple((self.rows[rid].id, score) for rid, score in hits)
        return MemoryState(
            namespace=candidate.namespace,
            size=len(self.rows),
            capacity=policy.capacity,
            records=records,
            neighbours=neighbours,
        )


class NamespaceCache:
    """The views of the namespaces one process has touched.

    Args:
        backend: The store the views mirror.
        hybrid: Scoring of hybrid search in every view.
        index_files: Where dense indexes are saved and loaded (``None``: never).
    """

    def __init__(
        self, backend: Backend, *, hybrid: HybridConfig, index_files: IndexFiles | None
    ) -> None:
        self.backend = backend
        self.hybrid = hybrid
        self.index_files = index_files
        self._views: dict[str, NamespaceView] = {}

    def __contains__(self, namespace: str) -> bool:
        return namespace in self._views

    def view(self, namespace: str) -> NamespaceView:
        """The namespace's view, caught up with the store's change sequence."""
        view = self._views.get(namespace)
        if view is None:
            view = self._open(namespace)
            self._views[namespace] = view
            return view
        self.catch_up(namespace, view)
        return view

    def catch_up(self, namespace: str, view: NamespaceView) -> None:
        """Replay the store's changes made after ``view.last_seq`` into ``view``."""
        changes = self.backend.changes_since(namespace, view.last_seq)
        if not changes:
            return
        touched: list[str] = []
        for change in changes:
            touched.extend(change.record_ids)
        current = {row.id: row for row in self.backend.get_records(touched)}
        for record_id in dict.fromkeys(touched):
            view.drop(record_id)
            found = current.get(record_id)
            if found is not None and found.namespace == namespace:
                view.put(found)
        view.last_seq = changes[-1].seq

    def _open(self, namespace: str) -> NamespaceView:
        """Load a namespace from the store, reusing its saved dense index when it matches."""
        view = NamespaceView(config=self.hybrid)
        view.last_seq = self.backend.last_seq(namespace)
        rows = list(self.backend.iter_records(namespace))
        files = self.index_files
        if files is None or not rows:
            if rows:
                view.fill(rows)
            return view
        dims = int(rows[0].embedding.shape[0])
        loaded = files.load(namespace, store_seq=view.last_seq, dimensions=dims)
        why = loaded if isinstance(loaded, str) else None
        if not isinstance(loaded, str):
            index = loaded.index
            live = {row.rid: row for row in rows}
            index.keep_only(set(live))
            # Records changed after the index was saved get their current vectors.
            changed = {
                rid
                for c in self.backend.changes_since(namespace, loaded.seq)
                for rid in c.record_ids
            }
            present = index.live_keys()
            fresh = [row for row in rows if row.id in changed or row.rid not in present]
            if fresh:
                index.add([r.rid for r in fresh], np.stack([r.embedding for r in fresh]))
            if index.live_keys() == set(live):
                view.index = index
                for row in rows:
                    view.put(row, dense=False)
                view.saved_seq = loaded.seq if not fresh else -1
                return view
            why = "its keys do not match the store"
        if why != "no saved index" or files.any_file(namespace):
            warnings.warn(
                f"index of namespace {namespace!r} rebuilt from the store: {why}",
                RuntimeWarning,
                stacklevel=5,
            )
        view.fill(rows)
        if view.index is not None and view.index.approximate:
            # A graph is costly to build: keep it even if the process never closes cleanly.
            files.save(namespace, view.index, view.last_seq)
            view.saved_seq = view.last_seq
        return view

    def save(self) -> None:
        """Write the dense index of every namespace changed since it was last saved."""
        if self.index_files is None:
            return
        for namespace, view in self._views.items():
            self.save_view(namespace, view)

    def save_view(self, namespace: str, view: NamespaceView) -> None:
        """Write ``view``'s dense index if it changed since it was last saved."""
        if self.index_files is None or view.index is None or view.saved_seq == view.last_seq:
            return
        try:
            self.index_files.save(namespace, view.index, view.last_seq)
        except OSError as exc:
            # A cache that cannot be written costs a rebuild next time, no data.
            warnings.warn(
                f"could not save the index of namespace {namespace!r} ({exc}); "
                "it will be rebuilt from the store next time",
                RuntimeWarning,
                stacklevel=4,
            )
            return
        view.saved_seq = view.last_seq
