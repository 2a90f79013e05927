"""BM25 over one namespace's records, with ``bm25s`` doing the scoring."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import bm25s
import numpy as np
import numpy.typing as npt
from bm25s.stopwords import STOPWORDS_EN

# bm25s's own default token pattern and English stop words; tokenising here (rather than
# through ``bm25s.tokenize``) keeps one-record updates cheap: no vocabulary rebuild per add.
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_STOP = frozenset(STOPWORDS_EN)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens of ``text`` without English stop words."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOP]


DEFAULT_K1 = 1.5
DEFAULT_B = 0.3
"""Length normalisation: lower than Lucene's 0.75, since short chat turns ("Yes! A sunrise.")
otherwise outrank the turns that say more (held-out LoCoMo recall, see
``benchmarks/locomo_ablation.py``)."""


class LexicalIndex:
    """BM25 (Lucene variant) keyed by the store's integer record keys.

    Records are tokenised when added; the ``bm25s`` score matrix is rebuilt lazily, on the
    first search after a change, so a stream of adds costs one rebuild, not one per add.
    """

    def __init__(self, *, k1: float = DEFAULT_K1, b: float = DEFAULT_B) -> None:
        self.k1 = k1
        self.b = b
        self._tokens: dict[int, list[str]] = {}
        self._model: bm25s.BM25 | None = None
        self._rids: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._pos: dict[int, int] = {}
        self._df: Counter[str] = Counter()
        self._dirty = False

    def __len__(self) -> int:
        return len(self._tokens)

    def add(self, rids: Sequence[int], texts: Sequence[str]) -> None:
        """Index ``texts`` under ``rids`` (replacing any already there)."""
        for rid, text in zip(rids, texts, strict=True):
            self._tokens[int(rid)] = tokenize(text)
        self._dirty = True

    def remove(self, rids: Sequence[int]) -> None:
        """Remove ``rids`` (missing ones are ignored)."""
        for rid in rids:
            if self._tokens.pop(int(rid), None) is not None:
                self._dirty = True

    def _fresh(self) -> bm25s.BM25 | None:
        if self._dirty or (self._model is None and self._tokens):
            self._rids = np.fromiter(self._tokens.keys(), dtype=np.int64, count=len(self._tokens))
            self._pos = {rid: i for i, rid in enumerate(self._tokens)}
            self._df = Counter(t for tokens in self._tokens.values() for t in set(tokens))
            if any(self._tokens.values()):  # bm25s cannot index an empty vocabulary
                model = bm25s.BM25(k1=self.k1, b=self.b)
                model.index(list(self._tokens.values()), show_progress=False)
                self._model = model
            else:
                self._model = None
            self._dirty = False
        return self._model

    def scores(self, query: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Every indexed key with its BM25 score for ``query`` (0 where no term matches)."""
        model = self._fresh()
        if model is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        terms = [t for t in tokenize(query) if t in model.vocab_dict]
        if not terms:
            return self._rids, np.zeros(len(self._rids), dtype=np.float32)
        return self._rids, np.asarray(model.get_scores(terms), dtype=np.float32)

    def ceiling(self, query: str) -> float:
        """The most BM25 any record could score for ``query``: the sum of its terms' idf.

        (``bm25s``'s Lucene variant scores a term ``idf * tf / (tf + k1 * norm)``, which
        approaches ``idf`` as the term repeats.) Every query term counts, those no record
        holds included (at their idf for a document frequency of 0), so a record matching
        only common words scores little.
        """
        self._fresh()
        n = len(self._tokens)
        return sum(
            math.log(1.0 + (n - self._df[t] + 0.5) / (self._df[t] + 0.5)) for t in tokenize(query)
        )

    def normalised(self, query: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Every indexed key with its BM25 score over :meth:`ceiling`, in [0, 1].

        The scale is absolute: the same match means the same score in every search.
        """
        rids, scores = self.scores(query)
        top = self.ceiling(query)
        if top <= 0 or not len(scores):
            return rids, np.zeros(len(rids), dtype=np.float32)
        return rids, np.clip(scores / np.float32(top), 0.0, 1.0).astype(np.float32)

    def positions(self) -> dict[int, int]:
        """Where each key sits in the arrays :meth:`scores` returns (do not modify)."""
        self._fresh()
        return self._pos

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """The ``k`` best-scoring keys with their BM25 score, best first (score > 0 only)."""
        rids, scores = self.scores(query)
        return top_k(rids, scores, k)


def top_k(
    rids: npt.NDArray[np.int64], scores: npt.NDArray[np.float32], k: int
) -> list[tuple[int, float]]:
    """The ``k`` keys with the highest positive scores, best first (ties: lower key first)."""
    positive = np.flatnonzero(scores > 0)
    if positive.size == 0:
        return []
    if positive.size > k:
        part = np.argpartition(-scores[positive], k - 1)[:k]
        positive = positive[part]
    order = np.lexsort((rids[positive], -scores[positive]))
    chosen = positive[order]
    return [(int(rids[i]), float(scores[i])) for i in chosen]
