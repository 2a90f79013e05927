"""The LongMemEval loader, question draws, haystacks and what counts as declining."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from langchain_agentmem import InvalidInputError
from langchain_agentmem.bench.longmemeval import (
    ABSTENTION,
    Session,
    Turn,
    haystacks,
    load_longmemeval,
    parse_date,
    pick_questions,
)
from langchain_agentmem.bench.longmemeval_answers import declines
from langchain_agentmem.bench.longmemeval_runner import exchanges, update_evidence


def item(qid: str, qtype: str, date: str, sessions: list[tuple[str, str, list[Any]]]) -> dict:
    """A LongMemEval question; each session ``(id, date, [(role, text, has_answer)])``."""
    return {
        "question_id": qid,
        "question_type": qtype,
        "question": f"question {qid}?",
        "answer": 3 if qtype == "multi-session" else f"answer {qid}",
        "question_date": date,
        "haystack_session_ids": [s[0] for s in sessions],
        "haystack_dates": [s[1] for s in sessions],
        "haystack_sessions": [
            [{"role": r, "content": t, "has_answer": h} for r, t, h in s[2]] for s in sessions
        ],
        "answer_session_ids": [s[0] for s in sessions if any(h for _, _, h in s[2])],
    }


CHAT = [("user", "I bought a car.", True), ("assistant", "Congratulations!", False)]
DATA = [
    item(
        "q1",
        "single-session-user",
        "2023/05/30 (Tue) 10:00",
        [("s1", "2023/05/20 (Sat) 09:00", CHAT)],
    ),
    item(
        "q2",
        "knowledge-update",
        "2023/06/30 (Fri) 10:00",
        [
            ("s2", "2023/06/01 (Thu) 09:00", [("user", "I run 5 km.", True)]),
            ("s3", "2023/06/20 (Tue) 09:00", [("user", "Now I run 10 km.", True)]),
        ],
    ),
    item(
        "q3_abs",
        "multi-session",
        "2023/05/01 (Mon) 10:00",
        [("s1", "2023/04/01 (Sat) 09:00", CHAT)],
    ),
    item(
        "q4",
        "single-session-assistant",
        "2023/07/30 (Sun) 10:00",
        [("s4", "2023/07/02 (Sun) 09:00", [("assistant", "Hello.", False), *CHAT])],
    ),
]


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(DATA))
    return path


def test_load_names_turns_by_their_question(data_file: Path) -> None:
    questions = load_longmemeval(data_file)
    q1, q2, q3, q4 = questions
    assert q1.evidence == ("q1/s1:0",) and q1.answer_sessions == ("q1/s1",)
    assert q1.date == datetime(2023, 5, 30, 10, tzinfo=timezone.utc)
    assert q3.sessions[0].key == "q3_abs/s1"  # the same session id, another question's copy
    assert q3.abstention and q3.group == ABSTENTION and not q1.abstention
    assert q3.answer == "3"  # an integer answer, compared as text
    assert [t.role for t in q4.sessions[0].turns] == ["assistant", "user", "assistant"]
    assert update_evidence(haystacks([q2], questions, distractors=0)[0]) == (
        ["q2/s3:0"],
        ["q2/s2:0"],
    )


def test_bad_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="does not exist"):
        load_longmemeval(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(InvalidInputError, match="not a JSON file"):
        load_longmemeval(bad)
    bad.write_text(json.dumps([{"question_id": "x"}]))
    with pytest.raises(InvalidInputError, match="expected LongMemEval questions"):
        load_longmemeval(bad)
    wrong = dict(DATA[0], question_type="chit-chat")
    bad.write_text(json.dumps([wrong]))
    with pytest.raises(InvalidInputError, match="has type 'chit-chat'"):
        load_longmemeval(bad)
    with pytest.raises(InvalidInputError, match="not a LongMemEval date"):
        parse_date("30 May 2023")


def test_haystacks_draw_earlier_sessions_of_other_questions(data_file: Path) -> None:
    questions = load_longmemeval(data_file)
    stacks = haystacks(questions, questions, distractors=2, seed=7)
    assert stacks == haystacks(questions, questions, distractors=2, seed=7)  # seeded
    for stack in stacks:
        own = {s.id for s in stack.question.sessions}
        drawn = [s for s in stack.sessions if s not in stack.question.sessions]
        assert len(drawn) == stack.distractors <= 2
        assert all(s.id not in own and s.date <= stack.question.date for s in drawn)
        assert [s.date for s in stack.sessions] == sorted(s.date for s in stack.sessions)
    earliest = next(s for s in stacks if s.question.id == "q3_abs")
    assert earliest.distractors == 0  # nothing was said before it


def test_a_draw_keeps_each_groups_share_and_grows_by_adding(tmp_path: Path) -> None:
    many = [
        item(
            f"{t[:3]}{i}",
            t,
            "2023/05/30 (Tue) 10:00",
            [(f"s{t}{i}", "2023/05/01 (Mon) 09:00", CHAT)],
        )
        for t, n in (("temporal-reasoning", 30), ("multi-session", 20), ("knowledge-update", 10))
        for i in range(n)
    ]
    path = tmp_path / "many.json"
    path.write_text(json.dumps(many))
    questions = load_longmemeval(path)
    small, large = pick_questions(questions, 6), pick_questions(questions, 30)
    assert Counter(q.type for q in small) == {
        "temporal-reasoning": 3,
        "multi-session": 2,
        "knowledge-update": 1,
    }
    assert {q.id for q in small} < {q.id for q in large}
    assert pick_questions(questions, None) == questions


def test_exchanges_pair_each_message_with_its_replies() -> None:
    turns = [("assistant", "Hi."), ("user", "A?"), ("assistant", "B."), ("user", "C?")]
    session = Session(
        "q/s",
        "s",
        datetime(2023, 1, 1, tzinfo=timezone.utc),
        tuple(Turn(f"q/s:{i}", r, t) for i, (r, t) in enumerate(turns)),
    )
    grouped = [[(i, m.type, m.text) for i, m in group] for group in exchanges(session)]
    assert grouped == [
        [("q/s:0", "ai", "Hi.")],
        [("q/s:1", "human", "A?"), ("q/s:2", "ai", "B.")],
        [("q/s:3", "human", "C?")],
    ]


@pytest.mark.parametrize(
    "answer",
    [
        "I don't know.",
        "You never mentioned an iPad case.",
        "There is no information about that.",
        "That was not mentioned.",
        "You did not tell me when you bought it.",
        "I cannot tell from what I remember.",
    ],
)
def test_declining_answers(answer: str) -> None:
    assert declines(answer)


@pytest.mark.parametrize(
    "answer", ["Three times a week.", "The GPS was not working.", "You bought it in May.", "4"]
)
def test_answers_that_do_not_decline(answer: str) -> None:
    assert not declines(answer)


def test_an_update_answer_naming_the_earlier_value(data_file: Path) -> None:
    from langchain_agentmem.bench.longmemeval_answers import names_other_value, numbers

    runs = next(q for q in load_longmemeval(data_file) if q.id == "q2")
    runs = replace(runs, answer="10 km")  # the latest of "I run 5 km." and "Now I run 10 km."
    assert numbers("I ran four times, 5.5 km, then 12") == {"4", "5.5", "12"}
    assert names_other_value(runs, "You run 5 km.") is True
    assert names_other_value(runs, "Ten km now.") is False
    assert names_other_value(runs, "I don't know.") is False
    assert names_other_value(replace(runs, answer="a lot"), "5 km") is None  # no number
    other = next(q for q in load_longmemeval(data_file) if q.id == "q1")
    assert names_other_value(other, "5") is None  # not an update


def test_number_words_answer_as_digits() -> None:
    from langchain_agentmem.bench.longmemeval_answers import digits

    assert digits("Two of them, nine months; Ten") == "2 of them, 9 months; 10"
    assert digits("someone at Nineteen Bridges") == "someone at 19 Bridges"
