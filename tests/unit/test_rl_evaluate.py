"""Side-by-side replay of policies over conversations, and its scores."""

from __future__ import annotations

import numpy as np
import pytest

from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.policies import make_policy
from langchain_agentmem.rl.budget import capacity_for
from langchain_agentmem.rl.data import Conversation, Question, Turn
from langchain_agentmem.rl.evaluate import (
    evaluate,
    heuristic_factories,
    oracle_kept,
    per_question,
    replay,
)
from langchain_agentmem.rl.retrieval import hybrid_orders
from tests.unit.test_rl_env import toy_conversation


def test_capacity_follows_the_budget() -> None:
    assert capacity_for(0.1, 419) == 42
    assert capacity_for(0.001, 10) == 1
    with pytest.raises(InvalidInputError, match="budget"):
        capacity_for(0.0, 10)


def test_fifo_replay_keeps_the_newest_turns() -> None:
    conv = toy_conversation(0, n=30)
    out = replay(make_policy("fifo", 5), conv)
    assert out.kept.tolist() == [25, 26, 27, 28, 29]
    assert out.ops["ADD"] == 30 and out.ops["DELETE"] == 25
    assert len(out.decide_ns) == 30


def test_novelty_updates_in_replay_count_as_the_newer_turn() -> None:
    conv = toy_conversation(1, n=20)
    v3 = conv.turn_vectors[3]
    u = conv.turn_vectors[15] - (conv.turn_vectors[15] @ v3) * v3
    u /= np.linalg.norm(u)
    conv.turn_vectors[10] = 0.9 * v3 + np.sqrt(1 - 0.81) * u  # restates turn 3 (cosine 0.9)
    conv.turn_vectors[12] = conv.turn_vectors[10].copy()  # repeats it: a copy
    out = replay(make_policy("novelty", 20), conv)
    assert out.ops["UPDATE"] == 1 and out.ops["NOOP"] >= 1
    assert 10 in out.kept.tolist() and 3 not in out.kept.tolist()


def test_table_has_every_policy_budget_and_the_oracle_on_top() -> None:
    convs = [toy_conversation(s, n=40) for s in range(2)]
    table = evaluate(heuristic_factories(["fifo", "importance"]), convs, [0.1, 0.25])
    assert set(table) == {"0.1", "0.25"}
    for rows in table.values():
        oracle = rows["oracle (knows the evidence)"]
        for name in ("fifo", "importance"):
            assert 0.0 <= rows[name]["recall@10"] <= 1.0
            assert rows[name]["retained"] <= oracle["retained"] + 1e-9
            assert rows[name]["decide_p95_us"] > 0
            assert "dense/recall@10" in rows[name]
            assert "recall@10/cat1" in rows[name]


def _keyword_or_meaning(n: int = 20, n_questions: int = 8, meant: int = 3) -> Conversation:
    """Each question points (by embedding) at one turn and names (by word) another.

    The first ``meant`` questions have the turn they point at as evidence, the rest the
    turn they name: cosine search finds the first ones, BM25-weighted hybrid the rest.
    """
    rng = np.random.default_rng(7)
    turns = [Turn(f"D{i + 1}:1", "A", f"A: tok{i}", i + 1, False, 86_400.0 * i) for i in range(n)]
    vec = rng.normal(size=(n, 64)).astype(np.float32)
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)
    questions, qvec = [], []
    for j in range(n_questions):
        pointed, named = 2 * j, 2 * j + 1
        evidence = pointed if j < meant else named
        questions.append(Question(f"tok{named}", 1, (evidence,)))
        q = vec[pointed] + 0.1 * rng.normal(size=64).astype(np.float32)
        qvec.append(q / np.linalg.norm(q))
    return Conversation("keyword-or-meaning", turns, questions, vec, np.stack(qvec))


def test_dense_is_cosine_only_and_hybrid_is_the_shipped_search() -> None:
    conv = _keyword_or_meaning()
    kept = np.arange(len(conv.turns))
    dense = per_question(conv, kept, k=1, retrieval="dense")
    hybrid = per_question(conv, kept, k=1, retrieval="hybrid")
    assert [r[1] for r in dense] == [1.0] * 3 + [0.0] * 5
    assert [r[1] for r in hybrid] == [0.0] * 3 + [1.0] * 5
    # Each equals its ranking computed on its own: cosine alone, and the search
    # AgentMemory runs (hybrid_orders; checked against AgentMemory.search elsewhere).
    sims = conv.question_vectors @ conv.turn_vectors.T
    cosine_top = np.argmax(sims, axis=1).tolist()
    searched = hybrid_orders(conv, kept, 1)
    for qi, q in enumerate(conv.questions):
        assert dense[qi][1] == float(cosine_top[qi] in q.evidence)
        assert hybrid[qi][1] == float(searched[qi][0] in q.evidence)
    table = evaluate(heuristic_factories(["fifo"]), [conv], [1.0], k=1, with_oracle=False)
    row = table["1"]["fifo"]
    assert row["dense/recall@1"] == 3 / 8 and row["recall@1"] == 5 / 8
    assert row["dense/retained"] == row["retained"] == 1.0


def test_dense_and_hybrid_agree_when_everything_fits_in_k() -> None:
    conv = toy_conversation(2, n=8)
    kept = np.arange(8)
    dense = per_question(conv, kept, k=10, retrieval="dense")
    hybrid = per_question(conv, kept, k=10, retrieval="hybrid")
    assert [r[1] for r in dense] == [1.0] * len(conv.questions)
    assert [r[1] for r in hybrid] == [1.0] * len(conv.questions)
    assert per_question(conv, [], k=10)[0][1:] == (0.0, 0.0)
    with pytest.raises(InvalidInputError, match="retrieval"):
        per_question(conv, kept, retrieval="sparse")


def test_oracle_keeps_evidence_first() -> None:
    conv = toy_conversation(3, n=40)
    evidence = {e for q in conv.questions for e in q.evidence}
    kept = set(oracle_kept(conv, len(evidence)).tolist())
    assert kept == evidence


def test_replay_offers_each_turn_with_the_question_it_answers() -> None:
    from langchain_agentmem.policies.base import MemoryPolicy
    from langchain_agentmem.policies.features import TEXT_FEATURES
    from langchain_agentmem.rl.env import item_features

    turns = [
        Turn("D1:1", "A", "A: What did you paint last weekend?", 1, False, 0.0),
        Turn("D1:2", "B", "B: A sunrise over the lake!", 1, False, 60.0),
        Turn("D1:3", "B", "B: It took me two days.", 1, False, 120.0),
        Turn("D2:1", "A", "A: Did you go?", 2, False, 180.0),
        Turn("D2:2", "A", "A: I went to Rome.", 2, True, 240.0),
    ]
    vec = np.eye(5, 8, dtype=np.float32)
    conv = Conversation("c", turns, [], vec, np.zeros((0, 8), np.float32))
    seen: list[dict[str, object]] = []

    class Spy(MemoryPolicy):
        name = "spy"

        def decide(self, candidate, state):  # type: ignore[no-untyped-def]
            seen.append(dict(candidate.metadata))
            return [self.add_op(candidate, "spy")]

    replay(Spy(10), conv)
    assert seen == [
        {},
        {"reply_to": "A: What did you paint last weekend?"},
        {},  # the turn before is its own speaker's
        {},
        {"image": True},  # the same speaker asked: no reply
    ]
    # The training environment reads the same metadata as the replay.
    answers = item_features(conv)[:, TEXT_FEATURES.index("answers")]
    assert answers.tolist() == [0.0, 1.0, 0.0, 0.0, 0.0]
