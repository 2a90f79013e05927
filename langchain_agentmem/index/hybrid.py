"""Search modes and hybrid search: dense and BM25 scores on absolute scales, plus context.

A hybrid score is, for a record with cosine similarity ``cos`` to the query and BM25 score
``bm25``::

    base  = w * clip(cos, 0, 1) + (1 - w) * bm25 / ceiling(query)
    score = base + lift * max(0, best_neighbour_base - base)

``ceiling(query)`` is the most BM25 any record could score for the query (the sum over its
terms of ``idf * (k1 + 1)``, unseen terms included), so both parts are absolute: the same
match scores the same in every search, whatever else the namespace holds, and the score is
in [0, 1]. Neighbours are the records just before and after in the same thread (by creation
time, :class:`~langchain_agentmem.index.threads.ThreadOrder`): a turn that answers a
matching turn ("Yes! A sunrise.") is lifted toward it. A record that asks something lifts
only the record after it, and not when its own speaker said that one: "What happened to my
daughter?" is about its answer, not about what was said before it nor the asker's own next
words. Records without a thread have no neighbours. Weights were chosen by
leave-one-conversation-out on
LoCoMo (``benchmarks/experiments/locomo_ablation.py``). BM25 also reads, at ``reply_weight``, the
question a record answers (``metadata["reply_to"]``), so "A sunrise!" is found by "What
did I paint?" even where the question itself is not stored
(``benchmarks/experiments/locomo_context.py``).

Questions last among equals: a record that only asks ("Where do I live?") scores
``question_weight`` times its score. It shows what the user cares about but is rarely the
answer, and a question matches a later question better than the statement that answers it
does (``benchmarks/repeated_questions.py``); the record after it is still lifted by its
full score.

Newer first: a later restatement of the same speaker's fact is placed just above the older
record it restates, whether worded as a change, standing out as an answer, or told as news
that mirrors the older statement (:mod:`langchain_agentmem.index.newer_first`).

Near words: the query's content words bring their nearest words in the bundled model's
embedding space, whose BM25 counts ``near_words`` (0.3) of the query's own
(:mod:`langchain_agentmem.index.near_words`). They rescore the candidates the query's own
words and embedding found and bring none of their own (as many records are scored as
without them).

Named speakers: a query that names a speaker of the namespace ("What is Dmitri's job?") is
searched without the name, in its words and its embedding ("What is their job?"), and that
speaker's records gain ``named_speaker`` in base score, and another speaker's records that
name them gain ``named_mention`` (:mod:`langchain_agentmem.index.speakers`; the caller
rewrites the query).
"""

from __future__ import annotations

from collections.abc import Callable, Container
from dataclasses import dataclass

import numpy as np

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.index.dense import DenseIndex
from langchain_agentmem.index.lexical import LexicalIndex, top_k
from langchain_agentmem.index.near_words import near_words
from langchain_agentmem.index.newer_first import Said, VectorLookup, newer_first, stack_vectors
from langchain_agentmem.index.speakers import mention_pattern
from langchain_agentmem.index.threads import ThreadOrder
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
        named_speaker: What a record of a speaker the query names gains in base score,
            in [0, 1]; the name itself is taken out of the query's words and embedding
            (0: names are searched as words, like any other).
        named_mention: What a record of another speaker gains when its text names a
            speaker the query names ("Sounds awesome, John!" for "How often does John work
            out?"), in [0, 1]: the name left the query's words, so a turn addressed to or
            about the person no longer matches it (0: only their own records gain).
        near_words: How much the words near the query's own count in BM25, in [0, 1],
            against 1 for the query's words, over the ceiling of the query's own words:
            each content word brings its nearest words in the bundled model's embedding
            space ("partner": relationship, spouse, ...;
            :mod:`~langchain_agentmem.index.near_words`). 0: off.
        pair_margin: Least margin (cosine over the candidates' background, as
            ``restatement_margin``) at which a later statement counts as restating an
            older one of its speaker without a change word or standing out, when the two
            are each other's nearest across time ("Sam asked me out and I said yes." after
            "I'm seeing Alex, we met at a friend's party."); ``math.inf``: off.
        pair_words: Most words each statement of such a pair may hold: a long turn tells
            many things, and its nearest turn shares a subject, not one fact.
    """

    dense_weight: float = 0.25
    neighbour_lift: float = 0.5
    candidates: int = 100
    dates: bool = True
    reply_weight: float = 0.5
    newer_first: bool = True
    restatement_margin: float = 0.1
    restatement_relevance: float = 0.3
    unmarked_standing: float = 1.5
    question_weight: float = 0.7
    named_speaker: float = 0.1
    named_mention: float = 0.05
    near_words: float = 0.3
    pair_margin: float = 0.2
    pair_words: int = 16

    def __post_init__(self) -> None:
        for name in (
            "dense_weight",
            "neighbour_lift",
            "reply_weight",
            "restatement_margin",
            "restatement_relevance",
            "question_weight",
            "named_speaker",
            "named_mention",
            "near_words",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InvalidTypeError(
                    f"HybridConfig.{name} must be a number in [0, 1], got {value!r}"
                )
            if not 0.0 <= value <= 1.0:
                raise InvalidInputError(f"HybridConfig.{name} must be in [0, 1], got {value!r}")
        for name in ("unmarked_standing", "pair_margin"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InvalidTypeError(
                    f"HybridConfig.{name} must be a number >= 0 (math.inf: off), got {value!r}"
                )
            if not value >= 0.0:  # also refuses NaN
                raise InvalidInputError(
                    f"HybridConfig.{name} must be >= 0 (math.inf: off), got {value!r}"
                )
        for name in ("candidates", "pair_words"):
            count = getattr(self, name)
            if isinstance(count, bool) or not isinstance(count, int):
                raise InvalidTypeError(f"HybridConfig.{name} must be an int >= 1, got {count!r}")
            if count < 1:
                raise InvalidInputError(f"HybridConfig.{name} must be >= 1, got {count!r}")
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


def named_gain(
    keys: list[int], said_of: Callable[[int], Said], named: frozenset[str], config: HybridConfig
) -> np.ndarray:
    """What each of ``keys`` gains for the speakers the query named: ``named_speaker`` for
    their own records, ``named_mention`` for others' records whose text names one of them."""
    said = [said_of(rid) for rid in keys]
    theirs = np.fromiter((who in named for who, _, _ in said), dtype=bool, count=len(keys))
    gain = config.named_speaker * theirs.astype(np.float64)
    if config.named_mention > 0:
        pattern = mention_pattern(named)
        lowered = tuple(name.lower() for name in named)  # a cheap test before the regex
        mentioned = np.fromiter(
            (
                not own
                and any(name in text.lower() for name in lowered)
                and pattern.search(text) is not None
                for own, (_, _, text) in zip(theirs.tolist(), said, strict=True)
            ),
            dtype=bool,
            count=len(keys),
        )
        gain = gain + config.named_mention * mentioned
    out: np.ndarray = gain.astype(np.float32)
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
    named: frozenset[str] = frozenset(),
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
        named: The speakers the query named (already taken out of ``query`` and
            ``vector``, :func:`~langchain_agentmem.index.speakers.name_speakers`): their
            records gain ``config.named_speaker`` (needs ``said_of``).

    Returns:
        ``(key, score)`` pairs, score in [0, 1], ties broken by the lower key.
    """
    n = max(config.candidates, k)
    cosine = dict(dense.search(vector, n))
    rids, lex = lexical.normalised(query)
    pool = dict.fromkeys(cosine)
    pool.update(dict.fromkeys(rid for rid, _ in top_k(rids, lex, n)))
    widened = near_words(query) if config.near_words > 0 else ""
    if widened:  # near words rescore the candidates; they bring none of their own
        lex = np.minimum(lex + lexical.near_gain(query, widened, config.near_words), 1.0)
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
        cos[missing] = stack_vectors([keys[i] for i in missing], embeddings_of) @ q
    pos = lexical.positions()
    lex_of = np.fromiter((pos.get(rid, -1) for rid in keys), dtype=np.int64, count=len(keys))
    bm = np.zeros(len(keys), dtype=np.float32)
    known = (lex_of >= 0) & (lex_of < len(lex))
    bm[known] = lex[lex_of[known]]
    w = config.dense_weight
    base_arr = w * np.clip(cos, 0.0, 1.0) + (1.0 - w) * bm
    if named and said_of is not None and (config.named_speaker > 0 or config.named_mention > 0):
        base_arr = base_arr + named_gain(keys, said_of, named, config)
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
