"""Search modes and the fusion of dense and lexical scores."""

from __future__ import annotations

from collections.abc import Mapping

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError

SEARCH_MODES = ("hybrid", "dense", "lexical")
"""The modes ``AgentMemory.search`` accepts."""

DEFAULT_DENSE_WEIGHT = 0.5
"""Share of the fused score that comes from the dense (cosine) side."""


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


def fuse(
    dense: Mapping[int, float],
    lexical: Mapping[int, float],
    k: int,
    *,
    dense_weight: float = DEFAULT_DENSE_WEIGHT,
) -> list[tuple[int, float]]:
    """Weighted sum of min-max normalised dense and lexical scores over the candidates.

    Args:
        dense: Cosine similarity of every candidate key.
        lexical: BM25 score of every candidate key (missing: 0).
        k: How many to return.
        dense_weight: Weight of the dense side in [0, 1]; the lexical side gets the rest.

    Returns:
        The ``k`` best keys with their fused score in [0, 1], best first.
    """
    keys = list(dense)
    if not keys:
        return []
    d_norm = _minmax([dense[key] for key in keys])
    l_norm = _minmax([lexical.get(key, 0.0) for key in keys])
    fused = [
        (key, dense_weight * d + (1.0 - dense_weight) * lex)
        for key, d, lex in zip(keys, d_norm, l_norm, strict=True)
    ]
    fused.sort(key=lambda item: (-item[1], item[0]))
    return fused[:k]


def _minmax(values: list[float]) -> list[float]:
    lo, hi = min(values), max(values)
    if hi - lo <= 1e-12:
        # One candidate (or all tied): it is as good as the best there is, if it matched.
        return [1.0 if v > 0 else 0.0 for v in values]
    return [(v - lo) / (hi - lo) for v in values]
