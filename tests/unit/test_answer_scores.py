"""Answer scores as LoCoMo computes them, the answers cache, the judge's verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration

from langchain_agentmem import InvalidInputError
from langchain_agentmem.bench.answer_cache import LATENCY_KEY, AnswerCache
from langchain_agentmem.bench.answer_scores import (
    bleu1,
    contains,
    locomo_f1,
    normalize_answer,
    token_f1,
)
from langchain_agentmem.bench.answers import sample_questions
from langchain_agentmem.bench.judge import verdict
from langchain_agentmem.locomo import Conversation, Question


def test_normalisation_is_locomos() -> None:
    # lower case; commas, punctuation and a/an/the/and gone; single spaces
    assert normalize_answer("The Sunday before 25 May, 2023!") == "sunday before 25 may 2023"
    assert normalize_answer("Pottery and  an Art class") == "pottery art class"


def test_token_f1_stems_and_counts_overlap() -> None:
    assert token_f1("7 May 2023", "7 May 2023") == 1.0
    assert token_f1("2023-05-07", "7 May 2023") == 0.0  # ISO dates share no word
    # "painting" and "paints" share the stem "paint": 1 of 2 words each side
    assert token_f1("painting landscapes", "paints portraits") == pytest.approx(0.5)
    assert token_f1("", "anything") == 0.0


def test_multi_hop_gold_is_split_at_commas() -> None:
    # category 1: each gold part gets the best predicted part
    assert locomo_f1("painting, pottery", "pottery, camping, painting", 1) == pytest.approx(2 / 3)
    # other categories compare the whole strings
    assert locomo_f1("painting, pottery", "pottery, painting", 4) == pytest.approx(1.0)


def test_open_domain_gold_counts_up_to_its_first_semicolon() -> None:
    assert locomo_f1("Likely yes", "Likely yes; she loves it", 3) == 1.0
    assert locomo_f1("Likely yes", "Likely yes; she loves it", 4) < 1.0


def test_bleu1() -> None:
    assert bleu1("7 May 2023", "7 May 2023") == 1.0
    assert bleu1("in May", "7 May 2023") == pytest.approx(0.5 * 2.718281828 ** (1 - 3 / 2))
    assert bleu1("nothing alike", "7 May 2023") == 0.0
    assert bleu1("", "x") == 0.0


def test_contains_is_word_for_word() -> None:
    assert contains("It was on 7 May, 2023.", "7 May 2023", 2)
    assert not contains("17 May 2023", "7 May 2023", 2)
    assert contains("Yes, likely", "Likely; she said so", 3)  # up to the semicolon
    assert not contains("anything", "", 4)


def test_verdicts() -> None:
    assert verdict("CORRECT") is True
    assert verdict("The answer is wrong.") is False
    assert verdict("INCORRECT") is False
    assert verdict("I cannot tell") is None


def test_sample_is_seeded_per_conversation_and_keeps_order() -> None:
    questions = tuple(Question(f"q{i}?", "a", 4, ("D1:1",)) for i in range(20))
    conv = Conversation("conv-x", ("A", "B"), (), questions)
    first = sample_questions(conv, 5)
    assert first == sample_questions(conv, 5)  # every row asks the same
    assert [questions.index(q) for q in first] == sorted(questions.index(q) for q in first)
    other = Conversation("conv-y", ("A", "B"), (), questions)
    assert sample_questions(other, 5) != first
    assert set(sample_questions(conv, 3)) <= set(first)  # fewer: a part of the same
    assert sample_questions(conv, None) == list(questions)
    assert sample_questions(conv, 50) == list(questions)


def _generation(text: str) -> ChatGeneration:
    return ChatGeneration(message=AIMessage(content=text))


def test_cache_keeps_answers_on_disk_with_their_latency(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    cache = AnswerCache(path, scope="http://a/v1")
    assert cache.lookup("prompt", "settings") is None
    cache.update("prompt", "settings", [_generation("Porto")])
    again = AnswerCache(path, scope="http://a/v1")
    found = again.lookup("prompt", "settings")
    assert found is not None and found[0].text == "Porto"
    assert isinstance(found[0], ChatGeneration)
    assert found[0].message.response_metadata[LATENCY_KEY] >= 0
    # another server's answers never mix with these
    assert AnswerCache(path, scope="http://b/v1").lookup("prompt", "settings") is None
    assert "prompt" not in path.read_text()  # the prompt's digest, not its text
    assert path.stat().st_mode & 0o777 == 0o600


def test_cache_survives_a_run_killed_mid_write(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    cache = AnswerCache(path)
    cache.lookup("p", "s")
    cache.update("p", "s", [_generation("kept")])
    with path.open("a") as out:
        out.write('{"key": "abc", "val')  # the last line, cut short
    again = AnswerCache(path)
    assert len(again) == 1
    found = again.lookup("p", "s")
    assert found is not None and found[0].text == "kept"


def test_a_file_that_is_not_a_cache_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("my notes\nmore\n")
    with pytest.raises(InvalidInputError, match="not an answer cache entry"):
        AnswerCache(path)
    assert path.read_text() == "my notes\nmore\n"  # left as it was


def test_cache_loads_answers_only(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    key = AnswerCache(path)._key("p", "s")
    # an entry that would rebuild another class than an answer's is refused
    hostile = {"lc": 1, "type": "constructor", "id": ["langchain", "llms", "openai", "OpenAI"]}
    path.write_text(json.dumps({"key": key, "value": json.dumps([hostile])}) + "\n")
    with pytest.raises(ValueError, match="not allowed"):
        AnswerCache(path).lookup("p", "s")
