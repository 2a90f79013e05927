"""Who a query names: speakers' names found and taken out of the query, nothing else."""

from __future__ import annotations

import pytest

from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.index.speakers import NamedQuery, name_speakers
from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.ranking.stages import named_gain

SPEAKERS = ("Dmitri", "Tara", "Ana Lima")


@pytest.mark.parametrize(
    ("query", "text", "named"),
    [
        ("What is Dmitri's job?", "What is their job?", {"Dmitri"}),
        ("What is Dmitri’s job?", "What is their job?", {"Dmitri"}),
        ("what does dmitri do for a living", "what does they do for a living", {"Dmitri"}),
        ("Did Tara and Dmitri meet?", "Did they and they meet?", {"Dmitri", "Tara"}),
        ("Where does Ana Lima work?", "Where does they work?", {"Ana Lima"}),
        ("Where does Ana work?", "Where does Ana work?", set()),
        ("Is Dmitris job new?", "Is Dmitris job new?", set()),
        ("What is Taras' dog called?", "What is Taras' dog called?", set()),
        ("Where is Boris?", "Where is Boris?", set()),
    ],
)
def test_names_are_taken_out_as_whole_words(query: str, text: str, named: set[str]) -> None:
    assert name_speakers(query, SPEAKERS) == NamedQuery(text, frozenset(named))


def test_a_query_that_is_only_a_name_stays_as_it_is() -> None:
    assert name_speakers("Dmitri?", SPEAKERS) == NamedQuery("Dmitri?")
    assert name_speakers("Tara's", SPEAKERS) == NamedQuery("Tara's")


def test_a_name_that_is_a_common_word_matches_only_as_written() -> None:
    assert name_speakers("what will you do?", ["Will"]) == NamedQuery("what will you do?")
    assert name_speakers("What does Will do?", ["Will"]).named == {"Will"}


def test_names_are_spelled_as_the_records_spell_them() -> None:
    assert name_speakers("WHAT IS DMITRI'S JOB?", ["Dmitri"]).named == {"Dmitri"}


def test_no_speakers_or_blank_names_change_nothing() -> None:
    assert name_speakers("What is Dmitri's job?", []) == NamedQuery("What is Dmitri's job?")
    assert name_speakers("What is my job?", ["", "  ", "?"]) == NamedQuery("What is my job?")


def test_the_replacement_words_can_be_chosen() -> None:
    found = name_speakers("Is Dmitri's cat Dmitri's?", SPEAKERS, plain="", possessive="")
    assert found == NamedQuery("Is cat ?", frozenset({"Dmitri"}))


def _gain(config: HybridConfig, named: frozenset[str] = frozenset({"John"})) -> list[float]:
    said = {
        1: ("John", 0.0, "John: We went to the lake."),
        2: ("Maria", 1.0, "Maria: Sounds awesome, John!"),
        3: ("Maria", 2.0, "Maria: I miss my family."),
        4: ("Maria", 3.0, "Maria: Johnson called about the lease."),
        5: (None, 4.0, "john, are you there?"),
    }
    return named_gain(list(said), said.__getitem__, named, config).tolist()


def test_own_records_gain_named_speaker_and_others_naming_them_named_mention() -> None:
    gains = _gain(HybridConfig(named_speaker=0.1, named_mention=0.05))
    assert gains == pytest.approx([0.1, 0.05, 0.0, 0.0, 0.05])


def test_named_gain_off_or_nobody_named_gains_nothing() -> None:
    assert _gain(HybridConfig(named_speaker=0.1, named_mention=0.0)) == pytest.approx(
        [0.1, 0, 0, 0, 0]
    )
    assert _gain(HybridConfig(), frozenset({"Ana"})) == pytest.approx([0, 0, 0, 0, 0])


def test_named_mention_is_checked_like_the_other_weights() -> None:
    with pytest.raises(InvalidInputError, match="named_mention"):
        HybridConfig(named_mention=1.5)
