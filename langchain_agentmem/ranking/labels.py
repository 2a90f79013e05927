"""A query's labels: which of the namespace's labels it asks about, by embedding alone.

Records a chat model annotated hold their labels' words as hidden terms
(``HybridConfig.label_weight``). A query is not sent to the model: its embedding is compared
with each label's ("Where do I live?" with "home city", "diet", "dentist"), and the words of
the best ``label_terms`` labels at cosine ``label_match`` or more join its BM25 terms. A
model's replaces link counts for a query whose words, or the words of the labels it matches
at ``link_match`` or more, share a word with the attribute the link changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from langchain_agentmem.annotation.annotations import label_words
from langchain_agentmem.ranking.config import HybridConfig
from langchain_agentmem.types import Vector


class QueryLabels(NamedTuple):
    """The words of the namespace's labels a query matched."""

    terms: str = ""
    """Searched as the query's own words (matched at ``label_match``)."""
    topics: str = ""
    """What a model's link is read against, besides the query's words (``link_match``)."""


NO_LABELS = QueryLabels()
"""A query that matched no label."""


def query_labels(
    vector: Vector,
    labels: Sequence[str],
    vectors: Mapping[str, Vector],
    config: HybridConfig,
    named: str = "",
) -> QueryLabels:
    """The words of the labels of ``labels`` the query of ``vector`` matches: of the best
    ``label_terms``, those at cosine ``label_match`` or more as its terms, those at
    ``link_match`` or more (and its terms) as its topics; ``named`` joins both.

    Args:
        vector: The query's normalised embedding.
        labels: The namespace's labels.
        vectors: Each label's normalised embedding (labels without one are skipped).
        config: ``label_weight`` (0: no label matches), ``label_match``, ``link_match``
            and ``label_terms``.
        named: Words of the labels a model named for the query
            (``AgentMemory(label_queries=True)``).
    """
    known = [label for label in labels if label in vectors]
    if not known or config.label_weight <= 0:
        return QueryLabels(named, named)
    sims = np.stack([vectors[label] for label in known]) @ np.asarray(vector, dtype=np.float32)
    best = [(known[i], float(sims[i])) for i in np.argsort(-sims, kind="stable").tolist()]
    best = best[: config.label_terms]
    terms = label_words(label for label, sim in best if sim >= config.label_match)
    topics = label_words(label for label, sim in best if sim >= config.link_match)
    return QueryLabels(f"{terms} {named}".strip(), f"{topics} {terms} {named}".strip())
