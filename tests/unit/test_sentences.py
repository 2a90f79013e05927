"""How a record's text divides into the sentences its vector averages."""

from __future__ import annotations

import itertools

from langchain_agentmem.sentences import MAX_SENTENCES, sentences, strip_speaker


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
