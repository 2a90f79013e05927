"""Changes worded as nothing new: a later statement paired with the older one it mirrors.

Newer-first places a later statement of a speaker above the older one it restates when it
is worded as a change ("now", "moved", ...) or stands out as an answer to the question.
A change worded as plain news ("Sam asked me out and I said yes." after "I'm seeing Alex,
we met at a friend's party.") does neither: it shares no word with "Who is Rosa seeing?",
its cosine to the question is ordinary, and the older statement stays first.

The idea scored here needs no knowledge of what the words mean: two short statements of
one speaker that are each other's nearest across time (the older one nearest the later
among the speaker's older statements, the later one nearest the older among its later
ones, by cosine over the pool's background as in :func:`~langchain_agentmem.index.
newer_first.background`) are one fact told twice; the later is placed above the older,
as a worded change is. Variants, side by side in one run, every turn kept, k=5, on top of
the shipped search:

- ``no pairs``: the search before pairing (``pair_margin`` off);
- ``margin M, words W``: pairs with a margin of at least ``M`` whose two texts hold at most
  ``W`` words each (a long turn mixes many things, and being nearest says "same subject",
  not "same fact"); a repeat of the same words is never placed above its copy. The shipped
  defaults are marked.

With ``--directions``, the variants are instead which way the two must be nearest, at
each margin with the shipped word limit: ``both`` (shipped), ``later`` (the older one is
the later one's nearest among its speaker's older statements; the later one need not be
the older one's nearest) and ``older`` (the later one is the older one's nearest among the
later ones).

Sets: the six fact-change sets of :mod:`recency_ablation`, the hand-written one, a second
one written by hand after the defaults were fixed (``news``: most changes told as news,
none of its figures seen before), and LoCoMo evidence recall of categories 1-4. Choices
inside folds: each generated set is scored with the variant of the highest mean (cur@5 -
stale>cur) over the other five, among variants whose LoCoMo recall@10, and recall@10 in
each category, are not below those without pairs; each LoCoMo conversation with the
variant chosen on all six generated sets and guarded by the other five LoCoMo
conversations. The hand-written sets are scored with the variant
chosen on all six generated sets.

Usage::

    PYTHONPATH=$PWD python benchmarks/experiments/paired_restatements.py \\
        --data ../shared/datasets/locomo/locomo_dev.json \\
        --out benchmarks/experiments/results/paired_restatements.txt
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from langchain_agentmem.locomo import CATEGORIES
from langchain_agentmem.ranking import HybridConfig, newer_first
from langchain_agentmem.rl.data import Conversation, embed_conversations, load_locomo
from langchain_agentmem.rl.retrieval import hybrid_results

sys.path.insert(0, str(Path(__file__).resolve().parent))
from aboutness import HAND, LocomoRows, Pools, locomo_summary, ranker
from question_records import recalls
from recency_ablation import SETS, embedded_sets, fact_scores

POOL = 100
NEWS = HAND.parent / "news_facts.json"
MARGINS = (0.15, 0.2, 0.25, 0.3)
WORDS = (12, 16, 24, 32, 10_000)
NONE = "no pairs"
DIRECTIONS = ("both", "later", "older")
HELD_OUT = "Each fact-change set scored with the variant chosen on the other sets:"
"""Which way two statements must be nearest to pair (``both``: as shipped)."""

PairRule = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[str]], np.ndarray]
"""The signature of :func:`~langchain_agentmem.ranking.newer_first.nearest_pairs`."""

Variant = tuple[HybridConfig, str]
"""Search settings and the direction pairs are read in."""


def variants(directions: bool = False) -> dict[str, Variant]:
    """Each variant's name, search settings and pair direction, no pairs first.

    Args:
        directions: Vary the direction of pairs at each margin (shipped word limit)
            instead of the margin and word limit.
    """
    before = replace(HybridConfig(), pair_margin=math.inf)
    out: dict[str, Variant] = {NONE: (before, "both")}
    for margin in MARGINS:
        grid = (
            [(d, HybridConfig().pair_words) for d in DIRECTIONS]
            if directions
            else [("both", w) for w in WORDS]
        )
        for direction, words in grid:
            config = replace(before, pair_margin=margin, pair_words=words)
            shipped = config == HybridConfig() and direction == "both"
            label = (
                f"{direction}, margin {margin}"
                if directions
                else f"margin {margin}, words {'any' if words >= 10_000 else words}"
            )
            out[label + (" (default)" if shipped else "")] = (config, direction)
    return out


def one_way_pairs(direction: str) -> PairRule:
    """:func:`~langchain_agentmem.ranking.newer_first.nearest_pairs`, nearest one way only.

    ``later``: the older statement is the later one's nearest; ``older``: the later one is
    the older one's nearest.
    """

    def pairs(
        margins: np.ndarray,
        eligible: np.ndarray,
        speaker: np.ndarray,
        when: np.ndarray,
        texts: list[str],
    ) -> np.ndarray:
        ok = newer_first.pair_candidates(eligible, speaker, when)
        m = np.where(ok, margins, -np.inf)
        axis = 1 if direction == "later" else 0
        out: np.ndarray = (
            ok & (m >= m.max(axis=axis, keepdims=True)) & newer_first.words_differ(texts)
        )
        return out

    return pairs


@contextmanager
def pairing(direction: str) -> Iterator[None]:
    """Newer-first reads pairs in ``direction`` inside the ``with`` block."""
    shipped = newer_first.nearest_pairs
    if direction != "both":
        newer_first.nearest_pairs = one_way_pairs(direction)
    try:
        yield
    finally:
        newer_first.nearest_pairs = shipped


FactSets = tuple[dict[str, Any], dict[str, list[Conversation]], list[str], list[Conversation]]
"""Raw fact-change sets by name, the same embedded, the set names, LoCoMo embedded."""


def fact_sets(n: int, data: str) -> FactSets:
    """The six generated sets (``n`` conversations each), both hand-written ones and LoCoMo."""
    raw, sets = embedded_sets(n)
    for name, path in (("hand", HAND), ("news", NEWS)):
        raw[name] = json.loads(path.read_text(encoding="utf-8"))
        sets[name] = embed_conversations(load_locomo(path))
    names = [*(name for name, *_ in SETS), "hand", "news"]
    return raw, sets, names, embed_conversations(load_locomo(data))


def variant_rows(
    labels: Sequence[str],
    facts: dict[str, dict[str, Sequence[float]]],
    locomo: dict[str, Sequence[float]],
    names: Sequence[str],
) -> list[str]:
    """A header and a row a variant: each set's four figures, then LoCoMo's."""
    width = max(map(len, labels)) + 2
    head = (
        f"{'variant':<{width}}"
        + "".join(f"{s + ': cur@1 cur@5 st>cur bef@5':>33}" for s in names)
        + "".join(f"{lab:>12}" for lab in ["R@1", "R@5", "R@10", *CATEGORIES.values()])
    )
    lines = [head, "-" * len(head)]
    for label in labels:
        row = f"{label:<{width}}"
        for s in names:
            c1, c5, st, b5 = facts[label][s]
            row += f"{c1:>14.3f} {c5:>5.3f} {st:>6.3f} {b5:>5.3f}"
        lines.append(row + "".join(f"{v:>12.4f}" for v in locomo[label]))
    return lines


def held_out_rows(
    title: str,
    names: Sequence[str],
    picks: dict[str, str],
    facts: dict[str, dict[str, Any]],
    reference: str,
    called: str,
    width: int,
) -> list[str]:
    """The table of each set in ``names`` scored with the variant chosen for it (``picks``),
    beside the figures of the variant ``reference`` (shown as ``called``), under ``title``."""
    sub = f"{'set':<10}{'chosen':<{width}}{'cur@1':>8}{'cur@5':>8}{'st>cur':>8}{'bef@5':>8}"
    lines = ["", title, "", sub, "-" * len(sub)]
    for s in names:
        lines.append(
            f"{s:<10}{picks[s]:<{width}}"
            + "".join(f"{a:>8.3f}" for a in facts[picks[s]][s])
            + f"   ({called}: "
            + " ".join(f"{a:.3f}" for a in facts[reference][s])
            + ")"
        )
    return lines


def write_result(
    out: str, script: str, argv: Sequence[str] | None, n: int, started: float, text: str
) -> None:
    """The result file: the command that made it, what was measured, ``text``."""
    command = f"python benchmarks/experiments/{script} " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    intro = (
        f"Every turn kept, k=5; {n} conversations per generated set; hand: "
        "benchmarks/data/aboutness_facts.json; news: benchmarks/data/news_facts.json. "
        "Columns as in recency_ablation.txt; LoCoMo: "
        "evidence recall of categories 1-4 (R@10 per category). Ran in "
        f"{time.perf_counter() - started:.0f} s."
    )
    Path(out).write_text(f"{command}\n\n{intro}\n\n{text}\n", encoding="utf-8")


def fact_parser(doc: str | None) -> argparse.ArgumentParser:
    """The options of an experiment over the fact-change sets and LoCoMo (``--data``,
    ``--n``, ``--out``), described by the first line of ``doc``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    parser.add_argument("--data", required=True, help="LoCoMo JSON file")
    parser.add_argument("--n", type=int, default=6, help="synthetic conversations per set")
    parser.add_argument("--out", help="text file for the results")
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Score every variant; choose inside folds; print and write the results."""
    parser = fact_parser(__doc__)
    parser.add_argument(
        "--directions", action="store_true", help="vary which way pairs are nearest"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    raw, sets, names, locomo = fact_sets(args.n, args.data)
    generated = [name for name, *_ in SETS]
    every: list[Conversation] = [c for name in names for c in sets[name]] + locomo
    configs = variants(args.directions)
    pools: dict[str, Pools] = {}
    for label, (config, direction) in configs.items():
        with pairing(direction):
            pools[label] = {
                c.sample_id: hybrid_results(c, range(len(c.turns)), POOL, config) for c in every
            }
    facts = {
        label: {s: fact_scores(sets[s], raw[s], ranker(pools[label])) for s in names}
        for label in configs
    }
    loco: dict[str, list[LocomoRows]] = {
        label: [
            recalls(c, [[rid for rid, _ in found] for found in pools[label][c.sample_id]])
            for c in locomo
        ]
        for label in configs
    }

    def locomo_of(label: str, skip: int | None = None) -> list[float]:
        return locomo_summary([r for i, c in enumerate(loco[label]) if i != skip for r in c])

    def choose(train: list[str], skip_locomo: int | None = None) -> str:
        floor = locomo_of(NONE, skip_locomo)
        guarded = [
            label
            for label in configs
            if all(
                a >= b - 1e-9
                for j, (a, b) in enumerate(zip(locomo_of(label, skip_locomo), floor, strict=True))
                if j >= 2  # recall@10 and each category's
            )
        ]

        def gain(label: str) -> tuple[float, bool]:
            figures = [facts[label][s] for s in train]
            return float(np.mean([f[1] - f[2] for f in figures])), label == NONE

        return max(guarded, key=gain)

    width = max(map(len, configs)) + 2
    labels = ["R@1", "R@5", "R@10", *CATEGORIES.values()]
    lines = variant_rows(
        list(configs), facts, {label: locomo_of(label) for label in configs}, names
    )

    picks = {s: choose([t for t in generated if t != s]) for s in generated}
    overall = choose(generated)
    picks["hand"] = picks["news"] = overall
    lines += held_out_rows(HELD_OUT, names, picks, facts, NONE, "no pairs", width)
    loco_picks = [choose(generated, i) for i in range(len(locomo))]
    held_rows = [r for i, name in enumerate(loco_picks) for r in loco[name][i]]
    held_locomo = locomo_summary(held_rows)
    lines += [
        "",
        "Chosen on all six generated sets: " + overall + ".",
        "LoCoMo, each conversation with the variant chosen on the six generated sets, guarded "
        "by the other five conversations: "
        + "; ".join(f"{c.sample_id}: {p}" for c, p in zip(locomo, loco_picks, strict=True))
        + ".",
        "  no pairs -> held out: "
        + ", ".join(
            f"{lab} {a:.4f}->{b:.4f}"
            for lab, a, b in zip(labels, locomo_of(NONE), held_locomo, strict=True)
        )
        + ".",
        "  per conversation, recall@10: "
        + "; ".join(
            f"{c.sample_id} {locomo_summary(loco[NONE][i])[2]:.3f}->"
            f"{locomo_summary(loco[p][i])[2]:.3f}"
            for i, (c, p) in enumerate(zip(locomo, loco_picks, strict=True))
        )
        + ".",
    ]
    default = next(label for label in configs if label.endswith("(default)"))
    for label in (NONE, default):
        per_conv = [
            fact_scores([c], raw[s], ranker(pools[label])) for s in generated for c in sets[s]
        ]
        cur5 = [f[1] for f in per_conv]
        stale = [f[2] for f in per_conv]
        lines.append(
            f"Over the {len(per_conv)} generated conversations, {label}: cur@5 mean "
            f"{np.mean(cur5):.3f}, sd {np.std(cur5):.3f}, min {min(cur5):.3f}; stale>cur mean "
            f"{np.mean(stale):.3f}, sd {np.std(stale):.3f}, max {max(stale):.3f}."
        )
    text = "\n".join(lines)
    print(text)
    if args.out:
        write_result(args.out, "paired_restatements.py", argv, args.n, started, text)


if __name__ == "__main__":
    main()
