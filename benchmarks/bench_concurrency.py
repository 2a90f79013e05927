"""Add and search throughput with 1, 2, 4 and 8 writer processes on SQLite and PostgreSQL.

Every process opens its own ``AgentMemory`` on the same store and namespace; all start
together (a barrier), add ``--adds`` records each, meet again, then run ``--searches``
searches each (the default hybrid mode, after catching up with every other writer).
Throughput is all processes' operations over the wall time from the first start to the last
finish. Embeddings come from a hashed-trigram embedder so that the figures measure the
store, the change sequence and the indexes, not the embedding model (which costs ~10-20 ms
per text on this machine, see DESIGN.md).

Usage:
    python benchmarks/bench_concurrency.py [--adds 200] [--searches 200]
        [--pg postgresql://postgres@127.0.0.1:5432/test]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import re
import tempfile
import time
import uuid
import zlib
from typing import Any

import numpy as np
import psycopg
from langchain_core.embeddings import Embeddings

from langchain_agentmem import AgentMemory

TOPICS = ["coffee", "mountains", "violin", "trains", "gardening", "chess", "sushi", "rain"]


class HashEmbeddings(Embeddings):
    """Hashed character trigrams, 384 dims: deterministic and nearly free."""

    def _embed(self, text: str) -> list[float]:
        vec = np.zeros(384, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            padded = f"#{word}#"
            for i in range(max(1, len(padded) - 2)):
                h = zlib.crc32(padded[i : i + 3].encode())
                vec[h % 384] += 1.0 if (h >> 16) & 1 else -1.0
        return [float(x) for x in vec / (np.linalg.norm(vec) or 1.0)]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed texts to store."""
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed a query."""
        return self._embed(text)


def worker(url: str, w: int, adds: int, searches: int, barrier: Any, out: Any) -> None:
    """One writer process: adds, then searches, timing both phases."""
    mem = AgentMemory(url, embeddings=HashEmbeddings())
    barrier.wait()
    t0 = time.perf_counter()
    for i in range(adds):
        mem.add(f"writer {w} note {i} about {TOPICS[(w + i) % 8]}", namespace="bench")
    t1 = time.perf_counter()
    barrier.wait()
    t2 = time.perf_counter()
    for i in range(searches):
        mem.search(f"a note about {TOPICS[i % 8]}", namespace="bench", k=5)
    t3 = time.perf_counter()
    out.put((w, t0, t1, t2, t3))
    mem.close()


def run(url: str, writers: int, adds: int, searches: int) -> tuple[float, float]:
    """Aggregate (adds/s, searches/s) of ``writers`` processes on ``url``."""
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(writers)
    out = ctx.Queue()
    procs = [
        ctx.Process(target=worker, args=(url, w, adds, searches, barrier, out))
        for w in range(writers)
    ]
    for p in procs:
        p.start()
    times = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(60)
        if p.exitcode != 0:
            raise RuntimeError(f"a writer failed with exit code {p.exitcode}")
    add_wall = max(t[2] for t in times) - min(t[1] for t in times)
    search_wall = max(t[4] for t in times) - min(t[3] for t in times)
    return writers * adds / add_wall, writers * searches / search_wall


def main() -> None:
    """Print the throughput table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adds", type=int, default=200)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--writers", default="1,2,4,8")
    args = parser.parse_args()
    levels = [int(x) for x in args.writers.split(",")]

    print(f"adds / searches per process: {args.adds} / {args.searches}; cores: {os.cpu_count()}")
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print(f"{'store':<11}{'procs':>6}{'adds/s':>10}{'searches/s':>12}{'adds vs 1':>11}")
    for store in ("sqlite", "postgresql"):
        base = None
        for writers in levels:
            if store == "sqlite":
                folder = tempfile.mkdtemp(prefix="agentmem-bench-")
                url, cleanup = f"sqlite:///{folder}/bench.db", None
            else:
                schema = f"agentmem_bench_{uuid.uuid4().hex[:8]}"
                url, cleanup = f"{args.pg}?schema={schema}", schema
            try:
                adds, searches = run(url, writers, args.adds, args.searches)
            finally:
                if cleanup is not None:
                    with psycopg.connect(args.pg, autocommit=True) as conn:
                        conn.execute(f'DROP SCHEMA IF EXISTS "{cleanup}" CASCADE')
            base = base or adds
            print(f"{store:<11}{writers:>6}{adds:>10.0f}{searches:>12.0f}{adds / base:>10.2f}x")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
