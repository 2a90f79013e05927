"""Run memory policies over conversations under a budget and score what they kept.

A light in-process replay of what ``AgentMemory`` does on ``add``: the same policy
objects, the same ``Candidate`` / ``MemoryState`` they see, no store in between, so every
policy is measured side by side in seconds.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np
import numpy.typing as npt

from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.policies.base import MemoryPolicy
from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.rl.budget import capacity_for, check_budget
from langchain_agentmem.rl.data import Conversation
from langchain_agentmem.rl.retrieval import hybrid_orders, turn_metadata
from langchain_agentmem.types import Candidate, MemoryState, OpKind, RecordStat

IntArray = npt.NDArray[np.int64]


@dataclass
class Replay:
    """What a policy kept of one conversation, and how fast it decided."""

    kept: IntArray
    """Turn indices whose content memory holds at the end."""
    decide_ns: list[int] = field(default_factory=list)
    """Time of each ``decide`` call, in nanoseconds."""
    ops: dict[str, int] = field(default_factory=dict)
    """How many ops of each kind the policy returned."""


def replay(
    policy: MemoryPolicy, conv: Conversation, *, on_decision: Callable[..., None] | None = None
) -> Replay:
    """Offer the conversation's turns one by one to ``policy`` and apply its ops."""
    vectors = conv.turn_vectors
    metadata = turn_metadata(conv)
    content: dict[str, int] = {}  # record id -> turn whose text it holds
    stats: dict[str, RecordStat] = {}  # insertion order = oldest first
    ops_count = {k.value: 0 for k in OpKind}
    times: list[int] = []
    k_near = policy.needs_neighbours
    for i, turn in enumerate(conv.turns):
        when = datetime.fromtimestamp(turn.timestamp, tz=timezone.utc)
        cand = Candidate(
            id=f"t{i}",
            namespace=conv.sample_id,
            text=turn.text,
            embedding=vectors[i],
            thread=f"session-{turn.session}",
            metadata=metadata[i],
            timestamp=when,
        )
        neighbours: tuple[tuple[str, float], ...] = ()
        if k_near and content:
            ids = list(content)
            sims = vectors[[content[r] for r in ids]] @ vectors[i]
            top = np.argsort(-sims)[:k_near]
            neighbours = tuple((ids[j], float(sims[j])) for j in top)
        state = MemoryState(
            namespace=conv.sample_id,
            size=len(content),
            capacity=policy.capacity,
            records=tuple(stats.values()) if policy.needs_records else (),
            neighbours=neighbours,
        )
        t0 = time.perf_counter_ns()
        ops = policy.decide(cand, state)
        times.append(time.perf_counter_ns() - t0)
        if on_decision is not None:
            on_decision(i, ops)
        for op in ops:
            ops_count[op.kind.value] += 1
            if op.kind is OpKind.ADD:
                content[cand.id] = i
                stats[cand.id] = RecordStat(cand.id, when, when, None, 0, turn.text, cand.metadata)
            elif op.kind is OpKind.DELETE:
                for rid in op.record_ids:
                    content.pop(rid)
                    stats.pop(rid)
            elif op.kind is OpKind.UPDATE:
                for rid in op.record_ids:
                    content[rid] = i
                    old = stats[rid]
                    stats[rid] = RecordStat(
                        rid, old.created_at, when, None, 0, turn.text, cand.metadata, cand.thread
                    )
    kept = np.array(sorted(set(content.values())), dtype=np.int64)
    return Replay(kept=kept, decide_ns=times, ops=ops_count)


def recall_scores(
    conv: Conversation, kept: Sequence[int] | IntArray, k: int = 10
) -> dict[str, float]:
    """Evidence recall@k (hybrid search over the kept turns) overall and per category.

    Also ``retained``: the share of each question's evidence still in memory.
    """
    return summarise(per_question(conv, kept, k), k)


def summarise(per_q: Sequence[tuple[int, float, float]], k: int) -> dict[str, float]:
    """Mean recall and retention over ``(category, recall, retained)`` rows."""
    out: dict[str, float] = {}
    if not per_q:
        return out
    arr = np.array(per_q, dtype=np.float64)
    out[f"recall@{k}"] = float(arr[:, 1].mean())
    out["retained"] = float(arr[:, 2].mean())
    for cat in sorted({int(c) for c in arr[:, 0]}):
        out[f"recall@{k}/cat{cat}"] = float(arr[arr[:, 0] == cat, 1].mean())
    out["questions"] = float(len(per_q))
    return out


RETRIEVALS = ("hybrid", "dense")
"""How kept turns are searched when scored: ``AgentMemory``'s hybrid search, or cosine."""


def per_question(
    conv: Conversation,
    kept: Sequence[int] | IntArray,
    k: int = 10,
    retrieval: str = "hybrid",
    config: HybridConfig | None = None,
) -> list[tuple[int, float, float]]:
    """``(category, recall@k, retained)`` for each question of ``conv``.

    Args:
        conv: An embedded conversation.
        kept: Turn indices memory holds.
        k: Items retrieved per question.
        retrieval: ``"hybrid"`` (the search ``AgentMemory`` runs, over the kept turns) or
            ``"dense"`` (cosine only).
        config: Hybrid weights (default: what ``AgentMemory`` uses).
    """
    if retrieval not in RETRIEVALS:
        raise InvalidInputError(
            f"retrieval must be one of {', '.join(map(repr, RETRIEVALS))}, got {retrieval!r}"
        )
    kept_arr = np.asarray(kept, dtype=np.int64)
    rows: list[tuple[int, float, float]] = []
    kept_set = set(kept_arr.tolist())
    orders: list[list[int]] | None = None
    if kept_arr.size and retrieval == "hybrid":
        orders = hybrid_orders(conv, kept_arr, k, config)
    elif kept_arr.size:
        sims = conv.question_vectors @ conv.turn_vectors[kept_arr].T
        top = np.argsort(-sims, axis=1, kind="stable")[:, :k]
        orders = kept_arr[top].tolist()
    for qi, q in enumerate(conv.questions):
        ev = set(q.evidence)
        hit = 0.0 if orders is None else len(set(orders[qi]) & ev) / len(ev)
        rows.append((q.category, hit, len(kept_set & ev) / len(ev)))
    return rows


def evidence_weight(conv: Conversation) -> npt.NDArray[np.float64]:
    """Each turn's share of each question's evidence, summed over the questions."""
    weight = np.zeros(len(conv.turns))
    for q in conv.questions:
        for e in q.evidence:
            weight[e] += 1.0 / len(q.evidence)
    return weight


def oracle_kept(conv: Conversation, capacity: int) -> IntArray:
    """The turns an oracle that knows the evidence keeps (a reference, not a policy)."""
    order = np.argsort(-evidence_weight(conv), kind="stable")[:capacity]
    return np.sort(order).astype(np.int64)


PolicyFactory = Callable[[int, Conversation], MemoryPolicy]
"""Builds a policy for a capacity and the conversation it will see (for held-out models)."""


def _prefixed(values: dict[str, float], prefix: str) -> dict[str, float]:
    return {
        prefix + key: v
        for key, v in values.items()
        if key.startswith("recall@") or key == "retained"
    }


def evaluate(
    policies: dict[str, PolicyFactory],
    convs: Sequence[Conversation],
    budgets: Sequence[float],
    *,
    k: int = 10,
    with_oracle: bool = True,
    dense: bool = True,
) -> dict[str, dict[str, dict[str, float]]]:
    """Every policy at every budget on every conversation, side by side.

    Returns:
        ``{budget: {policy: {"recall@k": ..., "recall@k/catN": ..., "retained": ...,
        "decide_p50_us": ..., "decide_p95_us": ..., "dense/recall@k": ...}}}``, budgets
        as strings like ``"0.1"``; plain keys score ``AgentMemory``'s hybrid search over
        the kept turns, ``dense/`` keys cosine search over the same turns.
    """

    def score(
        entry_rows: list[tuple[int, float, float]],
        kept: IntArray,
        conv: Conversation,
        dense_rows: list[tuple[int, float, float]],
    ) -> None:
        entry_rows.extend(per_question(conv, kept, k))
        if dense:
            dense_rows.extend(per_question(conv, kept, k, "dense"))

    def summary(
        rows: list[tuple[int, float, float]], drows: list[tuple[int, float, float]]
    ) -> dict[str, float]:
        entry = summarise(rows, k)
        if dense:
            entry.update(_prefixed(summarise(drows, k), "dense/"))
        return entry

    out: dict[str, dict[str, dict[str, float]]] = {}
    for budget in budgets:
        check_budget(budget)
        table: dict[str, dict[str, float]] = {}
        for name, factory in policies.items():
            rows: list[tuple[int, float, float]] = []
            drows: list[tuple[int, float, float]] = []
            times: list[int] = []
            ops: dict[str, int] = {}
            for conv in convs:
                cap = capacity_for(budget, len(conv.turns))
                result = replay(factory(cap, conv), conv)
                score(rows, result.kept, conv, drows)
                times.extend(result.decide_ns)
                for key, n in result.ops.items():
                    ops[key] = ops.get(key, 0) + n
            entry = summary(rows, drows)
            us = np.array(times, dtype=np.float64) / 1000.0
            entry["decide_p50_us"] = float(np.percentile(us, 50))
            entry["decide_p95_us"] = float(np.percentile(us, 95))
            for key, n in ops.items():
                entry[f"ops/{key}"] = float(n)
            table[name] = entry
        if with_oracle:
            rows, drows = [], []
            for conv in convs:
                score(rows, oracle_kept(conv, capacity_for(budget, len(conv.turns))), conv, drows)
            table["oracle (knows the evidence)"] = summary(rows, drows)
        out[f"{budget:g}"] = table
    return out


HEURISTICS = ("fifo", "lru", "random", "importance", "novelty", "forgetting_curve")
"""Policies compared with the learned one."""


def heuristic_factories(names: Sequence[str] = HEURISTICS) -> dict[str, PolicyFactory]:
    """Factories of the named policies (fresh object per conversation)."""
    from langchain_agentmem.policies import make_policy

    def factory(name: str) -> PolicyFactory:
        return lambda cap, conv: make_policy(name, cap)

    return {n: factory(n) for n in names}


def _learned_from(layers: Any) -> PolicyFactory:
    from langchain_agentmem.policies.learned import LearnedPolicy

    return lambda cap, conv: LearnedPolicy(cap, layers=layers)


def compare_policies(
    data: str | os.PathLike[str],
    budgets: Sequence[float] = (0.1, 0.25),
    *,
    policies: Sequence[str] | None = None,
    learned_path: str | None = None,
    k: int = 10,
) -> dict[str, Any]:
    """Every policy at every budget on a LoCoMo-format file: ``{"budget": {...}, ...}``.

    The entry point for benchmark commands. The learned policy is the shipped one (or
    ``learned_path``); when it was trained on some of these conversations the result
    says so under ``learned_trained_on_these``: such figures are not held-out (use
    :func:`~langchain_agentmem.rl.train.cross_validate` for those).
    """
    from langchain_agentmem.policies.learned import load_policy
    from langchain_agentmem.rl.data import embed_conversations, load_locomo

    budgets = [check_budget(b) for b in budgets]
    convs = embed_conversations(load_locomo(data))
    names = list(policies) if policies is not None else [*HEURISTICS, "learned"]
    factories = heuristic_factories([n for n in names if n != "learned"])
    seen: list[str] = []
    if "learned" in names:
        layers, config = load_policy(learned_path)
        factories["learned"] = _learned_from(layers)
        ids = {c.sample_id for c in convs}
        seen = sorted(ids & set(config.get("trained_on", [])))
    return {
        "budget": evaluate(factories, convs, budgets, k=k),
        "conversations": [c.sample_id for c in convs],
        "learned_trained_on_these": seen,
    }
