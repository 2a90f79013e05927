"""What newer-first ranking adds to a hybrid search, side by side in one run.

For each conversation (every turn kept, one namespace), every question is searched with
four configurations, rounds interleaved: plain hybrid (``newer_first=False``), worded
changes only (``unmarked_standing=inf, pair_margin=inf``, the earlier release's rule), no
pairs (``pair_margin=inf``, the release before pairs) and the shipped default. Each pass
also builds the conversation's indexes, the same for all four, so the difference of
medians divided by the number of questions is what the ranking step adds per search.
LoCoMo dev (few questions ask for one present value) and the seeded fact-change
conversations (many do).

Usage::

    python benchmarks/newer_first_cost.py --data ../shared/datasets/locomo/locomo_dev.json \
        --out benchmarks/results/newer_first_cost.txt
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.ranking.newer_first import asks_current_value
from langchain_agentmem.rl.data import Conversation, embed_conversations, load_locomo
from langchain_agentmem.rl.retrieval import hybrid_results
from langchain_agentmem.rl.synthetic_conversations import SLOT_SETS, generate, write

CONFIGS = (
    ("plain", HybridConfig(newer_first=False)),
    ("worded only", HybridConfig(unmarked_standing=math.inf, pair_margin=math.inf)),
    ("no pairs", HybridConfig(pair_margin=math.inf)),
    ("default", HybridConfig()),
)
ROUNDS = 7


def per_search_ms(convs: list[Conversation]) -> dict[str, float]:
    """Median over rounds of each configuration's time per search, in milliseconds."""
    times: dict[str, list[float]] = {name: [] for name, _ in CONFIGS}
    searches = sum(len(c.questions) for c in convs)
    for _ in range(ROUNDS):
        for name, config in CONFIGS:
            t0 = time.perf_counter()
            for conv in convs:
                hybrid_results(conv, range(len(conv.turns)), 10, config)
            times[name].append((time.perf_counter() - t0) * 1000 / searches)
    return {name: statistics.median(values) for name, values in times.items()}


def main(argv: Sequence[str] | None = None) -> None:
    """Time the configurations on LoCoMo and on the fact-change sets."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", required=True, help="LoCoMo JSON file")
    parser.add_argument("--out", help="text file for the table")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    locomo = embed_conversations(load_locomo(args.data))
    with tempfile.TemporaryDirectory() as tmp:
        raw = [
            c
            for seed, name in enumerate(SLOT_SETS)
            for c in generate(2, seed=seed, slots=SLOT_SETS[name])
        ]
        facts = embed_conversations(load_locomo(write(Path(tmp) / "facts.json", raw)))
    lines = [
        f"{'conversations':<28}{'records':>9}{'searches':>10}{'one value':>11}"
        + "".join(f"{name + ' ms':>16}" for name, _ in CONFIGS)
        + f"{'default - plain':>17}"
    ]
    for label, convs in (("LoCoMo dev", locomo), ("fact change (2 per set)", facts)):
        ms = per_search_ms(convs)
        records = sum(len(c.turns) for c in convs) / len(convs)
        searches = sum(len(c.questions) for c in convs)
        eligible = sum(asks_current_value(q.text) for c in convs for q in c.questions)
        lines.append(
            f"{label:<28}{records:>9.0f}{searches:>10}{eligible:>11}"
            + "".join(f"{ms[name]:>16.3f}" for name, _ in CONFIGS)
            + f"{ms['default'] - ms['plain']:>17.3f}"
        )
    table = "\n".join(lines)
    print(table)
    if args.out:
        command = "python benchmarks/newer_first_cost.py " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
        Path(args.out).write_text(
            f"{command}\n\nPer search, milliseconds, median of {ROUNDS} interleaved rounds; each "
            "includes building the conversation's indexes once per pass (the same for every "
            "configuration), divided over its questions. 'records': mean turns per "
            "conversation; 'one value': questions newer-first may reorder. Load average at the "
            f"end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.\n\n{table}\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
