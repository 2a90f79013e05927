"""One process serving many users: memory, parallel namespaces, bulk writes, reloads.

Prints, side by side in one run:

1. RSS against namespaces touched, with and without a cache bound: ``--records`` records in
   ``--namespaces`` namespaces, searched round-robin twice by a fresh process (one per
   setting, so the figures do not mix), and whether every result equals the uncapped one.
2. Adds/s on PostgreSQL with 1, 2, 4 and 8 threads of one process, each on its own
   namespace, against a bare psycopg transaction (advisory lock, two inserts, commit).
3. ``add_many`` into one SQLite namespace against a bare ``sqlite3`` ``executemany`` of the
   same rows (text, metadata, float32 blob) in one transaction.
4. The cost of reloading an evicted namespace: a small one, and one past the HNSW
   threshold (from its saved index, and rebuilt from the store).

Embeddings come from a table of precomputed vectors (hashed trigrams), so the figures are
the store's and the cache's, not the embedding model's.

Usage:
    python benchmarks/many_users.py [--records 100000] [--namespaces 4000]
        [--cap 10000] [--pg postgresql://postgres@127.0.0.1:5432/test]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from langchain_core.embeddings import Embeddings

from langchain_agentmem import AgentMemory

TOPICS = ["coffee", "mountains", "violin", "trains", "gardening", "chess", "sushi", "rain"]
DIMS = 384


def hash_vector(text: str) -> list[float]:
    """Hashed character trigrams of the words: deterministic, texts sharing words are close."""
    vec = np.zeros(DIMS, dtype=np.float32)
    for word in re.findall(r"\w+", text.lower()):
        padded = f"#{word}#"
        for i in range(max(1, len(padded) - 2)):
            h = zlib.crc32(padded[i : i + 3].encode())
            vec[h % DIMS] += 1.0 if (h >> 16) & 1 else -1.0
    return [float(x) for x in vec / (np.linalg.norm(vec) or 1.0)]


class HashEmbeddings(Embeddings):
    """:func:`hash_vector`, memoised: after the first call a text costs a dict lookup."""

    def __init__(self) -> None:
        self.table: dict[str, list[float]] = {}

    def _get(self, text: str) -> list[float]:
        found = self.table.get(text)
        if found is None:
            found = self.table[text] = hash_vector(text)
        return found

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed texts to store."""
        return [self._get(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed a query."""
        return self._get(text)


def note(ns: int, i: int) -> str:
    """The ``i``-th record text of namespace ``ns``."""
    return f"user {ns} note {i}: {TOPICS[(ns + i) % 8]} with {TOPICS[(ns * 3 + i) % 8]} on day {i}"


def rss_mb() -> float:
    """Resident set size of this process, MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


# -- 1. memory against namespaces touched ---------------------------------------------------
def populate(url: str, records: int, namespaces: int) -> float:
    """Write ``records`` records over ``namespaces`` namespaces; returns records/s."""
    per = records // namespaces
    mem = AgentMemory(url, embeddings=HashEmbeddings(), cache_records=1, persist_indexes=False)
    t0 = time.perf_counter()
    for ns in range(namespaces):
        mem.add_many([note(ns, i) for i in range(per)], namespace=f"u{ns}", thread="t")
    took = time.perf_counter() - t0
    mem.close()
    return records / took


def rss_child(url: str, namespaces: int, cap: int | None, out: str) -> None:
    """(In a fresh process) search every namespace round-robin twice; RSS along the way."""
    emb = HashEmbeddings()
    queries = [f"note about {t} on day 3" for t in TOPICS]
    for q in queries:
        emb.embed_query(q)
    kwargs = {} if cap is None else {"cache_records": cap}
    mem = AgentMemory(url, embeddings=emb, persist_indexes=False, **kwargs)  # type: ignore[arg-type]
    mem.search(queries[0], namespace="u0", k=5)
    base = rss_mb()
    marks = {namespaces // 8, namespaces // 4, namespaces // 2, namespaces}
    curve: list[tuple[int, float]] = []
    results: list[list[tuple[str, float]]] = []
    t0 = time.perf_counter()
    for rnd in range(2):
        for ns in range(namespaces):
            hits = mem.search(queries[ns % 8], namespace=f"u{ns}", k=5)
            results.append([(h.id, round(h.score or 0.0, 5)) for h in hits])
            if rnd == 0 and ns + 1 in marks:
                curve.append((ns + 1, rss_mb() - base))
    took = time.perf_counter() - t0
    info = mem.cache_info()
    Path(out).write_text(
        json.dumps(
            {
                "curve": curve,
                "end": rss_mb() - base,
                "results": results,
                "searches_per_s": 2 * namespaces / took,
                "info": [info.hits, info.misses, info.evictions, info.records],
            }
        )
    )


def bench_rss(records: int, namespaces: int, cap: int, tmp: Path) -> list[str]:
    url = f"sqlite:///{tmp / 'rss.db'}"
    rate = populate(url, records, namespaces)
    runs = {}
    for label, bound in (("uncapped", None), (f"cache_records={cap}", cap)):
        out = tmp / f"rss-{bound}.json"
        subprocess.run(
            [sys.executable, __file__, "--rss-child", url, str(namespaces), str(bound), str(out)],
            check=True,
        )
        runs[label] = json.loads(out.read_text())
    lines = [
        f"-- RSS: {records} records in {namespaces} namespaces (written at {rate:,.0f} records/s "
        "with add_many), each namespace searched round-robin twice by a fresh process",
        f"{'namespaces touched':>20}" + "".join(f"{label:>26}" for label in runs),
    ]
    first = next(iter(runs.values()))
    for i, (n, _) in enumerate(first["curve"]):
        lines.append(f"{n:>20}" + "".join(f"{r['curve'][i][1]:>23.1f} MB" for r in runs.values()))
    lines.append(
        f"{'after both rounds':>20}" + "".join(f"{r['end']:>23.1f} MB" for r in runs.values())
    )
    lines.append(
        f"{'searches/s':>20}" + "".join(f"{r['searches_per_s']:>26,.0f}" for r in runs.values())
    )
    capped = runs[f"cache_records={cap}"]
    hits, misses, evictions, held = capped["info"]
    same = capped["results"] == first["results"]
    lines.append(
        f"capped: hits {hits}, misses {misses}, evictions {evictions}, records held {held}; "
        f"every result equals the uncapped one: {same}"
    )
    return lines


# -- 2. PostgreSQL, threads on distinct namespaces -------------------------------------------
def bench_threads(pg: str, adds: int) -> list[str]:
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    url = f"{pg}{'&' if '?' in pg else '?'}schema={schema}"
    lines = [f"-- PostgreSQL: {adds} adds per thread, each thread on its own namespace"]
    try:
        mem = AgentMemory(url, embeddings=HashEmbeddings(), persist_indexes=False)
        mem.add("warm up", namespace="warm")
        base = 0.0
        for threads in (1, 2, 4, 8):
            texts = {t: [note(t, i) for i in range(adds)] for t in range(threads)}
            for t in texts.values():
                mem.embeddings.embed_documents(t)
            run = uuid.uuid4().hex[:6]

            def writer(t: int, run: str = run, texts: dict[int, list[str]] = texts) -> None:
                for text in texts[t]:
                    mem.add(text, namespace=f"{run}-{t}")

            workers = [threading.Thread(target=writer, args=(t,)) for t in range(threads)]
            t0 = time.perf_counter()
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            rate = threads * adds / (time.perf_counter() - t0)
            base = base or rate
            lines.append(f"{threads:>2} threads {rate:>8,.0f} adds/s   {rate / base:>5.2f}x")
        mem.close()
        with psycopg.connect(url.split("?")[0], autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}_bare")
            conn.execute(f"SET search_path = {schema}_bare")
            conn.execute("CREATE TABLE r (id TEXT, ns TEXT, text TEXT, e BYTEA)")
            conn.execute("CREATE TABLE d (seq BIGSERIAL, ns TEXT, text TEXT)")
            blob = np.zeros(DIMS, dtype="<f4").tobytes()
            t0 = time.perf_counter()
            for i in range(adds):
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('u', 0))")
                    conn.execute(
                        "INSERT INTO r VALUES (%s, 'u', %s, %s)", (str(i), note(0, i), blob)
                    )
                    conn.execute("INSERT INTO d (ns, text) VALUES ('u', %s)", (note(0, i),))
            bare = adds / (time.perf_counter() - t0)
            conn.execute(f"DROP SCHEMA {schema}_bare CASCADE")
        lines.append(f"bare psycopg transaction, one connection: {bare:,.0f}/s")
    finally:
        with psycopg.connect(pg, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    return lines


# -- 3. add_many against executemany --------------------------------------------------------
def bare_executemany(
    texts: list[str], metas: list[dict[str, Any]], vectors: list[list[float]], path: Path
) -> float:
    """Records per second of a bare ``sqlite3`` ``executemany`` of the rows, one transaction."""
    blobs = [np.asarray(v, dtype="<f4").tobytes() for v in vectors]
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA synchronous = NORMAL")
    con.execute("CREATE TABLE r (id TEXT UNIQUE, ns TEXT, text TEXT, meta TEXT, e BLOB)")
    t0 = time.perf_counter()
    con.execute("BEGIN")
    con.executemany(
        "INSERT INTO r VALUES (?, 'u', ?, ?, ?)",
        [
            (uuid.uuid4().hex, t, json.dumps(m), b)
            for t, m, b in zip(texts, metas, blobs, strict=True)
        ],
    )
    con.execute("COMMIT")
    rate = len(texts) / (time.perf_counter() - t0)
    con.close()
    return rate


def bench_bulk(n: int, tmp: Path) -> list[str]:
    texts = [note(7, i) for i in range(n)]
    metas = [{"source": "import", "i": i} for i in range(n)]
    emb = HashEmbeddings()
    vectors = emb.embed_documents(texts)
    bare = bare_executemany(texts, metas, vectors, tmp / "bare.db")
    lines = [f"-- SQLite: {n} records into one namespace in one call"]
    lines.append(f"bare sqlite3 executemany, one transaction: {bare:>10,.0f} records/s   1.00x")
    for policy, capacity in (("keep_all", None), ("fifo", n // 2)):
        mem = AgentMemory(
            f"sqlite:///{tmp / f'bulk-{policy}.db'}",
            embeddings=emb,
            policy=policy,
            capacity=capacity,
            persist_indexes=False,
        )
        t0 = time.perf_counter()
        mem.add_many(texts, namespace="u", metadatas=metas)
        rate = n / (time.perf_counter() - t0)
        label = (
            f"AgentMemory.add_many ({policy}{'' if capacity is None else f', capacity {capacity}'})"
        )
        lines.append(f"{label + ':':<42} {rate:>10,.0f} records/s   {rate / bare:.2f}x")
        mem.close()
    return lines


# -- 4. reloading an evicted namespace -------------------------------------------------------
def bench_reload(big: int, tmp: Path) -> list[str]:
    lines = ["-- reload of an evicted namespace (first search after eviction vs a cached search)"]
    emb = HashEmbeddings()
    url = f"sqlite:///{tmp / 'reload.db'}"
    with AgentMemory(url, embeddings=emb, cache_records=1) as mem:
        mem.add_many([note(1, i) for i in range(20)], namespace="small")
        for start in range(0, big, 5000):
            mem.add_many(
                [note(2, i) for i in range(start, min(big, start + 5000))], namespace="big"
            )
        mem.add("another user", namespace="other")
    query = "note about chess on day 4"
    emb.embed_query(query)
    for persist in (True, False):
        with AgentMemory(url, embeddings=emb, cache_records=big, persist_indexes=persist) as mem:
            for ns, size in (("small", 20), ("big", big)):
                if not persist and ns == "small":
                    continue
                mem.search(query, namespace=ns, k=5)
                t0 = time.perf_counter()
                mem.search(query, namespace=ns, k=5)
                cached = time.perf_counter() - t0
                mem.search(query, namespace="other", k=1)  # evicts ns when it is the big one
                if ns == "small":
                    mem._access.cache.discard(ns)  # the cache bound is far above 20: evict by hand
                t0 = time.perf_counter()
                mem.search(query, namespace=ns, k=5)
                reload_s = time.perf_counter() - t0
                how = "saved index" if persist else "rebuilt from the store"
                kind = "HNSW" if size >= 20000 else "flat"
                lines.append(
                    f"{ns:>6} ({size:>6} records, {kind}, {how:>22}): "
                    f"reload {reload_s * 1000:8.1f} ms   cached search {cached * 1000:6.2f} ms"
                )
    return lines


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--rss-child":
        _, _, url, namespaces, cap, out = sys.argv
        rss_child(url, int(namespaces), None if cap == "None" else int(cap), out)
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--namespaces", type=int, default=4000)
    parser.add_argument("--cap", type=int, default=10_000)
    parser.add_argument("--adds", type=int, default=300)
    parser.add_argument("--bulk", type=int, default=20_000)
    parser.add_argument("--big", type=int, default=25_000)
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}; load average before: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        for section in (
            lambda: bench_rss(args.records, args.namespaces, args.cap, Path(tmp)),
            lambda: bench_threads(args.pg, args.adds),
            lambda: bench_bulk(args.bulk, Path(tmp)),
            lambda: bench_reload(args.big, Path(tmp)),
        ):
            for line in section():
                print(line, flush=True)
            print()
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
