"""`agentmem bench locomo --answers` against a scripted OpenAI-protocol server.

The server reads like a tiny model: it answers with the line of its prompt that shares the
most words with the question (nothing when the prompt holds no such line), so what each row
shows the model decides its score. The words of a real model are measured in
``benchmarks/results``, never here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from langchain_agentmem import AgentMemory, AgentMemoryMiddleware
from langchain_agentmem.bench.answer_rows import ANSWER_SYSTEM
from langchain_agentmem.bench.runner import turn_adds
from langchain_agentmem.cli import main
from langchain_agentmem.locomo import load_locomo
from tests.openai_server import ScriptedOpenAIServer, error, message_text

pytestmark = pytest.mark.slow

SESSIONS = [
    ("1:56 pm on 8 May, 2023", ["I adopted a greyhound called Bolt.", "Bolt loves the beach."]),
    ("7:55 pm on 9 June, 2023", ["I started pottery classes on Tuesday.", "Clay is so calming."]),
    ("8:00 pm on 1 July, 2023", ["We moved to Porto last week.", "The river views are lovely."]),
]

QUESTIONS = [
    ("What is {name}'s greyhound called?", "I adopted a greyhound called Bolt.", 4, ["D1:1"]),
    ("Which classes did {name} start?", "I started pottery classes on Tuesday.", 1, ["D2:1"]),
    ("Where did {name} move last week?", "We moved to Porto last week.", 2, ["D3:1"]),
    ("What does {name} find calming?", "Clay is so calming.", 3, ["D2:3"]),
]
"""Question, gold answer (the words of its evidence turn), category, evidence."""


def _sample(sample_id: str, name: str) -> dict[str, Any]:
    conv: dict[str, Any] = {"speaker_a": name, "speaker_b": "Ben"}
    for s, (date, texts) in enumerate(SESSIONS, 1):
        conv[f"session_{s}_date_time"] = date
        turns = []
        for t, text in enumerate(texts, 1):
            turns.append({"speaker": name, "dia_id": f"D{s}:{2 * t - 1}", "text": text})
            turns.append({"speaker": "Ben", "dia_id": f"D{s}:{2 * t}", "text": "Nice!"})
        conv[f"session_{s}"] = turns
    qa = [
        {"question": q.format(name=name), "answer": a, "category": c, "evidence": e}
        for q, a, c, e in QUESTIONS
    ]
    qa.append({"question": "Trick?", "adversarial_answer": "no", "evidence": [], "category": 5})
    return {"sample_id": sample_id, "conversation": conv, "qa": qa}


_WORDS = re.compile(r"[a-z]+")
_STOP = {"what", "is", "which", "did", "does", "ann", "cleo", "s", "where"}


def _reader(body: dict[str, Any]) -> str:
    """The prompt's line sharing the most content words with the question (its quoted
    words when it is a memory line); "Unknown." when none shares one."""
    messages = body["messages"]
    question = message_text(messages[-1])
    asked = set(_WORDS.findall(question.lower())) - _STOP
    lines = [line for m in messages[:-1] for line in message_text(m).splitlines()]
    best, overlap = "", 0
    for line in lines:
        if line.startswith(ANSWER_SYSTEM[:20]):
            continue
        shared = len(asked & set(_WORDS.findall(line.lower())))
        if shared > overlap:
            best, overlap = line, shared
    if not best:
        return "Unknown."
    quoted = re.search(r'"\w+: ([^"]*)"', best) or re.search(r"\w+: (.*)", best)
    return quoted.group(1) if quoted else best


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([_sample("conv-a", "Ann"), _sample("conv-b", "Cleo")]))
    return path


def _run(data: Path, server: ScriptedOpenAIServer, out: Path, *extra: str) -> dict[str, Any]:
    argv = ["bench", "locomo", "--data", str(data), "--out", str(out), "--no-progress"]
    argv += ["--answers", "--model-url", server.url, "--model", "scripted"]
    argv += ["--cache", str(out.parent / "cache.jsonl"), *extra]
    assert main(argv) == 0
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def _asked(server: ScriptedOpenAIServer) -> list[dict[str, Any]]:
    return [
        r for r in server.requests if "Reply with one word" not in message_text(r["messages"][-1])
    ]


def test_every_row_answers_every_question_and_is_scored(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ScriptedOpenAIServer(default=_reader) as server:
        result = _run(data, server, tmp_path / "r.json", "--context-tokens", "4000")
    answers = result["answers"]
    assert list(answers) == [
        "no-memory",
        "seed-faiss-l2",
        "agentmem-hybrid",
        "agentmem-hybrid+today",
        "full-context",
    ]
    for row in answers.values():
        assert row["n"] == 8  # four questions of categories 1-4, two conversations
        assert set(row["by_category"]) == {"1", "2", "3", "4"}
        assert all(row["by_category"][c]["n"] == 2 for c in "1234")
        assert {"f1", "bleu1", "contains", "judge", "prompt_tokens"} <= set(row)
        assert row["judge"] is None  # no judge asked
    assert len(server.requests) == 5 * 8  # category 5 is not asked
    told = [message_text(r["messages"][0]) for r in server.requests]
    # The +today row, and it alone, tells the day of the last session (1 July 2023).
    assert sum("Today is Saturday, 1 July 2023." in text for text in told) == 8
    assert answers["no-memory"]["f1"] == 0.0
    assert answers["agentmem-hybrid"]["f1"] > 0.9  # the evidence is in the block
    assert answers["full-context"]["f1"] > 0.9
    assert answers["full-context"]["turns_cut"] == 0
    assert answers["agentmem-hybrid"]["evidence_recall"] == 1.0
    assert result["answers_setup"]["category_5_not_asked"] == 2
    assert result["answers_setup"]["model"] == "scripted"
    assert "retrieval" in result  # the recall bench ran beside it
    table = capsys.readouterr().out
    assert "answers by scripted" in table and "agentmem-hybrid" in table


def test_the_block_is_the_one_the_middleware_sends(data: Path, tmp_path: Path) -> None:
    """The agentmem-hybrid row's request is the request an application's agent sends."""
    with ScriptedOpenAIServer(default=_reader) as server:
        _run(data, server, tmp_path / "r.json", "--questions", "1")
        bench_prompts = [r["messages"] for r in _asked(server)]
        conv = load_locomo(data)[0][0]
        with AgentMemory(f"sqlite:///{tmp_path / 'app.db'}") as memory:
            for add in turn_adds(conv, "locomo-conv-a"):
                memory.add(**add)
            model = ChatOpenAI(model="scripted", base_url=server.url, api_key="k", temperature=0)
            agent = create_agent(
                model,
                system_prompt=ANSWER_SYSTEM,
                middleware=[AgentMemoryMiddleware(memory, remember=False)],
            )
            hybrid = bench_prompts[2]  # conv-a: no-memory, seed-faiss-l2, agentmem-hybrid, ...
            assert "<recalled_memories>" in message_text(hybrid[0])
            question = message_text(hybrid[-1])
            agent.invoke(
                {"messages": [HumanMessage(question)]},
                {"configurable": {"user_id": "locomo-conv-a"}},
            )
        app = server.requests[-1]["messages"]
    assert app == hybrid


def test_a_rerun_asks_nothing_and_an_interrupted_run_resumes(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    down = [error(500, "down")] * 3  # the request and the client's two retries
    with ScriptedOpenAIServer(*[_reader] * 5, *down, default=_reader) as server:
        argv = ["bench", "locomo", "--data", str(data), "--out", str(out), "--no-progress"]
        argv += ["--answers", "--model-url", server.url, "--model", "scripted"]
        argv += ["--cache", str(tmp_path / "cache.jsonl")]
        assert main(argv) == 1  # the server went down mid-run
        assert not out.exists()
        first = _run(data, server, out)
        assert len(server.requests) == 5 + 3 + (5 * 8 - 5)  # the five kept are not asked again
        _run(data, server, out)
        assert len(server.requests) == 5 + 3 + (5 * 8 - 5)  # nothing new to ask
    assert json.loads(out.read_text())["answers"] == first["answers"]


def test_full_context_is_cut_from_the_oldest_end(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ScriptedOpenAIServer(default=_reader) as server:
        result = _run(
            data, server, tmp_path / "r.json", "--context-tokens", "300", "--questions", "1"
        )
        full = [
            message_text(r["messages"][0])
            for r in server.requests
            if "<conversation>" in message_text(r["messages"][0])
        ]
    row = result["answers"]["full-context"]
    assert row["turns_cut"] > 0 and row["turns"] == 24
    said = f"full-context: {row['turns_cut']} of 24 turns cut from the oldest end to fit 300 tokens"
    assert said in capsys.readouterr().out
    assert all("greyhound" not in text and "river views" in text for text in full)


def test_a_judge_is_asked_about_each_answer(data: Path, tmp_path: Path) -> None:
    def judge_or_read(body: dict[str, Any]) -> str:
        prompt = message_text(body["messages"][-1])
        if "Reply with one word" in prompt:
            return "CORRECT" if "Generated answer: Unknown." not in prompt else "WRONG"
        return _reader(body)

    with ScriptedOpenAIServer(default=judge_or_read) as server:
        result = _run(
            data, server, tmp_path / "r.json", "--judge-model", "judge", "--questions", "2"
        )
    answers = result["answers"]
    assert answers["no-memory"]["judge"] == 0.0
    assert answers["agentmem-hybrid"]["judge"] == 1.0
    assert result["answers_setup"]["judge_prompt"].startswith("Your task is to label")


def test_policies_under_a_budget_are_rows(data: Path, tmp_path: Path) -> None:
    with ScriptedOpenAIServer(default=_reader) as server:
        result = _run(data, server, tmp_path / "r.json", "--budget", "0.25", "--questions", "2")
    names = list(result["answers"])
    assert "learned@0.25" in names and "fifo@0.25" in names
    fifo = result["answers"]["fifo@0.25"]
    assert fifo["n"] == 4 and fifo["shown"] <= 6  # a quarter of 12 turns is 3 kept
    # fifo keeps the newest turns: the first session's dog is gone, the move is kept
    assert fifo["evidence_recall"] < result["answers"]["agentmem-hybrid"]["evidence_recall"]


def test_answer_flags_need_answers_and_a_model(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base = ["bench", "locomo", "--data", str(data), "--out", str(tmp_path / "r.json")]
    assert main([*base, "--judge-model", "j"]) == 2
    assert "--judge-model goes with --answers" in capsys.readouterr().err
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no .env here
    assert main([*base, "--answers", "--no-progress"]) == 1
    assert "pass --model-url" in capsys.readouterr().err
