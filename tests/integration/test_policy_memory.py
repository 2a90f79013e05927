"""Policies through AgentMemory: real model, real SQLite, the audit log tells why."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from langchain_agentmem import AgentMemory
from langchain_agentmem.errors import InvalidInputError, UnknownPolicyError
from langchain_agentmem.rl.data import load_locomo as rl_load
from langchain_agentmem.types import OpKind

FACTS = [
    "I moved to Lisbon in March 2023 to work for Siemens as an engineer.",
    "My daughter Emma turns 7 on 14 June; we are planning a party at the zoo.",
    "I ran the Boston Marathon in April in 3 hours 41 minutes.",
]
CHATTER = ["haha ok", "cool, thanks!", "you too!", "lol yes"]


def open_memory(path: Path, embeddings: object, policy: str, capacity: int) -> AgentMemory:
    return AgentMemory(f"sqlite:///{path}", embeddings=embeddings, policy=policy, capacity=capacity)  # type: ignore[arg-type]


def test_a_capacity_alone_selects_the_learned_policy(embeddings: object) -> None:
    with AgentMemory("sqlite:///:memory:", embeddings=embeddings, capacity=3) as bounded:  # type: ignore[arg-type]
        assert bounded.policy.name == "learned" and bounded.capacity == 3
    with AgentMemory("sqlite:///:memory:", embeddings=embeddings) as unbounded:  # type: ignore[arg-type]
        assert unbounded.policy.name == "keep_all" and unbounded.capacity is None


@pytest.mark.parametrize("policy", ["importance", "novelty", "learned"])
def test_scoring_policies_keep_facts_over_chatter(
    tmp_path: Path, embeddings: object, policy: str
) -> None:
    with open_memory(tmp_path / "m.db", embeddings, policy, 3) as mem:
        for text in [CHATTER[0], FACTS[0], CHATTER[1], FACTS[1], CHATTER[2], FACTS[2], CHATTER[3]]:
            mem.add(text, namespace="u")
        kept = {r.text for r in mem.records("u")}
        assert kept == set(FACTS)
        log = mem.decisions("u")
        assert {d.kind for d in log} >= {OpKind.ADD, OpKind.DELETE, OpKind.NOOP}
        assert all(d.policy == policy and d.reason for d in log)
        hit = mem.search("Where does the user work?", namespace="u", k=1)
        assert hit[0].text == FACTS[0]


def test_novelty_skips_a_repeat_and_updates_a_restatement(
    tmp_path: Path, embeddings: object
) -> None:
    with open_memory(tmp_path / "m.db", embeddings, "novelty", 10) as mem:
        mem.add("My favourite food is sushi.", namespace="u")
        (op,) = mem.add("My favourite food is sushi.", namespace="u")
        assert op.kind is OpKind.NOOP and "copy" in op.reason
        ops = mem.add("I really love sushi, it is my favourite food.", namespace="u")
        assert [o.kind for o in ops] == [OpKind.UPDATE]
        (rec,) = mem.records("u")
        assert rec.text == "I really love sushi, it is my favourite food."


def test_lru_keeps_what_was_recalled(tmp_path: Path, embeddings: object) -> None:
    with open_memory(tmp_path / "m.db", embeddings, "lru", 3) as mem:
        t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
        for i, text in enumerate(FACTS):
            mem.add(text, namespace="u", timestamp=t0 + timedelta(hours=i))
        (hit,) = mem.search("marathon time", namespace="u", k=1, mode="dense")
        assert hit.text == FACTS[2]
        (first,) = mem.search("Where do I live?", namespace="u", k=1, mode="dense")
        assert first.text == FACTS[0]
        mem.add("I play chess on Sundays.", namespace="u")
        kept = {r.text for r in mem.records("u")}
        assert FACTS[1] not in kept and FACTS[0] in kept


def test_forgetting_curve_forgets_the_stale_unrecalled(tmp_path: Path, embeddings: object) -> None:
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    with open_memory(tmp_path / "m.db", embeddings, "forgetting_curve", 2) as mem:
        mem.add(FACTS[0], namespace="u", timestamp=t0)
        mem.add(FACTS[1], namespace="u", timestamp=t0 + timedelta(days=1))
        for _ in range(3):
            mem.search("Lisbon Siemens engineer", namespace="u", k=1, mode="dense")
        ops = mem.add(FACTS[2], namespace="u", timestamp=t0 + timedelta(days=2))
        assert [o.kind for o in ops] == [OpKind.DELETE, OpKind.ADD]
        assert {r.text for r in mem.records("u")} == {FACTS[0], FACTS[2]}


@pytest.mark.parametrize("policy", ["importance", "learned"])
@pytest.mark.parametrize("change", ["update", "put"])
def test_an_updated_record_is_ranked_by_its_new_text(
    tmp_path: Path, embeddings: object, policy: str, change: str
) -> None:
    """The process that updated a record ranks it as a restarted one does."""

    def offer(restart: bool) -> tuple[list[tuple[OpKind, str]], list[str]]:
        path = tmp_path / f"{restart}.db"
        mem = open_memory(path, embeddings, policy, 2)
        mem.add(FACTS[1], namespace="u", record_id="rec")
        mem.add(FACTS[0], namespace="u")
        ops = mem.add(CHATTER[0], namespace="u")  # a full memory ranks (caches) every record
        assert [op.kind for op in ops] == [OpKind.NOOP]
        if change == "update":
            mem.update("rec", CHATTER[1], namespace="u")
        else:
            mem.put("rec", CHATTER[1], namespace="u")
        if restart:
            mem.close()
            mem = open_memory(path, embeddings, policy, 2)
        with mem:
            ops = mem.add(FACTS[2], namespace="u")
            return [(op.kind, op.reason) for op in ops], sorted(r.text for r in mem.records("u"))

    same = offer(restart=False)
    assert same == offer(restart=True)
    assert same[1] == sorted([FACTS[0], FACTS[2]])  # "rec" now holds chatter: it goes


def test_capacity_holds_across_a_restart(tmp_path: Path, embeddings: object) -> None:
    path = tmp_path / "m.db"
    with open_memory(path, embeddings, "learned", 2) as mem:
        for text in FACTS[:2]:
            mem.add(text, namespace="u")
    with open_memory(path, embeddings, "learned", 2) as mem:
        mem.add(FACTS[2], namespace="u")
        mem.add(CHATTER[0], namespace="u")
        assert len(mem.records("u")) == 2
        assert CHATTER[0] not in {r.text for r in mem.records("u")}


def test_bad_policy_arguments(tmp_path: Path, embeddings: object) -> None:
    with pytest.raises(InvalidInputError, match="capacity must be >= 1"):
        open_memory(tmp_path / "a.db", embeddings, "importance", 0)
    with pytest.raises(UnknownPolicyError, match="forgetting_curve"):
        open_memory(tmp_path / "b.db", embeddings, "clever", 3)


def _locomo_file(path: Path, n_conversations: int = 2) -> Path:
    """A small conversation file in the LoCoMo format (facts among chatter, questions)."""
    samples = []
    for c in range(n_conversations):
        turns = []
        for i in range(24):
            text = FACTS[i % 3] if i % 4 == 0 else CHATTER[i % 4]
            turns.append({"speaker": "A" if i % 2 else "B", "dia_id": f"D1:{i + 1}", "text": text})
        samples.append(
            {
                "sample_id": f"s{c}",
                "conversation": {
                    "speaker_a": "A",
                    "speaker_b": "B",
                    "session_1_date_time": "1:56 pm on 8 May, 2023",
                    "session_1": turns,
                },
                "qa": [
                    {
                        "question": "Where do I work?",
                        "answer": "Siemens",
                        "evidence": ["D1:1"],
                        "category": 4,
                    },
                    {
                        "question": "When is Emma's birthday?",
                        "answer": "14 June",
                        "evidence": ["D1:5"],
                        "category": 2,
                    },
                ],
            }
        )
    import json

    path.write_text(json.dumps(samples))
    return path


@pytest.mark.slow
def test_agentmem_train_writes_a_policy_that_memory_can_use(
    tmp_path: Path, embeddings: object, capsys: pytest.CaptureFixture[str]
) -> None:
    from langchain_agentmem.cli import main
    from langchain_agentmem.policies.learned import LearnedPolicy

    data = _locomo_file(tmp_path / "convs.json")
    out = tmp_path / "policy"
    args = ["train", "--data", str(data), "--out", str(out), "--steps", "1024"]
    assert main([*args, "--budget", "0.25", "--no-progress"]) == 0
    summary = capsys.readouterr().out
    assert '"held_out": [\n    "s1"' in summary
    assert (out / "policy.npz").is_file() and (out / "learning_curve.json").is_file()
    policy = LearnedPolicy(3, path=out)
    assert policy.config["trained_on"] == ["s0"]
    assert policy.config["warm_start"].startswith("actor fitted")
    cold = tmp_path / "cold"
    cold_args = ["train", "--data", str(data), "--out", str(cold), "--steps", "256"]
    assert main([*cold_args, "--no-progress", "--no-warm-start"]) == 0
    assert LearnedPolicy(3, path=cold).config["warm_start"].startswith("none")
    mem = AgentMemory(f"sqlite:///{tmp_path / 'm.db'}", embeddings=embeddings, policy=policy)  # type: ignore[arg-type]
    with mem:
        for text in [*CHATTER, *FACTS]:
            mem.add(text, namespace="u")
        assert len(mem.records("u")) == 3
    capsys.readouterr()

    def refused(argv: list[str], says: str) -> None:  # one line on stderr, no traceback
        assert main(argv) == 1
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert line.startswith("agentmem train: ") and says in line

    refused([*args, "--budget", "1.5"], "budget")
    refused(["train", "--data", str(tmp_path / "none.json"), "--out", str(out)], "does not exist")
    # Synthetic fact-change conversations as extra training, written by the generator's CLI.
    from langchain_agentmem.rl import synthetic

    facts = tmp_path / "facts.json"
    synthetic.main(["--n", "1", "--turns", "48", "--slots", "tuned,heldout", "--write", str(facts)])
    assert [c.sample_id for c in rl_load(facts)] == ["facts-0-0", "facts-1-0"]
    mixed = tmp_path / "mixed"
    mix_args = ["train", "--data", str(data), "--out", str(mixed), "--steps", "256"]
    assert main([*mix_args, "--no-progress", "--extra", str(facts), "--extra-share", "0.3"]) == 0
    config = LearnedPolicy(3, path=mixed).config
    assert config["trained_on"] == ["s0", "facts-0-0", "facts-1-0"]
    assert config["extra_share"] == 0.3 and config["held_out"] == ["s1"]
    assert "extra ones left out" in config["selected_by"]
    capsys.readouterr()
    refused([*mix_args, "--extra-share", "0.3"], "--extra FILE")
    refused([*mix_args, "--extra", str(facts), "--extra-share", "1"], "extra_share must be in")
    refused([*mix_args, "--extra", str(data)], "in both --data and --extra")
