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


def matched_labels(
    vector: Vector,
    labels: Sequence[str],
    vectors: Mapping[str, Vector],
    config: HybridConfig,
    least: float | None = None,
) -> list[str]:
    """The labels of ``labels`` the query of ``vector`` matches, best first.

    Args:
        vector: The query's normalised embedding.
        labels: The namespace's labels.
        vectors: Each label's normalised embedding (labels without one are skipped).
        config: ``label_match`` and ``label_terms``.
        least: The least cosine (default ``config.label_match``).
    """
    known = [label for label in labels if label in vectors]
    if not known or config.label_weight <= 0:
        return []
    least = config.label_match if least is None else least
    sims = np.stack([vectors[label] for label in known]) @ np.asarray(vector, dtype=np.float32)
    order = np.argsort(-sims, kind="stable")[: config.label_terms]
    return [known[i] for i in order.tolist() if sims[i] >= least]
