"""Pairs of one speaker's statements nearest both ways across time (pure, no model)."""

from __future__ import annotations

import numpy as np

from langchain_agentmem.ranking.newer_first import nearest_pairs


def margins() -> np.ndarray:
    """Four records in time order: 0 an old fact, 1 small talk, 2 and 3 later statements."""
    m = np.zeros((4, 4))
    for (i, j), v in {(2, 0): 0.5, (3, 0): 0.4, (3, 2): 0.6, (1, 0): 0.1, (2, 1): 0.1}.items():
        m[i, j] = m[j, i] = v
    return m


def pairs(**change: object) -> set[tuple[int, int]]:
    args: dict[str, object] = {
        "margins": margins(),
        "eligible": np.ones(4, dtype=bool),
        "speaker": np.zeros(4, dtype=np.int64),
        "when": np.arange(4),
        "texts": ["old fact", "small talk", "news", "more news"],
    }
    args.update(change)
    out = nearest_pairs(**args)  # type: ignore[arg-type]
    return {(int(b), int(a)) for b, a in zip(*np.nonzero(out), strict=True)}


def test_a_pair_is_nearest_both_ways_and_later_over_older() -> None:
    # 2 is 0's nearest later record and 0 is 2's nearest older one; 3 is nearest 0 only
    # from its own side (2 is nearer it), so it pairs with 2 instead.
    assert pairs() == {(2, 0), (3, 2)}


def test_another_speaker_never_pairs() -> None:
    assert pairs(speaker=np.array([0, 0, 0, 1])) == {(2, 0)}


def test_an_ineligible_record_leaves_its_partner_free() -> None:
    # Without 2 (a long turn, or a question), 0 and 3 are each other's nearest.
    assert pairs(eligible=np.array([True, True, False, True])) == {(3, 0)}


def test_a_repeat_is_never_placed_above_its_copy() -> None:
    # 2 repeats 0 word for word: it takes 0 as its pair, so 3 cannot, and is not placed.
    texts = ["My phone is a Pixel.", "small talk", "my phone is  a pixel.", "more news"]
    assert pairs(texts=texts) == {(3, 2)}


def test_time_decides_which_side_is_later() -> None:
    # Reversed in time, the same records pair the other way round.
    assert pairs(when=np.array([3, 2, 1, 0])) == {(0, 2), (2, 3)}
