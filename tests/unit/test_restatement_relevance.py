"""Newer-first asks a restatement to match the question itself, not what it borrowed."""

from __future__ import annotations

import numpy as np

from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.ranking.newer_first import Said, newer_first

QUERY = "Where does Ana live?"
OLD, LATER = 1, 2
TEXTS: dict[int, Said] = {
    OLD: ("Ana", 100.0, "I live in Lyon."),
    LATER: ("Ana", 200.0, "Off to spin class now, wish me luck."),  # a change word: "now"
    3: ("Ana", 150.0, "The blossom is out."),
    4: ("Ana", 160.0, "Work has been hectic."),
    5: ("Ana", 170.0, "My sister visited."),
}


def _vectors() -> dict[int, np.ndarray]:
    """The older statement and the later line close together, the rest apart."""
    basis = np.eye(8, dtype=np.float32)
    out = {
        OLD: basis[0],
        LATER: basis[0] * 0.8 + basis[1] * 0.6,
        3: basis[2],
        4: basis[3],
        5: basis[4],
    }
    return {key: vector / np.linalg.norm(vector) for key, vector in out.items()}


def _rank(scores: dict[int, float], match: dict[int, float] | None) -> list[int]:
    vectors = _vectors()
    placed = newer_first(
        QUERY,
        np.eye(8, dtype=np.float32)[0],
        scores,
        said_of=TEXTS.__getitem__,
        embeddings_of=lambda keys: np.stack([vectors[key] for key in keys]),
        config=HybridConfig(),
        match=match,
    )
    return sorted(placed, key=lambda key: (-placed[key], key))


# Every record of Ana's gains 0.1 for the name in the question; the later line's own match
# is nothing, and its score is what it borrowed.
SCORES = {OLD: 0.25, LATER: 0.12, 3: 0.11, 4: 0.105, 5: 0.1}


def test_a_line_that_matches_nothing_is_not_placed_over_the_answer() -> None:
    match = {OLD: 0.15, LATER: 0.0, 3: 0.01, 4: 0.005, 5: 0.0}
    assert _rank(SCORES, match)[0] == OLD


def test_read_off_the_scores_the_same_line_passes_over_it() -> None:
    # What the share read before: 0.12 is above 0.15 of 0.25, so the line goes first.
    assert _rank(SCORES, None)[0] == LATER


def test_a_restatement_that_matches_enough_is_placed_over_the_older_statement() -> None:
    match = {OLD: 0.15, LATER: 0.03, 3: 0.01, 4: 0.005, 5: 0.0}  # 0.2 of the older's match
    assert _rank(SCORES, match)[:2] == [LATER, OLD]
