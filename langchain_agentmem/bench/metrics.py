"""Retrieval measures: evidence recall@k and hit@k, percentiles."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def recall_at_k(retrieved: Sequence[str], evidence: Sequence[str], k: int) -> float:
    """Share of ``evidence`` found among the first ``k`` of ``retrieved``."""
    if not evidence:
        raise ValueError("recall is undefined without evidence; leave such questions out")
    top = set(retrieved[:k])
    return sum(1 for e in evidence if e in top) / len(evidence)


def hit_at_k(retrieved: Sequence[str], evidence: Sequence[str], k: int) -> float:
    """1.0 when any evidence item is among the first ``k`` of ``retrieved``, else 0.0."""
    top = set(retrieved[:k])
    return 1.0 if any(e in top for e in evidence) else 0.0


def percentile_ms(seconds: Sequence[float], q: float) -> float:
    """The ``q``-th percentile of durations given in seconds, in milliseconds."""
    if not len(seconds):
        return float("nan")
    return float(np.percentile(np.asarray(seconds, dtype=np.float64), q) * 1000.0)
