"""Hybrid search's cosine weight, chosen leave-one-conversation-out for the present vectors.

The weight (``HybridConfig.dense_weight``) was first chosen when records were embedded by
their whole text alone (``locomo_ablation.py``). This script scores the shipped hybrid
search over every turn at several weights, per conversation, and picks the weight for each
conversation on the other five: among all weights, and among those at which a record that
shares only a rare word with the question still comes first
(``test_a_rare_word_finds_a_record_beyond_the_dense_candidates``: 0.25 and below; third at
0.3, see ``rare_terms.py``).

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

from langchain_agentmem.locomo import CATEGORIES
from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.rl.data import embed_conversations, load_locomo
from langchain_agentmem.rl.evaluate import per_question

WEIGHTS = (0.1, 0.2, 0.25, 0.3, 0.4, 0.5)
RARE_WORD_FIRST = (0.1, 0.2, 0.25)
"""The weights at which the rare-word test's record comes first."""


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", default="../shared/datasets/locomo/locomo_dev.json")
    parser.add_argument("--out", default=None, help="also write the table to this file")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    convs = embed_conversations(load_locomo(args.data))
    shipped = HybridConfig()
    recall: dict[tuple[float, str], list[float]] = {}
    categories: dict[str, list[int]] = {}
    for w in WEIGHTS:
        config = replace(shipped, dense_weight=w)
        for conv in convs:
            found = per_question(conv, np.arange(len(conv.turns)), 10, config=config)
            recall[(w, conv.sample_id)] = [hit for _, hit, _ in found]
            categories.setdefault(conv.sample_id, [category for category, _, _ in found])
    ids = [c.sample_id for c in convs]

    def pooled(w: float, among: Sequence[str]) -> float:
        return float(np.mean([r for i in among for r in recall[(w, i)]]))

    names = sorted(set(CATEGORIES.values()))

    def by_category(pick: dict[str, float]) -> str:
        """Recall@10 per category when each conversation is scored at ``pick[id]``."""
        hits: dict[str, list[float]] = {name: [] for name in names}
        for i in ids:
            for category, hit in zip(categories[i], recall[(pick[i], i)], strict=True):
                hits[CATEGORIES[category]].append(hit)
        return ", ".join(f"{name} {float(np.mean(hits[name])):.3f}" for name in names)

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
    lines += ["", "per category, recall@10:"]
    for w in WEIGHTS:
        lines.append(f"  {w:g} everywhere: {by_category(dict.fromkeys(ids, w))}")
    lines.append("")
    for among, label in ((WEIGHTS, "any weight"), (RARE_WORD_FIRST, "rare word first")):
        pick = {
            i: max(among, key=lambda w, i=i: pooled(w, [j for j in ids if j != i])) for i in ids
        }
        held = [hit for i in ids for hit in recall[(pick[i], i)]]
        lines += [
            f"leave one conversation out, {label} (chosen on the other five): R@10 "
            f"{float(np.mean(held)):.4f}; chosen "
            + ", ".join(f"{i}: {w:g}" for i, w in pick.items()),
            f"  held out per category: {by_category(pick)}",
        ]
    lines.append(f"\nran in {time.perf_counter() - started:.0f} s")
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
