"""A query's labels: which of the namespace's labels it asks about, by embedding alone.

Records a chat model annotated hold their labels' words as hidden terms
(``HybridConfig.label_weight``). A query is not sent to the model: its embedding is compared
with each label's ("Where do I live?" with "home city", "diet", "dentist"), and the words of
the best ``label_terms`` labels at cosine ``label_match`` or more join its BM25 terms.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from langchain_agentmem.ranking.config import HybridConfig
from langchain_agentmem.types import Vector


def matched_labels(
    vector: Vector,
    labels: Sequence[str],
    vectors: Mapping[str, Vector],
    config: HybridConfig,
) -> list[str]:
    """The labels of ``labels`` the query of ``vector`` matches, best first.

    Args:
        vector: The query's normalised embedding.
        labels: The namespace's labels.
        vectors: Each label's normalised embedding (labels without one are skipped).
        config: ``label_match`` and ``label_terms``.
    """
    known = [label for label in labels if label in vectors]
    if not known or config.label_weight <= 0:
        return []
    sims = np.stack([vectors[label] for label in known]) @ np.asarray(vector, dtype=np.float32)
    order = np.argsort(-sims, kind="stable")[: config.label_terms]
    return [known[i] for i in order.tolist() if sims[i] >= config.label_match]
