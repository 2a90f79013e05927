"""Inner-product faiss index over L2-normalised vectors (cosine similarity).

Exact (``IndexFlatIP``) while small; past :func:`default_hnsw_threshold` vectors it switches
to an approximate HNSW graph. HNSW cannot delete, so there each stored id carries a generation
(``rid << GEN_BITS | gen``): an update adds the vector under the next generation, and
entries whose generation is not the newest, or whose key was deleted, are skipped at search
time and dropped when the graph is compacted.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

import faiss
import numpy as np
import numpy.typing as npt

from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.types import Vector

DEFAULT_FAISS_THREADS = 1
DEFAULT_HNSW_THRESHOLD = 20000
"""Vectors in one namespace past which search goes approximate, unless
``HybridConfig.hnsw_threshold`` or ``AGENTMEM_HNSW_THRESHOLD`` says otherwise (measured in
``benchmarks/results/scale.txt``)."""
_threads = threading.local()


def _env_count(name: str, default: int, minimum: int) -> int:
    """The whole number in environment variable ``name``; unset or empty: ``default``.

    Raises:
        InvalidInputError: the value is not a whole number of at least ``minimum``.
    """
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise InvalidInputError(
            f"{name}={raw!r:.40} is not accepted: set it to a whole number >= {minimum} "
            f"(default {default}), or leave it empty or unset"
        )
    return value


def default_hnsw_threshold() -> int:
    """Vectors past which a new index goes approximate: ``AGENTMEM_HNSW_THRESHOLD`` (read
    now, so ``.env`` applies), else :data:`DEFAULT_HNSW_THRESHOLD`."""
    return _env_count("AGENTMEM_HNSW_THRESHOLD", DEFAULT_HNSW_THRESHOLD, 0)


def _set_faiss_threads() -> None:
    """Apply ``AGENTMEM_FAISS_THREADS`` (default 1) in the calling thread, once per thread.

    faiss's OpenMP workers spin after each call and steal the cores the embedding model
    needs: a single-query search gains nothing from them (measured: search 20 ms -> 11 ms).
    OpenMP keeps the setting per thread, so each thread that builds or searches sets it
    (``asearch`` runs in worker threads).
    """
    if not getattr(_threads, "set", False):
        faiss.omp_set_num_threads(_env_count("AGENTMEM_FAISS_THREADS", DEFAULT_FAISS_THREADS, 1))
        _threads.set = True


HNSW_M = 32
HNSW_EF_SEARCH = 64
HNSW_EF_CONSTRUCTION = 64
GEN_BITS = 16
_GEN_MASK = (1 << GEN_BITS) - 1
COMPACT_SHARE = 0.25
"""Share of dead HNSW entries past which the graph is rebuilt from the live vectors."""


def _ids(rids: Sequence[int]) -> npt.NDArray[np.int64]:
    return np.asarray(rids, dtype=np.int64)


def build_graph(dimensions: int, rids: npt.NDArray[np.int64], vectors: Vector) -> faiss.Index:
    """An HNSW graph of ``vectors`` under ``rids`` (generation 0), as :class:`DenseIndex`
    searches it. Pure: a namespace's graph is built outside its lock (faiss lets go of
    Python's lock while it builds)."""
    _set_faiss_threads()
    graph = faiss.IndexHNSWFlat(dimensions, HNSW_M, faiss.METRIC_INNER_PRODUCT)
    graph.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    graph.hnsw.efSearch = HNSW_EF_SEARCH
    index = faiss.IndexIDMap2(graph)
    index.add_with_ids(np.ascontiguousarray(vectors), rids << GEN_BITS)  # type: ignore[call-arg]
    return index


class DenseIndex:
    """Cosine search over vectors keyed by the store's integer record keys."""

    def __init__(self, dimensions: int, *, hnsw_threshold: int | None = None) -> None:
        _set_faiss_threads()
        self.dimensions = dimensions
        self.hnsw_threshold = default_hnsw_threshold() if hnsw_threshold is None else hnsw_threshold
        self._index: faiss.Index = faiss.IndexIDMap2(faiss.IndexFlatIP(dimensions))
        self._approximate = False
        self._gen: dict[int, int] = {}  # live key -> newest generation (HNSW only)
        # Last generation ever used per key, removed keys included: a key removed and
        # added again must not reuse the label of its dead entry (HNSW only).
        self._last: dict[int, int] = {}
        self._dead = 0
        self._changes = 0

    # -- state ---------------------------------------------------------------------------------
    @property
    def approximate(self) -> bool:
        """Whether searches go through the HNSW graph."""
        return self._approximate

    def __len__(self) -> int:
        return len(self._gen) if self._approximate else int(self._index.ntotal)

    @property
    def changes(self) -> int:
        """How many writes this index took (a graph built from it before one is stale)."""
        return self._changes

    @property
    def wants_graph(self) -> bool:
        """Whether it is exact past :attr:`hnsw_threshold` (filled with ``graph=False``)."""
        return not self._approximate and len(self) > self.hnsw_threshold

    @property
    def faiss_index(self) -> faiss.Index:
        """The underlying faiss index (for persistence)."""
        return self._index

    def vector(self, rid: int) -> Vector:
        """The stored vector of ``rid`` (which must be live)."""
        key = int(rid)
        if self._approximate:
            key = (key << GEN_BITS) | self._gen[key]
        return np.asarray(self._index.reconstruct(key), dtype=np.float32)

    def vectors(self, rids: Sequence[int]) -> Vector:
        """The stored vectors of ``rids`` (all live), one row each, in one faiss call."""
        if not len(rids):
            return np.zeros((0, self.dimensions), dtype=np.float32)
        keys = [int(r) for r in rids]
        if self._approximate:
            keys = [(key << GEN_BITS) | self._gen[key] for key in keys]
        return np.asarray(self._index.reconstruct_batch(_ids(keys)), dtype=np.float32)

    # -- writes --------------------------------------------------------------------------------
    def add(self, rids: Sequence[int], vectors: Vector, *, graph: bool = True) -> None:
        """Add vectors under ``rids`` (replacing any already there).

        Past :attr:`hnsw_threshold` an exact index becomes a graph, unless ``graph`` is
        false (a namespace loading: its graph is built off the request, :meth:`take_graph`).
        """
        if not len(rids):
            return
        _set_faiss_threads()
        self._changes += 1
        vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(rids), -1)
        if not self._approximate:
            self.remove(rids)
            self._index.add_with_ids(vectors, _ids(rids))  # type: ignore[call-arg]
            if graph and len(self) > self.hnsw_threshold:
                self._to_hnsw()
            return
        if any(self._last.get(int(rid)) == _GEN_MASK for rid in rids):
            self._compact()  # generations would wrap: start them afresh
        labels = []
        for rid in rids:
            if int(rid) in self._gen:
                self._dead += 1
            last = self._last.get(int(rid))
            gen = 0 if last is None else last + 1
            self._gen[int(rid)] = self._last[int(rid)] = gen
            labels.append((int(rid) << GEN_BITS) | gen)
        self._index.add_with_ids(vectors, _ids(labels))  # type: ignore[call-arg]
        self._maybe_compact()

    def remove(self, rids: Sequence[int]) -> None:
        """Remove ``rids`` (missing ones are ignored)."""
        if not len(rids):
            return
        self._changes += 1
        if not self._approximate:
            if len(self):
                self._index.remove_ids(_ids(rids))  # type: ignore[arg-type]
            return
        for rid in rids:
            if self._gen.pop(int(rid), None) is not None:
                self._dead += 1
        self._maybe_compact()

    def live(self) -> tuple[npt.NDArray[np.int64], Vector]:
        """Keys and vectors of every live entry (copies: a graph is built from them)."""
        ids = faiss.vector_to_array(self._index.id_map).astype(np.int64)  # type: ignore[attr-defined]
        vectors = self._index.index.reconstruct_n(0, int(self._index.ntotal))  # type: ignore[attr-defined]
        if not self._approximate:
            return ids, vectors
        rids, gens = ids >> GEN_BITS, ids & _GEN_MASK
        keep = np.fromiter(
            (self._gen.get(int(r)) == int(g) for r, g in zip(rids, gens, strict=True)),
            dtype=bool,
            count=len(ids),
        )
        return rids[keep], vectors[keep]

    def _to_hnsw(self) -> None:
        rids, vectors = self.live()
        self._build_hnsw(rids, vectors)

    def _build_hnsw(self, rids: npt.NDArray[np.int64], vectors: Vector) -> None:
        self._take(build_graph(self.dimensions, rids, vectors), rids)

    def take_graph(self, graph: faiss.Index, rids: npt.NDArray[np.int64], changes: int) -> bool:
        """Search through ``graph``, built by :func:`build_graph` from :meth:`live` when
        :attr:`changes` was ``changes``; False (nothing taken) when a write came since."""
        if changes != self._changes or self._approximate:
            return False
        self._take(graph, rids)
        return True

    def _take(self, graph: faiss.Index, rids: npt.NDArray[np.int64]) -> None:
        self._index = graph
        self._approximate = True
        self._gen = {int(r): 0 for r in rids}
        self._last = dict(self._gen)
        self._dead = 0

    def _maybe_compact(self) -> None:
        if self._dead > COMPACT_SHARE * max(int(self._index.ntotal), 1):
            self._compact()

    def _compact(self) -> None:
        rids, vectors = self.live()
        self._build_hnsw(rids, vectors)

    @property
    def dead(self) -> int:
        """HNSW entries kept for deleted or superseded vectors (always 0 when exact)."""
        return self._dead if self._approximate else 0

    def purge(self) -> None:
        """Rebuild the HNSW graph without dead entries, so no old vector is kept (or saved)."""
        if self._approximate and self._dead:
            self._compact()

    # -- reads ---------------------------------------------------------------------------------
    def search(self, query: Vector, k: int) -> list[tuple[int, float]]:
        """The ``k`` nearest keys with their cosine similarity, best first."""
        n = min(k, len(self))
        if n == 0:
            return []
        _set_faiss_threads()
        q = np.asarray(query, dtype=np.float32).reshape(1, -1)
        if not self._approximate:
            scores, ids = self._index.search(q, n)  # type: ignore[call-arg]
            return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]
        fetch = min(n + self._dead, int(self._index.ntotal))
        params = faiss.SearchParametersHNSW()  # type: ignore[attr-defined]
        params.efSearch = max(HNSW_EF_SEARCH, fetch)
        scores, ids = self._index.search(q, fetch, params=params)  # type: ignore[call-arg]
        out = []
        for label, score in zip(ids[0], scores[0], strict=True):
            if label < 0:
                continue
            rid, gen = int(label) >> GEN_BITS, int(label) & _GEN_MASK
            if self._gen.get(rid) == gen:
                out.append((rid, float(score)))
                if len(out) == n:
                    break
        return out

    # -- persistence ---------------------------------------------------------------------------
    @classmethod
    def from_faiss(
        cls, index: faiss.Index, dimensions: int, *, hnsw_threshold: int | None = None
    ) -> DenseIndex:
        """Wrap an index read back with ``faiss.read_index`` (made by :attr:`faiss_index`).

        Raises:
            ValueError: the index is not one this class writes, or has other dimensions.
        """
        self = cls(dimensions, hnsw_threshold=hnsw_threshold)
        if not isinstance(index, faiss.IndexIDMap2) or index.d != dimensions:
            raise ValueError("not an IndexIDMap2 of the expected dimensions")
        inner = faiss.downcast_index(index.index)
        self._index = index
        if isinstance(inner, faiss.IndexHNSWFlat):
            self._approximate = True
            ids = faiss.vector_to_array(index.id_map).astype(np.int64)
            newest: dict[int, int] = {}
            for label in ids.tolist():
                rid, gen = label >> GEN_BITS, label & _GEN_MASK
                newest[rid] = max(newest.get(rid, -1), gen)
            self._gen = newest
            self._last = dict(newest)
            self._dead = len(ids) - len(newest)
            inner.hnsw.efSearch = HNSW_EF_SEARCH
        elif not isinstance(inner, faiss.IndexFlatIP):
            raise ValueError(f"unexpected inner index {type(inner).__name__}")
        return self

    def keep_only(self, rids: set[int]) -> None:
        """Forget entries whose key is not in ``rids`` (after reading back a saved index)."""
        if self._approximate:
            gone = [rid for rid in self._gen if rid not in rids]
            for rid in gone:
                del self._gen[rid]
            self._dead += len(gone)
            self._maybe_compact()
        else:
            ids = faiss.vector_to_array(self._index.id_map)  # type: ignore[attr-defined]
            self.remove([int(i) for i in ids if int(i) not in rids])

    def live_keys(self) -> set[int]:
        """The live keys."""
        if self._approximate:
            return set(self._gen)
        return {int(i) for i in faiss.vector_to_array(self._index.id_map)}  # type: ignore[attr-defined]
