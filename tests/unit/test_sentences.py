"""How a record's text divides into the sentences its vector averages."""

from __future__ import annotations

import itertools
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_agentmem.text.sentences import (
    _ABBREVIATION,
    _BOUNDARY,
    MAX_SENTENCES,
    SPEAKER,
    pieces,
    sentences,
    strip_speaker,
)


def test_a_single_sentence_is_the_whole_text() -> None:
    assert sentences("I moved to Berlin.") == []
    assert sentences("") == []
    assert sentences("Wow! I moved to Berlin.") == []  # "Wow!" is a fragment, not a sentence


def test_sentences_end_at_stops_and_line_breaks() -> None:
    assert sentences("I moved to Berlin. My dog is Rex!") == [
        "I moved to Berlin.",
        "My dog is Rex!",
    ]
    assert sentences("Is it late? I think so\nsee you soon") == [
        "Is it late?",
        "I think so",
        "see you soon",
    ]
    assert sentences("Mr. Smith called. He said hi.") == ["Mr. Smith called.", "He said hi."]
    assert sentences("I saw Dr. Moreau today. She was kind.") == [
        "I saw Dr. Moreau today.",
        "She was kind.",
    ]


def test_each_sentence_keeps_the_speaker_label() -> None:
    text = "Caroline: Hey Mel! Good to see you. I went to a support group yesterday."
    assert sentences(text) == [
        "Caroline: Hey Mel!",
        "Caroline: Good to see you.",
        "Caroline: I went to a support group yesterday.",
    ]
    assert strip_speaker(text).startswith("Hey Mel!")
    assert sentences("Caroline: I went to a support group.") == []


def test_a_long_text_is_read_at_most_sentences_spread_from_first_to_last() -> None:
    numbered = [f"Line {i} of the letter." for i in range(1000)]
    picked = sentences("ana: " + " ".join(numbered))
    assert len(picked) == MAX_SENTENCES
    assert picked[0] == "ana: Line 0 of the letter."
    assert picked[-1] == "ana: Line 999 of the letter."
    order = [numbered.index(s.removeprefix("ana: ")) for s in picked]
    assert order == sorted(set(order))  # in order, none twice
    gaps = {b - a for a, b in itertools.pairwise(order)}
    assert max(gaps) - min(gaps) <= 1  # evenly spread
    exactly = [f"Line {i} of the letter." for i in range(MAX_SENTENCES)]
    assert sentences(" ".join(exactly)) == exactly  # at the cap nothing is dropped


def _pieces_by_rule(text: str) -> tuple[str, list[str]]:
    """The splitting rule read literally: each part runs on when the sentence so far ends
    in an abbreviation (quadratic, for short texts only)."""
    label = SPEAKER.match(text)
    head = label.group(0) if label else ""
    joined: list[str] = []
    run_on = False
    for part in _BOUNDARY.split(text[len(head) :]):
        if run_on:
            joined[-1] = f"{joined[-1]} {part}"
        else:
            joined.append(part)
        run_on = bool(_ABBREVIATION.search(joined[-1]))
    return head, [s.strip() for s in joined if s.strip()]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["Dr.", "dr.", "Mr.", "e.g.", "etc.", "No.", "a", "went", "home.", "Hi!"])
        | st.sampled_from([" ", "  ", "\n", "\n\n", "? ", ". ", "sam: "]),
        max_size=30,
    )
)
def test_splitting_reads_each_part_alone_as_the_rule_reads_the_sentence(
    words: list[str],
) -> None:
    text = " ".join(words)
    assert pieces(text) == _pieces_by_rule(text)


@pytest.mark.parametrize("unit", ["Dr. ", "Dr. Mr. e.g. i.e. ", "Dr.\n", "a. ", "Why? "])
def test_splitting_is_linear_in_the_text(unit: str) -> None:
    # A run of abbreviations once glued every part to the growing sentence and read the
    # whole of it again per part: 16k characters took 2 s, a million about two hours.
    # Under one second of CPU time: the best of three runs, as a loaded machine (other test
    # processes on the same cores) stretches one run's CPU time several-fold.
    text = unit * (1_000_000 // len(unit))
    spent = []
    for _ in range(3):
        started = time.process_time()  # CPU time: what another process does is not counted
        head, parts = pieces(text)
        spent.append(time.process_time() - started)
    assert min(spent) < 1.0, spent
    assert head == "" and parts
