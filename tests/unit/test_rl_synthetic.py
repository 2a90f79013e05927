"""Synthetic conversations where facts change, and the fact-change measurement."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from langchain_agentmem.embedding.embeddings import SentenceTransformerEmbeddings
from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.locomo import load_locomo as bench_load
from langchain_agentmem.rl import (
    synthetic,
    synthetic_check_slots,
    synthetic_conversations,
    synthetic_slots,
)
from langchain_agentmem.rl.data import load_locomo as rl_load


def test_seeded_and_deterministic() -> None:
    a = synthetic_conversations.generate(2, seed=7, turns=120)
    assert a == synthetic_conversations.generate(2, seed=7, turns=120)
    assert a != synthetic_conversations.generate(2, seed=8, turns=120)


@pytest.mark.parametrize(
    "slots",
    [
        synthetic_slots.SLOTS,
        synthetic_slots.HELDOUT_SLOTS,
        synthetic_check_slots.CHECK_SLOTS,
        synthetic_check_slots.FRESH_SLOTS,
        synthetic_check_slots.UNSEEN_SLOTS,
    ],
)
def test_locomo_schema_and_evidence(
    tmp_path: Path, slots: tuple[synthetic_slots.Slot, ...]
) -> None:
    data = synthetic_conversations.generate(3, seed=1, turns=150, slots=slots)
    file = synthetic_conversations.write(tmp_path / "facts.json", data)
    reference = json.loads(Path(file).read_text(encoding="utf-8"))
    for sample in reference:
        conv = sample["conversation"]
        sessions = [k for k in conv if re.fullmatch(r"session_\d+", k)]
        assert len(sessions) == 6
        ids = set()
        for key in sessions:
            assert f"{key}_date_time" in conv
            for turn in conv[key]:
                assert set(turn) == {"speaker", "dia_id", "text"}
                assert turn["speaker"] in (conv["speaker_a"], conv["speaker_b"])
                ids.add(turn["dia_id"])
        assert len(ids) == 150
        kinds = [q["fact"]["kind"] for q in sample["qa"]]
        assert "current" in kinds and "before" in kinds
        for q in sample["qa"]:
            assert {"question", "answer", "evidence", "category"} <= set(q)
            assert set(q["evidence"]) <= ids and set(q["fact"]["stale"]) <= ids
            # The evidence states the answer; a current fact's evidence is its latest statement.
            said = {t["dia_id"]: t["text"] for k in sessions for t in conv[k]}
            assert str(q["answer"]) in said[q["evidence"][0]]
            if q["fact"]["kind"] == "current" and q["fact"]["stale"]:
                latest = max(q["fact"]["stale"] + q["evidence"], key=_order)
                assert latest == q["evidence"][0]

    convs, report = bench_load(file)
    assert len(convs) == 3 and not report.dropped and report.no_evidence == 0
    assert all(len(c.turns) == 150 and all(t.date for t in c.turns) for c in convs)
    rl = rl_load(file)
    assert [len(c.questions) for c in rl] == [len(s["qa"]) for s in data]
    assert all(c.dropped_evidence == 0 for c in rl)
    # Dates of sessions move forward.
    for c in convs:
        dates = [t.date for t in c.turns]
        assert dates == sorted(dates)  # type: ignore[type-var]


def _order(dia: str) -> tuple[int, int]:
    s, t = dia[1:].split(":")
    return int(s), int(t)


def test_templates_vary() -> None:
    data = synthetic_conversations.generate(4, seed=3)
    questions = {q["question"].split()[0] for s in data for q in s["qa"]}
    assert len(questions) >= 4
    statements = [q["answer"] for s in data for q in s["qa"]]
    assert len(set(statements)) > 10


@pytest.mark.parametrize("bad", [{"n": 0}, {"turns": 10}, {"turns": 30, "sessions": 6}])
def test_bad_arguments(bad: dict[str, int]) -> None:
    with pytest.raises(InvalidInputError):
        synthetic_conversations.generate(**bad)


def test_measurement_through_agent_memory(
    embeddings: SentenceTransformerEmbeddings, tmp_path: Path
) -> None:
    data = synthetic_conversations.generate(1, seed=2, turns=60, facts=6)
    rows = synthetic.measure_fact_change(
        data, ["keep_all", "fifo", "novelty"], budget=0.2, embeddings=embeddings
    )
    by = {r["policy"]: r for r in rows}
    assert set(by) == {"keep_all", "fifo", "novelty"}
    for r in rows:
        assert 0.0 <= r["recall@1"] <= r["recall@5"] <= 1.0
        assert 0.0 <= r["stale_above"] <= 1.0
        # Every offered turn is decided: ADDed, UPDATEd into a record, or skipped.
        assert r["add"] + r["update"] + r["noop"] == 60
    assert by["keep_all"]["capacity"] == "all" and by["fifo"]["capacity"] == "12"
    assert by["keep_all"]["add"] == 60 and by["keep_all"]["delete"] == 0
    assert by["fifo"]["delete"] == 60 - 12
    # Keeping everything finds the current fact at least as often as keeping a fifth.
    assert by["keep_all"]["recall@5"] >= by["fifo"]["recall@5"]
    assert by["keep_all"]["recall@5"] > 0
    table = synthetic.format_table(rows)
    assert "novelty" in table and "UPDATE" in table
    # A network of one's own runs as "learned": here the shipped one from its folder, and
    # a folder that holds none is a clear error.
    from langchain_agentmem.policies.learned import PolicyFileError, shipped_policy_dir

    mine = synthetic.measure_fact_change(
        data, ["learned"], budget=0.2, embeddings=embeddings, learned_path=shipped_policy_dir()
    )
    shipped = synthetic.measure_fact_change(data, ["learned"], budget=0.2, embeddings=embeddings)
    assert mine == shipped and mine[0]["delete"] > 0
    with pytest.raises(PolicyFileError):
        synthetic.measure_fact_change(
            data, ["learned"], budget=0.2, embeddings=embeddings, learned_path=tmp_path
        )
