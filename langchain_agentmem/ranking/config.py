"""Every tuned value of search, each with the file of the repository it was chosen in.

A field's ``metadata["source"]`` names the results file (under ``benchmarks/``) where its
value was chosen, or, for a value no sweep chose, where the shipped default was measured;
:func:`sources` lists them. Docstrings elsewhere point to the fields and do not restate
their values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.index.lexical import DEFAULT_B, DEFAULT_K1

_EXP = "benchmarks/experiments/results/"
_ABLATION = _EXP + "locomo_ablation.txt"
_RECENCY = _EXP + "recency_ablation.txt"
_PAIRS = _EXP + "paired_restatements.txt"

_SHARE = "share"
"""A number in [0, 1]."""
_AT_LEAST_0 = "at least 0"
"""A number >= 0; ``math.inf``: off."""
_POSITIVE = "positive"
"""A number > 0."""
_COUNT = "count"
"""An int >= 1."""
_FLAG = "flag"
"""A bool."""
_WHOLE_OR_UNSET = "whole or unset"
"""An int >= 0, or ``None`` (the environment's, else the index's default)."""


def _tuned(default: Any, source: str, kind: str) -> Any:
    """A field of :class:`HybridConfig`: its default, where it was chosen, what it may be."""
    return field(default=default, metadata={"source": source, "kind": kind})


@dataclass(frozen=True)
class HybridConfig:
    """How search ranks records: every tuned value, each with its source.

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
            older record it restates (:mod:`~langchain_agentmem.ranking.newer_first`).
        restatement_margin: Least amount by which the cosine between a record and an older
            one must exceed their mean cosine to the other candidates for the record to count
            as restating the older one.
        restatement_relevance: Least share of the query match of the best record of the
            chain it joins that a restatement must have to be placed above it (the match
            alone: dense and BM25, before the gain for a named speaker and the neighbours'
            lift).
        unmarked_standing: Least number of standard deviations by which the query cosine of
            a later statement without a change word must exceed the mean of its speaker's
            candidates (the older record left out) for it to count as a restatement
            (``math.inf``: only statements worded as a change count).
        role_weight: Factor of the base score of a record of the side (the user's words,
            the assistant's replies: ``metadata["role"]``) a query does not ask about, in
            [0, 1], before the neighbour lift, which such a record then does not get
            (:mod:`~langchain_agentmem.ranking.roles`; 1: off). Records without a role
            (named speakers, tool notes) are never weighed.
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
            against 1 for the query's words, over the ceiling of the query's own words
            (:mod:`~langchain_agentmem.ranking.near_words`). 0: off.
        pair_margin: Least margin (cosine over the candidates' background, as
            ``restatement_margin``) at which a later statement counts as restating an
            older one of its speaker without a change word or standing out, when the two
            are each other's nearest across time ("Sam asked me out and I said yes." after
            "I'm seeing Alex, we met at a friend's party."); ``math.inf``: off.
        pair_words: Most words each statement of such a pair may hold: a long turn tells
            many things, and its nearest turn shares a subject, not one fact.
        bm25_k1: BM25's term-frequency saturation.
        bm25_b: BM25's length normalisation, in [0, 1]: lower than Lucene's 0.75, since
            short chat turns ("Yes! A sunrise.") otherwise outrank the turns that say more.
        value_question_words: Most content words a question for one present value has
            besides names ("Which car does Ana drive now?": car, drive); a question naming
            more asks about a particular episode and keeps the plain order.
        min_background: Fewest other records a newer-first comparison needs: a standing (a
            speaker's candidates besides the record and the one it passes over) or a pair's
            background (candidates besides the pair).
        repeat_neighbours: Nearest records read when a question may repeat one asked
            before (statements close to it included).
        statement_first: A record that only asks never ranks first ahead of a statement
            sharing a word with the query (:func:`~langchain_agentmem.ranking.stages.
            statement_first`).
        label_weight: How much each word of a record's labels (what a chat model said it
            is about, :mod:`~langchain_agentmem.annotation.annotations`) counts in the lexical
            index, against 1 for its own words, in [0, 1] (0: labels are not searched).
        label_match: Least cosine between the query and a label of the namespace for the
            label's words to join the query's, in [0, 1] (a match by embedding: no model
            call when searching).
        label_terms: Most labels a query takes that way, best first.
        link_match: Least cosine between the query and a label of the namespace for a
            model's replaces link to count when the label shares a word with the attribute
            it changed ("Where do I live?" and "home city", 0.43), in [0, 1].
        hnsw_threshold: Records in one namespace past which its dense index goes
            approximate (an HNSW graph); ``None``: ``AGENTMEM_HNSW_THRESHOLD``, else
            :data:`~langchain_agentmem.index.dense.DEFAULT_HNSW_THRESHOLD`.
    """

    dense_weight: float = _tuned(0.25, _EXP + "dense_weight.txt", _SHARE)
    neighbour_lift: float = _tuned(0.5, _ABLATION, _SHARE)
    candidates: int = _tuned(100, "benchmarks/results/locomo_dev.txt", _COUNT)
    dates: bool = _tuned(True, _ABLATION, _FLAG)
    reply_weight: float = _tuned(0.5, _EXP + "locomo_context.txt", _SHARE)
    newer_first: bool = _tuned(True, _RECENCY, _FLAG)
    restatement_margin: float = _tuned(0.1, _EXP + "named_speakers.txt", _SHARE)
    restatement_relevance: float = _tuned(0.15, _EXP + "restatement_relevance.txt", _SHARE)
    unmarked_standing: float = _tuned(1.5, _RECENCY, _AT_LEAST_0)
    role_weight: float = _tuned(0.3, _EXP + "lme_roles.txt", _SHARE)
    question_weight: float = _tuned(0.7, "benchmarks/results/repeated_questions.txt", _SHARE)
    named_speaker: float = _tuned(0.1, _EXP + "named_speakers.txt", _SHARE)
    named_mention: float = _tuned(0.05, _EXP + "named_mentions.txt", _SHARE)
    near_words: float = _tuned(0.3, _EXP + "term_expansion.txt", _SHARE)
    pair_margin: float = _tuned(0.2, _PAIRS, _AT_LEAST_0)
    pair_words: int = _tuned(16, _PAIRS, _COUNT)
    bm25_k1: float = _tuned(DEFAULT_K1, _ABLATION, _POSITIVE)
    bm25_b: float = _tuned(DEFAULT_B, _ABLATION, _SHARE)
    value_question_words: int = _tuned(3, _RECENCY, _COUNT)
    min_background: int = _tuned(3, _RECENCY, _COUNT)
    repeat_neighbours: int = _tuned(8, "benchmarks/results/repeated_questions.txt", _COUNT)
    statement_first: bool = _tuned(True, "benchmarks/results/repeated_questions.txt", _FLAG)
    label_weight: float = _tuned(0.25, _EXP + "label_weights.txt", _SHARE)
    label_match: float = _tuned(0.5, _EXP + "label_weights.txt", _SHARE)
    label_terms: int = _tuned(3, "benchmarks/results/annotations.txt", _COUNT)
    link_match: float = _tuned(0.4, "benchmarks/results/annotations.txt", _SHARE)
    hnsw_threshold: int | None = _tuned(None, "benchmarks/results/scale.txt", _WHOLE_OR_UNSET)

    def __post_init__(self) -> None:
        for spec in fields(self):
            _check(spec.name, getattr(self, spec.name), spec.metadata["kind"])


def _check(name: str, value: object, kind: str) -> None:
    """Refuse ``value`` for field ``name`` unless it is of ``kind``."""
    where = f"HybridConfig.{name}"
    if kind == _FLAG:
        if not isinstance(value, bool):
            raise InvalidTypeError(f"{where} must be a bool, got {value!r}")
        return
    if kind == _WHOLE_OR_UNSET:
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidTypeError(f"{where} must be an int >= 0 or None, got {value!r}")
        if value < 0:
            raise InvalidInputError(f"{where} must be >= 0 or None, got {value!r}")
        return
    if kind == _COUNT:
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidTypeError(f"{where} must be an int >= 1, got {value!r}")
        if value < 1:
            raise InvalidInputError(f"{where} must be >= 1, got {value!r}")
        return
    wanted = {
        _SHARE: "a number in [0, 1]",
        _AT_LEAST_0: "a number >= 0 (math.inf: off)",
        _POSITIVE: "a finite number > 0",
    }[kind]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidTypeError(f"{where} must be {wanted}, got {value!r}")
    ok = {
        _SHARE: 0.0 <= value <= 1.0,
        _AT_LEAST_0: value >= 0.0,  # also refuses NaN
        _POSITIVE: 0.0 < value < math.inf,
    }[kind]
    if not ok:
        shown = {
            _SHARE: "in [0, 1]",
            _AT_LEAST_0: ">= 0 (math.inf: off)",
            _POSITIVE: "a finite number > 0",
        }
        raise InvalidInputError(f"{where} must be {shown[kind]}, got {value!r}")


def sources() -> dict[str, str]:
    """Each tuned value's field name and the repository file its value was chosen in."""
    return {spec.name: spec.metadata["source"] for spec in fields(HybridConfig)}
