"""How much a chat model's labels count in search, chosen inside folds over the sets.

A record a chat model annotated holds its labels' words as hidden terms, each counting
``label_weight`` against 1 for its own words; a query takes the words of the namespace's
labels it matches by embedding at cosine ``label_match`` or more (``label_terms`` at most).
The defaults were read off the sets they are measured on. Here each set is scored with
the weights chosen on the others: the same stored annotations (one store, made once by
``benchmarks/annotations.py --keep``), searched with every pair of the grid.

Sets: the fact-change sets of ``benchmarks/annotations.py`` (``--n`` conversations of each
generated set, both hand-written ones), every turn kept, k=5. Choices inside folds: each
generated set is scored with the pair of the highest mean (cur@1 + cur@5 - stale>cur)
over the other generated sets; the hand-written sets with the pair chosen on all generated
sets; ties go to the lower weight, then to the higher match (the labels' lesser say).
Without a model no record holds labels, so these weights change nothing offline (LoCoMo
included).

Usage::

    eval "$(../shared/llm/serve-model)"
    PYTHONPATH=$PWD python benchmarks/annotations.py --n 1 --keep /tmp/annotated.db
    PYTHONPATH=$PWD python benchmarks/experiments/label_weights.py --store /tmp/annotated.db \\
        --n 1 --out benchmarks/experiments/results/label_weights.txt
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from langchain_agentmem import AgentMemory, HybridConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from annotations import conversations
from fact_change import SETS, Counts, score
from paired_restatements import held_out_rows

WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
MATCHES = (0.3, 0.4, 0.5, 0.6)

Figures = tuple[float, float, float, float]


def grid() -> dict[str, HybridConfig]:
    """Each pair of the grid, the shipped one first (marked)."""
    shipped = HybridConfig()
    out = {f"{shipped.label_weight} / {shipped.label_match} (shipped)": shipped}
    for weight in WEIGHTS:
        for match in MATCHES if weight > 0 else MATCHES[:1]:
            config = replace(shipped, label_weight=weight, label_match=match)
            if config != shipped:
                out[f"{weight} / {match}" if weight > 0 else "0 (labels unused)"] = config
    return out


def gain(figures: Figures) -> float:
    """What a choice maximises: cur@1 + cur@5 - stale>cur."""
    return figures[0] + figures[1] - figures[2]


def main(argv: Sequence[str] | None = None) -> None:
    """Score every pair on the kept store; choose inside folds; print and write."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True, help="annotations.py --keep")
    parser.add_argument("--n", type=int, default=1, help="as given to annotations.py")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    raws = conversations(args.n)
    configs = grid()
    facts: dict[str, dict[str, Figures]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "annotated.db"
        shutil.copyfile(args.store, store)
        for label, config in configs.items():
            with AgentMemory(f"sqlite:///{store}", hybrid=config) as memory:
                facts[label] = {
                    name: sum((score(memory, conv) for conv in raw), Counts()).figures()
                    for name, raw in raws.items()
                }
    generated = [name for name, *_ in SETS]

    def choose(train: list[str]) -> str:
        return max(
            configs,
            key=lambda label: (
                round(float(np.mean([gain(facts[label][s]) for s in train])), 9),
                -configs[label].label_weight,
                configs[label].label_match,
            ),
        )

    width = max(map(len, configs)) + 2
    head = f"{'label_weight / label_match':<{width}}" + "".join(
        f"{name + ': cur@1 cur@5 st>cur':>30}" for name in raws
    )
    lines = [head, "-" * len(head)]
    for label in configs:
        lines.append(
            f"{label:<{width}}"
            + "".join(f"{'':>9}" + "".join(f"{a:>7.3f}" for a in facts[label][s][:3]) for s in raws)
        )
    picks = {s: choose([t for t in generated if t != s]) for s in generated}
    overall = choose(generated)
    picks.update({s: overall for s in raws if s not in generated})
    shipped = next(iter(configs))
    title = "Each set scored with the pair chosen on the other generated sets:"
    lines += held_out_rows(title, list(raws), picks, facts, shipped, "shipped", width)
    for label in dict.fromkeys([shipped, *picks.values()]):
        mean = np.mean([facts[label][s] for s in raws], axis=0)
        lines.append(f"mean over the sets, {label}: " + " ".join(f"{a:.3f}" for a in mean.tolist()))
    lines += ["", f"Chosen on all generated sets: {overall}."]
    text = "\n".join(lines)
    print(text)
    if args.out:
        command = "python benchmarks/experiments/label_weights.py " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
        intro = (
            f"{args.n} conversation(s) of each generated fact-change set and both "
            "hand-written sets, every turn kept, k=5, searched over one store the model "
            f"annotated (benchmarks/annotations.py --keep). Ran in "
            f"{time.perf_counter() - started:.0f} s."
        )
        args.out.write_text(f"{command}\n\n{intro}\n\n{text}\n", encoding="utf-8")


if __name__ == "__main__":
    main()
