"""The LoCoMo loader and retrieval measures, on small hand-made data."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from langchain_agentmem import InvalidInputError
from langchain_agentmem.bench import hit_at_k, load_locomo, recall_at_k, repair_evidence, turn_text
from langchain_agentmem.bench.summary import format_summary
from langchain_agentmem.locomo import parse_date

SAMPLE = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ann",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I got a puppy!"},
            {
                "speaker": "Ben",
                "dia_id": "D1:2",
                "text": "Look at mine.",
                "blip_caption": "a photo of a beagle",
                "img_url": ["x"],
            },
        ],
        "session_2_date_time": "7:55 pm on 9 June, 2023",
        "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "Puppy school starts."}],
        "session_3_date_time": "8:00 pm on 1 July, 2023",
    },
    "qa": [
        {"question": "What pet?", "answer": "puppy", "evidence": ["D1:1"], "category": 4},
        {"question": "When?", "answer": "June", "evidence": ["D1:1; D2:1"], "category": 2},
        {"question": "Which?", "answer": "b", "evidence": ["D:1:2", "D9:9"], "category": 1},
        {"question": "Odd?", "answer": "x", "evidence": ["D02:01 D1:1"], "category": 3},
        {"question": "Fake?", "adversarial_answer": "no", "evidence": [], "category": 5},
    ],
}


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([SAMPLE]))
    return path


def test_repair_evidence() -> None:
    assert repair_evidence("D8:6; D9:17") == ["D8:6", "D9:17"]
    assert repair_evidence("D:11:26") == ["D11:26"]
    assert repair_evidence("D30:05") == ["D30:5"]
    assert repair_evidence("D1:2 D1:3") == ["D1:2", "D1:3"]
    assert repair_evidence("D") == []


def test_load_repairs_drops_and_reports(data_file: Path) -> None:
    (conv,), report = load_locomo(data_file)
    assert [t.dia_id for t in conv.turns] == ["D1:1", "D1:2", "D2:1"]
    assert conv.turns[1].caption == "a photo of a beagle"
    assert conv.turns[0].date == datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    assert [q.evidence for q in conv.questions] == [
        ("D1:1",),
        ("D1:1", "D2:1"),
        ("D1:2",),
        ("D2:1", "D1:1"),
    ]
    assert [q.category for q in conv.questions] == [4, 2, 1, 3]
    assert report.skipped_category_5 == 1
    assert report.dropped == ["conv-x D9:9"]
    assert len(report.repaired) == 3
    assert any("D9:9" in line for line in report.lines())


def test_turn_text_carries_speaker_and_caption(data_file: Path) -> None:
    (conv,), _ = load_locomo(data_file)
    assert turn_text(conv.turns[0]) == "Ann: I got a puppy!"
    assert "a photo of a beagle" in turn_text(conv.turns[1])


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="does not exist"):
        load_locomo(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InvalidInputError, match="not a JSON file"):
        load_locomo(bad)
    bad.write_text(json.dumps({"a": 1}))
    with pytest.raises(InvalidInputError, match="not LoCoMo data"):
        load_locomo(bad)


def test_parse_date() -> None:
    assert parse_date("10:37 am on 27 June, 2023") == datetime(
        2023, 6, 27, 10, 37, tzinfo=timezone.utc
    )
    assert parse_date("sometime") is None


def test_recall_and_hit() -> None:
    got = ["a", "b", "c", "d"]
    assert recall_at_k(got, ["a", "d"], 1) == 0.5
    assert recall_at_k(got, ["a", "d"], 4) == 1.0
    assert recall_at_k(got, ["z"], 4) == 0.0
    assert hit_at_k(got, ["z", "c"], 3) == 1.0
    assert hit_at_k(got, ["z", "c"], 2) == 0.0
    with pytest.raises(ValueError, match="without evidence"):
        recall_at_k(got, [], 3)


def test_format_summary_lists_every_method() -> None:
    cats = {c: {"recall@1": 0.1, "hit@1": 0.2, "questions": 1} for c in ("a", "b")}
    result = {
        "ks": [1],
        "retrieval": {
            "m1": {"recall@1": 0.25, "hit@1": 0.5, "categories": cats},
            "m2": {"recall@1": 0.75, "hit@1": 1.0, "categories": cats},
        },
        "timing": {
            "add_p50_ms": 1.0,
            "add_p95_ms": 2.0,
            "bare_embed_p50_ms": 1.0,
            "add_p50_over_bare_embed_p50": 1.0,
            "ingest_turns_per_s": 10,
            "bare_embed_turns_per_s": 12,
            "bare_embed_plus_faiss_p50_ms": 1.0,
            "bare_embed_plus_faiss_p95_ms": 2.0,
            "search": {
                "hybrid": {"p50_ms": 1, "p95_ms": 2, "p50_over_bare": 1, "p95_over_bare": 1}
            },
        },
    }
    text = format_summary(result)
    assert "m1" in text and "0.750" in text and "hybrid" in text


def test_bench_command_end_to_end(data_file: Path, tmp_path: Path) -> None:
    from langchain_agentmem.cli import main

    out, plot = tmp_path / "r" / "out.json", tmp_path / "r.png"
    args = ["bench", "locomo", "--data", str(data_file), "--out", str(out), "--k", "1,2"]
    assert main([*args, "--plot", str(plot), "--no-progress"]) == 0
    result = json.loads(out.read_text())
    assert result["ks"] == [1, 2] and result["questions"] == 4 and result["turns"] == 3
    methods = result["retrieval"]
    assert {"agentmem-hybrid", "agentmem-dense", "agentmem-lexical", "window-50"} <= set(methods)
    assert {"seed-faiss-l2", "bm25-plain"} <= set(methods)
    # Three turns only: the window holds every one of them, at any k.
    assert methods["window-50"]["recall@1"] == 1.0
    for scores in methods.values():
        assert 0.0 <= scores["recall@1"] <= scores["recall@2"] <= 1.0
        assert set(scores["categories"]) == {"multi-hop", "temporal", "open-domain", "single-hop"}
    assert result["timing"]["search"]["hybrid"]["p95_ms"] > 0
    assert plot.stat().st_size > 1000


def test_bench_command_budget_compares_policies(data_file: Path, tmp_path: Path) -> None:
    from langchain_agentmem.cli import main
    from langchain_agentmem.policies import available_policies

    out, plot = tmp_path / "out.json", tmp_path / "budget.png"
    args = ["bench", "locomo", "--data", str(data_file), "--out", str(out), "--no-progress"]
    assert main([*args, "--budget", "0.5,1", "--budget-plot", str(plot)]) == 0
    result = json.loads(out.read_text())
    assert set(result["budget"]) == {"0.5", "1"}
    for rows in result["budget"].values():
        assert set(available_policies()) - {"keep_all"} <= set(rows)
        for scores in rows.values():
            assert 0.0 <= scores["recall@10"] <= 1.0
    assert plot.stat().st_size > 1000


def test_bench_command_bad_budget(data_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from langchain_agentmem.cli import main

    args = ["bench", "locomo", "--data", str(data_file), "--out", "x.json", "--budget", "1.5"]
    assert main(args) == 2 and "budget" in capsys.readouterr().err


def test_bench_command_bad_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from langchain_agentmem.cli import main

    code = main(["bench", "locomo", "--data", str(tmp_path / "no.json"), "--out", "x.json"])
    assert code == 1 and "does not exist" in capsys.readouterr().err
