"""Train the memory policy with PPO (stable-baselines3) and export it for numpy inference."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from langchain_agentmem.errors import InvalidInputError, missing_extra
from langchain_agentmem.files import write_figure, write_text
from langchain_agentmem.policies.features import BASE_INDEX, neutral_observation
from langchain_agentmem.policies.learned import FloatArray, LearnedPolicy, save_policy
from langchain_agentmem.rl.budget import capacity_for
from langchain_agentmem.rl.data import Conversation
from langchain_agentmem.rl.env import MemoryBudgetEnv, Prepared, prepare
from langchain_agentmem.rl.evaluate import (
    evaluate,
    heuristic_factories,
    per_question,
    replay,
    summarise,
)

NET_ARCH = (64, 64)


@dataclass
class TrainResult:
    """A trained policy and how it learned."""

    layers: list[tuple[FloatArray, FloatArray]]
    config: dict[str, Any]
    curve: list[dict[str, float]] = field(default_factory=list)
    """One row per evaluation: steps, seconds, train recall, held-out recall per budget."""


def export_layers(model: Any) -> list[tuple[FloatArray, FloatArray]]:
    """The actor of an SB3 ``MlpPolicy`` (tanh layers, then the action mean) as arrays."""
    import torch

    layers: list[tuple[FloatArray, FloatArray]] = []
    for module in model.policy.mlp_extractor.policy_net:
        if isinstance(module, torch.nn.Linear):
            layers.append(
                (
                    module.weight.detach().cpu().numpy().astype(np.float32),
                    module.bias.detach().cpu().numpy().astype(np.float32),
                )
            )
    head = model.policy.action_net
    layers.append(
        (
            head.weight.detach().cpu().numpy().astype(np.float32),
            head.bias.detach().cpu().numpy().astype(np.float32),
        )
    )
    return layers


def with_intercept(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``x`` with a column of ones appended (the intercept's)."""
    return np.hstack([x, np.ones((len(x), 1))])


def ridge_fit(
    x: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    alpha: float = 1.0,
    weights: npt.NDArray[np.float64] | None = None,
) -> npt.NDArray[np.float64]:
    """Coefficients of a ridge regression of ``y`` on ``x``, intercept last (not shrunk).

    ``weights`` (one per row, ``None``: all 1) weigh each row's squared error.
    """
    design = with_intercept(x)
    penalty = alpha * np.eye(design.shape[1])
    penalty[-1, -1] = 0.0
    weighted = design.T if weights is None else design.T * weights
    return np.asarray(np.linalg.solve(weighted @ design + penalty, weighted @ y), np.float64)


def check_extra_share(share: float) -> float:
    """``share`` if it is a share of the training steps strictly between 0 and 1."""
    if not 0.0 < share < 1.0:
        raise InvalidInputError(
            f"extra_share must be in (0, 1) (share of training steps on extra "
            f"conversations), got {share!r}; leave it unset to draw every conversation alike"
        )
    return share


def extra_draw(
    main: Sequence[Prepared], extra: Sequence[Prepared], share: float | None
) -> list[float] | None:
    """Episode weights that spend ``share`` of the expected training steps on ``extra``.

    Conversations are drawn alike within each group; ``None`` (or no extra conversations):
    every conversation alike, so each group's share of the steps follows its length.
    """
    if share is None or not extra:
        return None
    check_extra_share(share)
    n_main = sum(p.n_turns for p in main)
    n_extra = sum(p.n_turns for p in extra)
    b = share * n_main / ((1.0 - share) * n_extra)
    return [1.0] * len(main) + [b] * len(extra)


def salience_targets(
    prepared: Sequence[Prepared],
    budgets: Sequence[float],
    ridge: float = 1.0,
    draw: Sequence[float] | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Observations and the corrections that rank turns by how much evidence they hold.

    The importance rule runs over every training conversation at every budget; each
    turn's observation as it arrives, and as it is scored once stored, is fitted by ridge
    regression to the evidence it holds (the turn's share of each question's evidence,
    summed). The fit, rescaled to the spread of the rule's scores, is the priority a
    supervised policy would give; the correction is what it adds to the rule. ``draw``
    weighs each conversation's turns in the fit as PPO draws its episodes (``None``: alike).
    """
    observations: list[FloatArray] = []
    labels: list[float] = []
    row_weights: list[float] = []
    for i, p in enumerate(prepared):
        row_weights += [1.0 if draw is None else float(draw[i])] * (2 * p.n_turns * len(budgets))
        weight = p.ev_weight.sum(axis=0)
        for budget in budgets:
            env = MemoryBudgetEnv([p], budgets=[budget])
            capacity = capacity_for(budget, p.n_turns)
            obs, _ = env.reset(options={"conversation": 0})
            for t in range(p.n_turns):
                observations.append(obs)
                observations.append(neutral_observation(p.texts[t], capacity))
                labels += [float(weight[t])] * 2
                obs = env.step(np.zeros(1, np.float32))[0]
    x = np.stack(observations).astype(np.float64)
    fit = with_intercept(x) @ ridge_fit(x, np.asarray(labels), ridge, np.asarray(row_weights))
    base = x[:, BASE_INDEX]
    target = base.mean() + base.std() * (fit - fit.mean()) / max(float(fit.std()), 1e-9)
    correction = np.clip(target - base, -1.0, 1.0)
    return x.astype(np.float32), correction.astype(np.float32)


def clone_actor(model: Any, x: FloatArray, y: FloatArray, *, epochs: int, seed: int) -> float:
    """Fit the mean action of ``model``'s actor to ``y`` (mean squared error); the loss."""
    import torch

    torch.manual_seed(seed)
    policy = model.policy
    params = [*policy.mlp_extractor.policy_net.parameters(), *policy.action_net.parameters()]
    optimizer = torch.optim.Adam(params, lr=1e-3)
    xs = torch.as_tensor(x)
    ys = torch.as_tensor(y).reshape(-1, 1)
    rng = np.random.default_rng(seed)
    loss = torch.zeros(())
    for _ in range(epochs):
        order = torch.as_tensor(rng.permutation(len(xs)))
        for start in range(0, len(xs), 256):
            batch = order[start : start + 256]
            mean = policy.action_net(policy.mlp_extractor.forward_actor(xs[batch]))
            loss = torch.nn.functional.mse_loss(mean, ys[batch])
            optimizer.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            optimizer.step()
    return float(loss.item())


def score_layers(
    layers: list[tuple[FloatArray, FloatArray]],
    convs: Sequence[Conversation],
    budgets: Sequence[float],
    k: int = 10,
) -> dict[str, float]:
    """Recall@k of a network on ``convs`` at each budget (keys ``"0.1"`` ...)."""
    out: dict[str, float] = {}
    for budget in budgets:
        rows: list[tuple[int, float, float]] = []
        for conv in convs:
            cap = capacity_for(budget, len(conv.turns))
            result = replay(LearnedPolicy(cap, layers=layers), conv)
            rows.extend(per_question(conv, result.kept, k))
        out[f"{budget:g}"] = summarise(rows, k).get(f"recall@{k}", 0.0)
    return out


def train(
    train_convs: Sequence[Conversation],
    *,
    val_convs: Sequence[Conversation] = (),
    budgets: Sequence[float] = (0.1, 0.25),
    steps: int = 200_000,
    seed: int = 0,
    n_envs: int = 4,
    eval_every: int = 20_000,
    progress: bool = False,
    tensorboard: str | os.PathLike[str] | None = None,
    k: int = 10,
    select: bool = True,
    learning_rate: float = 1e-4,
    n_steps: int = 1024,
    warm_start: bool = True,
    extra: Sequence[Conversation] = (),
    extra_share: float | None = None,
) -> TrainResult:
    """Train a policy with PPO on ``train_convs``; score it on ``val_convs`` as it learns.

    Args:
        train_convs: Embedded conversations to learn from; the checkpoint is chosen on them.
        val_convs: Embedded conversations held out from training (for the curve).
        budgets: Memory budgets drawn per episode (share of turns kept).
        steps: Environment steps of training.
        seed: Seeds PPO, the environments and torch.
        n_envs: Environments stepped side by side.
        eval_every: Steps between two points of the learning curve.
        progress: Show a progress bar.
        tensorboard: Folder for TensorBoard logs (``None``: none written).
        k: Recall@k rewarded.
        select: Keep the checkpoint that scores best on the training conversations
            (deterministic replay; held-out ones are never used to choose).
        learning_rate: PPO's step size.
        n_steps: Steps per environment between two PPO updates.
        warm_start: Before PPO, fit the actor to :func:`salience_targets` of the training
            conversations (supervised), so PPO starts from that ranking, not the rule's.
        extra: Embedded conversations also learned from (synthetic fact-change ones, say),
            never used to choose the checkpoint.
        extra_share: Expected share of the training steps spent on ``extra`` (``None``:
            every conversation is drawn alike, so the share follows their lengths).
    """
    progress = _check_train(steps, train_convs, tensorboard, progress)
    import torch

    try:
        from stable_baselines3.common.vec_env import DummyVecEnv
    except ModuleNotFoundError as exc:  # the rl extra
        raise missing_extra("rl", "Training a memory policy", exc) from None

    torch.set_num_threads(1)
    main = [prepare(c) for c in train_convs]
    added = [prepare(c) for c in extra]
    draw = extra_draw(main, added, extra_share)
    prepared: list[Prepared] = [*main, *added]
    venv = DummyVecEnv([_env_maker(prepared, budgets, k, draw) for _ in range(n_envs)])
    venv.seed(seed)
    model = _ppo(venv, n_steps, learning_rate, seed, tensorboard)
    if warm_start:
        x, y = salience_targets(prepared, budgets, draw=draw)
        clone_actor(model, x, y, epochs=20, seed=seed)

    def scorer(obs: FloatArray) -> float:
        action, _ = model.policy.predict(obs, deterministic=True)
        return float(np.clip(np.asarray(action).reshape(-1)[0], -1.0, 1.0))

    # Kept turns are scored by the policy being trained, as stored records are in use.
    venv.set_attr("scorer", scorer)
    tracker = _Curve(model, train_convs, val_convs, budgets, k, select)
    tracker.point(0)
    model.learn(total_timesteps=steps, callback=tracker.callback(eval_every), progress_bar=progress)
    if tracker.curve[-1]["steps"] < model.num_timesteps:
        tracker.point(model.num_timesteps)
    layers = tracker.best_layers if select else export_layers(model)
    config = _train_config(
        tracker, [*train_convs, *extra], extra, budgets, seed, k, warm_start, extra_share
    )
    venv.close()
    return TrainResult(layers=layers, config=config, curve=tracker.curve)


def _env_maker(
    prepared: Sequence[Prepared], budgets: Sequence[float], k: int, draw: list[float] | None
) -> Callable[[], MemoryBudgetEnv]:
    """What makes one training environment (``DummyVecEnv`` calls it)."""

    def make() -> MemoryBudgetEnv:
        return MemoryBudgetEnv(prepared, budgets=budgets, k=k, draw=draw)

    return make


def _check_train(
    steps: int,
    train_convs: Sequence[Conversation],
    tensorboard: str | os.PathLike[str] | None,
    progress: bool,
) -> bool:
    """Refuse arguments training cannot use; whether a progress bar can be shown."""
    if steps < 1:
        raise InvalidInputError(f"steps must be >= 1, got {steps}")
    if not train_convs:
        raise InvalidInputError("training needs at least one conversation with questions")
    if tensorboard is not None:
        try:
            import tensorboard as _tb  # noqa: F401
        except ImportError:
            raise InvalidInputError(
                "TensorBoard logs need the tensorboard package: pip install tensorboard, "
                "or leave out the TensorBoard folder"
            ) from None
    if progress:
        try:
            import rich  # noqa: F401
            import tqdm  # noqa: F401
        except ImportError:
            return False  # the bar is a nicety: train without it
    return progress


def _ppo(
    venv: Any,
    n_steps: int,
    learning_rate: float,
    seed: int,
    tensorboard: str | os.PathLike[str] | None,
) -> Any:
    """The PPO learner of the memory policy (its settings as shipped)."""
    import torch
    from stable_baselines3 import PPO

    return PPO(
        "MlpPolicy",
        venv,
        n_steps=n_steps,
        batch_size=256,
        n_epochs=5,
        learning_rate=learning_rate,
        gamma=0.999,
        gae_lambda=0.95,
        ent_coef=0.0,
        clip_range=0.2,
        policy_kwargs={
            "net_arch": {"pi": list(NET_ARCH), "vf": list(NET_ARCH)},
            "activation_fn": torch.nn.Tanh,
            "log_std_init": -2.0,
        },
        seed=seed,
        verbose=0,
        device="cpu",
        tensorboard_log=None if tensorboard is None else str(tensorboard),
    )


class _Curve:
    """The learning curve of one training run, and the checkpoint it selects."""

    def __init__(
        self,
        model: Any,
        train_convs: Sequence[Conversation],
        val_convs: Sequence[Conversation],
        budgets: Sequence[float],
        k: int,
        select: bool,
    ) -> None:
        self.model = model
        self.train_convs, self.val_convs = train_convs, val_convs
        self.budgets, self.k, self.select = budgets, k, select
        self.curve: list[dict[str, float]] = []
        self.best_score = -1.0
        self.best_steps = 0.0
        self.best_layers: Any = None
        self.episodes: list[float] = []
        self.started = time.perf_counter()

    def point(self, done_steps: int) -> None:
        """Score the policy as it is now: one point of the curve."""
        k = self.k
        row: dict[str, float] = {
            "steps": float(done_steps),
            "seconds": time.perf_counter() - self.started,
            "train_episode_recall": (
                float(np.mean(self.episodes)) if self.episodes else float("nan")
            ),
        }
        self.episodes.clear()
        layers = export_layers(self.model)
        if self.select:
            scores = score_layers(layers, self.train_convs, self.budgets, k)
            for key, value in scores.items():
                row[f"train_recall@{k}/{key}"] = value
            mean = float(np.mean(list(scores.values())))
            if mean > self.best_score:
                self.best_score, self.best_steps, self.best_layers = mean, float(done_steps), layers
        if self.val_convs:
            held = score_layers(export_layers(self.model), self.val_convs, self.budgets, k)
            for key, value in held.items():
                row[f"heldout_recall@{k}/{key}"] = value
        self.curve.append(row)

    def callback(self, eval_every: int) -> Any:
        """The PPO callback that records episodes and adds a point every ``eval_every``."""
        from stable_baselines3.common.callbacks import BaseCallback

        tracker = self

        class Curve(BaseCallback):  # type: ignore[misc]
            def _on_step(self) -> bool:
                for info in self.locals.get("infos", []):
                    if "recall" in info:
                        tracker.episodes.append(float(info["recall"]))
                if self.num_timesteps // eval_every > len(tracker.curve) - 1:
                    tracker.point(self.num_timesteps)
                return True

        return Curve()


def _train_config(
    tracker: _Curve,
    trained_on: Sequence[Conversation],
    extra: Sequence[Conversation],
    budgets: Sequence[float],
    seed: int,
    k: int,
    warm_start: bool,
    extra_share: float | None,
) -> dict[str, Any]:
    """What a trained policy's config says of how it was trained."""
    config: dict[str, Any] = {
        "trained_on": [c.sample_id for c in trained_on],
        "budgets": list(budgets),
        "steps": int(tracker.model.num_timesteps),
        "seed": seed,
        "algorithm": "PPO (stable-baselines3)",
        "net_arch": list(NET_ARCH),
        "train_seconds": round(time.perf_counter() - tracker.started, 1),
        "reward": (
            f"change in evidence recall@{k} of the conversation's questions, ranked by "
            "hybrid-search scores"
        ),
        "priority": "importance rule score + learned correction",
        "warm_start": (
            "actor fitted to a ridge regression of each turn's evidence on the training "
            "conversations, then PPO"
            if warm_start
            else "none: PPO from the importance rule"
        ),
        "observation": "item text, item context in the stream, memory",
    }
    if extra:
        config["extra_training"] = [c.sample_id for c in extra]
        config["extra_share"] = (
            "as drawn (every conversation alike)" if extra_share is None else extra_share
        )
    if tracker.select:
        config["selected_at_steps"] = int(tracker.best_steps)
        config["selected_by"] = "deterministic recall on the training conversations" + (
            " (extra ones left out)" if extra else ""
        )
    return config


def plot_curve(
    curve: list[dict[str, float]], path: str | os.PathLike[str], title: str
) -> Path | None:
    """Write the learning curve as a PNG (``None`` when matplotlib is not installed)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    steps = [row["steps"] for row in curve]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(steps, [row["train_episode_recall"] for row in curve], label="training episodes")
    for key in sorted({k for row in curve for k in row if k.startswith("heldout_")}):
        ax.plot(
            steps,
            [row.get(key, float("nan")) for row in curve],
            marker="o",
            label=key.replace("heldout_", "held out "),
        )
    ax.set_xlabel("environment steps")
    ax.set_ylabel("evidence recall@10")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    out = Path(path)
    write_figure(fig, out, dpi=110)
    plt.close(fig)
    return out


def write_result(
    result: TrainResult, out_dir: str | os.PathLike[str], title: str
) -> dict[str, str]:
    """Save the policy, its learning curve (JSON and PNG) in ``out_dir``."""
    out = Path(out_dir)
    save_policy(out, result.layers, result.config)
    write_text(
        out / "learning_curve.json", json.dumps(result.curve, indent=1) + "\n", private=False
    )
    files = {"policy": str(out / "policy.npz"), "config": str(out / "policy.json")}
    png = plot_curve(result.curve, out / "learning_curve.png", title)
    if png is not None:
        files["curve"] = str(png)
    return files


def cross_validate(
    convs: Sequence[Conversation],
    *,
    folds: int = 3,
    budgets: Sequence[float] = (0.1, 0.25),
    steps: int = 150_000,
    seed: int = 0,
    k: int = 10,
    warm_start: bool = True,
    extra: Sequence[Conversation] = (),
    extra_share: float | None = None,
) -> tuple[dict[str, dict[str, dict[str, float]]], list[dict[str, Any]], dict[str, Any]]:
    """Train one policy per fold and score every policy on the fold's held-out conversations.

    Conversation ``i`` is held out by fold ``i % folds``; the learned policy is always
    scored on conversations it never saw. ``extra`` conversations (synthetic fact-change
    ones, say) join every fold's training (``extra_share`` of its steps, see :func:`train`)
    and are never held out, scored or used to choose a checkpoint. Returns the
    table (as :func:`evaluate`), per fold its held-out ids, training time and learning
    curve, and for each conversation the layers of the model that did not see it.
    """
    if not 2 <= folds <= len(convs):
        raise InvalidInputError(f"folds must be in [2, {len(convs)}], got {folds}")
    shared = {c.sample_id for c in convs} & {c.sample_id for c in extra}
    if shared:
        raise InvalidInputError(
            f"extra training conversations {sorted(shared)} are also scored; "
            "pass each conversation once"
        )
    models: dict[str, Any] = {}
    runs: list[dict[str, Any]] = []
    for f in range(folds):
        held = [c for i, c in enumerate(convs) if i % folds == f]
        rest = [c for i, c in enumerate(convs) if i % folds != f]
        result = train(
            rest,
            val_convs=held,
            budgets=budgets,
            steps=steps,
            seed=seed,
            eval_every=steps // 6,
            warm_start=warm_start,
            extra=extra,
            extra_share=extra_share,
        )
        for c in held:
            models[c.sample_id] = result.layers
        runs.append(
            {
                "held_out": [c.sample_id for c in held],
                "train_seconds": result.config["train_seconds"],
                "steps": result.config["steps"],
                "curve": result.curve,
            }
        )
    factories = heuristic_factories()
    factories["learned"] = lambda cap, conv: LearnedPolicy(cap, layers=models[conv.sample_id])
    return evaluate(factories, convs, budgets, k=k), runs, models
