"""Search modes and hybrid search: dense and BM25 scores on absolute scales, plus context.

A hybrid score is, for a record with cosine similarity ``cos`` to the query and BM25 score
``bm25``::

    base  = w * clip(cos, 0, 1) + (1 - w) * bm25 / ceiling(query)
    score = base + lift * max(0, best_neighbour_base - base)

``ceiling(query)`` is the most BM25 any record could score for the query (the sum over its
terms of ``idf * (k1 + 1)``, unseen terms included), so both parts are absolute: the same
match scores the same in every search, whatever else the namespace holds, and the score is
in [0, 1]. Neighbours are the records just before and after in the same thread (by creation
time): a turn that answers a matching turn ("Yes! A sunrise.") is lifted toward it. Records
without a thread have no neighbours. Weights were chosen by leave-one-conversation-out on
LoCoMo (``benchmarks/locomo_ablation.py``).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.index.dense import DenseIndex
from langchain_agentmem.index.lexical import LexicalIndex, top_k
from langchain_agentmem.types import Vector

SEARCH_MODES = ("hybrid", "dense", "lexical")
"""The modes ``AgentMemory.search`` accepts."""


@dataclass(frozen=True)
class HybridConfig:
    """How hybrid search scores records.

    Attributes:
        dense_weight: Share ``w`` of the cosine side in the base score (BM25 gets the rest;
            BM25 over its ceiling rarely nears 1 while cosine rarely falls near 0, hence the
            smaller share).
        neighbour_lift: How far a record moves toward the best base score of its thread
            neighbours, in [0, 1] (0: off).
        candidates: How many of each side's best records are scored (at least ``k``).
        dates: Put each record's date in the text the lexical index sees (never in the
            returned ``.text``, never in the embedding).
    """

    dense_weight: float = 0.2
    neighbour_lift: float = 0.5
    candidates: int = 100
    dates: bool = True

    def __post_init__(self) -> None:
        for name in ("dense_weight", "neighbour_lift"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InvalidTypeError(
                    f"HybridConfig.{name} must be a number in [0, 1], got {value!r}"
                )
            if not 0.0 <= value <= 1.0:
                raise InvalidInputError(f"HybridConfig.{name} must be in [0, 1], got {value!r}")
        if isinstance(self.candidates, bool) or not isinstance(self.candidates, int):
            raise InvalidTypeError(
                f"HybridConfig.candidates must be an int >= 1, got {self.candidates!r}"
            )
        if self.candidates < 1:
            raise InvalidInputError(
                f"HybridConfig.candidates must be >= 1, got {self.candidates!r}"
            )
        if not isinstance(self.dates, bool):
            raise InvalidTypeError(f"HybridConfig.dates must be a bool, got {self.dates!r}")


def check_mode(mode: object) -> str:
    """Validate a search mode name."""
    if not isinstance(mode, str):
        raise InvalidTypeError(
            f"mode must be a str, got {type(mode).__name__} {mode!r}; "
            f"use one of {', '.join(SEARCH_MODES)}"
        )
    if mode not in SEARCH_MODES:
        raise InvalidInputError(
            f"unknown search mode {mode!r}; use one of {', '.join(SEARCH_MODES)}"
        )
    return mode


class ThreadOrder:
    """Records of each thread in creation order, to find a record's neighbours."""

    def __init__(self) -> None:
        self._lists: dict[str, list[tuple[float, int]]] = {}
        self._where: dict[int, tuple[str, tuple[float, int]]] = {}

    def add(self, rid: int, thread: str | None, created_at: float) -> None:
        """Place ``rid`` in its thread (a record without a thread has no neighbours)."""
        self.remove(rid)
        if thread is None:
            return
        key = (float(created_at), int(rid))
        bisect.insort(self._lists.setdefault(thread, []), key)
        self._where[int(rid)] = (thread, key)

    def remove(self, rid: int) -> None:
        """Take ``rid`` out (missing ones are ignored)."""
        found = self._where.pop(int(rid), None)
        if found is None:
            return
        thread, key = found
        keys = self._lists[thread]
        del keys[bisect.bisect_left(keys, key)]
        if not keys:
            del self._lists[thread]

    def neighbours(self, rid: int) -> list[int]:
        """The records just before and after ``rid`` in its thread."""
        found = self._where.get(int(rid))
        if found is None:
            return []
        thread, key = found
        keys = self._lists[thread]
        i = bisect.bisect_left(keys, key)
        out = []
        if i > 0:
            out.append(keys[i - 1][1])
        if i + 1 < len(keys):
            out.append(keys[i + 1][1])
        return out


def hybrid_search(
    query: str,
    vector: Vector,
    k: int,
    *,
    dense: DenseIndex,
    lexical: LexicalIndex,
    order: ThreadOrder,
    embedding_of: Callable[[int], Vector],
    config: HybridConfig,
) -> list[tuple[int, float]]:
    """The ``k`` best keys by hybrid score (see the module docstring), best first.

    Args:
        query: The query text (for BM25).
        vector: The normalised query embedding.
        k: How many to return.
        dense: The namespace's dense index.
        lexical: The namespace's lexical index.
        order: The namespace's thread order (neighbours).
        embedding_of: The stored (normalised) embedding of a key, for keys the dense side
            did not return.
        config: Weights.

    Returns:
        ``(key, score)`` pairs, score in [0, 1], ties broken by the lower key.
    """
    n = max(config.candidates, k)
    cosine = dict(dense.search(vector, n))
    rids, lex = lexical.normalised(query)
    pool = set(cosine)
    pool.update(rid for rid, _ in top_k(rids, lex, n))
    lift = config.neighbour_lift
    if lift > 0:
        for rid in list(pool):
            pool.update(order.neighbours(rid))
    q = np.asarray(vector, dtype=np.float32).reshape(-1)
    w = config.dense_weight
    base: dict[int, float] = {}
    for rid in pool:
        cos = cosine.get(rid)
        if cos is None:
            cos = float(np.asarray(embedding_of(rid), dtype=np.float32).reshape(-1) @ q)
        pos = lexical.position(rid)
        bm = float(lex[pos]) if pos is not None and pos < len(lex) else 0.0
        base[rid] = w * min(max(cos, 0.0), 1.0) + (1.0 - w) * bm
    scores = base
    if lift > 0:
        scores = {}
        for rid, own in base.items():
            best = max((base[nb] for nb in order.neighbours(rid) if nb in base), default=own)
            scores[rid] = own + lift * max(0.0, best - own)
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return [(rid, min(max(score, 0.0), 1.0)) for rid, score in ranked[:k]]
