"""Reading a model's notes on a statement, and what follows from them (pure functions)."""

from __future__ import annotations

import numpy as np
import pytest

from langchain_agentmem.annotation.annotations import (
    Earlier,
    Notes,
    annotation,
    current_annotation,
    judge_request,
    parse,
    parse_judgement,
    parse_query_labels,
    query_request,
    replaced,
    same_value,
    worth_annotating,
)
from langchain_agentmem.integrations.prompt import format_memories, memory_line
from langchain_agentmem.integrations.recall import current
from langchain_agentmem.ranking.corpus import Indexed
from langchain_agentmem.ranking.stages import Pool, replaced_below, statement_first
from langchain_agentmem.text.replies import MEMORY_SHAPE, question_of
from langchain_agentmem.types import MemoryRecord

PORTO = "I moved to Porto last month."


@pytest.mark.parametrize(
    "answer",
    [
        '{"about": ["home city"], "facts": {"home city": "Porto"}}',
        'Sure! {"about": ["home city"], "facts": {"home city": "Porto"}} Hope it helps.',
        '{"about": ["home city"], "facts": {"home city": "Porto"}',  # stopped before "}"
        '{"about": "home city", "facts": {"home city": "Porto"}}',
    ],
)
def test_an_answer_is_read_however_a_small_model_shapes_it(answer: str) -> None:
    assert parse(answer, PORTO) == Notes(("home city",), {"home city": "Porto"})


@pytest.mark.parametrize(
    "answer", ["", "It is about moving.", "[1, 2]", '{"about": [], "facts": {}}', "{"]
)
def test_an_answer_without_notes_is_none(answer: str) -> None:
    assert parse(answer, PORTO) is None


def test_facts_must_be_part_of_what_was_said() -> None:
    notes = parse(
        '{"about": ["home city"], "facts": {"city": "Paris", "home city": "Porto", '
        '"flag": true, "when": "moved to Porto last month after a long long search"}}',
        "I moved to Porto last month after a long long search for a flat.",
    )
    assert notes == Notes(("home city",), {"home city": "Porto"})
    reaction = parse(
        '{"about": ["friend"], "facts": {"friend": "great to hear!"}', "Great to hear!"
    )
    assert reaction == Notes(("friend",), {})


def test_a_changed_value_replaces_and_a_restated_one_does_not() -> None:
    earlier = [
        Earlier("lyon", {"home city": "Lyon", "diet": "vegetarian"}),
        Earlier("porto-again", {"home city": "porto"}),
        Earlier("dentist", {"dentist": "Dr. Moreau"}),
    ]
    found = replaced({"home city": "Porto"}, earlier, lambda a, b: a == b)
    assert found == [("lyon", "home city: now Porto")]
    assert same_value("Dr. Lindqvist", "Lindqvist") and not same_value("Lyon", "Porto")
    assert replaced({"city": "Porto"}, earlier, lambda a, b: a == b) == []


def test_what_is_sent_to_the_model() -> None:
    assert worth_annotating(PORTO, {"role": "human"})
    assert not worth_annotating("Where do I live?", {"role": "human"})
    assert not worth_annotating("haha ok", None)
    assert not worth_annotating("Thanks, that helps!", None)
    assert not worth_annotating(PORTO, {"role": "ai"})
    note = annotation(Notes(("home city",), {"home city": "Porto"}), "qwen", PORTO)
    assert not worth_annotating(PORTO, {"annotation": note})  # done already
    assert worth_annotating("I moved to Lisbon.", {"annotation": note})  # its text changed
    assert current_annotation({"annotation": note}, "I moved to Lisbon.") == {}


def test_a_replaced_memory_is_marked_earlier_in_the_prompt() -> None:
    lyon = MemoryRecord(id="lyon", namespace="p", text="I live in Lyon.", metadata={})
    note = annotation(Notes(("home city",), {"home city": "Porto"}), "qwen", PORTO, [("lyon", "")])
    porto = MemoryRecord(id="porto", namespace="p", text=PORTO, metadata={"annotation": note})
    block = format_memories([porto, lyon])
    assert '(since replaced): "I live in Lyon."' in block
    assert "(since replaced)" not in format_memories([lyon])


def test_a_question_about_now_drops_only_what_its_successor_outranks() -> None:
    lyon = MemoryRecord(id="lyon", namespace="p", text="I live in Lyon.", metadata={})
    note = annotation(Notes(("home city",), {"home city": "Porto"}), "qwen", PORTO, [("lyon", "")])
    porto = MemoryRecord(id="porto", namespace="p", text=PORTO, metadata={"annotation": note})
    assert [r.id for r in current([porto, lyon], "Where do I live?")] == ["porto"]
    assert [r.id for r in current([porto, lyon], "Where did I live before?")] == ["porto", "lyon"]
    # ranked above its successor: search did not apply the link to this query; both stay
    assert [r.id for r in current([lyon, porto], "Is Lyon nice?")] == ["lyon", "porto"]


def test_a_memory_line_echoed_by_a_model_is_never_what_a_reply_answers() -> None:
    record = MemoryRecord(
        id="x", namespace="p", text="I moved.", metadata={"reply_to": "Where do you live?"}
    )
    line = memory_line(record, "2026-12-18 19:42 UTC")
    assert MEMORY_SHAPE.search(line)
    assert question_of(f"Noted! {line}") == ""
    assert question_of(f"{line}\nAnd who is your dentist now?") == "And who is your dentist now?"
    assert question_of("What did you paint?") == "What did you paint?"
    echoed = (  # a 0.5B model's whole reply to "My new dentist is Dr. Lindqvist."
        '{\n  "date": "2026-12-05 23:45:45 UTC",\n  "who said it": "user: Moved to Porto",\n'
        '  "question": "Where do you live now?",\n  "words": "[2026-12-05 23:45:45 UTC]"\n}'
    )
    assert question_of(echoed) == ""
    assert question_of(f"```json\n{echoed}\n```") == ""
    assert question_of('["Where do you live now?"]') == ""
    assert question_of("{Braces} aside, where do you live now?") != ""


def _corpus() -> Indexed:
    corpus = Indexed()
    corpus.index_text(1, "I live in Lyon.", 1.0, thread="t", speaker="p", record_id="lyon")
    corpus.index_text(
        2, PORTO, 2.0, thread="t", speaker="p", record_id="porto",
        replaces=[("lyon", "home city")],
    )  # fmt: skip
    corpus.index_text(
        3, "I listen to Radiohead now.", 3.0, thread="t", speaker="p", record_id="radiohead",
        replaces=[("porto", "music")],  # a link a small model drew wrong
    )  # fmt: skip
    return corpus


def test_a_replaced_record_goes_below_its_successor_for_its_attribute_only() -> None:
    corpus = _corpus()
    scores = {1: 0.5, 2: 0.3, 3: 0.2}
    placed = replaced_below(scores, corpus, "Where do I live?", 0.3, labels="home city")
    assert max(placed, key=placed.__getitem__) == 2  # Porto, not Radiohead
    assert placed[3] == 0.2
    assert replaced_below(scores, corpus, "Where did I live before?", 0.3, "home city") == scores
    assert replaced_below(scores, corpus, "Where do I live?", 0.3) == scores  # no word shared
    far = {1: 0.5, 2: 0.1, 3: 0.2}  # Porto matches the query too little to pass Lyon
    assert replaced_below(far, corpus, "Where do I live?", 0.3, "home city") == far
    corpus.unindex_text(2)
    assert corpus.successors(1) == []


def test_a_question_never_ranks_first_ahead_of_a_statement_that_shares_a_word() -> None:
    pool = Pool(keys=[1, 2, 3], cosine=np.zeros(3), bm25=np.array([0.5, 0.2, 0.0]), near={})
    scores = {1: 0.6, 2: 0.3, 3: 0.4}
    placed = statement_first(scores, {1}, pool)
    assert max(placed, key=placed.__getitem__) == 2  # shares a word; 3 does not
    assert statement_first({1: 0.6, 3: 0.4}, {1}, pool) == {1: 0.6, 3: 0.4}


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        ('{"replaced": true}', True),
        ('{"replaced": false}', False),
        ('Sure! {"replaced": "True"', True),  # text around it, the last brace missing
        ('{"replaced": "maybe"}', None),
        ("yes", None),
        ("", None),
    ],
)
def test_a_judgement_is_read_or_refused(answer: str, verdict: bool | None) -> None:
    assert parse_judgement(answer) is verdict


def test_a_judging_request_quotes_both_statements() -> None:
    said = 'She said "call me" twice.'
    messages = judge_request("I live in Lyon.", said)
    assert messages[0]["role"] == "system" and len(messages) == 2 + 2 * 4
    assert messages[-1] == {
        "role": "user",
        "content": 'Earlier: "I live in Lyon."\nLater: "She said \\"call me\\" twice."',
    }


def test_a_query_is_labelled_with_examples_and_its_labels_cleaned() -> None:
    messages = query_request("How do I get to work?")
    assert messages[0]["role"] == "system" and messages[-1]["content"] == "How do I get to work?"
    assert parse_query_labels('{"about": ["Commute", "commute", " transport.", 3]') == (
        "commute",
        "transport",
        "3",
    )
    assert parse_query_labels('{"about": "work"}') == ("work",)
    assert parse_query_labels("no idea") == ()


def test_a_reason_of_an_older_release_loses_the_forgotten_words() -> None:
    from langchain_agentmem.annotation.annotations import reason_without

    reason = "m noted what it is about: bank pin; it replaces r1 (bank pin: 4711 -> 9999); r2 (x)"
    assert reason_without(reason, "r1") == (
        "m noted what it is about: bank pin; it replaces r1 (bank pin); r2 (x)"
    )
    assert reason_without(reason, "r3") == reason
