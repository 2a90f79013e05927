"""What one ``add`` and one search cost, this tree beside earlier releases, in one run.

Each tree (this checkout, and each ``--against`` git revision, unpacked with ``git archive``)
runs in its own process, rounds interleaved: the first ``--turns`` turns of a LoCoMo
conversation are added one by one to a fresh SQLite file (as ``agentmem bench`` stores them),
and after each add the same text is embedded alone; then each of the conversation's
questions is searched (hybrid, k=10) and, beside it, embedded alone and looked up in a bare
faiss index of the same vectors. The bare embedding is the model alone, as ``agentmem bench``
calls it (``bench.runner._bare_encoder``). Ratios are of medians
(add) and of 95th percentiles (search) within one process, so the trees are compared on the
same cores at the same time; each figure is the median ratio over the rounds.

Usage::

    python benchmarks/release_cost.py --data ../shared/datasets/locomo/locomo_dev.json \\
        --against 5ad3511 --against 924ec53 --out benchmarks/results/release_cost.txt
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(data: Path, turns: int) -> dict[str, float]:
    """Add and search against their bare work, in ms, in this process's ``langchain_agentmem``."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import faiss
    import numpy as np
    import torch

    from langchain_agentmem import AgentMemory
    from langchain_agentmem.bench.runner import _bare_encoder
    from langchain_agentmem.index.text import reply_texts
    from langchain_agentmem.locomo import load_locomo, turn_metadata, turn_text

    torch.set_num_threads(1)
    conv = load_locomo(data)[0][0]
    texts = [turn_text(t) for t in conv.turns]
    replies = reply_texts([t.speaker for t in conv.turns], [t.session for t in conv.turns], texts)
    adds: list[float] = []
    bare: list[float] = []
    searches: list[float] = []
    bare_searches: list[float] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        AgentMemory(f"sqlite:///{Path(tmp) / 'cost.db'}") as memory,
    ):
        encode = _bare_encoder(memory)
        encode("warm up")
        for i, turn in enumerate(conv.turns[:turns]):
            t0 = time.perf_counter()
            memory.add(
                texts[i],
                namespace="release-cost",
                thread=f"session-{turn.session}",
                metadata=turn_metadata(turn, replies[i]),
                timestamp=turn.date,
                record_id=f"turn-{i}",
            )
            adds.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            encode(texts[i])
            bare.append(time.perf_counter() - t0)
        vectors = np.stack([r.embedding for r in memory.records("release-cost")]).astype("float32")
        index = faiss.IndexFlatIP(vectors.shape[1])
        index.add(vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
        memory.search("warm up", namespace="release-cost", k=10)  # loads the indexes once
        for q in conv.questions:
            t0 = time.perf_counter()
            memory.search(q.question, namespace="release-cost", k=10)
            searches.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            query = np.asarray(encode(q.question), dtype="float32")
            index.search(query.reshape(1, -1), 10)
            bare_searches.append(time.perf_counter() - t0)
    return {
        "add": statistics.median(adds) * 1e3,
        "bare": statistics.median(bare) * 1e3,
        "search": float(np.percentile(searches, 95)) * 1e3,
        "bare search": float(np.percentile(bare_searches, 95)) * 1e3,
    }


def unpack(revision: str, into: Path) -> Path:
    """The package as it was at ``revision``, unpacked under ``into``."""
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", revision, "langchain_agentmem"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def interleaved(
    revisions: Sequence[str], rounds: int, run: Callable[[Path], dict[str, float]]
) -> dict[str, list[dict[str, float]]]:
    """``run`` on this tree and each revision (unpacked), ``rounds`` times, trees interleaved."""
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"this tree": ROOT}
        for revision in revisions:
            trees[revision] = unpack(revision, Path(tmp) / revision)
        runs: dict[str, list[dict[str, float]]] = {label: [] for label in trees}
        for _ in range(rounds):
            for label, path in trees.items():
                runs[label].append(run(path))
    return runs


def run_tree(path: Path, data: Path, turns: int) -> dict[str, float]:
    """``measure`` in a fresh process importing the package from ``path``."""
    env = {**os.environ, "PYTHONPATH": str(path)}
    out = subprocess.run(
        [sys.executable, __file__, "--child", "--data", str(data), "--turns", str(turns)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--against", action="append", default=[], help="a git revision")
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.data, args.turns)))
        return
    runs = interleaved(args.against, args.rounds, lambda p: run_tree(p, args.data, args.turns))
    lines = []
    for what, bare, name in (("add", "bare", "p50"), ("search", "bare search", "p95")):
        head = f"{what} {name} ms"
        lines += [
            f"{'tree':<12}{head:>14}{f'bare {name} ms':>14}{f'{what}/bare':>13}   per round",
        ]
        for label, results in runs.items():
            ratios = [r[what] / r[bare] for r in results]
            lines.append(
                f"{label:<12}{statistics.median(r[what] for r in results):>14.1f}"
                f"{statistics.median(r[bare] for r in results):>14.1f}"
                f"{statistics.median(ratios):>12.2f}x   " + " ".join(f"{x:.2f}" for x in ratios)
            )
        lines.append("")
    command = "python benchmarks/release_cost.py --data {} {}--out {}".format(
        args.data, "".join(f"--against {r} " for r in args.against), args.out
    )
    load = os.getloadavg()[0]
    intro = (
        f"First {args.turns} turns of the first conversation, one add each into a fresh SQLite "
        f"file, then the same text embedded alone; then each of its questions searched (hybrid, "
        f"k=10), then embedded alone and looked up in a bare faiss index; {args.rounds} rounds, "
        f"trees interleaved, each in its own process; torch 1 thread. {os.cpu_count()} cores, "
        f"load average {load:.1f} at the end."
    )
    text = "\n".join([command, "", intro, "", *lines]).rstrip() + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
