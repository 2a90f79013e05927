"""Synthetic conversations in which facts change, and how policies keep up with them.

:func:`measure_fact_change` runs policies through :class:`~langchain_agentmem.AgentMemory`
on conversations from :func:`~langchain_agentmem.rl.synthetic_conversations.generate` and
scores whether the current fact is what search finds; :func:`main` is the command line
(``python -m langchain_agentmem.rl.synthetic``) that writes such conversations or measures
every policy on them.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings

from langchain_agentmem.files import write_text
from langchain_agentmem.namespace.ops import UNQUOTE_POLICY
from langchain_agentmem.rl.synthetic_conversations import SLOT_SETS, generate, write
from langchain_agentmem.types import Decision

if TYPE_CHECKING:
    from langchain_agentmem.locomo import Conversation
    from langchain_agentmem.memory import AgentMemory

NAMESPACE = "facts"
"""The namespace each conversation is stored in (a memory of its own each)."""


@dataclass
class FactScores:
    """How one policy keeps up with changing facts (means over conversations)."""

    policy: str
    capacity: str
    questions: int = 0
    hits1: int = 0
    hits5: int = 0
    changed: int = 0
    """Current-fact questions whose fact changed at least once."""
    stale_above: int = 0
    """Of those, how many times an earlier statement ranked above the current one."""
    before_questions: int = 0
    before_hits5: int = 0
    ops: dict[str, int] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        """The scores as one table row."""
        return {
            "policy": self.policy,
            "capacity": self.capacity,
            "recall@1": self.hits1 / max(1, self.questions),
            "recall@5": self.hits5 / max(1, self.questions),
            "stale_above": self.stale_above / max(1, self.changed),
            "before_recall@5": self.before_hits5 / max(1, self.before_questions),
            **{k: self.ops.get(k, 0) for k in ("add", "update", "delete", "noop")},
        }

    def count(self, decisions: Iterable[Decision]) -> None:
        """Count the ops of an audit log."""
        for d in decisions:
            if d.policy == UNQUOTE_POLICY:
                continue  # a copy dropped with what it quoted: no decision
            key = d.kind.value.lower()
            self.ops[key] = self.ops.get(key, 0) + 1

    def score(
        self,
        found: Sequence[str],
        current: str,
        fact: Mapping[str, Any],
        text_of: Mapping[str, str],
        k: int,
    ) -> None:
        """Score one question: ``found`` (texts, best first) against the ``current`` fact's
        text and the earlier statements ``fact`` names stale (``text_of``: each turn id's
        text)."""
        pos = found.index(current) if current in found else k
        if fact["kind"] == "before":
            self.before_questions += 1
            self.before_hits5 += pos < k
            return
        self.questions += 1
        self.hits1 += pos == 0
        self.hits5 += pos < k
        if fact["stale"]:
            self.changed += 1
            stale = {text_of[d] for d in fact["stale"]}
            self.stale_above += any(t in stale for t in found[:pos])


def _remember(memory: AgentMemory, conv: Conversation, text_of: Mapping[str, str]) -> None:
    """Offer every turn of ``conv`` with ``add``, as ``agentmem bench locomo`` stores turns."""
    from langchain_agentmem.index.text import reply_texts
    from langchain_agentmem.locomo import turn_metadata

    replies = reply_texts(
        [t.speaker for t in conv.turns],
        [t.session for t in conv.turns],
        [text_of[t.dia_id] for t in conv.turns],
    )
    for t, reply in zip(conv.turns, replies, strict=True):
        memory.add(
            text_of[t.dia_id],
            namespace=NAMESPACE,
            thread=f"session-{t.session}",
            timestamp=t.date,
            record_id=f"{conv.sample_id}:{t.dia_id}",
            metadata=turn_metadata(t, reply),
        )


def measure_fact_change(
    data: Sequence[dict[str, Any]],
    policies: Sequence[str],
    *,
    budget: float = 0.25,
    embeddings: Embeddings | None = None,
    k: int = 5,
    learned_path: str | os.PathLike[str] | None = None,
) -> list[dict[str, Any]]:
    """Run each policy through ``AgentMemory`` on ``data`` and score current-fact questions.

    Every turn is offered with ``add`` (the session's date as timestamp, the speaker in
    the metadata, as ``agentmem bench locomo`` stores turns) to a fresh memory
    on a temporary SQLite file; then each question is asked with the default hybrid
    ``search``. A hit is a returned record whose text is the evidence turn's text (an
    UPDATE keeps the record id but takes the new text, so texts, not ids, say what memory
    holds).

    Args:
        data: Conversations from :func:`generate` (LoCoMo format with ``fact`` on each qa).
        policies: Policy names; ``keep_all`` runs without a capacity.
        budget: Capacity as a share of each conversation's turns.
        embeddings: The embedding model (default: the bundled one).
        k: Records retrieved per question.
        learned_path: Folder of the network ``learned`` runs (``None``: the shipped one).

    Returns:
        One row per policy: ``recall@1`` and ``recall@{k}`` of the current fact,
        ``stale_above`` (share of changed facts where an earlier statement ranks above the
        current one, or is found while the current one is not), ``before_recall@{k}`` and
        op counts from the audit log.
    """
    from langchain_agentmem.embedding.embeddings import resolve_embeddings
    from langchain_agentmem.locomo import load_locomo, turn_text
    from langchain_agentmem.memory import AgentMemory
    from langchain_agentmem.policies.learned import LearnedPolicy
    from langchain_agentmem.rl.budget import capacity_for

    emb = resolve_embeddings(embeddings)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        file = write(Path(tmp) / "facts.json", data)
        convs, _ = load_locomo(file)
        facts = {str(s["sample_id"]): [q["fact"] for q in s["qa"]] for s in data}
        for name in policies:
            scores = FactScores(name, "-")
            caps = []
            for c_i, conv in enumerate(convs):
                cap = None if name == "keep_all" else capacity_for(budget, len(conv.turns))
                caps.append(str(cap) if cap else "all")
                text_of = {t.dia_id: turn_text(t) for t in conv.turns}
                url = f"sqlite:///{Path(tmp) / f'{name}-{c_i}.db'}"
                policy: Any = name
                if name == "learned" and learned_path is not None and cap is not None:
                    policy = LearnedPolicy(cap, path=learned_path)
                with AgentMemory(url, embeddings=emb, policy=policy, capacity=cap) as mem:
                    _remember(mem, conv, text_of)
                    scores.count(mem.decisions(NAMESPACE))
                    for q, fact in zip(conv.questions, facts[conv.sample_id], strict=True):
                        found = [r.text for r in mem.search(q.question, namespace=NAMESPACE, k=k)]
                        scores.score(found, text_of[q.evidence[0]], fact, text_of, k)
            scores.capacity = "/".join(sorted(set(caps), key=caps.index))
            rows.append(scores.row())
    return rows


def format_table(rows: Sequence[dict[str, Any]], k: int = 5) -> str:
    """Rows of :func:`measure_fact_change` as a fixed-width text table."""
    head = (
        f"{'policy':<17} {'capacity':<12} {'cur@1':>6} {'cur@' + str(k):>6} {'stale>cur':>9} "
        f"{'before@' + str(k):>9} {'ADD':>5} {'UPDATE':>6} {'DELETE':>6} {'NOOP':>5}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r['policy']:<17} {r['capacity']:<12} {r['recall@1']:>6.3f} {r['recall@5']:>6.3f} "
            f"{r['stale_above']:>9.3f} {r['before_recall@5']:>9.3f} {r['add']:>5} "
            f"{r['update']:>6} {r['delete']:>6} {r['noop']:>5}"
        )
    return "\n".join(lines)


ALL_POLICIES = (
    "keep_all", "fifo", "lru", "random", "importance", "novelty", "forgetting_curve", "learned",
)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m langchain_agentmem.rl.synthetic --out FILE``: measure every policy."""
    import argparse
    import sys
    import time

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=3, help="conversations")
    parser.add_argument("--turns", type=int, default=150, help="turns per conversation")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=float, default=0.25)
    parser.add_argument("--policies", default=",".join(ALL_POLICIES))
    parser.add_argument(
        "--slots",
        default="tuned",
        help=f"the facts and phrasings, one of {', '.join(SLOT_SETS)} or several joined by "
        "commas (the i-th set takes seed + i): the ones rankings were tuned on, the held-out "
        "ones, the check set written after the first ranking rule was fixed, the fresh set "
        "written before its present thresholds were chosen, the unseen set written after, or "
        "the sealed set written before the next ranking change was designed",
    )
    parser.add_argument("--out", help="text file for the table (default: print only)")
    parser.add_argument(
        "--learned-path", help="folder of the network 'learned' runs (default: the shipped one)"
    )
    parser.add_argument(
        "--write",
        help="write the conversations to this LoCoMo-format file and stop (no measurement)",
    )
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.slots.split(",")]
    unknown = [name for name in names if name not in SLOT_SETS]
    if unknown:
        parser.error(f"unknown --slots {unknown}; choose from {', '.join(SLOT_SETS)}")
    data = [
        conv
        for i, name in enumerate(names)
        for conv in generate(args.n, seed=args.seed + i, turns=args.turns, slots=SLOT_SETS[name])
    ]
    if args.write:
        print(f"wrote {len(data)} conversations to {write(args.write, data)}")
        return
    t0 = time.perf_counter()
    rows = measure_fact_change(
        data, args.policies.split(","), budget=args.budget, learned_path=args.learned_path
    )
    table = format_table(rows)
    print(table)
    if args.out:
        n_q = sum(q["fact"]["kind"] == "current" for s in data for q in s["qa"])
        n_b = sum(q["fact"]["kind"] == "before" for s in data for q in s["qa"])
        cmd = "python -m langchain_agentmem.rl.synthetic " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
        write_text(
            args.out,
            f"{cmd}\n\n{args.n} synthetic conversations ({args.slots} facts and phrasings, "
            f"seed {args.seed}, {args.turns} turns, "
            f"6 sessions), {n_q} current-fact and {n_b} 'before' questions; capacity = "
            f"round({args.budget} x turns) per conversation; default hybrid search, k=5.\n"
            "cur@k: the latest statement of the fact is in the top k. stale>cur: share of "
            "changed facts where an earlier statement ranks above the current one (or is in the "
            "top 5 while the current one is not). before@5: "
            "'before ...' questions find the earlier statement. Op counts from the audit "
            f"log, all conversations. Ran in {time.perf_counter() - t0:.0f} s.\n\n"
            f"{table}\n",
            private=False,
        )


if __name__ == "__main__":
    main()
