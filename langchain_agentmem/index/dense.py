"""Exact inner-product faiss index over L2-normalised vectors (cosine similarity)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import faiss
import numpy as np

from langchain_agentmem.types import Vector

# faiss's OpenMP workers spin after each call and steal the cores the embedding model
# needs: a single-query search gains nothing from them (measured: search 20 ms -> 11 ms).
faiss.omp_set_num_threads(int(os.environ.get("AGENTMEM_FAISS_THREADS", "1")))


class DenseIndex:
    """A faiss ``IndexIDMap2(IndexFlatIP)`` keyed by the store's integer record keys."""

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self._index = faiss.IndexIDMap2(faiss.IndexFlatIP(dimensions))

    def __len__(self) -> int:
        return int(self._index.ntotal)

    def add(self, rids: Sequence[int], vectors: Vector) -> None:
        """Add vectors under ``rids`` (replacing any already there)."""
        if not len(rids):
            return
        self.remove(rids)
        ids = np.asarray(rids, dtype=np.int64)
        self._index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), ids)

    def remove(self, rids: Sequence[int]) -> None:
        """Remove ``rids`` (missing ones are ignored)."""
        if len(rids) and len(self):
            self._index.remove_ids(np.asarray(rids, dtype=np.int64))  # type: ignore[arg-type]

    def search(self, query: Vector, k: int) -> list[tuple[int, float]]:
        """The ``k`` nearest keys with their cosine similarity, best first."""
        n = min(k, len(self))
        if n == 0:
            return []
        scores, ids = self._index.search(np.asarray(query, dtype=np.float32).reshape(1, -1), n)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]
