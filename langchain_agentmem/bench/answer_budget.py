"""Rows of the answers table for memory policies under a budget.

Each policy decides, turn by turn, what a memory of ``budget`` x turns keeps (the replay
:func:`~langchain_agentmem.rl.evaluate.replay` that scores policies by recall); each
question is then searched over what was kept with the memory's own hybrid search
(:func:`~langchain_agentmem.rl.retrieval.hybrid_orders`) and its best ``k`` are shown to
the model by the shipped middleware, as :class:`~langchain_agentmem.bench.answer_rows.
GivenRow` shows any row's pick.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from langchain_agentmem.bench.answer_rows import ConversationRun, GivenRow, Picker
from langchain_agentmem.locomo import Conversation as LocomoConversation
from langchain_agentmem.rl.budget import capacity_for
from langchain_agentmem.rl.data import Conversation, Question, embed_conversations, load_locomo
from langchain_agentmem.rl.evaluate import PolicyFactory, heuristic_factories, replay
from langchain_agentmem.rl.retrieval import hybrid_orders


def with_every_question(conv: Conversation, asked: LocomoConversation) -> Conversation:
    """``conv`` (turns as policies see them) asking ``asked``'s questions, in their order,
    those without evidence included (their answers are scored too)."""
    index = {t.dia_id: i for i, t in enumerate(conv.turns)}
    questions = [
        Question(q.question, q.category, tuple(index[e] for e in q.evidence if e in index))
        for q in asked.questions
    ]
    return replace(conv, questions=questions)


class PolicyPicks:
    """What each policy keeps of each conversation at each budget, searched per question.

    Args:
        data: The LoCoMo file the bench reads.
        asked: The conversations as the bench loaded them (their questions are asked).
        factories: Policy name -> factory (default: every heuristic and the shipped
            learned policy).
        k: Memories shown per question.
    """

    def __init__(
        self,
        data: str | os.PathLike[str],
        asked: Sequence[LocomoConversation],
        *,
        factories: dict[str, PolicyFactory] | None = None,
        k: int,
    ) -> None:
        by_id = {c.sample_id: c for c in asked}
        convs = [c for c in load_locomo(data) if c.sample_id in by_id]
        asking = [with_every_question(c, by_id[c.sample_id]) for c in convs]
        self.convs = {c.sample_id: c for c in embed_conversations(asking)}
        self.factories = factories if factories is not None else default_factories()
        self.k = k
        self._orders: dict[tuple[str, float, str], list[list[int]]] = {}

    def picker(self, policy: str, budget: float) -> Picker:
        """The dia ids ``policy`` at ``budget`` shows for each question."""

        def pick(run: ConversationRun, qi: int) -> list[str]:
            conv = self.convs[run.conv.sample_id]
            key = (policy, budget, conv.sample_id)
            if key not in self._orders:
                self._orders.clear()  # one conversation at a time
                capacity = capacity_for(budget, len(conv.turns))
                kept = replay(self.factories[policy](capacity, conv), conv).kept
                self._orders[key] = hybrid_orders(conv, kept, self.k)
            return [conv.turns[i].dia_id for i in self._orders[key][qi]]

        return pick

    def rows(self, budgets: Sequence[float], **middleware: Any) -> list[GivenRow]:
        """A row per policy and budget, named ``policy@budget`` (``learned@0.1``)."""
        return [
            GivenRow(f"{name}@{budget:g}", self.picker(name, budget), **middleware)
            for budget in budgets
            for name in self.factories
        ]


def default_factories() -> dict[str, PolicyFactory]:
    """Every heuristic policy and the shipped learned one."""
    from langchain_agentmem.policies.learned import LearnedPolicy, load_policy
    from langchain_agentmem.rl.evaluate import HEURISTICS

    factories = heuristic_factories(HEURISTICS)
    layers, _ = load_policy(None)
    factories["learned"] = lambda cap, conv: LearnedPolicy(cap, layers=layers)
    return factories


def learned_trained_on(sample_ids: Sequence[str]) -> list[str]:
    """The conversations among ``sample_ids`` the shipped learned policy was trained on
    (its figures on them are not held out)."""
    from langchain_agentmem.policies.learned import load_policy

    _, config = load_policy(None)
    return sorted(set(sample_ids) & set(config.get("trained_on", [])))


__all__ = ["PolicyPicks", "default_factories", "learned_trained_on", "with_every_question"]
