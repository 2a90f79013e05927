"""The stages of a hybrid search, each a small function over one pool of candidates.

:func:`~langchain_agentmem.ranking.search.hybrid_search` runs them in order:
:func:`gather` (the pool and each key's cosine and BM25), :func:`base_scores`,
:func:`named_gain`, :func:`role_weight`, :func:`neighbour_lift`, newer first
(:func:`~langchain_agentmem.ranking.newer_first.newer_first`), :func:`question_weight`,
:func:`statement_first`, :func:`replaced_below` (last, so a statement lifted above a
question still sits below its successor), then :func:`best`. Each reads its weights from
:class:`~langchain_agentmem.ranking.config.HybridConfig`.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass

import numpy as np

from langchain_agentmem.index.lexical import tokenize, top_k
from langchain_agentmem.index.speakers import mention_pattern
from langchain_agentmem.index.threads import ThreadOrder
from langchain_agentmem.ranking.config import HybridConfig
from langchain_agentmem.ranking.corpus import Corpus
from langchain_agentmem.ranking.near_words import near_words
from langchain_agentmem.ranking.newer_first import PAST_WORDS, Said, stack_vectors
from langchain_agentmem.ranking.roles import side_of
from langchain_agentmem.types import Vector


@dataclass
class Pool:
    """The candidates of one search: their keys, cosines, BM25 and thread neighbours."""

    keys: list[int]
    """Each side's best keys, then the neighbours they pulled in."""
    cosine: np.ndarray
    """Each key's cosine to the query (float32)."""
    bm25: np.ndarray
    """Each key's BM25 over the query's ceiling, near words included (float32)."""
    near: dict[int, list[int]]
    """The thread neighbours that lift each key found by a side (empty: no lift)."""


def gather(query: str, vector: Vector, k: int, corpus: Corpus, labels: str = "") -> Pool:
    """The pool: each side's ``max(candidates, k)`` best keys and their thread neighbours.

    Near words rescore the candidates and bring none of their own; a key the dense side did
    not return gets its cosine from its stored embedding. ``labels``: the words of the
    namespace's labels the query matched, which count as the query's own (records hold
    their labels' words at ``label_weight``).
    """
    config, lexical = corpus.config, corpus.lexical
    n = max(config.candidates, k)
    cosine = dict(corpus.dense.search(vector, n))
    rids, lex = lexical.normalised(query)
    pool = dict.fromkeys(cosine)
    pool.update(dict.fromkeys(rid for rid, _ in top_k(rids, lex, n)))
    widened = near_words(query) if config.near_words > 0 else ""
    if widened:
        lex = np.minimum(lex + lexical.near_gain(query, widened, config.near_words), 1.0)
    if labels:
        gain = lexical.near_gain(query, labels, config.label_weight)
        pool.update(dict.fromkeys(rid for rid, _ in top_k(rids, gain, n)))
        lex = np.minimum(lex + gain, 1.0)
    near: dict[int, list[int]] = {}
    if config.neighbour_lift > 0:
        for rid in list(pool):
            near[rid] = corpus.order.lifters(rid)
            pool.update(dict.fromkeys(near[rid]))
    keys = list(pool)
    cos = np.fromiter((cosine.get(rid, np.nan) for rid in keys), dtype=np.float32, count=len(keys))
    missing = np.flatnonzero(np.isnan(cos))
    if missing.size:
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        cos[missing] = stack_vectors([keys[i] for i in missing], corpus.embeddings) @ q
    pos = lexical.positions()
    lex_of = np.fromiter((pos.get(rid, -1) for rid in keys), dtype=np.int64, count=len(keys))
    bm = np.zeros(len(keys), dtype=np.float32)
    known = (lex_of >= 0) & (lex_of < len(lex))
    bm[known] = lex[lex_of[known]]
    return Pool(keys=keys, cosine=cos, bm25=bm, near=near)


def base_scores(pool: Pool, config: HybridConfig) -> np.ndarray:
    """``dense_weight`` of the clipped cosine plus the rest of BM25, per key."""
    w = config.dense_weight
    out: np.ndarray = w * np.clip(pool.cosine, 0.0, 1.0) + (1.0 - w) * pool.bm25
    return out


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


def neighbour_lift(
    base: dict[int, float],
    pool: Pool,
    order: ThreadOrder,
    lift: float,
    held: Container[int] = (),
) -> dict[int, float]:
    """Each key moved ``lift`` of the way toward its best thread neighbour's base score.

    A neighbour the pool pulled in is lifted from what is known of its own neighbours. Keys
    in ``held`` keep their base score (they still lift their neighbours by it).
    """
    if lift <= 0:
        return base
    scores = dict(base)
    for rid, nbs in pool.near.items():
        own = base[rid]
        best = max((base[nb] for nb in nbs), default=own)
        if best > own and rid not in held:
            scores[rid] = own + lift * (best - own)
    for rid in pool.keys:
        if rid not in pool.near and rid not in held:
            own = base[rid]
            best = max((base[nb] for nb in order.lifters(rid) if nb in base), default=own)
            if best > own:
                scores[rid] = own + lift * (best - own)
    return scores


def question_weight(
    scores: dict[int, float], questions: Container[int], weight: float
) -> dict[int, float]:
    """The scores of records that only ask, times ``weight``."""
    return scores if weight >= 1.0 else weigh(scores, questions, weight)


def other_side(
    keys: Iterable[int], said_of: Callable[[int], Said], asked: str, weight: float
) -> frozenset[int]:
    """The keys of records of the side a query does not ask about (a role other than
    ``asked``, :mod:`~langchain_agentmem.ranking.roles`): the ones :func:`role_weight`
    weighs. None when ``weight`` is 1 or no key is of the side asked about."""
    if weight >= 1.0:
        return frozenset()
    sides = {rid: side_of(said_of(rid)[0]) for rid in keys}
    if asked not in sides.values():
        return frozenset()
    return frozenset(rid for rid, side in sides.items() if side not in (None, asked))


def role_weight(
    scores: dict[int, float], said_of: Callable[[int], Said], asked: str, weight: float
) -> dict[int, float]:
    """The scores of records of the side a query does not ask about (:func:`other_side`),
    times ``weight``; unchanged when no candidate is of the side asked about, or ``weight``
    is 1."""
    return weigh(scores, other_side(scores, said_of, asked, weight), weight)


def weigh(scores: dict[int, float], keys: Container[int], weight: float) -> dict[int, float]:
    """``scores`` with those of ``keys`` times ``weight`` (``scores`` itself when no key is
    to be weighed)."""
    if not keys:
        return scores
    return {rid: score * weight if rid in keys else score for rid, score in scores.items()}


def replaced_below(
    scores: dict[int, float],
    corpus: Corpus,
    query: str,
    relevance: float,
    labels: str = "",
    match: dict[int, float] | None = None,
) -> dict[int, float]:
    """Each record a later one replaces (a model's link) placed just below the newest
    record of its chain that matches the query at least ``relevance`` times as well as it
    does (``HybridConfig.restatement_relevance``, as newer first asks of a restatement;
    ``match``: each key's match to the query itself, as newer first measures it; default
    ``scores``).

    A link counts only for a query about what it changed: the attribute shares a word with
    the query or with the labels it matched (``labels``), so a link a model drew between
    two statements about something else ("music: jazz -> Radiohead") moves nothing for
    "Where do I live?". Questions about the past ("Where did I live before?") keep the
    plain order.
    """
    linked = [rid for rid in scores if corpus.successors(rid)]
    if not linked or PAST_WORDS.search(query):
        return scores  # no model's link among the results (always so without a model)
    asked = set(tokenize(f"{query} {labels}"))
    own = scores if match is None else match
    out = dict(scores)
    for rid in sorted(linked, key=lambda key: (-scores[key], key)):
        newest, seen = rid, {rid}
        while True:
            later = [
                key
                for key, attribute in corpus.successors(newest)
                if key not in seen and asked.intersection(tokenize(attribute))
            ]
            if not later:
                break
            newest = later[-1]
            seen.add(newest)
        if newest == rid or newest not in scores:
            continue
        if own[newest] >= relevance * own[rid] and out[newest] <= out[rid]:
            out[newest] = out[rid] + 1e-6
    return out


def statement_first(
    scores: dict[int, float], questions: Container[int], pool: Pool
) -> dict[int, float]:
    """A record that only asks never ranks first ahead of a statement that could answer
    the query (one that shares a word with it, near words included): the best such
    statement takes the first place, just above the question.

    A stored question shows what was asked, and matches a later asking of it better than
    any answer does ("Where do I live?" first, "I live in Lyon." after it).
    """
    if not scores or not questions:
        return scores
    top = min(scores, key=lambda rid: (-scores[rid], rid))
    if top not in questions:
        return scores
    shares = {rid for rid, bm in zip(pool.keys, pool.bm25.tolist(), strict=True) if bm > 0}
    answering = [rid for rid in scores if rid not in questions and rid in shares]
    if not answering:
        return scores
    lifted = min(answering, key=lambda rid: (-scores[rid], rid))
    return {**scores, lifted: scores[top] + 1e-6}


def best(scores: dict[int, float], k: int) -> list[tuple[int, float]]:
    """The ``k`` best ``(key, score)``, score clipped to [0, 1], ties to the lower key."""
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return [(rid, min(max(score, 0.0), 1.0)) for rid, score in ranked[:k]]
