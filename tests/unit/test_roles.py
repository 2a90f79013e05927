"""Whose words a query asks for, and the weight of the other side's records."""

from __future__ import annotations

import numpy as np
import pytest

from langchain_agentmem.index.threads import ThreadOrder
from langchain_agentmem.ranking.roles import ASSISTANT, USER, asked_role, side_of
from langchain_agentmem.ranking.stages import Pool, neighbour_lift, other_side, role_weight


@pytest.mark.parametrize(
    "query",
    [
        "Can you remind me of the restaurant in Rome you recommended for dinner?",
        "I'm going back to our previous chat about the one-shot. How many mummies are there?",
        "You mentioned two-factor methods; which ones were you referring to?",
        "What song did you say best exemplified the band's growth?",
        "What did we decide to name the zombie?",
        "How long did you say I should leave it on for?",
    ],
)
def test_questions_about_what_the_assistant_said(query: str) -> None:
    assert asked_role(query) == ASSISTANT


@pytest.mark.parametrize(
    "query",
    [
        "How old was I when I moved to the United States?",
        "Can you recommend some resources where I can learn more about video editing?",
        "What did I tell you about my car?",
        "Do you think it might be my living room?",
        "How many charity events did I participate in?",
    ],
)
def test_questions_about_the_user(query: str) -> None:
    assert asked_role(query) == USER


def test_sides_of_stored_roles() -> None:
    assert side_of("human") == side_of("user") == USER
    assert side_of("ai") == side_of("assistant") == ASSISTANT
    assert side_of("Caroline") is None and side_of(None) is None and side_of("tool") is None


SAID = {1: ("human", 0.0, "I moved."), 2: ("ai", 1.0, "Great!"), 3: ("Caroline", 2.0, "Hi")}


def said(rid: int) -> tuple[str | None, float, str]:
    return SAID[rid]


def test_the_other_sides_records_are_weighed_down() -> None:
    scores = {1: 0.5, 2: 0.6, 3: 0.4}
    assert role_weight(scores, said, USER, 0.5) == {1: 0.5, 2: 0.3, 3: 0.4}
    assert role_weight(scores, said, ASSISTANT, 0.5) == {1: 0.25, 2: 0.6, 3: 0.4}
    assert role_weight(scores, said, USER, 1.0) == scores  # off
    # no candidate of the side asked about: nothing moves (a user-only memory, say)
    assert role_weight({1: 0.5, 3: 0.4}, said, ASSISTANT, 0.5) == {1: 0.5, 3: 0.4}


def test_the_other_side_is_named_only_where_it_is_weighed() -> None:
    assert other_side([1, 2, 3], said, USER, 0.5) == {2}
    assert other_side([1, 2, 3], said, ASSISTANT, 0.5) == {1}
    assert other_side([1, 2, 3], said, USER, 1.0) == frozenset()  # off
    assert other_side([1, 3], said, ASSISTANT, 0.5) == frozenset()  # none of the side asked


def test_a_held_key_is_not_lifted_but_still_lifts() -> None:
    # 1 and 2 are neighbours in a thread, 3 stands alone
    pool = Pool(keys=[1, 2, 3], cosine=np.zeros(3), bm25=np.zeros(3), near={1: [2], 2: [1]})
    base = {1: 0.8, 2: 0.1, 3: 0.3}
    lifted = neighbour_lift(base, pool, ThreadOrder(), 0.5)
    assert lifted == pytest.approx({1: 0.8, 2: 0.45, 3: 0.3})
    held = neighbour_lift(base, pool, ThreadOrder(), 0.5, held={2})
    assert held == {1: 0.8, 2: 0.1, 3: 0.3}
    # the held key still lifts its neighbour by its own score
    lifting = neighbour_lift({1: 0.1, 2: 0.8, 3: 0.3}, pool, ThreadOrder(), 0.5, held={2})
    assert lifting == pytest.approx({1: 0.45, 2: 0.8, 3: 0.3})
