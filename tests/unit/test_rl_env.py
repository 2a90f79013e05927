"""The training environment: gymnasium contract, budget, reward = recall at the end."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from stable_baselines3.common.env_checker import check_env

from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.policies.features import N_FEATURES
from langchain_agentmem.rl.data import Conversation, Question, Turn, load_locomo, parse_evidence
from langchain_agentmem.rl.env import MemoryBudgetEnv, prepare, recall_now
from langchain_agentmem.rl.evaluate import recall_scores


def toy_conversation(seed: int = 0, n: int = 40, n_questions: int = 12) -> Conversation:
    """A conversation with random unit vectors: the embedding model is beside the point."""
    rng = np.random.default_rng(seed)
    words = ["I went to Paris on 3 May.", "haha ok", "My dog Rex is 4!", "cool", "We met Anna."]
    turns = [
        Turn(f"D1:{i + 1}", "A", f"A: {words[i % len(words)]}", 1, i % 7 == 0, 60.0 * i)
        for i in range(n)
    ]
    questions = [
        Question(
            f"q{j}", 1 + j % 4, tuple(sorted(rng.choice(n, size=1 + j % 2, replace=False).tolist()))
        )
        for j in range(n_questions)
    ]
    vec = rng.normal(size=(n + n_questions, 16)).astype(np.float32)
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)
    # Each question points at its first evidence turn.
    for j, q in enumerate(questions):
        vec[n + j] = vec[q.evidence[0]] + 0.3 * vec[n + j]
        vec[n + j] /= np.linalg.norm(vec[n + j])
    return Conversation(f"toy-{seed}", turns, questions, vec[:n], vec[n:])


def test_check_env_passes_without_warnings() -> None:
    env = MemoryBudgetEnv([toy_conversation(0), toy_conversation(1)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, warn=True)
    assert [str(w.message) for w in caught] == []
    assert env.observation_space.shape == (N_FEATURES,)


def test_memory_never_exceeds_budget_and_rewards_sum_to_final_recall() -> None:
    conv = toy_conversation(3, n=50)
    env = MemoryBudgetEnv([conv], budgets=(0.1,))
    obs, info = env.reset(seed=1)
    assert info["capacity"] == 5
    rng = np.random.default_rng(0)
    total, done, steps = 0.0, False, 0
    while not done:
        assert env.observation_space.contains(obs)
        obs, reward, done, truncated, info = env.step(rng.uniform(-1, 1, size=1).astype(np.float32))
        assert not truncated
        assert len(env._kept) <= 5
        total += reward
        steps += 1
    assert steps == 50
    kept = sorted(env._kept)
    assert total / env.reward_scale == pytest.approx(info["recall"], abs=1e-5)
    assert info["recall"] == pytest.approx(recall_scores(conv, kept)["recall@10"], abs=1e-5)


def test_high_priority_turns_push_out_low_priority_ones() -> None:
    conv = toy_conversation(4, n=20)
    env = MemoryBudgetEnv([conv], budgets=(0.25,))
    env.reset(seed=0)
    stored = [env._stored_priority(t) for t in range(20)]  # no scorer: the rule's score
    for t in range(20):
        before = list(env._kept)
        _, _, _, _, info = env.step(np.array([1.0 if t % 4 == 0 else -1.0], dtype=np.float32))
        if t < 5:
            assert info["kept"]  # room left
            continue
        # Once full, every turn offered with the high priority gets in, no low one does ...
        assert info["kept"] == (t % 4 == 0)
        if info["kept"]:
            # ... pushing out the kept turn of lowest stored priority (oldest among equals).
            (gone,) = set(before) - set(env._kept)
            assert stored[gone] == min(stored[i] for i in before)
            assert gone == min(i for i in before if stored[i] == stored[gone])
    assert len(env._kept) == 5


def test_recall_now_counts_evidence_in_the_top_k() -> None:
    conv = toy_conversation(5, n=30)
    p = prepare(conv)
    everything = recall_now(p, list(range(30)), k=30)
    assert everything == pytest.approx(1.0)
    assert recall_now(p, [], k=10) == 0.0


def test_bad_env_arguments() -> None:
    with pytest.raises(InvalidInputError, match="budget"):
        MemoryBudgetEnv([toy_conversation()], budgets=(1.5,))
    with pytest.raises(InvalidInputError, match="at least one conversation"):
        MemoryBudgetEnv([])
    with pytest.raises(InvalidInputError, match="not embedded"):
        prepare(Conversation("x", toy_conversation().turns, []))
    for draw in ([1.0], [1.0, -1.0], [0.0, 0.0], [1.0, float("nan")]):
        with pytest.raises(InvalidInputError, match="draw must hold"):
            MemoryBudgetEnv([toy_conversation(0), toy_conversation(1)], draw=draw)


def test_episodes_are_drawn_by_the_given_chances() -> None:
    env = MemoryBudgetEnv([toy_conversation(s) for s in range(3)], draw=[0.0, 3.0, 1.0])
    env.reset(seed=0)
    drawn = [env.reset()[1]["conversation"] for _ in range(400)]
    assert "toy-0" not in drawn
    assert 0.65 < drawn.count("toy-1") / len(drawn) < 0.85


def test_locomo_loader_repairs_evidence_and_skips_adversarial(tmp_path: Path) -> None:
    assert parse_evidence("D8:6; D9:17") == ["D8:6", "D9:17"]
    assert parse_evidence("D:11:26") == ["D11:26"]
    assert parse_evidence("D30:05") == ["D30:5"]
    sample = {
        "sample_id": "s1",
        "conversation": {
            "speaker_a": "A",
            "speaker_b": "B",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "A", "dia_id": "D1:1", "text": "I adopted a cat."},
                {"speaker": "B", "dia_id": "D1:2", "text": "Look!", "blip_caption": "a cat"},
            ],
        },
        "qa": [
            {
                "question": "What pet?",
                "answer": "cat",
                "evidence": ["D1:1; D1:2", "D9:9"],
                "category": 4,
            },
            {"question": "Trick?", "adversarial_answer": "x", "evidence": ["D1:1"], "category": 5},
        ],
    }
    path = tmp_path / "c.json"
    path.write_text(json.dumps([sample]))
    (conv,) = load_locomo(path)
    assert [t.text for t in conv.turns] == [
        "A: I adopted a cat.",
        "B: Look! [shares a photo: a cat]",
    ]
    assert conv.turns[1].has_image and conv.turns[1].timestamp == conv.turns[0].timestamp + 60
    assert [q.evidence for q in conv.questions] == [(0, 1)]
    assert conv.dropped_evidence == 1
    path.write_text("{not json")
    with pytest.raises(InvalidInputError, match="LoCoMo"):
        load_locomo(path)
    with pytest.raises(InvalidInputError, match="does not exist"):
        load_locomo(tmp_path / "missing.json")


def test_what_the_env_trains_is_what_the_policy_does_in_use() -> None:
    from langchain_agentmem.policies.learned import LearnedPolicy, forward
    from langchain_agentmem.rl.evaluate import replay

    rng = np.random.default_rng(7)
    layers = [
        (rng.normal(0, 1, (8, N_FEATURES)).astype(np.float32), np.zeros(8, np.float32)),
        (rng.normal(0, 1, (1, 8)).astype(np.float32), np.zeros(1, np.float32)),
    ]
    conv = toy_conversation(6, n=60)
    env = MemoryBudgetEnv([conv], budgets=(0.1,), scorer=lambda o: forward(layers, o))
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        action = np.array([forward(layers, obs)], dtype=np.float32)
        obs, _, done, _, _ = env.step(action)
    in_use = replay(LearnedPolicy(info["capacity"], layers=layers), conv)
    assert sorted(env._kept) == in_use.kept.tolist()
