"""The learned policy's cross-validated recall over training seeds, against the heuristics.

One PPO run is one draw: this runs ``python -m langchain_agentmem.rl.report`` (3-fold
cross-validation, the learned policy scored only on conversations it never saw) once per
seed into ``--work/seed<N>`` (skipped when that folder already holds a report) and writes
the spread side by side.

Usage::

    python benchmarks/experiments/policy_seeds.py --data ../shared/datasets/locomo/locomo_dev.json \
        --seeds 0,1,2 --work /tmp/policy-seeds --out benchmarks/experiments/results/policy_seeds.txt
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_agentmem.rl import report

CATEGORIES = ("cat1", "cat2", "cat3", "cat4")


def row(name: str, entry: dict[str, Any]) -> str:
    """One table row: recall@10 and its four categories."""
    cats = " ".join(f"{entry[f'recall@10/{c}']:>6.3f}" for c in CATEGORIES)
    return f"{name:<22} {entry['recall@10']:>9.3f} {cats}"


def main(argv: Sequence[str] | None = None) -> None:
    """Run (or reuse) one report per seed; print and write the spread."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", required=True, help="LoCoMo JSON file")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--steps", type=int, default=150_000)
    parser.add_argument("--work", required=True, help="folder for one report per seed")
    parser.add_argument("--out", help="text file for the table")
    parser.add_argument(
        "--no-warm-start", action="store_true", help="PPO from the importance rule, no fit first"
    )
    parser.add_argument(
        "--extra", help="conversations added to every training fold, never scored (rl.report)"
    )
    parser.add_argument(
        "--extra-share", help="share of training steps on --extra's conversations (rl.report)"
    )
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    reports = {}
    for seed in seeds:
        folder = Path(args.work) / f"seed{seed}"
        if not (folder / "policy_locomo.json").exists():
            report.main(
                [
                    *("--data", args.data, "--out", str(folder)),
                    *("--steps", str(args.steps), "--seed", str(seed)),
                    *(["--no-warm-start"] if args.no_warm_start else []),
                    *(["--extra", args.extra] if args.extra else []),
                    *(["--extra-share", args.extra_share] if args.extra_share else []),
                ]
            )
        reports[seed] = json.loads((folder / "policy_locomo.json").read_text(encoding="utf-8"))
    head = f"{'policy':<22} {'recall@10':>9} " + " ".join(f"{c:>6}" for c in CATEGORIES)
    lines = []
    for budget in reports[seeds[0]]["budget"]:
        lines += [f"### budget {budget}", "", head, "-" * len(head)]
        learned = []
        for seed in seeds:
            entry = reports[seed]["budget"][budget]["learned"]
            learned.append(entry["recall@10"])
            lines.append(row(f"learned, seed {seed}", entry))
        lines.append(
            f"{'learned, mean':<22} {statistics.mean(learned):>9.3f}   "
            f"(range {min(learned):.3f}-{max(learned):.3f})"
        )
        table = reports[seeds[0]]["budget"][budget]
        for name in ("importance", "novelty", "fifo", "oracle (knows the evidence)"):
            lines.append(row(name.split(" (")[0], table[name]))
        lines.append("")
    text = "\n".join(lines)
    print(text)
    if args.out:
        command = "python benchmarks/experiments/policy_seeds.py " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
        Path(args.out).write_text(
            f"{command}\n\n{reports[seeds[0]]['protocol']} One cross-validation per PPO seed "
            f"({args.steps} steps per fold); the heuristics need no training and are the same "
            f"for every seed.\n\n{text}",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
