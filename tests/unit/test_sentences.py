"""How a record's text divides into the sentences its vector averages."""

from __future__ import annotations

from langchain_agentmem.sentences import sentences, strip_speaker


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
