"""`agentmem bench longmemeval`: haystacks stored as an application stores them, recall per
question type, and answers from a scripted OpenAI-protocol server.

The server answers with the memory line (or transcript line) of its prompt that shares the
most words with the question, or "I don't know." when none does: what each row shows decides
its score. A real model's words are measured in ``benchmarks/results``, never here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from langchain_agentmem.cli import main
from tests.openai_server import ScriptedOpenAIServer, message_text

pytestmark = pytest.mark.slow

ADVICE = (
    "Here are some ideas for your trip. First, visit the old town in the morning. Second, "
    "try the seafood market near the harbour. Third, take the cable car at sunset."
)


def turns(*said: tuple[str, str, bool]) -> list[dict[str, Any]]:
    return [{"role": r, "content": t, "has_answer": h} for r, t, h in said]


def question(
    qid: str, qtype: str, asked: str, answer: str, date: str, sessions: list[Any]
) -> dict[str, Any]:
    return {
        "question_id": qid,
        "question_type": qtype,
        "question": asked,
        "answer": answer,
        "question_date": date,
        "haystack_session_ids": [s[0] for s in sessions],
        "haystack_dates": [s[1] for s in sessions],
        "haystack_sessions": [s[2] for s in sessions],
        "answer_session_ids": [s[0] for s in sessions if any(t["has_answer"] for t in s[2])],
    }


DATA = [
    question(
        "car",
        "single-session-user",
        "Which colour is my new car?",
        "red",
        "2023/05/30 (Tue) 10:00",
        [
            (
                "s-car",
                "2023/05/08 (Mon) 09:00",
                turns(
                    ("user", "My new car is red and I love it.", True),
                    ("assistant", "A red car! Enjoy the drives.", False),
                ),
            )
        ],
    ),
    question(
        "run",
        "knowledge-update",
        "How far do I run each morning?",
        "10 km",
        "2023/06/30 (Fri) 10:00",
        [
            ("s-run1", "2023/06/01 (Thu) 09:00", turns(("user", "I run 5 km each morning.", True))),
            (
                "s-run2",
                "2023/06/20 (Tue) 09:00",
                turns(("user", "These days I run 10 km each morning.", True)),
            ),
        ],
    ),
    question(
        "trip",
        "single-session-assistant",
        "What did you suggest I take at sunset?",
        "the cable car",
        "2023/07/30 (Sun) 10:00",
        [
            (
                "s-trip",
                "2023/07/02 (Sun) 09:00",
                turns(
                    ("user", "I am going to Lisbon, any ideas?", False), ("assistant", ADVICE, True)
                ),
            )
        ],
    ),
    question(
        "ipad_abs",
        "multi-session",
        "How many days did my iPad case take to arrive?",
        "You did not mention an iPad case.",
        "2023/08/30 (Wed) 10:00",
        [
            (
                "s-garden",
                "2023/08/02 (Wed) 09:00",
                turns(("user", "I planted tomatoes in the garden.", False)),
            )
        ],
    ),
]

_WORDS = re.compile(r"[a-z]+")
_STOP = {"what", "which", "is", "my", "i", "do", "did", "you", "how", "the", "each", "a"}


def _reader(body: dict[str, Any]) -> str:
    messages = body["messages"]
    asked = set(_WORDS.findall(message_text(messages[-1]).lower())) - _STOP
    best, overlap = "", 0
    for line in message_text(messages[0]).splitlines():
        if line.startswith("You are a helpful"):
            continue
        shared = len(asked & set(_WORDS.findall(line.lower())))
        if shared > overlap:
            best, overlap = line, shared
    return best or "I don't know."


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(DATA))
    return path


def _run(data: Path, out: Path, *extra: str) -> dict[str, Any]:
    argv = ["bench", "longmemeval", "--data", str(data), "--out", str(out), "--no-progress"]
    assert main([*argv, "--distractors", "2", "--k", "1,2,5", *extra]) == 0
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def test_recall_per_type_for_each_thing_kept(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _run(data, tmp_path / "r.json")
    user, both = result["runs"]["user"], result["runs"]["user+assistant"]
    assert user["questions"] == both["questions"] == 3  # the abstention one has no evidence
    assert both["stored"]["assistant_records"] > 0 == user["stored"]["assistant_records"]
    for run in (user, both):
        methods = run["retrieval"]
        assert set(methods) == {
            "agentmem-hybrid",
            "agentmem-dense",
            "agentmem-lexical",
            "seed-faiss-l2",
            "bm25-plain",
        }
        hybrid = methods["agentmem-hybrid"]["types"]
        assert hybrid["single-session-user"]["recall@5"] == 1.0
        assert hybrid["knowledge-update"]["questions"] == 1
        assert run["updates"]["agentmem-hybrid"]["questions"] == 1
    # What the assistant said can only be found where its replies are kept.
    assert user["retrieval"]["agentmem-dense"]["types"]["single-session-assistant"]["recall@5"] == 0
    assert both["retrieval"]["agentmem-dense"]["types"]["single-session-assistant"]["recall@5"] == 1
    assert both["retrieval"]["agentmem-dense"]["session@1"] == 1.0
    ingest = result["ingest"]  # two haystacks stored again, cold
    assert ingest["user+assistant"]["records"] > ingest["user"]["records"] > 0
    assert all(c["store_bytes"] > 0 and c["bare_records_per_s"] > 0 for c in ingest.values())
    table = capsys.readouterr().out
    assert "kept: user (3 questions with evidence" in table and "kept: user+assistant" in table
    assert "keeping the assistant's replies:" in table


def test_answers_per_type_with_the_questions_date_as_today(data: Path, tmp_path: Path) -> None:
    with ScriptedOpenAIServer(default=_reader) as server:
        result = _run(
            data,
            tmp_path / "r.json",
            "--answers-log",
            str(tmp_path / "answers.jsonl"),
            "--answers",
            "--model-url",
            server.url,
            "--model",
            "scripted",
            "--context-tokens",
            "4000",
            "--cache",
            str(tmp_path / "cache.jsonl"),
        )
        prompts = [message_text(r["messages"][0]) for r in server.requests]
    answers = result["runs"]["user"]["answers"]
    assert next(iter(answers)) == "no-memory" and list(answers)[-1] == "full-context"
    assert list(result["runs"]["user+assistant"]["answers"]) == [
        "seed-faiss-l2",
        "agentmem-hybrid",
        "agentmem-hybrid+today",
    ]
    assert {"seed-faiss-l2", "agentmem-hybrid"} <= set(answers)
    hybrid = answers["agentmem-hybrid"]
    assert hybrid["n"] == 4
    assert hybrid["by_type"]["single-session-user"]["contains"] == 1.0  # "red" is in the line
    assert hybrid["by_type"]["abstention"]["f1"] in (0.0, 1.0)  # declined or not
    assert answers["no-memory"]["by_type"]["abstention"]["f1"] == 1.0  # nothing shown
    assert answers["no-memory"]["by_type"]["single-session-user"]["declined"] == 1.0
    # Memories are dated at their sessions' dates; today is the question's, when told.
    assert any('[8 May 2023] user: "My new car is red' in p for p in prompts)
    today = [p for p in prompts if "Today is Tuesday, 30 May 2023." in p]
    assert today and all("2023" in p for p in today)
    assert result["answers_setup"]["model"] == "scripted"
    logged = [json.loads(line) for line in (tmp_path / "answers.jsonl").read_text().splitlines()]
    assert {line["run"] for line in logged} == {"user", "user+assistant"}  # one log, both
    assert len(logged) == 4 * (5 + 3)  # five rows for the first thing kept, three after


def test_answer_rows_pick_the_rows_a_run_answers(data: Path, tmp_path: Path) -> None:
    with ScriptedOpenAIServer(default=_reader) as server:
        result = _run(
            data,
            tmp_path / "r.json",
            "--keep",
            "user+assistant",
            "--ingest-sample",
            "0",
            "--answers",
            "--answer-rows",
            "agentmem-hybrid, agentmem-hybrid+today",
            "--model-url",
            server.url,
            "--model",
            "scripted",
            "--cache",
            str(tmp_path / "cache.jsonl"),
        )
        asked = len(server.requests)
    answers = result["runs"]["user+assistant"]["answers"]
    assert list(answers) == ["agentmem-hybrid", "agentmem-hybrid+today"]
    assert asked == 2 * 4  # two rows, four questions: no other row asked the model


def test_answer_rows_name_only_rows_that_exist(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["bench", "longmemeval", "--data", str(data), "--out", str(tmp_path / "r.json")]
    assert main([*argv, "--answers", "--answer-rows", "agentmem-hybrid,best-row"]) == 2
    err = capsys.readouterr().err
    assert "--answer-rows names no row best-row" in err and "full-context" in err
    assert main([*argv, "--answer-rows", "agentmem-hybrid"]) == 2
    assert "--answer-rows goes with --answers" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()
