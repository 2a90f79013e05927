"""A tiny seeded PPO run, the exported policy, and the files it ships in."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from langchain_agentmem.policies import make_policy
from langchain_agentmem.policies.features import (
    N_FEATURES,
    TEXT_FEATURES,
    TEXTS,
    neutral_observation,
)
from langchain_agentmem.policies.learned import (
    LearnedPolicy,
    PolicyFileError,
    forward,
    load_policy,
    save_policy,
    shipped_policy_dir,
)
from langchain_agentmem.rl.evaluate import replay
from langchain_agentmem.rl.train import export_layers, train, write_result
from tests.unit.test_rl_env import toy_conversation


@pytest.mark.slow
def test_tiny_seeded_training_run_is_reproducible_and_round_trips(tmp_path: Path) -> None:
    convs = [toy_conversation(s, n=40) for s in range(3)]
    runs = [
        train(convs[:2], val_convs=convs[2:], steps=1024, seed=3, n_envs=2, eval_every=512)
        for _ in range(2)
    ]
    for (w1, b1), (w2, b2) in zip(runs[0].layers, runs[1].layers, strict=True):
        np.testing.assert_array_equal(w1, w2)
        np.testing.assert_array_equal(b1, b2)
    result = runs[0]
    assert result.curve[0]["steps"] == 0
    assert "heldout_recall@10/0.1" in result.curve[-1]
    files = write_result(result, tmp_path / "out", "test")
    assert Path(files["policy"]).is_file() and Path(files["config"]).is_file()
    layers, config = load_policy(tmp_path / "out")
    assert config["steps"] == result.config["steps"] and config["trained_on"] == ["toy-0", "toy-1"]
    obs = np.linspace(0, 1, N_FEATURES, dtype=np.float32)
    assert forward(layers, obs) == pytest.approx(forward(result.layers, obs))
    out = replay(LearnedPolicy(4, path=tmp_path / "out"), convs[2])
    assert 1 <= len(out.kept) <= 4


def test_numpy_copy_of_a_trained_actor_decides_like_torch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langchain_agentmem.policies.features import priority_from
    from langchain_agentmem.rl import train as train_module

    models: list[Any] = []
    real_export = train_module.export_layers

    def keep_model(model: Any) -> Any:
        models.append(model)
        return real_export(model)

    monkeypatch.setattr(train_module, "export_layers", keep_model)
    convs = [toy_conversation(s, n=40) for s in range(3)]
    result = train(
        convs[:2],
        steps=1024,
        seed=5,
        n_envs=2,
        eval_every=512,
        select=False,
        learning_rate=3e-3,
        n_steps=128,
    )
    model = models[-1]

    def torch_actions(obs: np.ndarray) -> np.ndarray:
        action, _ = model.predict(obs, deterministic=True)
        return np.clip(np.asarray(action).reshape(-1), -1.0, 1.0)

    # Observations the policy really sees on a conversation, and random ones in the space.
    seen: list[np.ndarray] = []

    class Recording(LearnedPolicy):
        def features(self, *args: Any, **kwargs: Any) -> Any:
            obs = super().features(*args, **kwargs)
            seen.append(obs)
            return obs

    replay(Recording(6, layers=result.layers), convs[2])
    rng = np.random.default_rng(0)
    drawn = rng.uniform(-1, 1, size=(500, N_FEATURES)).astype(np.float32)
    obs = np.concatenate([np.stack(seen), drawn])
    numpy_side = np.array([forward(result.layers, o) for o in obs])
    torch_side = torch_actions(obs)
    assert np.ptp(torch_side) > 0.1  # a network whose output varies, not a constant
    np.testing.assert_allclose(numpy_side, torch_side, rtol=0, atol=1e-6)

    # Deciding with the torch actor keeps and drops exactly what the numpy copy does.
    class TorchActor(LearnedPolicy):
        def priority(self, candidate: Any, state: Any, priorities: Any = None) -> float:
            o = self.features(candidate, state, priorities)
            return priority_from(o, float(torch_actions(o[None, :])[0]))

        def record_priority(self, text: str, metadata: Any) -> float:
            o = neutral_observation(TEXTS.get(text, metadata)[0], self.capacity or 0)
            return priority_from(o, float(torch_actions(o[None, :])[0]))

    def decisions(policy: LearnedPolicy) -> tuple[list[int], list[list[Any]]]:
        made: list[list[Any]] = []
        out = replay(
            policy,
            convs[2],
            on_decision=lambda i, ops: made.append([(op.kind, op.record_ids) for op in ops]),
        )
        return out.kept.tolist(), made

    differs: list[bool] = []
    for cap in (4, 10):
        numpy_kept, numpy_ops = decisions(LearnedPolicy(cap, layers=result.layers))
        assert (numpy_kept, numpy_ops) == decisions(TorchActor(cap, layers=result.layers))
        differs.append(numpy_kept != replay(make_policy("importance", cap), convs[2]).kept.tolist())
    assert any(differs)  # the network, not the rule it corrects, made some decision


def test_export_matches_the_torch_actor() -> None:
    import torch
    from stable_baselines3 import PPO

    from langchain_agentmem.rl.env import MemoryBudgetEnv

    env = MemoryBudgetEnv([toy_conversation(0)])
    model = PPO(
        "MlpPolicy",
        env,
        policy_kwargs={"net_arch": [8, 8], "activation_fn": torch.nn.Tanh},
        seed=0,
        device="cpu",
    )
    layers = export_layers(model)
    obs = np.random.default_rng(0).uniform(0, 1, size=N_FEATURES).astype(np.float32)
    action, _ = model.predict(obs, deterministic=True)
    assert forward(layers, obs) == pytest.approx(float(np.clip(action[0], -1, 1)), abs=1e-5)


def test_shipped_policy_loads_offline_without_torch() -> None:
    layers, config = load_policy()
    assert layers[0][0].shape[1] == N_FEATURES
    assert config["format"] == "agentmem-policy" and len(config["trained_on"]) >= 1
    # Loading and deciding never needs torch (checked in a fresh interpreter).
    import subprocess

    code = (
        "import sys; from langchain_agentmem.policies.learned import LearnedPolicy; "
        "LearnedPolicy(10); print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _copy_shipped(tmp_path: Path) -> Path:
    folder = tmp_path / "policy"
    folder.mkdir()
    for name in ("policy.npz", "policy.json"):
        (folder / name).write_bytes((shipped_policy_dir() / name).read_bytes())
    return folder


def test_missing_truncated_or_incompatible_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(PolicyFileError, match=r"missing.*agentmem train"):
        LearnedPolicy(5, path=tmp_path / "nowhere")
    folder = _copy_shipped(tmp_path)
    LearnedPolicy(5, path=folder)
    weights = folder / "policy.npz"
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) // 2])
    with pytest.raises(PolicyFileError, match="truncated or altered"):
        LearnedPolicy(5, path=folder)
    weights.write_bytes(data)
    config = json.loads((folder / "policy.json").read_text())
    config["features"] = config["features"][:-1]
    (folder / "policy.json").write_text(json.dumps(config))
    with pytest.raises(PolicyFileError, match="version"):
        LearnedPolicy(5, path=folder)
    (folder / "policy.json").write_text("{")
    with pytest.raises(PolicyFileError, match="unreadable"):
        LearnedPolicy(5, path=folder)


def test_weights_that_need_pickle_are_refused(tmp_path: Path) -> None:
    layers, config = load_policy()
    folder = tmp_path / "p"
    save_policy(folder, layers, {})
    # Replace a layer with an object array: loading must refuse it, never unpickle it.
    arrays = {f"layer{i}.weight": w for i, (w, _) in enumerate(layers)}
    arrays.update({f"layer{i}.bias": b for i, (_, b) in enumerate(layers)})
    arrays["layer0.bias"] = np.array([object()] * layers[0][1].shape[0], dtype=object)
    np.savez(folder / "policy.npz", **arrays)  # type: ignore[arg-type]
    import hashlib

    config = json.loads((folder / "policy.json").read_text())
    config["weights_sha256"] = hashlib.sha256((folder / "policy.npz").read_bytes()).hexdigest()
    (folder / "policy.json").write_text(json.dumps(config))
    with pytest.raises(PolicyFileError, match="unreadable"):
        LearnedPolicy(5, path=folder)


def test_tensorboard_logs_or_a_clear_error(tmp_path: Path) -> None:
    import importlib.util

    from langchain_agentmem.errors import InvalidInputError

    convs = [toy_conversation(0, n=20)]
    logs = tmp_path / "tb"
    if importlib.util.find_spec("tensorboard") is None:
        with pytest.raises(InvalidInputError, match="pip install tensorboard"):
            train(convs, steps=256, n_envs=1, tensorboard=logs, select=False)
    else:
        train(convs, steps=256, n_envs=1, tensorboard=logs, select=False)
        assert any(logs.rglob("events.out.tfevents.*"))
    with pytest.raises(InvalidInputError, match="steps"):
        train(convs, steps=0)


def answered_conversation(seed: int, sessions: int = 12) -> Any:
    """Each session: a question, its answer, then the same words again unasked. Only the
    answers are evidence, and only the question before them tells them apart."""
    from langchain_agentmem.rl.data import Conversation, Question, Turn

    rng = np.random.default_rng(seed)
    turns, questions = [], []
    for s in range(sessions):
        base = len(turns)
        said = f"B: We went to the lake with Anna on day {s}."
        for j, (speaker, text) in enumerate(
            [("A", "A: What did you do on Sunday?"), ("B", said), ("B", said)]
        ):
            turns.append(Turn(f"D{s + 1}:{j + 1}", speaker, text, s + 1, False, 60.0 * len(turns)))
        questions.append(Question(f"q{s}", 1, (base + 1,)))
    vec = rng.normal(size=(len(turns) + len(questions), 16)).astype(np.float32)
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)
    return Conversation(f"answered-{seed}", turns, questions, vec[: len(turns)], vec[len(turns) :])


@pytest.mark.slow
def test_warm_start_fits_the_actor_to_what_holds_evidence() -> None:
    from langchain_agentmem.rl.env import prepare
    from langchain_agentmem.rl.train import salience_targets

    convs = [answered_conversation(s) for s in range(3)]
    x, y = salience_targets([prepare(c) for c in convs], (0.25,))
    answers = x[:, TEXT_FEATURES.index("answers")] == 1.0
    repeats = (x[:, TEXT_FEATURES.index("question")] == 0.0) & ~answers
    # The same words score higher after the question, whatever the memory holds.
    assert y[answers].min() > y[repeats].max()
    text = "B: We went to the lake with Anna on day 3."
    asked = {"reply_to": "A: What did you do on Sunday?"}
    gap = {}
    for warm in (True, False):
        result = train(convs, steps=128, n_envs=1, n_steps=64, select=False, warm_start=warm)
        pol = LearnedPolicy(4, layers=result.layers)
        gap[warm] = pol.record_priority(text, asked) - pol.record_priority(text, {})
    # Warm-started, the answer outranks its repeat; PPO alone has not found that in 128 steps.
    assert gap[True] > 0.05 and abs(gap[False]) < 0.01


@pytest.mark.slow
def test_extra_conversations_train_every_fold_and_are_never_scored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import langchain_agentmem.rl.train as rl_train
    from langchain_agentmem.errors import InvalidInputError

    convs = [toy_conversation(s, n=40) for s in range(3)]
    extra = [answered_conversation(9, sessions=4)]
    seen: list[tuple[list[str], list[str], list[str]]] = []
    chosen_on: list[list[str]] = []
    real_train, real_score = rl_train.train, rl_train.score_layers

    def tiny(rest: Any, *, val_convs: Any, **kwargs: Any) -> Any:
        added = kwargs["extra"]
        seen.append(([c.sample_id for c in rest], [c.sample_id for c in added],
                     [c.sample_id for c in val_convs]))  # fmt: skip
        return real_train(
            rest, steps=64, n_envs=1, n_steps=32, eval_every=32, warm_start=False,
            extra=added, extra_share=kwargs["extra_share"],
        )  # fmt: skip

    def score(layers: Any, scored: Any, *args: Any) -> Any:
        chosen_on.append([c.sample_id for c in scored])
        return real_score(layers, scored, *args)

    monkeypatch.setattr(rl_train, "train", tiny)
    monkeypatch.setattr(rl_train, "score_layers", score)
    _table, runs, models = rl_train.cross_validate(
        convs, folds=3, budgets=(0.25,), steps=64, extra=extra, extra_share=0.5
    )
    assert len(seen) == 3
    for trained, added, held in seen:
        assert added == ["answered-9"] and "answered-9" not in trained + held
        assert not set(trained) & set(held)
    # Checkpoints are chosen on the fold's own conversations, never on the extra one.
    assert chosen_on and all("answered-9" not in ids for ids in chosen_on)
    assert all("answered-9" not in run["held_out"] for run in runs)
    assert set(models) == {c.sample_id for c in convs}
    with pytest.raises(InvalidInputError, match="also scored"):
        rl_train.cross_validate(convs, folds=3, extra=convs[:1])


def test_extra_share_is_the_expected_share_of_training_steps() -> None:
    from langchain_agentmem.errors import InvalidInputError
    from langchain_agentmem.rl.env import draw_chances, prepare
    from langchain_agentmem.rl.train import extra_draw

    main = [prepare(toy_conversation(s, n=n)) for s, n in ((0, 40), (1, 90))]
    added = [prepare(toy_conversation(s, n=20)) for s in (2, 3, 4)]
    lengths = np.array([p.n_turns for p in [*main, *added]], dtype=float)
    for share in (0.1, 0.25, 0.6):
        weights = extra_draw(main, added, share)
        assert weights is not None
        p = draw_chances(weights, len(lengths))
        steps = p * lengths
        assert steps[2:].sum() / steps.sum() == pytest.approx(share)
        assert p[0] == pytest.approx(p[1]) and p[2] == pytest.approx(p[4])
    assert extra_draw(main, added, None) is None
    assert extra_draw(main, [], 0.3) is None
    for bad in (0.0, 1.0, -0.2, float("nan")):
        with pytest.raises(InvalidInputError, match="extra_share"):
            extra_draw(main, added, bad)


def test_a_weighted_ridge_fit_ignores_rows_of_weight_zero() -> None:
    from langchain_agentmem.rl.train import ridge_fit

    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 4))
    y = x @ np.array([1.0, -2.0, 0.5, 0.0]) + rng.normal(scale=0.1, size=60)
    y[40:] = 100.0  # rows the weights leave out
    weights = np.r_[np.ones(40), np.zeros(20)]
    assert np.allclose(ridge_fit(x, y, 1.0, weights), ridge_fit(x[:40], y[:40], 1.0))
    assert np.allclose(ridge_fit(x, y, 1.0, np.full(60, 1.0)), ridge_fit(x, y, 1.0))


def test_decision_latency_times_each_policy_at_each_capacity() -> None:
    from langchain_agentmem.rl.report import decision_latency

    rows = decision_latency(capacities=(30,), policies=("fifo", "learned"), calls=5)
    assert [(r["capacity"], r["policy"]) for r in rows] == [(30, "fifo"), (30, "learned")]
    assert all(0 < r["p50_us"] <= r["p95_us"] for r in rows)
