"""What a hybrid ``score`` means: its distribution for evidence and for unrelated text.

On LoCoMo (every turn kept, the shipped hybrid search), it reports the scores of evidence
turns that reach the top 10, and the best score a question gets in *another* conversation
(text that cannot answer it), then how much of each a ``min_score`` keeps. Pick a
``min_score`` for ``AgentMemoryRecall`` / ``recall_node`` / ``AgentMemoryMiddleware`` from
the last table.

Usage::

    python benchmarks/score_distribution.py --data ../shared/datasets/locomo/locomo_dev.json \
        --out benchmarks/results/score_distribution.txt
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from langchain_agentmem.rl.data import embed_conversations, load_locomo
from langchain_agentmem.rl.retrieval import hybrid_results

THRESHOLDS = (0.05, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25)


def quantiles(values: Sequence[float]) -> str:
    """p10 / p25 / median / p75 / p90 of ``values``."""
    q = np.quantile(np.asarray(values), [0.1, 0.25, 0.5, 0.75, 0.9])
    return " ".join(f"{v:6.3f}" for v in q)


def main(argv: Sequence[str] | None = None) -> None:
    """Measure and print (and write) the distributions."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", required=True, help="LoCoMo JSON file")
    parser.add_argument("--out", help="text file for the tables")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    convs = embed_conversations(load_locomo(args.data))
    evidence: list[float] = []
    top1_right: list[float] = []
    top1_wrong: list[float] = []
    for conv in convs:
        results = hybrid_results(conv, range(len(conv.turns)), 10)
        for q, found in zip(conv.questions, results, strict=True):
            evidence.extend(score for rid, score in found if rid in q.evidence)
            if found:
                (top1_right if found[0][0] in q.evidence else top1_wrong).append(found[0][1])
    other: list[float] = []
    for i, conv in enumerate(convs):
        elsewhere = convs[(i + 1) % len(convs)]
        asked = dataclasses.replace(
            elsewhere, questions=conv.questions, question_vectors=conv.question_vectors
        )
        other.extend(found[0][1] for found in hybrid_results(asked, range(len(asked.turns)), 1))

    head = f"{'':34} {'n':>5}   {'p10':>6} {'p25':>6} {'median':>6} {'p75':>6} {'p90':>6}"
    rows = [
        ("evidence in the top 10", evidence),
        ("top 1, when it is evidence", top1_right),
        ("top 1, when it is not evidence", top1_wrong),
        ("best match in another conversation", other),
    ]
    lines = [head, "-" * len(head)]
    lines += [f"{name:34} {len(v):>5}   {quantiles(v)}" for name, v in rows]
    ev, ot = np.asarray(evidence), np.asarray(other)
    lines += [
        "",
        f"evidence in the top 10 scoring 0.25-0.5: {np.mean((ev >= 0.25) & (ev <= 0.5)):.0%}; "
        f"best match in another conversation under 0.1: {np.mean(ot < 0.1):.0%}",
        "",
        f"{'min_score':>9} {'evidence kept':>14} {'other conversation dropped':>27}",
    ]
    lines += [f"{t:>9.2f} {np.mean(ev >= t):>14.0%} {np.mean(ot < t):>27.0%}" for t in THRESHOLDS]
    table = "\n".join(lines)
    print(table)
    if args.out:
        command = "python benchmarks/score_distribution.py " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
        Path(args.out).write_text(
            f"{command}\n\nLoCoMo dev, every turn kept, default HybridConfig, questions of "
            "categories 1-4. 'another conversation': each question searched in the next "
            "conversation of the file, where nothing can answer it. Ran in "
            f"{time.perf_counter() - started:.0f} s.\n\n{table}\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
