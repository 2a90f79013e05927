"""The in-process cache of namespaces, bounded, kept in step with the store.

The store is the source of truth; a namespace's view (:class:`NamespaceView`) can always be
rebuilt from it. A view is caught up with the store's change log before it is read, so
writes by other processes show up; a saved dense index (see ``index.persist``) is reused
when it matches the store.

The cache holds at most ``max_records`` records, each namespace's view counting one more
than it holds (an empty namespace's view costs memory too): past that, the least recently used
namespaces are dropped (their changed dense indexes saved first when nobody is using
them) and reload on their next use. Each namespace has its own lock: operations on one
namespace run one at a time, in order; different namespaces run in parallel.

A namespace loaded past the HNSW threshold is searched exactly at first: its graph is built
by one background thread, outside the namespace's lock, and taken when no write came
meanwhile (a write that did builds it on its own path, as before), so a cold search does not
wait for a graph.
"""

from __future__ import annotations

import os
import threading
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from langchain_agentmem.backends import Backend
from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.index.dense import build_graph
from langchain_agentmem.index.persist import IndexFiles
from langchain_agentmem.namespace.view import NamespaceView
from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.types import OpKind

DEFAULT_CACHE_RECORDS = 200_000
"""Records one process keeps indexed by default (about 400 MB with 384-dim vectors)."""


def check_cache_records(value: object) -> int:
    """A cache bound: a positive int."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(
            f"cache_records must be a positive int (records kept indexed in memory), got "
            f"{type(value).__name__} {value!r:.40}; for example cache_records=200_000"
        )
    if value < 1:
        raise InvalidInputError(
            f"cache_records must be >= 1, got {value}; it bounds how many records this "
            "process keeps indexed (namespaces past it reload from the store when used)"
        )
    return value


@dataclass(frozen=True)
class CacheInfo:
    """How the namespace cache has fared (see :meth:`AgentMemory.cache_info`)."""

    hits: int
    """Uses of a namespace found in the cache."""
    misses: int
    """Uses of a namespace that had to be loaded (first use, or after eviction)."""
    evictions: int
    """Namespaces dropped to stay within ``max_records``."""
    namespaces: int
    """Namespaces cached now."""
    records: int
    """Records cached now."""
    max_records: int
    """The bound (``cache_records``)."""


class _NamespaceLock:
    """A re-entrant lock that can be weakly referenced (one per namespace in use)."""

    __slots__ = ("__weakref__", "_lock")

    def __init__(self) -> None:
        self._lock = threading.RLock()

    def acquire(self, blocking: bool = True) -> bool:
        return self._lock.acquire(blocking)

    def release(self) -> None:
        self._lock.release()


class NamespaceCache:
    """The views of the namespaces one process uses, at most ``max_records`` records.

    Every method that takes a namespace must be called inside :meth:`lock` of it.

    Args:
        backend: The store the views mirror.
        hybrid: Scoring of hybrid search in every view.
        index_files: Where dense indexes are saved and loaded (``None``: never).
        max_records: Most records kept (a namespace larger than this alone is still kept
            while it is the one in use).
        on_erased: Called with a namespace this process finds erased (by itself or by
            another process), to drop what else it holds of it.
        on_opened: Called with a namespace and its view just loaded from the store.
    """

    def __init__(
        self,
        backend: Backend,
        *,
        hybrid: HybridConfig,
        index_files: IndexFiles | None,
        max_records: int = DEFAULT_CACHE_RECORDS,
        on_erased: Callable[[str], None] | None = None,
        on_opened: Callable[[str, NamespaceView], None] | None = None,
    ) -> None:
        self.backend = backend
        self._on_erased = on_erased
        self._on_opened = on_opened
        self.hybrid = hybrid
        self.index_files = index_files
        self.max_records = check_cache_records(max_records)
        self._views: OrderedDict[str, NamespaceView] = OrderedDict()
        self._locks: weakref.WeakValueDictionary[str, _NamespaceLock] = (
            weakref.WeakValueDictionary()
        )
        # Guards the maps and counters above; never held while waiting for a namespace.
        self._guard = threading.Lock()
        self._records = 0
        self._counted: dict[str, int] = {}  # what each cached view counts for in _records
        self._hits = self._misses = self._evictions = 0
        self._builder: ThreadPoolExecutor | None = None
        self._builder_pid = 0

    def __contains__(self, namespace: str) -> bool:
        return namespace in self._views

    def _lock_of(self, namespace: str) -> _NamespaceLock:
        with self._guard:
            lock = self._locks.get(namespace)
            if lock is None:
                lock = self._locks[namespace] = _NamespaceLock()
            return lock

    @contextmanager
    def lock(self, namespace: str) -> Iterator[None]:
        """Hold ``namespace``: its operations in this process run one at a time."""
        lock = self._lock_of(namespace)
        lock.acquire()
        try:
            yield
        finally:
            lock.release()

    def info(self) -> CacheInfo:
        """Hits, misses, evictions and what is cached now."""
        with self._guard:
            return CacheInfo(
                hits=self._hits,
                misses=self._misses,
                evictions=self._evictions,
                namespaces=len(self._views),
                records=self._records - len(self._views),
                max_records=self.max_records,
            )

    def peek(self, namespace: str) -> NamespaceView | None:
        """The namespace's view as cached (not caught up), or ``None``."""
        return self._views.get(namespace)

    def view(self, namespace: str) -> NamespaceView:
        """The namespace's view, caught up with the store's change sequence."""
        with self._guard:
            view = self._views.get(namespace)
            if view is None:
                self._misses += 1
            else:
                self._hits += 1
                self._views.move_to_end(namespace)
        if view is None or not self.catch_up(namespace, view):
            # Never cached, or erased by another process since: load it from the store.
            if view is not None:
                self._erased(namespace)
            view = self._open(namespace)
            if view.index is not None and view.index.wants_graph:
                self._build_graph_later(namespace, view)
            if self._on_opened is not None:
                self._on_opened(namespace, view)
        view.flush()
        self.keep(namespace, view)
        return view

    def keep(self, namespace: str, view: NamespaceView) -> None:
        """(Re)count ``view`` as the cache's newest, dropping the oldest past the bound."""
        victims: list[tuple[str, NamespaceView]] = []
        with self._guard:
            if self._views.get(namespace) is not view:
                old = self._views.pop(namespace, None)
                if old is not None:
                    self._records -= self._counted.pop(namespace, 0)
                self._counted[namespace] = 0
                self._views[namespace] = view
            # A view costs memory even when empty: each counts one record more than it
            # holds, so views of empty namespaces are evicted too.
            self._records += len(view.rows) + 1 - self._counted[namespace]
            self._counted[namespace] = len(view.rows) + 1
            while self._records > self.max_records and len(self._views) > 1:
                gone, dropped = self._views.popitem(last=False)
                self._records -= self._counted.pop(gone, 0)
                self._evictions += 1
                victims.append((gone, dropped))
        for gone, dropped in victims:
            # Save what changed, unless someone is using it (a search finishes on the
            # object it holds; the next use reloads from the store).
            lock = self._lock_of(gone)
            if lock.acquire(blocking=False):
                try:
                    # Caught up first: a record deleted elsewhere is not written to disk.
                    if self.catch_up(gone, dropped):
                        self.save_view(gone, dropped)
                finally:
                    lock.release()

    def discard(self, namespace: str) -> None:
        """Forget ``namespace``'s view (it reloads from the store on its next use)."""
        with self._guard:
            view = self._views.pop(namespace, None)
            if view is not None:
                self._records -= self._counted.pop(namespace, 0)

    def committed(self, namespace: str, view: NamespaceView, last_seq: int) -> None:
        """A batch mirrored into ``view`` committed with change ``last_seq``."""
        view.flush()
        view.advance(last_seq)
        self.keep(namespace, view)

    def catch_up(self, namespace: str, view: NamespaceView) -> bool:
        """Replay the store's changes made after ``view.last_seq`` into ``view``.

        Returns:
            False when the namespace was erased meanwhile: the view must be dropped whole.
        """
        changed = self.backend.changed_records(namespace, view.last_seq)
        if changed is None:
            return False
        touched, current, last_seq = changed
        for record_id in touched:
            view.drop(record_id)
            found = current.get(record_id)
            if found is not None:
                view.put(found)
        view.advance(last_seq)
        return True

    def discard_saved(self, namespace: str) -> None:
        """Remove the namespace's saved index, which holds a vector just updated or deleted.

        Rewriting the file on every change would cost a full write per op; removed, it is
        written again (without the old vector) by :meth:`save`.
        """
        if self.index_files is None:
            return
        try:
            self.index_files.remove(namespace)
        except OSError as exc:
            warnings.warn(
                f"could not remove the saved index of namespace {namespace!r} ({exc}); "
                "it is rewritten on close",
                RuntimeWarning,
                stacklevel=4,
            )

    def erase(self, namespace: str) -> int:
        """Forget an erased namespace: its view and saved index files (returns how many).

        Raises:
            OSError: a saved file could not be removed.
        """
        self.discard(namespace)
        self._erased(namespace)
        return 0 if self.index_files is None else self.index_files.remove(namespace)

    def _erased(self, namespace: str) -> None:
        if self._on_erased is not None:
            self._on_erased(namespace)

    def _open(self, namespace: str) -> NamespaceView:
        """Load a namespace from the store, reusing its saved dense index when it matches."""
        view = NamespaceView(config=self.hybrid, last_seq=self.backend.last_seq(namespace))
        rows = list(self.backend.iter_records(namespace))
        files = self.index_files
        if files is None or not rows:
            if rows:
                view.fill(rows)
            return view
        dims = int(rows[0].embedding.shape[0])
        loaded = files.load(
            namespace,
            store_seq=view.last_seq,
            dimensions=dims,
            hnsw_threshold=self.hybrid.hnsw_threshold,
        )
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
                vectors = np.stack([r.embedding for r in fresh])
                index.add([r.rid for r in fresh], vectors, graph=False)
            if index.live_keys() == set(live):
                view.adopt(index, rows)
                view.mark_saved(loaded.seq if not fresh else -1)
                return view
            why = "its keys do not match the store"
        if why != "no saved index" or files.any_file(namespace):
            warnings.warn(
                f"index of namespace {namespace!r} rebuilt from the store: {why}",
                RuntimeWarning,
                stacklevel=5,
            )
        view.fill(rows)
        return view

    def _build_graph_later(self, namespace: str, view: NamespaceView) -> None:
        """Build the HNSW graph of a view just loaded, in the background thread."""
        with self._guard:
            if self._builder is None or self._builder_pid != os.getpid():
                # A process forked from this one inherits the executor, not its thread.
                self._builder = ThreadPoolExecutor(1, thread_name_prefix="agentmem-graph")
                self._builder_pid = os.getpid()
            future = self._builder.submit(self._build_graph, namespace, view)
        future.add_done_callback(_warn_if_failed)

    def _build_graph(self, namespace: str, view: NamespaceView) -> None:
        """Build ``view``'s graph from its vectors outside the lock; take it when the view is
        still cached and its index took no write meanwhile, and save it (a graph is costly
        to build: kept even if the process never closes cleanly)."""
        with self.lock(namespace):
            index = view.index
            if self._views.get(namespace) is not view or index is None or not index.wants_graph:
                return
            changes = index.changes
            rids, vectors = index.live()
        graph = build_graph(index.dimensions, rids, vectors)
        with self.lock(namespace):
            if self._views.get(namespace) is view and index.take_graph(graph, rids, changes):
                self.save_view(namespace, view)

    def wait_graphs(self, timeout: float | None = None) -> bool:
        """Wait until no graph is being built (tests, benchmarks); False on ``timeout``."""
        with self._guard:
            builder = self._builder if self._builder_pid == os.getpid() else None
            # One thread, in order: a no-op ends after every build submitted before it.
            done = None if builder is None else builder.submit(_nothing)
        try:
            return done is None or done.result(timeout) is None
        except TimeoutError:
            return False

    def close(self) -> None:
        """Stop the background thread: a graph not started is dropped, one being built is
        finished (it is taken and saved as usual)."""
        with self._guard:
            builder, self._builder = self._builder, None
        if builder is not None and self._builder_pid == os.getpid():
            builder.shutdown(wait=True, cancel_futures=True)

    def save(self) -> None:
        """Write the dense index of every namespace changed since it was last saved.

        Each view first catches up with the store, so a record another process deleted
        (or a namespace it erased) is not written back to disk.
        """
        if self.index_files is None:
            return
        with self._guard:
            views = list(self._views.items())
        for namespace, view in views:
            with self.lock(namespace):
                if self.catch_up(namespace, view):
                    self.save_view(namespace, view)
                else:
                    self.discard(namespace)
                    self._erased(namespace)

    def save_view(self, namespace: str, view: NamespaceView) -> None:
        """Write ``view``'s dense index if it changed since it was last saved."""
        if self.index_files is None or view.index is None or view.saved_seq == view.last_seq:
            return
        view.flush()
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
        if self._changed_while_saving(namespace, view.last_seq):
            # Another process deleted or changed a record while the file was written: the
            # file may hold that vector, and that process removed the file before it was
            # written. Removed again, it is written anew by a later save.
            self.discard_saved(namespace)
            return
        view.mark_saved(view.last_seq)

    def _changed_while_saving(self, namespace: str, seq: int) -> bool:
        """Whether a record of ``namespace`` was deleted, changed or erased after ``seq``."""
        return any(
            change.erased or change.kind is not OpKind.ADD
            for change in self.backend.changes_since(namespace, seq)
        )


def _warn_if_failed(future: Future[None]) -> None:
    """Say that a background graph build failed (the view stays exact; its next write past
    the threshold builds the graph)."""
    if not future.cancelled() and future.exception() is not None:
        warnings.warn(
            f"a namespace's search graph could not be built ({future.exception()!r}); "
            "it is searched exactly until its next write",
            RuntimeWarning,
            stacklevel=2,
        )


def _nothing() -> None:
    """What :meth:`NamespaceCache.wait_graphs` queues behind the builds."""
