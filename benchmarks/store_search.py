"""What a semantic search of ``AgentMemoryStore`` costs as a namespace grows.

Side by side in one run, at each size: ``store.search(ns, query=...)`` against the bare
query embedding it needs (the floor), and a search right after another process-like
writer changed the namespace (the store then decodes the namespace's field vectors again).
Real MiniLM (1 torch thread) on a SQLite file.

Usage::

    python benchmarks/store_search.py --out benchmarks/results/store_search.txt
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
from langgraph.store.base import PutOp

from langchain_agentmem import AgentMemory, AgentMemoryStore

SIZES = (100, 1000, 3000)
ROUNDS = 15


def median_ms(step: Callable[[int], object]) -> float:
    """Median wall time of ``step(i)`` over :data:`ROUNDS` rounds, in milliseconds."""
    times = []
    for i in range(ROUNDS):
        t0 = time.perf_counter()
        step(i)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main(argv: Sequence[str] | None = None) -> None:
    """Fill one namespace step by step; time the three paths at each size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", help="text file for the table")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    tmp = Path(tempfile.mkdtemp(prefix="agentmem-store-search-"))
    memory = AgentMemory(f"sqlite:///{tmp / 'store.db'}")
    store = AgentMemoryStore(memory)
    writer = AgentMemoryStore(memory)  # another store object: its writes are not this one's
    ns = ("memories", "user")
    embed = memory.embeddings.embed_query
    lines = [
        f"{'items':>6} {'embed query':>12} {'search':>8} {'ratio':>6} "
        f"{'search after a write':>21} {'ratio':>6}",
    ]
    done = 0
    for size in SIZES:
        store.batch(
            [
                PutOp(ns, f"k{i}", {"text": f"Fact {i} about topic {i % 37} and place {i % 11}."})
                for i in range(done, size)
            ]
        )
        done = size
        store.search(ns, query="warm-up", limit=4)
        bare = median_ms(lambda i: embed(f"what about topic {i}?"))
        cached = median_ms(lambda i: store.search(ns, query=f"what about topic {i}?", limit=4))

        after: list[float] = []
        for i in range(ROUNDS):
            writer.put(ns, "moving", {"text": f"Moved note {i}."})
            t0 = time.perf_counter()
            store.search(ns, query=f"what about place {i}?", limit=4)
            after.append((time.perf_counter() - t0) * 1000)
        fresh = statistics.median(after)
        lines.append(
            f"{size:>6} {bare:>10.1f}ms {cached:>6.1f}ms {cached / bare:>6.2f} "
            f"{fresh:>19.1f}ms {fresh / bare:>6.2f}"
        )
    memory.close()
    table = "\n".join(lines)
    print(table)
    if args.out:
        command = "python benchmarks/store_search.py " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
        Path(args.out).write_text(
            f"{command}\n\nMedian of {ROUNDS} searches (limit 4) of one namespace, real MiniLM "
            "(1 torch thread), SQLite file; ratio = search / bare query embedding. 'after a "
            "write': another store object wrote to the namespace just before, so the field "
            "vectors are read and decoded again. Load average at the end: "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.\n\n{table}\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
