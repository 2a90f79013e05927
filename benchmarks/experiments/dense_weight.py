"""Hybrid search's cosine weight, chosen leave-one-conversation-out for the present vectors.

The weight (``HybridConfig.dense_weight``, 0.2) was chosen when records were embedded by
their whole text alone (``locomo_ablation.py``). Records of several sentences now carry
their sentences too (``sentence_vectors.py``), and dense search alone went from 0.481 to
0.602 recall@10. This script scores the shipped hybrid search over every turn at several
weights, per conversation, and picks the weight for each conversation on the other five.

Usage::

    PYTHONPATH=$PWD python benchmarks/experiments/dense_weight.py \
        --data ../shared/datasets/locomo/locomo_dev.json \
        --out benchmarks/experiments/results/dense_weight.txt
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from langchain_agentmem.index.hybrid import HybridConfig
from langchain_agentmem.rl.data import embed_conversations, load_locomo
from langchain_agentmem.rl.evaluate import per_question

WEIGHTS = (0.1, 0.2, 0.3, 0.4, 0.5)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", default="../shared/datasets/locomo/locomo_dev.json")
    parser.add_argument("--out", default=None, help="also write the table to this file")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    convs = embed_conversations(load_locomo(args.data))
    shipped = HybridConfig()
    recall: dict[tuple[float, str], list[float]] = {}
    for w in WEIGHTS:
        config = replace(shipped, dense_weight=w)
        for conv in convs:
            found = per_question(conv, np.arange(len(conv.turns)), 10, config=config)
            recall[(w, conv.sample_id)] = [hit for _, hit, _ in found]
    ids = [c.sample_id for c in convs]

    def pooled(w: float, among: Sequence[str]) -> float:
        return float(np.mean([r for i in among for r in recall[(w, i)]]))

    head = f"{'dense_weight':<16}{'R@10':>8}   " + " ".join(f"{i:>7}" for i in ids)
    lines = [
        "command: PYTHONPATH=$PWD python benchmarks/experiments/dense_weight.py --data "
        "../shared/datasets/locomo/locomo_dev.json "
        "--out benchmarks/experiments/results/dense_weight.txt",
        f"{len(convs)} conversations, every turn kept, evidence recall@10 of categories 1-4, "
        f"shipped hybrid search with only the cosine weight changed (shipped: "
        f"{shipped.dense_weight}); record vectors as shipped (whole text + sentences).",
        "",
        head,
        "-" * len(head),
    ]
    for w in WEIGHTS:
        per = " ".join(f"{pooled(w, [i]):>7.3f}" for i in ids)
        mark = "  (shipped)" if w == shipped.dense_weight else ""
        lines.append(f"{w:<16g}{pooled(w, ids):>8.4f}   {per}{mark}")
    held: list[float] = []
    chosen: list[str] = []
    for i in ids:
        rest = [j for j in ids if j != i]
        best = max(WEIGHTS, key=lambda w: pooled(w, rest))
        held.extend(recall[(best, i)])
        chosen.append(f"{i}: {best:g}")
    lines += [
        "",
        f"leave one conversation out (weight chosen on the other five): R@10 "
        f"{float(np.mean(held)):.4f}; chosen {', '.join(chosen)}",
        f"\nran in {time.perf_counter() - started:.0f} s",
    ]
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
