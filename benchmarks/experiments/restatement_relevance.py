"""How well a restatement must match the query, measured on what, before newer-first lifts it.

Newer-first places a later statement of a speaker just above an older one it restates, if
it matches the query at least ``restatement_relevance`` times as well as the best record
of the chain it joins. That share used to be read off the scores after the gain for the
speaker the query names (the same for every record of theirs) and after the thread
neighbours' lift (borrowed from the record next to it). On those, small talk passed: for
"Which city does Ines live in?" the reply "Spin is brutal, good luck." (cosine -0.02 to
the question, 0.10 of speaker gain) paired with another short turn and was placed first,
above "Writing to you from my new balcony in Lyon!". Now the share is read off the match
to the query alone (dense and BM25, as ``base_scores`` fuses them).

Variants, side by side in one run, every turn kept, k=5:

- ``before``: the share 0.3 on the scores with the speaker's gain and the lift;
- ``match, share S``: the share ``S`` on the query match (the shipped one marked).

Sets: the six generated fact-change sets, both hand-written ones and LoCoMo evidence
recall of categories 1-4, as in ``paired_restatements.py``. Choices inside folds: each
generated set is scored with the variant of the highest mean (cur@1 + cur@5 - stale>cur)
over the other five, among variants whose LoCoMo recall@10, and recall@10 in each
category, are not below ``before``'s; the hand-written sets with the variant chosen on all
six generated sets.

Usage::

    PYTHONPATH=$PWD python benchmarks/experiments/restatement_relevance.py \\
        --data ../shared/datasets/locomo/locomo_dev.json \\
        --out benchmarks/experiments/results/restatement_relevance.txt
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

import langchain_agentmem.ranking.search as search_module
from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.rl.retrieval import hybrid_results

sys.path.insert(0, str(Path(__file__).resolve().parent))
from aboutness import LocomoRows, locomo_summary, ranker
from paired_restatements import (
    HELD_OUT,
    fact_parser,
    fact_sets,
    held_out_rows,
    variant_rows,
    write_result,
)
from question_records import recalls
from recency_ablation import SETS, fact_scores

POOL = 100
SHARES = (0.05, 0.1, 0.15, 0.2, 0.3)
BEFORE = "before (0.3 of the scores)"


@contextmanager
def on_scores(active: bool) -> Iterator[None]:
    """Inside the block, newer-first reads the share off the scores, as before."""
    shipped = search_module.newer_first
    if active:

        def before(*args: Any, **kwargs: Any) -> dict[int, float]:
            kwargs.pop("match", None)
            return shipped(*args, **kwargs)

        search_module.newer_first = before
    try:
        yield
    finally:
        search_module.newer_first = shipped


def variants() -> dict[str, tuple[HybridConfig, bool]]:
    """Each variant's settings and whether it reads the share off the scores."""
    out = {BEFORE: (replace(HybridConfig(), restatement_relevance=0.3), True)}
    for share in SHARES:
        config = replace(HybridConfig(), restatement_relevance=share)
        mark = " (default)" if config == HybridConfig() else ""
        out[f"match, share {share}{mark}"] = (config, False)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """Score every variant; choose inside folds; print and write the results."""
    args = fact_parser(__doc__).parse_args(argv)
    started = time.perf_counter()
    raw, sets, names, locomo = fact_sets(args.n, args.data)
    generated = [name for name, *_ in SETS]
    every = [c for name in names for c in sets[name]] + locomo
    configs = variants()
    pools = {}
    for label, (config, before) in configs.items():
        with on_scores(before):
            pools[label] = {
                c.sample_id: hybrid_results(c, range(len(c.turns)), POOL, config) for c in every
            }
    facts = {
        label: {s: fact_scores(sets[s], raw[s], ranker(pools[label])) for s in names}
        for label in configs
    }
    loco: dict[str, LocomoRows] = {
        label: [
            row
            for c in locomo
            for row in recalls(
                c, [[rid for rid, _ in found] for found in pools[label][c.sample_id]]
            )
        ]
        for label in configs
    }
    summary = {label: locomo_summary(rows) for label, rows in loco.items()}
    guarded = [
        label
        for label in configs
        if all(
            a >= b - 1e-9 for a, b in list(zip(summary[label], summary[BEFORE], strict=True))[2:]
        )
    ]

    def choose(train: list[str]) -> str:
        def gain(label: str) -> float:
            return float(
                np.mean(
                    [facts[label][s][0] + facts[label][s][1] - facts[label][s][2] for s in train]
                )
            )

        return max(guarded, key=gain)

    lines = variant_rows(list(configs), facts, summary, names)
    picks = {s: choose([t for t in generated if t != s]) for s in generated}
    overall = choose(generated)
    picks["hand"] = picks["news"] = overall
    width = max(map(len, configs)) + 2
    lines += held_out_rows(HELD_OUT, names, picks, facts, BEFORE, "before", width)
    lines += [
        "",
        f"Chosen on all six generated sets: {overall}. Not below before on LoCoMo "
        f"(recall@10 and each category's): {', '.join(guarded)}.",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        write_result(args.out, "restatement_relevance.py", argv, args.n, started, text)


if __name__ == "__main__":
    main()
