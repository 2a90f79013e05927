"""What a stored question is worth: LoCoMo recall with repeated questions skipped and
question-only records weighed down.

A user's question is kept as a memory (it shows what they care about), but it is rarely the
answer, and a question matches a later question best. Two rules are scored here, side by
side, every turn kept:

- ``skip repeats``: a turn that only asks (:func:`~langchain_agentmem.text.replies.only_asks`)
  is not stored when the same speaker already holds a question-only record whose cosine to
  it is at least ``t`` (cosine alone: more than ``AgentMemory`` skips, which also needs one
  question's content words to hold the other's);
- ``question weight f``: a question-only record's final hybrid score is multiplied by ``f``
  (the record still lifts the answer after it at its full score).

Each weight is also chosen per held-out conversation on the other five (leave one
conversation out, the best mean recall@10 on the five), and that choice's held-out figure
reported. Per category: recall@10.

Usage::

    PYTHONPATH=$PWD python benchmarks/experiments/question_records.py \\
        --data ../shared/datasets/locomo/locomo_dev.json \\
        --out benchmarks/experiments/results/question_records.txt
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from langchain_agentmem.locomo import CATEGORIES
from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.rl.data import Conversation, embed_conversations, load_locomo
from langchain_agentmem.rl.retrieval import hybrid_results
from langchain_agentmem.text.replies import only_asks

POOL = 100
KS = (1, 5, 10)
WEIGHTS = (1.0, 0.95, 0.9, 0.85, 0.8, 0.7, 0.6)
REPEATS = (None, 0.95, 0.9, 0.85)
UNWEIGHED = replace(HybridConfig(), question_weight=1.0)
"""The shipped search with questions unweighed (each row weighs them itself)."""


def repeats(conv: Conversation, threshold: float | None) -> set[int]:
    """Turns skipped as a repeat of an earlier question-only turn of the same speaker."""
    if threshold is None:
        return set()
    asking = [i for i, t in enumerate(conv.turns) if only_asks(t.text)]
    skipped: set[int] = set()
    kept: list[int] = []
    for i in asking:
        same = [j for j in kept if conv.turns[j].speaker == conv.turns[i].speaker]
        if same and float(np.max(conv.turn_vectors[same] @ conv.turn_vectors[i])) >= threshold:
            skipped.add(i)
        else:
            kept.append(i)
    return skipped


def reweighed(found: list[tuple[int, float]], questions: set[int], weight: float) -> list[int]:
    """``found`` re-ranked with question-only records' scores times ``weight``."""
    scored = [(rid, score * weight if rid in questions else score) for rid, score in found]
    return [rid for rid, _ in sorted(scored, key=lambda x: (-x[1], x[0]))]


def recalls(conv: Conversation, ranked: Sequence[list[int]]) -> list[tuple[int, list[float]]]:
    """Per question with evidence: its category and evidence recall at each of ``KS``."""
    out = []
    for q, order in zip(conv.questions, ranked, strict=True):
        if q.category not in CATEGORIES or not q.evidence:
            continue
        ev = set(q.evidence)
        out.append((q.category, [len(ev & set(order[:k])) / len(ev) for k in KS]))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    convs = embed_conversations(load_locomo(args.data))
    # rows[(repeat, weight)][conv] = per-question (category, recalls)
    rows: dict[tuple[float | None, float], list[list[tuple[int, list[float]]]]] = {}
    skipped_counts: dict[float | None, int] = {}
    for threshold in REPEATS:
        skipped_counts[threshold] = 0
        per_conv: dict[float, list[list[tuple[int, list[float]]]]] = {w: [] for w in WEIGHTS}
        for conv in convs:
            skip = repeats(conv, threshold)
            skipped_counts[threshold] += len(skip)
            kept = [i for i in range(len(conv.turns)) if i not in skip]
            questions = {i for i in kept if only_asks(conv.turns[i].text)}
            found = hybrid_results(conv, kept, POOL, UNWEIGHED)
            for w in WEIGHTS:
                per_conv[w].append(recalls(conv, [reweighed(f, questions, w) for f in found]))
        for w in WEIGHTS:
            rows[(threshold, w)] = per_conv[w]
    total_turns = sum(len(c.turns) for c in convs)
    share = sum(sum(1 for t in c.turns if only_asks(t.text)) for c in convs) / max(total_turns, 1)

    def summary(per_conv: list[list[tuple[int, list[float]]]]) -> list[float]:
        flat = [r for conv in per_conv for r in conv]
        overall = [float(np.mean([r[1][j] for r in flat])) for j in range(len(KS))]
        cats = [float(np.mean([r[1][2] for r in flat if r[0] == c] or [0.0])) for c in CATEGORIES]
        return overall + cats

    lines = [
        f"python benchmarks/experiments/question_records.py --data {args.data}",
        "",
        f"LoCoMo dev, {len(convs)} conversations, {total_turns} turns, every turn kept; "
        f"{share:.1%} of turns only ask. Evidence recall@1/5/10 of categories 1-4; per "
        "category recall@10. 'skip t': question-only turns the same speaker already asked "
        "(cosine >= t to an earlier question-only turn of theirs) are not stored. 'weight f': "
        "question-only records' final scores times f.",
        "",
        f"{'rule':<28}{'skipped':>8}{'R@1':>8}{'R@5':>8}{'R@10':>8}"
        + "".join(f"{name:>12}" for name in CATEGORIES.values()),
    ]
    for (threshold, w), per_conv in rows.items():
        name = f"skip {threshold or '-'} weight {w}"
        vals = summary(per_conv)
        lines.append(
            f"{name:<28}{skipped_counts[threshold]:>8}"
            + "".join(f"{v:>8.4f}" for v in vals[:3])
            + "".join(f"{v:>12.3f}" for v in vals[3:])
        )
    lines += ["", "Leave one conversation out (weight chosen on the other five, best mean R@10):"]
    for threshold in REPEATS:
        held: list[tuple[int, list[float]]] = []
        chosen = []
        for i in range(len(convs)):

            def train_r10(w: float, i: int = i, threshold: float | None = threshold) -> float:
                flat = [r for j, c in enumerate(rows[(threshold, w)]) if j != i for r in c]
                return float(np.mean([r[1][2] for r in flat]))

            best = max(WEIGHTS, key=train_r10)
            chosen.append(best)
            held.extend(rows[(threshold, best)][i])
        vals = summary([held])
        lines.append(
            f"skip {threshold or '-'}: chosen weights {chosen}; held-out "
            + " ".join(f"R@{k} {v:.4f}" for k, v in zip(KS, vals[:3], strict=True))
            + "; "
            + " ".join(f"{n} {v:.3f}" for n, v in zip(CATEGORIES.values(), vals[3:], strict=True))
        )
    lines += ["", f"Ran in {time.perf_counter() - started:.0f} s."]
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
