"""Newer first: a later restatement of a fact ranked just above the older record.

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
that speaker's candidates (the older record left out), or mirror the older record: the two
are short statements (``pair_words``) each other's nearest across time, the older the
nearest to it among the speaker's older statements and it the nearest to the older among
the later ones, closer than background by ``pair_margin`` ("Sam asked me out and I said
yes." after "I'm seeing Alex, we met at a friend's party."; :func:`nearest_pairs`). A long
turn tells many things, and its nearest turn shares a subject rather than one fact, so it
never pairs; a word-for-word repeat pairs with its copy but is not placed above it.
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
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from langchain_agentmem.ranking.config import HybridConfig
from langchain_agentmem.text.words import question_words
from langchain_agentmem.types import Vector

_DEFAULT = HybridConfig()

VectorLookup = Callable[[list[int]], np.ndarray]
"""Stored embeddings of keys, one row each, in the order asked (one batched lookup)."""


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


def asks_current_value(query: str, most_words: int = _DEFAULT.value_question_words) -> bool:
    """Whether ``query`` asks for one present value ("Where does Ana work?").

    Past-tense and "before" questions, questions for a list or a count ("What books has
    she read?", "What are his hobbies?", "Which places ..."), questions about an event, a
    reason, a guess or a date ("When ...", "Why ...", "... might ...", "... in May 2023"),
    and questions naming more than ``most_words`` content words
    (``HybridConfig.value_question_words``) do not.
    """
    if PAST_WORDS.search(query) or LIST_WORDS.search(query) or EVENT_WORDS.search(query):
        return False
    if len(question_words(query)) > most_words:
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
    match: dict[int, float] | None = None,
) -> dict[int, float]:
    """``scores`` with each later restatement placed just above the older records it restates.

    Only the best ``config.candidates`` keys take part. Records are visited oldest first
    (creation time, then key), so a fact changed twice ends with its latest statement on
    top: a restatement joins the chain of the best-placed older record it restates and must
    match the query at least ``restatement_relevance`` times as well as that chain's best
    record, and be closer to the older record than background by ``restatement_margin``.
    A statement worded without a change word (:func:`is_restatement`) must also stand
    ``unmarked_standing`` standard deviations above its speaker's mean query cosine, the
    older record left out (:func:`standing`), or pair with the older record
    (:func:`nearest_pairs`, ``pair_margin``, ``pair_words``).
    Questions that do not ask for one present value are left as they are
    (:func:`asks_current_value`).

    ``match``: how well each key matches the query itself, before what it gains for the
    speaker the query names and from its thread neighbours; the relevance a restatement
    needs is measured on it (default: ``scores``). A speaker's gain is the same for all
    their records, and a neighbour's lift is borrowed: on those, small talk next to the
    answer ("Spin is brutal, good luck.") would pass as a restatement of it.
    """
    if not scores or not asks_current_value(query, config.value_question_words):
        return scores
    keys = sorted(scores, key=lambda rid: (-scores[rid], rid))[: config.candidates]
    pool = _Pool(keys, [said_of(rid) for rid in keys], embeddings_of)
    stands = _stands(pool, vector, config)
    paired, margins = _pairs(pool, config)
    newer = np.flatnonzero(pool.cued | stands.any(axis=1) | paired.any(axis=1)).tolist()
    if not newer:
        return scores
    if margins is not None:
        margin = margins[newer]
    else:
        sims = (pool.vectors[newer] @ pool.vectors.T).astype(np.float64)
        margin = sims - background(pool.vectors, newer, sims)
    base = np.fromiter((scores[rid] for rid in keys), dtype=np.float64, count=len(keys))
    own = scores if match is None else match
    relevance = np.fromiter((own[rid] for rid in keys), dtype=np.float64, count=len(keys))
    restates = pool.cued[:, None] | stands | paired  # [b, a]: b may restate a, so far
    placed = _place(pool, base, relevance, newer, margin, restates, config)
    out = dict(scores)
    out.update(zip(keys, placed.tolist(), strict=True))
    return out


class _Pool:
    """The candidates newer-first compares: who said each, when, whether it is a statement
    or worded as a change; their embeddings read once, when first needed."""

    def __init__(self, keys: list[int], said: list[Said], embeddings_of: VectorLookup) -> None:
        self.keys, self.said, self._embeddings_of = keys, said, embeddings_of
        n = len(keys)
        self.statement = np.fromiter(
            (not text.rstrip().endswith("?") for _, _, text in said), dtype=bool, count=n
        )
        self.cued = np.fromiter((is_restatement(text) for _, _, text in said), dtype=bool, count=n)
        codes: dict[str | None, int] = {}
        self.speaker = np.fromiter(
            (codes.setdefault(who, len(codes)) for who, _, _ in said), dtype=np.int64, count=n
        )
        # Position in time of each key, for vectorised masks.
        chronological = sorted(range(n), key=lambda i: (said[i][1], keys[i]))
        self.when = np.empty(n, dtype=np.int64)
        self.when[chronological] = np.arange(n)
        self._vectors: np.ndarray | None = None

    @property
    def vectors(self) -> np.ndarray:
        """The candidates' stored embeddings, one row each."""
        if self._vectors is None:
            self._vectors = stack_vectors(self.keys, self._embeddings_of)
        return self._vectors


def _stands(pool: _Pool, vector: Vector, config: HybridConfig) -> np.ndarray:
    """``[i, j]``: whether statement ``i`` stands out as an answer among its speaker's
    candidates but ``j`` (``unmarked_standing``)."""
    n = len(pool.keys)
    if not (np.isfinite(config.unmarked_standing) and pool.statement.any()):
        return np.zeros((n, n), dtype=bool)
    cosine = pool.vectors @ np.asarray(vector, dtype=np.float32).reshape(-1)
    stands: np.ndarray = (
        standing(cosine, pool.speaker, config.min_background) >= config.unmarked_standing
    ) & pool.statement[:, None]
    return stands


def _pairs(pool: _Pool, config: HybridConfig) -> tuple[np.ndarray, np.ndarray | None]:
    """``[b, a]``: whether ``b`` and ``a`` are short statements of one speaker nearest across
    time (``pair_words``, ``pair_margin``); with every pair's margin when it was needed."""
    n = len(pool.keys)
    if not (np.isfinite(config.pair_margin) and n - 2 >= config.min_background):
        return np.zeros((n, n), dtype=bool), None
    vectors = pool.vectors
    sims = (vectors @ vectors.T).astype(np.float64)
    margins = sims - background(vectors, list(range(n)), sims)
    short = np.fromiter(
        (len(text.split()) <= config.pair_words for _, _, text in pool.said), dtype=bool, count=n
    )
    texts = [text for _, _, text in pool.said]
    paired = nearest_pairs(margins, pool.statement & short, pool.speaker, pool.when, texts)
    return paired & (margins >= config.pair_margin), margins


def _place(
    pool: _Pool,
    base: np.ndarray,
    relevance: np.ndarray,
    newer: list[int],
    margin: np.ndarray,
    restates: np.ndarray,
    config: HybridConfig,
) -> np.ndarray:
    """Each candidate's score with the restatements in ``newer`` placed, oldest first, just
    above the best-placed older record of their speaker they restate (``relevance``: each
    candidate's match to the query, as ``restatement_relevance`` compares it)."""
    placed = base.copy()
    # The relevance of the best record of each key's chain (its own, until it joins one).
    best = relevance.copy()
    when, speaker = pool.when, pool.speaker
    for row in sorted(range(len(newer)), key=lambda r: when[newer[r]]):
        b = newer[row]
        older = (
            (when < when[b])
            & (speaker == speaker[b])
            & (margin[row] >= config.restatement_margin)
            & restates[b]
            & (placed > placed[b])
            & (relevance[b] >= config.restatement_relevance * best)
        )
        if older.any():
            top = int(np.flatnonzero(older)[np.argmax(placed[older])])
            placed[b], best[b] = placed[top] + 1e-6, best[top]
    return placed


def stack_vectors(keys: list[int], embeddings_of: VectorLookup) -> np.ndarray:
    """The keys' stored embeddings, one row each, as float32."""
    return np.asarray(embeddings_of(keys), dtype=np.float32).reshape(len(keys), -1)


def standing(
    cosine: np.ndarray, speaker: np.ndarray, least: int = _DEFAULT.min_background
) -> np.ndarray:
    """How far each candidate stands out as an answer among its speaker's candidates.

    Args:
        cosine: Each candidate's cosine to the query.
        speaker: One code per candidate's speaker.
        least: Fewest other candidates of the speaker a standing needs
            (``HybridConfig.min_background``).

    Returns:
        ``(n, n)``: at ``[i, j]``, how many standard deviations ``cosine[i]`` lies above the
        mean of the cosines of ``i``'s speaker's candidates other than ``j`` (the record
        ``i`` would pass over is left out, so two answers to one question do not hide each
        other); ``-inf`` where ``j`` has another speaker, fewer than ``least`` candidates remain or
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
    valid = same & (rest >= least) & (variance > 1e-12)
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


def nearest_pairs(
    margins: np.ndarray,
    eligible: np.ndarray,
    speaker: np.ndarray,
    when: np.ndarray,
    texts: list[str],
) -> np.ndarray:
    """Which later statements mirror an older one of their speaker: nearest both ways.

    Args:
        margins: ``(n, n)`` cosine over background of every pair (:func:`background`).
        eligible: Which candidates may pair (statements short enough to hold one fact).
        speaker: One code per candidate's speaker.
        when: Each candidate's position in time.
        texts: Each candidate's text. A repeat of the same words pairs with its copy (so it
            pairs with nothing else) but is never placed above it.

    Returns:
        ``(n, n)``: at ``[b, a]``, whether ``a`` is the older eligible record of ``b``'s
        speaker with the highest margin to ``b``, ``b`` the later one with the highest
        margin to ``a``, and their words differ.
    """
    ok = pair_candidates(eligible, speaker, when)
    m = np.where(ok, margins, -np.inf)
    mutual = (m >= m.max(axis=1, keepdims=True)) & (m >= m.max(axis=0, keepdims=True))
    out: np.ndarray = ok & mutual & words_differ(texts)
    return out


def pair_candidates(eligible: np.ndarray, speaker: np.ndarray, when: np.ndarray) -> np.ndarray:
    """``(n, n)``: at ``[b, a]``, whether ``b`` and ``a`` may pair (both eligible, one
    speaker, ``b`` later)."""
    out: np.ndarray = (
        eligible[:, None]
        & eligible[None, :]
        & (speaker[:, None] == speaker[None, :])
        & (when[:, None] > when[None, :])
    )
    return out


def words_differ(texts: list[str]) -> np.ndarray:
    """``(n, n)``: whether two texts differ other than in case and spacing."""
    codes: dict[str, int] = {}
    words = np.fromiter(
        (codes.setdefault(" ".join(t.casefold().split()), len(codes)) for t in texts),
        dtype=np.int64,
        count=len(texts),
    )
    out: np.ndarray = words[:, None] != words[None, :]
    return out
