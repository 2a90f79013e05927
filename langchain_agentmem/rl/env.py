"""A gymnasium environment: keep a conversation's turns in a memory of bounded size.

Each step offers the next turn. The observation holds features of the turn, of its place
in the stream (words new to the conversation, whether it answers a question) and of the
memory (how full it is, how close the turn is to what it holds, the priorities it holds);
never answers, evidence labels or later turns. The action, in [-1, 1], corrects the
importance rule's score of the turn into its priority (a residual policy: doing nothing is
the rule). While there is room the turn is added; when memory is full it replaces the
stored record of lowest priority if its own is higher, and is skipped otherwise. So the
memory never goes over budget, and the learned part is a scoring function that carries
over to any memory size.

The reward is the change, step by step, of the conversation's evidence recall@k when
its questions are asked of the memory as it stands, ranked by the hybrid search's scores
(``rl.retrieval.static_scores``; evidence labels are used only here). These differences
add up to the recall at the end of the conversation, so the policy is scored on close to
what the benchmark measures, yet hears about each turn it keeps or drops when it happens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.policies.features import (
    N_FEATURES,
    StreamContext,
    memory_features,
    priority_from,
    text_features,
)
from langchain_agentmem.rl.budget import capacity_for, check_budget
from langchain_agentmem.rl.data import Conversation
from langchain_agentmem.rl.retrieval import static_scores

FloatArray = npt.NDArray[np.float32]


@dataclass
class Prepared:
    """A conversation turned into the arrays an episode needs."""

    sample_id: str
    texts: FloatArray
    """Item features of each turn: its text, then its context in the stream (n, N_ITEM)."""
    vectors: FloatArray
    """Turn embeddings (n, d), unit length."""
    q_scores: FloatArray
    """Hybrid-search score of each turn for each question (q, n); see ``static_scores``."""
    ev_weight: FloatArray
    """``1 / len(evidence)`` where a turn is evidence of a question, else 0 (q, n)."""

    @property
    def n_turns(self) -> int:
        return int(self.texts.shape[0])


def item_features(conv: Conversation) -> FloatArray:
    """Each turn's text features, then its context in the stream (n, N_ITEM)."""
    context = StreamContext()
    return np.stack(
        [
            np.concatenate(
                [
                    text_features(t.text, {"image": t.has_image}),
                    context.observe(conv.sample_id, f"session-{t.session}", t.text),
                ]
            )
            for t in conv.turns
        ]
    ).astype(np.float32)


def prepare(conv: Conversation) -> Prepared:
    """Features and reward tables of an embedded conversation."""
    if conv.turn_vectors.shape[0] != len(conv.turns):
        raise InvalidInputError(
            f"conversation {conv.sample_id!r} is not embedded; call embed_conversations first"
        )
    weight = np.zeros((len(conv.questions), len(conv.turns)), dtype=np.float32)
    for qi, q in enumerate(conv.questions):
        weight[qi, list(q.evidence)] = 1.0 / len(q.evidence)
    return Prepared(
        sample_id=conv.sample_id,
        texts=item_features(conv),
        vectors=conv.turn_vectors,
        q_scores=static_scores(conv),
        ev_weight=weight,
    )


def recall_now(p: Prepared, kept: Sequence[int] | npt.NDArray[np.int64], k: int) -> float:
    """Evidence recall@k of ``p``'s questions over the turns in ``kept``."""
    if len(p.ev_weight) == 0 or len(kept) == 0:
        return 0.0
    idx = np.asarray(kept, dtype=np.int64)
    if idx.size <= k:
        return float(p.ev_weight[:, idx].sum(axis=1).mean())
    sims = p.q_scores[:, idx]
    top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    return float(np.take_along_axis(p.ev_weight[:, idx], top, axis=1).sum(axis=1).mean())


class MemoryBudgetEnv(gym.Env[FloatArray, FloatArray]):
    """Stream conversations turn by turn into a memory that holds ``budget`` of the turns.

    Args:
        conversations: Embedded conversations (see ``embed_conversations``) or
            :class:`Prepared` ones; an episode is one conversation, drawn at random.
        budgets: Share of turns the memory may hold; one is drawn per episode.
        k: Recall@k scored by the reward.
        reward_scale: Multiplies the recall differences (keeps PPO's values well scaled).
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012

    def __init__(
        self,
        conversations: Sequence[Conversation | Prepared],
        *,
        budgets: Sequence[float] = (0.1, 0.25),
        k: int = 10,
        reward_scale: float = 10.0,
    ) -> None:
        super().__init__()
        if not conversations:
            raise InvalidInputError("the environment needs at least one conversation")
        if not budgets:
            raise InvalidInputError("budgets must name at least one budget in (0, 1]")
        self.budgets = [check_budget(b) for b in budgets]
        self.data = [c if isinstance(c, Prepared) else prepare(c) for c in conversations]
        self.k = k
        self.reward_scale = reward_scale
        self.observation_space = spaces.Box(-1.0, 1.0, shape=(N_FEATURES,), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
        self._conv = self.data[0]
        self._capacity = 1
        self._t = 0
        self._kept: list[int] = []
        self._priority: list[float] = []
        self._score = 0.0

    # -- helpers -------------------------------------------------------------------------
    def _obs(self) -> FloatArray:
        conv, t = self._conv, self._t
        if self._kept:
            sims = conv.vectors[self._kept] @ conv.vectors[t]
            top = -np.sort(-sims)[:3] if sims.size > 3 else -np.sort(-sims)
        else:
            top = np.zeros(0, dtype=np.float32)
        mem = memory_features(
            len(self._kept), self._capacity, top, np.asarray(self._priority, dtype=np.float32)
        )
        obs = np.concatenate([conv.texts[t], mem]).astype(np.float32)
        np.clip(obs, -1.0, 1.0, out=obs)
        return obs

    # -- gymnasium API ---------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[FloatArray, dict[str, Any]]:
        super().reset(seed=seed)
        options = options or {}
        index = options.get("conversation")
        if index is None:
            index = int(self.np_random.integers(len(self.data)))
        self._conv = self.data[int(index)]
        budget = options.get("budget")
        if budget is None:
            budget = self.budgets[int(self.np_random.integers(len(self.budgets)))]
        self._budget = check_budget(budget)
        self._capacity = capacity_for(self._budget, self._conv.n_turns)
        self._t = 0
        self._kept = []
        self._priority = []
        self._score = 0.0
        return self._obs(), {"conversation": self._conv.sample_id, "capacity": self._capacity}

    def step(self, action: FloatArray) -> tuple[FloatArray, float, bool, bool, dict[str, Any]]:
        t = self._t
        correction = float(np.asarray(action, dtype=np.float32).reshape(-1)[0])
        priority = priority_from(self._conv.texts[t], correction)
        changed = False
        if len(self._kept) < self._capacity:
            self._kept.append(t)
            self._priority.append(priority)
            changed = True
        else:
            weakest = int(np.argmin(self._priority))
            if priority > self._priority[weakest]:
                self._kept[weakest] = t
                self._priority[weakest] = priority
                changed = True
        reward = 0.0
        if changed:
            score = recall_now(self._conv, self._kept, self.k)
            reward = (score - self._score) * self.reward_scale
            self._score = score
        self._t += 1
        terminated = self._t >= self._conv.n_turns
        info: dict[str, Any] = {"kept": changed}
        if terminated:
            info["recall"] = self._score
            info["budget"] = self._budget
            self._t = self._conv.n_turns - 1  # observation of the last turn; never read
        return self._obs(), reward, terminated, False, info
