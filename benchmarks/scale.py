"""Search latency with 10k and 100k records in one namespace: ours next to LangGraph's store.

Both sides get the same vectors and the same queries in the same run. Record and query
vectors are computed once up front (the embedding model would otherwise dominate both
sides equally), and each side is handed an embedding function that looks them up. What is
timed is the search call alone: for us ``AgentMemory.search(mode="dense")`` and the
default hybrid, for LangGraph ``InMemoryStore(index=...).search(namespace, query=...)``.

Usage:
    python benchmarks/scale.py --sizes 10000,100000 --queries 200 --out benchmarks/results/scale.txt
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_agentmem import AgentMemory
from langchain_agentmem.index import dense as dense_module

WORDS = [
    *("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"),
    *("juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo"),
    *("sierra", "tango", "uniform", "victor", "whiskey", "xray", "yankee", "zulu"),
]


class LookupEmbeddings(Embeddings):
    """Vectors computed in advance, looked up by text (same for both stores)."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.table[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.table[text]


def make_texts(n: int, rng: np.random.Generator) -> list[str]:
    idx = rng.integers(0, len(WORDS), size=(n, 6))
    return [f"record {i}: " + " ".join(WORDS[j] for j in row) for i, row in enumerate(idx)]


def percentiles(values: Sequence[float]) -> tuple[float, float]:
    arr = np.asarray(values) * 1000
    return float(np.percentile(arr, 50)), float(np.percentile(arr, 95))


def run(n: int, n_queries: int, lg_queries: int, dims: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    texts = make_texts(n, rng)
    queries = [f"query {i}: " + " ".join(rng.choice(WORDS, 3)) for i in range(n_queries)]
    # Clustered random unit vectors: a stand-in for sentence embeddings with structure.
    centres = rng.normal(size=(64, dims)).astype(np.float32)

    def unit(m: int) -> np.ndarray:
        x = centres[rng.integers(0, 64, m)] + 0.5 * rng.normal(size=(m, dims)).astype(np.float32)
        out: np.ndarray = x / np.linalg.norm(x, axis=1, keepdims=True)
        return out

    table = dict(zip(texts, unit(n).tolist(), strict=True))
    table.update(zip(queries, unit(n_queries).tolist(), strict=True))
    emb = LookupEmbeddings(table)
    lines = [f"n={n} records, {n_queries} queries, {dims} dims, k=10"]

    with tempfile.TemporaryDirectory() as tmp:
        mem = AgentMemory(f"sqlite:///{Path(tmp) / 'scale.db'}", embeddings=emb)
        t0 = time.perf_counter()
        for start in range(0, n, 1000):
            mem.add_many(texts[start : start + 1000], namespace="u")
        load_s = time.perf_counter() - t0
        mem.search(queries[0], namespace="u", k=10)  # builds the lexical index once
        ours: dict[str, list[float]] = {"dense": [], "hybrid": []}
        for q in queries:
            for mode in ours:
                t0 = time.perf_counter()
                mem.search(q, namespace="u", k=10, mode=mode)
                ours[mode].append(time.perf_counter() - t0)
        view = mem._access.cache.view("u")
        approximate = view.index is not None and view.index.approximate
        mem.close()
        t0 = time.perf_counter()
        with AgentMemory(f"sqlite:///{Path(tmp) / 'scale.db'}", embeddings=emb) as again:
            again.search(queries[0], namespace="u", k=1, mode="dense")
        reopen_s = time.perf_counter() - t0

    from langgraph.store.memory import InMemoryStore

    store = InMemoryStore(index={"dims": dims, "embed": emb, "fields": ["text"]})
    t0 = time.perf_counter()
    for i, text in enumerate(texts):
        store.put(("u",), str(i), {"text": text})
    lg_load_s = time.perf_counter() - t0
    theirs = []
    for q in queries[:lg_queries]:  # it scans every record in Python: keep it short
        t0 = time.perf_counter()
        store.search(("u",), query=q, limit=10)
        theirs.append(time.perf_counter() - t0)

    lg50, lg95 = percentiles(theirs)
    kind = "HNSW" if approximate else "exact flat"
    for mode, values in ours.items():
        p50, p95 = percentiles(values)
        lines.append(
            f"  agentmem search {mode:<7} ({kind}): p50 {p50:8.3f} ms  p95 {p95:8.3f} ms  "
            f"(p95 {lg95 / p95:6.1f}x faster than InMemoryStore)"
        )
    lines.append(
        f"  langgraph InMemoryStore search : p50 {lg50:8.3f} ms  p95 {lg95:8.3f} ms "
        f"(first {min(lg_queries, n_queries)} queries)"
    )
    lines.append(
        f"  load: agentmem add_many {load_s:.1f} s, reopen from saved index {reopen_s:.2f} s; "
        f"InMemoryStore put {lg_load_s:.1f} s"
    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--langgraph-queries", type=int, default=30)
    parser.add_argument("--dims", type=int, default=384)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    lines = [
        "command: python benchmarks/scale.py " + " ".join(sys.argv[1:]),
        f"HNSW threshold: {dense_module.default_hnsw_threshold()} records per namespace",
        "vectors precomputed (clustered random unit vectors) and looked up by both stores;",
        "timed: the search call alone, same queries, same run, 1 faiss thread",
        "",
    ]
    for n in (int(s) for s in args.sizes.split(",")):
        lines += run(n, args.queries, args.langgraph_queries, args.dims, args.seed)
        print("\n".join(lines[-5:]), flush=True)
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
