"""Search modes and hybrid search: dense and BM25 scores on absolute scales, plus context.

A hybrid score is, for a record with cosine similarity ``cos`` to the query and BM25 score
``bm25``::

    base  = w * clip(cos, 0, 1) + (1 - w) * bm25 / ceiling(query)
    score = base + lift * max(0, best_neighbour_base - base)

``ceiling(query)`` is the most BM25 any record could score for the query (the sum over its
terms of ``idf * (k1 + 1)``, unseen terms included), so both parts are absolute: the same
match scores the same in every search, whatever else the namespace holds, and the score is
in [0, 1]. Neighbours are the records just before and after in the same thread (by creation
time): a turn that answers a matching turn ("Yes! A sunrise.") is lifted toward it. A
record that asks something lifts only the record after it: "What happened to my daughter?"
is about its answer, not about what was said before it. Records without a thread have no
neighbours. Weights were chosen by leave-one-conversation-out on
LoCoMo (``benchmarks/experiments/locomo_ablation.py``). BM25 also reads, at ``reply_weight``, the
question a record answers (``metadata["reply_to"]``), so "A sunrise!" is found by "What
did I paint?" even where the question itself is not stored
(``benchmarks/experiments/locomo_context.py``).

Newer first: when a record restates, later, what the same speaker said in an older record
that outranks it ("I live in Lisbon" ... "I moved to Berlin"), it is placed just above the
older one, which stays in the results. A restatement is a statement (not a question) of the
same speaker, later, whose embedding is closer to the older record's than the two are, on
average, to the other candidates, and which matches the query at least
``restatement_relevance`` times as well as the best record of the chain it joins (a fact
changed twice is one chain: the latest statement goes above both). It must be closer by
``restatement_margin`` in cosine. Worded as a change ("moved", "now", "no longer",
"switched", ...), that is all; worded without one ("Picked up the new Kia from the dealer
today."), it must also stand out among what its speaker said as an answer to the query:
its cosine to the query at least ``unmarked_standing`` standard deviations above the mean of
that speaker's candidates (the older record left out).
Only questions that ask for one present value are reordered (:func:`asks_current_value`):
questions in the past tense, about what was "before", asking for a list or a count ("What
books has she read?", "What are his hobbies?", "How many ..."), asking when, why or what
might be, naming a date, or naming more than the person and three things about them ("What
does John write on the whiteboard to stay motivated?") keep the plain ranking, so the older
statement stays first where it is what is asked for. Measured in
``benchmarks/experiments/results/recency_ablation.txt``.

The margin is measured against that background, not as a raw cosine, because two turns of
one speaker are alike in style and subject whatever they say (and in the speaker's name,
where turns carry it): a raw threshold either misses changes worded apart or pairs turns
that merely share a speaker. It is the hubness correction of cross-domain similarity local
scaling (CSLS), with the pool of candidates as the neighbourhood.

Questions last among equals: a record that only asks ("Where do I live?") scores
``question_weight`` times its score. It shows what the user cares about but is rarely the
answer, and a question matches a later question better than the statement that answers it
does (``benchmarks/repeated_questions.py``); the record after it is still lifted by its
full score.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Container
from dataclasses import dataclass

import numpy as np
from bm25s.stopwords import STOPWORDS_EN

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.index.dense import DenseIndex
from langchain_agentmem.index.lexical import LexicalIndex, top_k
from langchain_agentmem.types import Vector

SEARCH_MODES = ("hybrid", "dense", "lexical")
"""The modes ``AgentMemory.search`` accepts."""

VectorLookup = Callable[[list[int]], np.ndarray]
"""Stored embeddings of keys, one row each, in the order asked (one batched lookup)."""


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
        reply_weight: How much each term of the question a record answers counts in the
            lexical index, against 1 for the record's own terms (0: not indexed). The
            question is ``metadata["reply_to"]`` when it holds a "?"; the chat surfaces
            fill it with the assistant's message before the user's. Never in ``.text`` or
            the embedding.
        newer_first: Place a later restatement of the same speaker's fact just above the
            older record it restates (see the module docstring).
        restatement_margin: Least amount by which the cosine between a record and an older
            one must exceed their mean cosine to the other candidates for the record to count
            as restating the older one.
        restatement_relevance: Least share of the score of the best record of the chain it
            joins that a restatement must have to be placed above it.
        unmarked_standing: Least number of standard deviations by which the query cosine of
            a later statement without a change word must exceed the mean of its speaker's
            candidates (the older record left out) for it to count as a restatement
            (``math.inf``: only statements worded as a change count).
        question_weight: Factor of the final score of a record that only asks ("Where do I
            live?"), in [0, 1]: a question is rarely the answer, and it matches a later
            question best (1: weighed as any record). It still lifts the record after it
            at its full score.
    """

    dense_weight: float = 0.2
    neighbour_lift: float = 0.5
    candidates: int = 100
    dates: bool = True
    reply_weight: float = 0.5
    newer_first: bool = True
    restatement_margin: float = 0.15
    restatement_relevance: float = 0.3
    unmarked_standing: float = 1.5
    question_weight: float = 0.7

    def __post_init__(self) -> None:
        for name in (
            "dense_weight",
            "neighbour_lift",
            "reply_weight",
            "restatement_margin",
            "restatement_relevance",
            "question_weight",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InvalidTypeError(
                    f"HybridConfig.{name} must be a number in [0, 1], got {value!r}"
                )
            if not 0.0 <= value <= 1.0:
                raise InvalidInputError(f"HybridConfig.{name} must be in [0, 1], got {value!r}")
        standing = self.unmarked_standing
        if isinstance(standing, bool) or not isinstance(standing, (int, float)):
            raise InvalidTypeError(
                f"HybridConfig.unmarked_standing must be a number >= 0, got {standing!r}"
            )
        if not standing >= 0.0:  # also refuses NaN
            raise InvalidInputError(
                f"HybridConfig.unmarked_standing must be >= 0 (math.inf: off), got {standing!r}"
            )
        if isinstance(self.candidates, bool) or not isinstance(self.candidates, int):
            raise InvalidTypeError(
                f"HybridConfig.candidates must be an int >= 1, got {self.candidates!r}"
            )
        if self.candidates < 1:
            raise InvalidInputError(
                f"HybridConfig.candidates must be >= 1, got {self.candidates!r}"
            )
        for flag in ("dates", "newer_first"):
            if not isinstance(getattr(self, flag), bool):
                raise InvalidTypeError(
                    f"HybridConfig.{flag} must be a bool, got {getattr(self, flag)!r}"
                )


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
        self._prev: dict[int, int] = {}
        self._next: dict[int, int] = {}
        self._asks: set[int] = set()
        self._speaker: dict[int, str | None] = {}

    def add(
        self,
        rid: int,
        thread: str | None,
        created_at: float,
        *,
        asks: bool = False,
        speaker: str | None = None,
    ) -> None:
        """Place ``rid`` in its thread (a record without a thread has no neighbours).

        ``asks``: the record asks something, so it lifts only the record after it, and
        only when another ``speaker`` said that one (its answer; the asker's own next words
        are not).
        """
        rid = int(rid)
        self.remove(rid)
        if thread is None:
            return
        if asks:
            self._asks.add(rid)
        self._speaker[rid] = speaker
        key = (float(created_at), rid)
        keys = self._lists.setdefault(thread, [])
        i = bisect.bisect_left(keys, key)
        keys.insert(i, key)
        self._where[rid] = (thread, key)
        if i > 0:
            before = keys[i - 1][1]
            self._prev[rid], self._next[before] = before, rid
        if i + 1 < len(keys):
            after = keys[i + 1][1]
            self._next[rid], self._prev[after] = after, rid

    def remove(self, rid: int) -> None:
        """Take ``rid`` out (missing ones are ignored)."""
        rid = int(rid)
        found = self._where.pop(rid, None)
        if found is None:
            return
        self._asks.discard(rid)
        self._speaker.pop(rid, None)
        thread, key = found
        keys = self._lists[thread]
        del keys[bisect.bisect_left(keys, key)]
        if not keys:
            del self._lists[thread]
        before, after = self._prev.pop(rid, None), self._next.pop(rid, None)
        if before is not None:
            if after is not None:
                self._next[before] = after
            else:
                del self._next[before]
        if after is not None:
            if before is not None:
                self._prev[after] = before
            else:
                del self._prev[after]

    def neighbours(self, rid: int) -> list[int]:
        """The records just before and after ``rid`` in its thread."""
        out = []
        before = self._prev.get(rid)
        if before is not None:
            out.append(before)
        after = self._next.get(rid)
        if after is not None:
            out.append(after)
        return out

    def lifters(self, rid: int) -> list[int]:
        """The neighbours whose score may lift ``rid``: the record before it unless that one
        asks and the same speaker said both (a question is about its answer, not the
        asker's next words), and the one after it unless that one asks (nor about what
        came before it)."""
        out = []
        before = self._prev.get(rid)
        if before is not None and (
            before not in self._asks or self._speaker[before] != self._speaker[rid]
        ):
            out.append(before)
        after = self._next.get(rid)
        if after is not None and after not in self._asks:
            out.append(after)
        return out


CHANGE_WORDS = re.compile(
    r"\b(now|moved|relocated|switched|changed|instead|anymore|no longer|quit|became|sold|"
    r"dropped|stopped|gave up|took up|joining|these days|broke up)\b",
    re.IGNORECASE,
)
"""Words that word a statement as a change of what was true before."""

PAST_WORDS = re.compile(
    r"\b(before|previously|prior|used to|earlier|formerly|originally|former|until|did|was|"
    r"were|had|ago)\b",
    re.IGNORECASE,
)
"""Words of a question about the past, for which the plain ranking stands."""

LIST_WORDS = re.compile(
    r"\b(how many|how often|are|ever|all|any|both|list)\b"
    r"|\b(has|have)\b(\s+\w+){0,3}?\s+(\w+ed|been|read|made|done|seen|gone|got|gotten|"
    r"taken|given|written|won|bought|met|found|taught|heard|built|begun|known|shown|"
    r"tried|said|told|kept|left|lost|felt|thought|brought|sent|spent|become|grown)\b",
    re.IGNORECASE,
)
"""Words of a question asking for a list, a count or everything so far (the present
perfect: "What books has she read?"), where older and newer statements both answer."""

PLURAL_HEAD = re.compile(
    r"\b(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?(\w+)", re.IGNORECASE
)
NOT_PLURAL = frozenset({"does", "is", "was", "has", "this", "his", "its", "us", "yes"})

EVENT_WORDS = re.compile(
    r"\b(when|why|might|may|likely|would|could|should|mention\w*|january|february|march|"
    r"april|june|july|august|september|october|november|december|\d{4})\b",
    re.IGNORECASE,
)
"""Words of a question about an event, a reason, a guess or a date, not a present value."""

VALUE_QUESTION_WORDS = 3
"""Most content words a question for one present value has besides names ("Which car does
Ana drive now?": car, drive); a question naming more asks about a particular episode."""

_QUESTION_STOP = frozenset(STOPWORDS_EN) | {
    "what", "which", "who", "whom", "whose", "where", "how", "does", "do", "is", "s", "am",
    "have", "i", "me", "my", "mine", "your", "yours", "his", "her", "hers", "our", "ours",
    "their", "theirs", "now", "currently", "today", "usually",
}  # fmt: skip
"""Words that say nothing of what a question is about: bm25s's English stop words, question
words, pronouns and words for "at present"."""
_QUESTION_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def content_words(query: str) -> list[str]:
    """The words of ``query`` that are neither stop words nor capitalised names."""
    words = _QUESTION_WORD.findall(query)
    return [
        word
        for i, word in enumerate(words)
        if word.lower().split("'")[0] not in _QUESTION_STOP and not (i and word[0].isupper())
    ]


def asks_current_value(query: str) -> bool:
    """Whether ``query`` asks for one present value ("Where does Ana work?").

    Past-tense and "before" questions, questions for a list or a count ("What books has
    she read?", "What are his hobbies?", "Which places ..."), questions about an event, a
    reason, a guess or a date ("When ...", "Why ...", "... might ...", "... in May 2023"),
    and questions naming more than :data:`VALUE_QUESTION_WORDS` content words do not.
    """
    if PAST_WORDS.search(query) or LIST_WORDS.search(query) or EVENT_WORDS.search(query):
        return False
    if len(content_words(query)) > VALUE_QUESTION_WORDS:
        return False
    head = PLURAL_HEAD.search(query)
    if head is None:
        return True
    word = head.group(1).lower()
    return not (word.endswith("s") and not word.endswith("ss") and word not in NOT_PLURAL)


Said = tuple[str | None, float, str]
"""Who said a record (speaker or role; ``None``: unknown), when (epoch seconds), its text."""


def is_restatement(text: str) -> bool:
    """Whether ``text`` is worded as a change of a fact (a statement, not a question)."""
    return not text.rstrip().endswith("?") and CHANGE_WORDS.search(text) is not None


def newer_first(
    query: str,
    vector: Vector,
    scores: dict[int, float],
    *,
    said_of: Callable[[int], Said],
    embeddings_of: VectorLookup,
    config: HybridConfig,
) -> dict[int, float]:
    """``scores`` with each later restatement placed just above the older records it restates.

    Only the best ``config.candidates`` keys take part. Records are visited oldest first
    (creation time, then key), so a fact changed twice ends with its latest statement on
    top: a restatement joins the chain of the best-placed older record it restates and must
    match the query at least ``restatement_relevance`` times as well as that chain's best
    record, and be closer to the older record than background by ``restatement_margin``.
    A statement worded without a change word (:func:`is_restatement`) must also stand
    ``unmarked_standing`` standard deviations above its speaker's mean query cosine, the
    older record left out (:func:`standing`).
    Questions that do not ask for one present value are left as they are
    (:func:`asks_current_value`).
    """
    if not scores or not asks_current_value(query):
        return scores
    keys = sorted(scores, key=lambda rid: (-scores[rid], rid))[: config.candidates]
    said = [said_of(rid) for rid in keys]
    statement = np.fromiter(
        (not text.rstrip().endswith("?") for _, _, text in said), dtype=bool, count=len(keys)
    )
    cued = np.fromiter((is_restatement(text) for _, _, text in said), dtype=bool, count=len(keys))
    codes: dict[str | None, int] = {}
    speaker = np.fromiter(
        (codes.setdefault(who, len(codes)) for who, _, _ in said), dtype=np.int64, count=len(keys)
    )
    vectors: np.ndarray | None = None
    # stands[i, j]: whether i stands out as an answer among its speaker's candidates but j.
    stands = np.zeros((len(keys), len(keys)), dtype=bool)
    if np.isfinite(config.unmarked_standing) and statement.any():
        vectors = _stack(keys, embeddings_of)
        cosine = vectors @ np.asarray(vector, dtype=np.float32).reshape(-1)
        stands = (standing(cosine, speaker) >= config.unmarked_standing) & statement[:, None]
    newer = np.flatnonzero(cued | stands.any(axis=1)).tolist()
    if not newer:
        return scores
    if vectors is None:
        vectors = _stack(keys, embeddings_of)
    sims = (vectors[newer] @ vectors.T).astype(np.float64)
    margin = sims - background(vectors, newer, sims)
    base = np.fromiter((scores[rid] for rid in keys), dtype=np.float64, count=len(keys))
    # Position in time of each key, for vectorised masks.
    chronological = sorted(range(len(keys)), key=lambda i: (said[i][1], keys[i]))
    when = np.empty(len(keys), dtype=np.int64)
    when[chronological] = np.arange(len(keys))
    placed = base.copy()
    # The base score of the best record of each key's chain (its own, until it joins one).
    best = base.copy()
    rho = config.restatement_relevance
    for row in sorted(range(len(newer)), key=lambda r: when[newer[r]]):
        b = newer[row]
        older = (
            (when < when[b])
            & (speaker == speaker[b])
            & (margin[row] >= config.restatement_margin)
            & (cued[b] | stands[b])
            & (placed > placed[b])
            & (base[b] >= rho * best)
        )
        if older.any():
            top = int(np.flatnonzero(older)[np.argmax(placed[older])])
            placed[b], best[b] = placed[top] + 1e-6, best[top]
    out = dict(scores)
    out.update(zip(keys, placed.tolist(), strict=True))
    return out


def _stack(keys: list[int], embeddings_of: VectorLookup) -> np.ndarray:
    """The keys' stored embeddings, one row each, as float32."""
    return np.asarray(embeddings_of(keys), dtype=np.float32).reshape(len(keys), -1)


def standing(cosine: np.ndarray, speaker: np.ndarray) -> np.ndarray:
    """How far each candidate stands out as an answer among its speaker's candidates.

    Args:
        cosine: Each candidate's cosine to the query.
        speaker: One code per candidate's speaker.

    Returns:
        ``(n, n)``: at ``[i, j]``, how many standard deviations ``cosine[i]`` lies above the
        mean of the cosines of ``i``'s speaker's candidates other than ``j`` (the record
        ``i`` would pass over is left out, so two answers to one question do not hide each
        other); ``-inf`` where ``j`` has another speaker, fewer than 3 candidates remain or
        they do not vary.
    """
    c = cosine.astype(np.float64)
    same = speaker[:, None] == speaker[None, :]
    count = same.sum(axis=1).astype(np.float64)  # the speaker's candidates, i included
    total = same @ c
    squares = same @ (c * c)
    rest = count[:, None] - 1.0  # leaving out j (of the same speaker)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = (total[:, None] - c[None, :]) / rest
        variance = (squares[:, None] - (c * c)[None, :]) / rest - mean * mean
        out = (c[:, None] - mean) / np.sqrt(variance)
    valid = same & (rest >= 3) & (variance > 1e-12)
    return np.where(valid, out, -np.inf)


def background(vectors: np.ndarray, rows: list[int], sims: np.ndarray) -> np.ndarray:
    """Mean cosine of each pair ``(rows[r], j)`` to the other candidates, pair left out.

    Args:
        vectors: The candidates' normalised embeddings, one per row.
        rows: The candidates compared with all others.
        sims: ``vectors[rows] @ vectors.T``.

    Returns:
        ``(len(rows), len(vectors))``: the mean of the two records' average cosines to the
        candidates other than the pair (0 where there are none).
    """
    n = len(vectors)
    if n <= 2:
        return np.zeros_like(sims)
    own_sim = np.einsum("ij,ij->i", vectors, vectors)
    total = (vectors @ vectors.sum(axis=0) - own_sim).astype(np.float64)  # others only
    others = n - 2
    own = (total[rows][:, None] - sims) / others
    theirs = (total[None, :] - sims) / others
    out: np.ndarray = (own + theirs) / 2
    return out


def hybrid_search(
    query: str,
    vector: Vector,
    k: int,
    *,
    dense: DenseIndex,
    lexical: LexicalIndex,
    order: ThreadOrder,
    embeddings_of: VectorLookup,
    config: HybridConfig,
    said_of: Callable[[int], Said] | None = None,
    questions: Container[int] = frozenset(),
) -> list[tuple[int, float]]:
    """The ``k`` best keys by hybrid score (see the module docstring), best first.

    Args:
        query: The query text (for BM25).
        vector: The normalised query embedding.
        k: How many to return.
        dense: The namespace's dense index.
        lexical: The namespace's lexical index.
        order: The namespace's thread order (neighbours).
        embeddings_of: The stored (normalised) embeddings of keys, one row each (for keys
            the dense side did not return, and for newer-first).
        config: Weights.
        said_of: Who said a key's record, when, and its text; needed to put newer
            restatements first (``None``: that step is skipped).
        questions: The keys of records that only ask (their scores are weighed by
            ``config.question_weight``).

    Returns:
        ``(key, score)`` pairs, score in [0, 1], ties broken by the lower key.
    """
    n = max(config.candidates, k)
    cosine = dict(dense.search(vector, n))
    rids, lex = lexical.normalised(query)
    pool = dict.fromkeys(cosine)
    pool.update(dict.fromkeys(rid for rid, _ in top_k(rids, lex, n)))
    lift = config.neighbour_lift
    near: dict[int, list[int]] = {}
    if lift > 0:
        for rid in list(pool):
            near[rid] = order.lifters(rid)
            pool.update(dict.fromkeys(near[rid]))
    keys = list(pool)
    cos = np.fromiter((cosine.get(rid, np.nan) for rid in keys), dtype=np.float32, count=len(keys))
    missing = np.flatnonzero(np.isnan(cos))
    if missing.size:
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        cos[missing] = _stack([keys[i] for i in missing], embeddings_of) @ q
    pos = lexical.positions()
    lex_of = np.fromiter((pos.get(rid, -1) for rid in keys), dtype=np.int64, count=len(keys))
    bm = np.zeros(len(keys), dtype=np.float32)
    known = (lex_of >= 0) & (lex_of < len(lex))
    bm[known] = lex[lex_of[known]]
    w = config.dense_weight
    base_arr = w * np.clip(cos, 0.0, 1.0) + (1.0 - w) * bm
    base = dict(zip(keys, base_arr.tolist(), strict=True))
    scores = base
    if lift > 0:
        scores = dict(base)
        for rid, nbs in near.items():
            own = base[rid]
            best = max((base[nb] for nb in nbs), default=own)
            if best > own:
                scores[rid] = own + lift * (best - own)
        for rid in keys:
            if rid not in near:  # a neighbour pulled in: lift from what is known of its own
                own = base[rid]
                best = max((base[nb] for nb in order.lifters(rid) if nb in base), default=own)
                if best > own:
                    scores[rid] = own + lift * (best - own)
    if config.newer_first and said_of is not None:
        scores = newer_first(
            query, vector, scores, said_of=said_of, embeddings_of=embeddings_of, config=config
        )
    if config.question_weight < 1.0 and questions:
        scores = {
            rid: score * config.question_weight if rid in questions else score
            for rid, score in scores.items()
        }
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return [(rid, min(max(score, 0.0), 1.0)) for rid, score in ranked[:k]]
