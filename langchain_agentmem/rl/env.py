"""A gymnasium environment: keep a conversation's turns in a memory of bounded size.

Each step offers the next turn, with the metadata a store holds for it (whether it shares
an image, the question it replies to). The observation holds features of the turn, of its place
in the memory (words no kept turn holds, whether the newest kept turn of its session asked a
question) and of the memory (how full it is, how close the turn is to what it holds, the
priorities it holds): all read from what is kept, as the shipped policy reads the store;
never answers, evidence labels or later turns. The action, in [-1, 1], corrects the
importance rule's score of the turn into its priority (a residual policy: doing nothing is
the rule). While there is room the turn is added; when memory is full it replaces the
stored record of lowest priority if its own is higher, and is skipped otherwise. A kept
turn's priority is the policy's score of the turn alone (no context, a neutral full
memory), as every process scores a stored record. So the
memory never goes over budget, and the learned part is a scoring function that carries
over to any memory size.

The reward is the change, step by step, of the conversation's evidence recall@k when
its questions are asked of the memory as it stands, ranked by the hybrid search's scores
(``rl.retrieval.static_scores``; evidence labels are used only here). These differences
add up to the recall at the end of the conversation, so the policy is scored on close to
what the benchmark measures, yet hears about each turn it keeps or drops when it happens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from langchain_agentmem.errors import InvalidInputError, missing_extra
from langchain_agentmem.policies.features import (
    N_FEATURES,
    content_words,
    context_features,
    memory_features,
    neutral_observation,
    observation,
    priority_from,
    question_share,
    text_features,
)
from langchain_agentmem.rl.budget import capacity_for, check_budget
from langchain_agentmem.rl.data import Conversation
from langchain_agentmem.rl.retrieval import static_scores, turn_metadata

try:
    import gymnasium as gym
    from gymnasium import spaces
except ModuleNotFoundError as exc:  # the rl extra
    raise missing_extra("rl", "Training a memory policy", exc) from None

FloatArray = npt.NDArray[np.float32]


Scorer = Callable[[FloatArray], float]
"""The policy being trained, as a function from an observation to its action."""


@dataclass
class Prepared:
    """A conversation turned into the arrays an episode needs."""

    sample_id: str
    texts: FloatArray
    """Text features of each turn (n, N_TEXT)."""
    words: list[frozenset[str]]
    """Content words of each turn."""
    asks: FloatArray
    """How much each turn asks (``question_share``), (n,)."""
    sessions: npt.NDArray[np.int64]
    """The session (thread) of each turn, (n,)."""
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
    """Each turn's text features (n, N_TEXT), with the metadata a store holds for it."""
    return np.stack(
        [text_features(t.text, m) for t, m in zip(conv.turns, turn_metadata(conv), strict=True)]
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
        words=[frozenset(content_words(t.text)) for t in conv.turns],
        asks=np.array([question_share(t.text) for t in conv.turns], dtype=np.float32),
        sessions=np.array([t.session for t in conv.turns], dtype=np.int64),
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


def draw_chances(draw: Sequence[float], n: int) -> npt.NDArray[np.float64]:
    """``draw`` checked (one finite weight >= 0 per conversation, not all 0) and normalised."""
    w = np.asarray(draw, dtype=np.float64)
    if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise InvalidInputError(
            f"draw must hold one finite weight >= 0 per conversation ({n}), not all 0; "
            f"got {list(draw)!r}"
        )
    chances: npt.NDArray[np.float64] = w / w.sum()
    return chances


class MemoryBudgetEnv(gym.Env[FloatArray, FloatArray]):
    """Stream conversations turn by turn into a memory that holds ``budget`` of the turns.

    Args:
        conversations: Embedded conversations (see ``embed_conversations``) or
            :class:`Prepared` ones; an episode is one conversation, drawn at random.
        budgets: Share of turns the memory may hold; one is drawn per episode.
        k: Recall@k scored by the reward.
        reward_scale: Multiplies the recall differences (keeps PPO's values well scaled).
        scorer: The policy being trained (observation -> action): a kept turn's priority
            is its score of the turn's :func:`neutral_observation`, as the shipped policy
            scores stored records (``None``: no correction, the importance rule).
        draw: Chance of each conversation to be an episode (``None``: the same for all).
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012

    def __init__(
        self,
        conversations: Sequence[Conversation | Prepared],
        *,
        budgets: Sequence[float] = (0.1, 0.25),
        k: int = 10,
        reward_scale: float = 10.0,
        scorer: Scorer | None = None,
        draw: Sequence[float] | None = None,
    ) -> None:
        super().__init__()
        if not conversations:
            raise InvalidInputError("the environment needs at least one conversation")
        self.draw = None if draw is None else draw_chances(draw, len(conversations))
        if not budgets:
            raise InvalidInputError("budgets must name at least one budget in (0, 1]")
        self.budgets = [check_budget(b) for b in budgets]
        self.data = [c if isinstance(c, Prepared) else prepare(c) for c in conversations]
        self.k = k
        self.reward_scale = reward_scale
        self.scorer = scorer
        self.observation_space = spaces.Box(-1.0, 1.0, shape=(N_FEATURES,), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
        self._conv = self.data[0]
        self._capacity = 1
        self._t = 0
        self._kept: list[int] = []
        self._priority: list[float] = []
        self._words: dict[str, int] = {}
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
        # The newest kept turn of this turn's session: kept turns arrived in order.
        same = [i for i in self._kept if conv.sessions[i] == conv.sessions[t]]
        previous = float(conv.asks[max(same)]) if same else 0.0
        context = context_features(conv.words[t], self._words, previous)
        obs = observation(conv.texts[t], context, mem)
        np.clip(obs, -1.0, 1.0, out=obs)
        return obs

    def _stored_priority(self, t: int) -> float:
        """Priority of kept turn ``t``: what the policy in use computes for a stored record."""
        obs = neutral_observation(self._conv.texts[t], self._capacity)
        return priority_from(obs, 0.0 if self.scorer is None else self.scorer(obs))

    def _count(self, t: int, delta: int) -> None:
        for w in self._conv.words[t]:
            n = self._words.get(w, 0) + delta
            if n:
                self._words[w] = n
            else:
                self._words.pop(w, None)

    # -- gymnasium API ---------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[FloatArray, dict[str, Any]]:
        super().reset(seed=seed)
        options = options or {}
        index = options.get("conversation")
        if index is None:
            if self.draw is None:
                index = int(self.np_random.integers(len(self.data)))
            else:
                index = int(self.np_random.choice(len(self.data), p=self.draw))
        self._conv = self.data[int(index)]
        budget = options.get("budget")
        if budget is None:
            budget = self.budgets[int(self.np_random.integers(len(self.budgets)))]
        self._budget = check_budget(budget)
        self._capacity = capacity_for(self._budget, self._conv.n_turns)
        self._t = 0
        self._kept = []
        self._priority = []
        self._words = {}
        self._score = 0.0
        return self._obs(), {"conversation": self._conv.sample_id, "capacity": self._capacity}

    def step(self, action: FloatArray) -> tuple[FloatArray, float, bool, bool, dict[str, Any]]:
        t = self._t
        correction = float(np.asarray(action, dtype=np.float32).reshape(-1)[0])
        priority = priority_from(self._conv.texts[t], correction)
        changed = False
        if len(self._kept) < self._capacity:
            self._kept.append(t)
            self._priority.append(self._stored_priority(t))
            self._count(t, 1)
            changed = True
        else:
            # Kept turns stay in the order they came (as a memory lists its records,
            # oldest first), so ties go to the oldest, as in the policy.
            weakest = int(np.argmin(self._priority))
            if priority > self._priority[weakest]:
                self._count(self._kept[weakest], -1)
                del self._kept[weakest], self._priority[weakest]
                self._kept.append(t)
                self._priority.append(self._stored_priority(t))
                self._count(t, 1)
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
