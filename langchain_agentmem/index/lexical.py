"""BM25 over one namespace's records, kept up to date record by record."""

from __future__ import annotations

import functools
import math
import re
import threading
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import Stemmer

from langchain_agentmem.text.words import STOP_WORDS

# bm25s's own default token pattern and English stop words, so scores match bm25s's.
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_STEMMERS = threading.local()  # a Snowball stemmer keeps state while it works: one a thread


@functools.lru_cache(maxsize=1 << 17)
def stem(word: str) -> str:
    """The Snowball (Porter 2) English stem of a lower-cased ``word``: "planned" -> "plan"."""
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = Stemmer.Stemmer("english")
    out: str = stemmer.stemWord(word)
    return out


def tokenize(text: str) -> list[str]:
    """Stemmed, lower-cased word tokens of ``text`` without English stop words.

    Stems let "painted" find "paint" (LoCoMo recall@10 0.733 -> 0.750, see
    ``benchmarks/experiments/results/stemming.txt``).
    """
    return [stem(t) for t in _TOKEN.findall(text.lower()) if t not in STOP_WORDS]


@functools.lru_cache(maxsize=64)
def query_terms(query: str) -> tuple[str, ...]:
    """The distinct terms of ``query`` (:func:`tokenize`), in order of first use.

    A term repeated in a query scores once. Cached, so a search can tokenise its query
    before it takes the namespace's lock.
    """
    return tuple(dict.fromkeys(tokenize(query)))


DEFAULT_K1 = 1.5
DEFAULT_B = 0.3
"""BM25's parameters for an index built alone; a namespace's index takes
``HybridConfig.bm25_k1`` and ``bm25_b`` (:mod:`langchain_agentmem.ranking.config`, which
says where they were chosen)."""


class LexicalIndex:
    """BM25 (Lucene variant, as ``bm25s`` scores it) keyed by the store's integer record keys.

    An inverted index kept up to date record by record: adding or removing a record touches
    only its own terms, and a search scores only the postings of the query's terms. So a
    search right after an add costs the same as any other (no rebuild of the corpus).

    Each record sits in a slot; a removed record leaves an empty slot (key ``-1``, no
    postings) until empty slots outnumber the live ones, when the slots are renumbered.
    """

    def __init__(self, *, k1: float = DEFAULT_K1, b: float = DEFAULT_B) -> None:
        self.k1 = k1
        self.b = b
        self._slot: dict[int, int] = {}
        self._rids = np.zeros(64, dtype=np.int64)
        self._lengths = np.zeros(64, dtype=np.float32)
        self._used = 0
        self._terms: dict[int, Counter[str]] = {}
        self._postings: dict[str, dict[int, float]] = {}
        self._arrays: dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]] = {}
        self._total_length = 0.0

    def __len__(self) -> int:
        return len(self._slot)

    def add(self, rids: Sequence[int], texts: Sequence[str]) -> None:
        """Index ``texts`` under ``rids`` (replacing any already there)."""
        for rid, text in zip(rids, texts, strict=True):
            key = int(rid)
            self._drop(key)
            self._place(key, Counter(tokenize(text)))
        self._maybe_renumber()

    def add_counts(self, rids: Sequence[int], counts: Sequence[Counter[str]]) -> None:
        """Index already tokenised texts (term counts from :func:`tokenize`) under ``rids``."""
        for rid, terms in zip(rids, counts, strict=True):
            key = int(rid)
            self._drop(key)
            self._place(key, terms)
        self._maybe_renumber()

    def remove(self, rids: Sequence[int]) -> None:
        """Remove ``rids`` (missing ones are ignored)."""
        for rid in rids:
            self._drop(int(rid))
        self._maybe_renumber()

    def _maybe_renumber(self) -> None:
        if self._used - len(self._slot) > max(1024, len(self._slot)):
            self._renumber()

    def _drop(self, key: int) -> None:
        slot = self._slot.pop(key, None)
        if slot is None:
            return
        counts = self._terms.pop(key)
        for term in counts:
            posting = self._postings[term]
            del posting[slot]
            if not posting:
                del self._postings[term]
            self._arrays.pop(term, None)
        self._total_length -= float(self._lengths[slot])
        self._rids[slot] = -1
        self._lengths[slot] = 0.0

    def _renumber(self) -> None:
        live = [(key, self._terms[key]) for key in sorted(self._slot, key=self._slot.__getitem__)]
        self._slot.clear()
        self._terms.clear()
        self._postings.clear()
        self._arrays.clear()
        self._used = 0
        self._total_length = 0.0
        size = max(64, 2 * len(live))
        self._rids = np.zeros(size, dtype=np.int64)
        self._lengths = np.zeros(size, dtype=np.float32)
        for key, counts in live:
            self._place(key, counts)

    def _place(self, key: int, counts: Counter[str]) -> None:
        """Put a record with these term counts in the next free slot."""
        if self._used == len(self._rids):
            self._rids = np.concatenate([self._rids, np.zeros_like(self._rids)])
            self._lengths = np.concatenate([self._lengths, np.zeros_like(self._lengths)])
        slot = self._used
        self._used += 1
        length = sum(counts.values())
        self._slot[key] = slot
        self._rids[slot] = key
        self._lengths[slot] = length
        self._terms[key] = counts
        self._total_length += length
        postings = self._postings
        for term, tf in counts.items():
            posting = postings.get(term)
            if posting is None:
                postings[term] = {slot: tf}
            else:
                posting[slot] = tf
        if self._arrays:
            for term in counts:
                self._arrays.pop(term, None)

    def _posting(self, term: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        arrays = self._arrays.get(term)
        if arrays is None:
            posting = self._postings[term]
            arrays = (
                np.fromiter(posting.keys(), dtype=np.int64, count=len(posting)),
                np.fromiter(posting.values(), dtype=np.float32, count=len(posting)),
            )
            self._arrays[term] = arrays
        return arrays

    def _idf(self, term: str) -> float:
        n = len(self._slot)
        df = len(self._postings.get(term, ()))
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def scores(self, query: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Every slot's key with its BM25 score for ``query`` (0 where no term matches).

        Keys of empty slots are ``-1`` (score 0); :meth:`positions` maps keys to slots.
        """
        rids = self._rids[: self._used].copy()
        out = np.zeros(self._used, dtype=np.float32)
        if not self._slot or self._total_length == 0:
            return rids, out
        average = self._total_length / len(self._slot)
        for term in query_terms(query):
            if term not in self._postings:
                continue
            slots, tf = self._posting(term)
            norm = self.k1 * (1.0 - self.b + self.b * self._lengths[slots] / average)
            out[slots] += np.float32(self._idf(term)) * (tf / (tf + norm))
        return rids, out

    def ceiling(self, query: str) -> float:
        """The most BM25 any record could score for ``query``: the sum of its terms' idf.

        (The Lucene variant scores a term ``idf * tf / (tf + k1 * norm)``, which approaches
        ``idf`` as the term repeats.) Every distinct query term counts once, those no record holds
        included (at their idf for a document frequency of 0), so a record matching only
        common words scores little.
        """
        return sum(self._idf(t) for t in query_terms(query))

    def normalised(
        self, query: str, near: str = "", near_weight: float = 0.0
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Every slot's key with its BM25 score over :meth:`ceiling`, in [0, 1].

        The scale is absolute: the same match means the same score in every search.

        Args:
            query: The query.
            near: Words near the query's (:mod:`~langchain_agentmem.ranking.near_words`):
                their BM25, times ``near_weight``, adds to the query's own before it is
                divided by the ceiling of the query's own words.
            near_weight: How much the near words count, against 1 for the query's own.
        """
        rids, scores = self.scores(query)
        top = self.ceiling(query)
        if top <= 0 or not len(scores):
            return rids, np.zeros(len(rids), dtype=np.float32)
        out = np.clip(scores / np.float32(top), 0.0, 1.0).astype(np.float32)
        if near and near_weight > 0:
            out = np.minimum(out + self.near_gain(query, near, near_weight), np.float32(1.0))
        return rids, out

    def near_gain(self, query: str, near: str, near_weight: float) -> npt.NDArray[np.float32]:
        """What ``near`` adds to :meth:`normalised` ``(query)``, slot by slot: its BM25 times
        ``near_weight`` over the ceiling of ``query``'s own words (add it, then cap at 1)."""
        top = self.ceiling(query)
        _, scores = self.scores(near)
        if top <= 0:
            return np.zeros(len(scores), dtype=np.float32)
        return (np.float32(near_weight) * scores / np.float32(top)).astype(np.float32)

    def counts(self, rid: int) -> Counter[str]:
        """The term counts held for ``rid`` (a copy)."""
        return Counter(self._terms[int(rid)])

    def positions(self) -> dict[int, int]:
        """Where each live key sits in the arrays :meth:`scores` returns (do not modify)."""
        return self._slot

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
