"""Many workers, one PostgreSQL: stateless processes serving many users, side by side.

W worker processes each hold one ``AgentMemory`` on the same PostgreSQL behind a small HTTP
front (the standard library's ``ThreadingHTTPServer``, a thread a request), and a driver
sends them requests from C concurrent clients. Not ``agentmem mcp --http``: its tools embed
with the bundled model, which would be most of every figure; here every process embeds with
hashed trigrams (``many_users.HashEmbeddings``), so the figures are the store's and the
cache's. Requests go to a worker at random: no user is routed to a worker of its own (the
worst case for the caches, and what correctness must not need).

Users: ``--users`` (10,000) of skewed sizes (log-normal, median 50 records, clipped at
2,000; the largest few set to 25,000, 10,000, 5,000 and 2,000), written once with
``add_many`` into the schema ``--schema`` (kept between runs: ``--reuse``). Traffic: users
drawn by a Zipf law (a few users are most of it), 90% searches, 9% adds, 1% deletes of what
the run added.

Prints, in one run:

1. Cold search: the first search of a namespace on a worker that never saw it, by size, on
   ``--cold-rounds`` fresh workers one after the other.
2. Load at W = 1, 2, 4 for ``--seconds`` each, fresh workers, after ``--warmup`` seconds of
   the same traffic not counted (a worker's first loads of large users are part 1's):
   requests/s and the ratio to W = 1; search p50 / p95 / p99, warm and first on this
   worker; cache hits against ``--cache-records``; RSS per worker; PostgreSQL connections
   per worker and in all (``pg_stat_activity``, sampled every 0.2 s, the most seen). Then
   the baseline ``1u``: one worker, the same clients and mix, every request for one user.
3. Visibility between two workers: an add acknowledged by one, then searched on the other
   (stale: not found); a delete acknowledged by one, then searched on the other (stale:
   still found). Both counts must be 0.

Usage:
    python benchmarks/workers.py [--users 10000] [--clients 8] [--seconds 20]
        [--pg postgresql://postgres@127.0.0.1:5432/test] [--reuse]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from langchain_agentmem import AgentMemory

sys.path.insert(0, str(Path(__file__).resolve().parent))
from many_users import HashEmbeddings, note, rss_mb

ONE_USER_SIZE = 50
"""Records of the one user of the baseline: one process serving one user (the median size)."""
TAIL = (25_000, 10_000, 5_000, 2_000)
"""Sizes of the largest users (the rest: log-normal, median 50, at most 2,000)."""


def user_sizes(users: int, seed: int = 0) -> list[int]:
    """Records per user: most small, a few large (see :data:`TAIL`)."""
    rng = np.random.default_rng(seed)
    sizes = np.clip(np.round(rng.lognormal(np.log(50), 0.9, users)), 5, 2_000).astype(int)
    for i, size in enumerate(TAIL[:users]):
        sizes[i] = size
    return [int(s) for s in sizes]


def store_url(pg: str, schema: str, app: str) -> str:
    """``pg`` with a schema and an ``application_name`` (what ``pg_stat_activity`` shows)."""
    return f"{pg}{'&' if '?' in pg else '?'}schema={schema}&application_name={app}"


def populate(url: str, sizes: list[int]) -> float:
    """Write every user's records; returns records/s."""
    memory = AgentMemory(url, embeddings=HashEmbeddings(), cache_records=1, persist_indexes=False)
    t0 = time.perf_counter()
    try:
        for user, size in enumerate(sizes):
            for start in range(0, size, 1_000):
                texts = [note(user, i) for i in range(start, min(size, start + 1_000))]
                memory.add_many(texts, namespace=f"u{user}", thread="t")
    finally:
        memory.close()
    return sum(sizes) / (time.perf_counter() - t0)


# -- a worker ---------------------------------------------------------------------------------
class Worker:
    """One process's memory and what it saw (for the first-on-this-worker flag)."""

    def __init__(self, url: str, cache_records: int) -> None:
        self.memory = AgentMemory(
            url, embeddings=HashEmbeddings(), cache_records=cache_records, persist_indexes=False
        )
        self.seen: set[str] = set()
        self.lock = threading.Lock()

    def handle(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        memory = self.memory
        if path == "/stats":
            info = memory.cache_info()
            return {"rss_mb": rss_mb(), "hits": info.hits, "misses": info.misses}
        namespace = body["namespace"]
        t0 = time.perf_counter()
        if path == "/search":
            with self.lock:
                first = namespace not in self.seen
                self.seen.add(namespace)
            hits = memory.search(body["query"], namespace=namespace, k=body.get("k", 5))
            out: dict[str, Any] = {"ids": [h.id for h in hits], "first": first}
        elif path == "/add":
            ops = memory.add(body["text"], namespace=namespace, thread="t")
            out = {"ids": [rid for op in ops for rid in op.record_ids]}
        elif path == "/delete":
            memory.delete(body["id"], namespace=namespace, missing_ok=True)
            out = {}
        else:
            raise KeyError(path)
        out["ms"] = (time.perf_counter() - t0) * 1000
        return out


def serve(port: int, url: str, cache_records: int) -> None:
    """(In a worker process) answer requests until killed."""
    worker = Worker(url, cache_records)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes: with Nagle's algorithm on, the second
        # waits for the client's delayed ACK of the first (about 40 ms on Linux), which
        # every figure would then carry. asyncio's transports (uvicorn's, under ``agentmem mcp
        # --http``) turn it off too.
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
            data = json.dumps(worker.handle(self.path, body)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print("ready", flush=True)
    server.serve_forever()


class Workers:
    """W worker processes, started fresh (empty caches), and a client connection each."""

    def __init__(self, count: int, pg: str, schema: str, cache_records: int, base: int) -> None:
        self.procs = []
        self.ports = [base + i for i in range(count)]
        for i, port in enumerate(self.ports):
            url = store_url(pg, schema, f"agentmem-worker-{i}")
            args = [sys.executable, __file__, "--serve", str(port), url, str(cache_records)]
            proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
            self.procs.append(proc)
        for proc in self.procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"

    def close(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            proc.wait(30)


class Client:
    """Keep-alive connections of one client thread, one per worker."""

    def __init__(self, ports: list[int]) -> None:
        self.conns = [http.client.HTTPConnection("127.0.0.1", p, timeout=120) for p in ports]

    def call(self, worker: int, path: str, body: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """The answer and the time it took, seen from the client (ms)."""
        data = json.dumps(body).encode()
        t0 = time.perf_counter()
        conn = self.conns[worker]
        conn.request("POST", path, data, {"Content-Type": "application/json"})
        out = json.loads(conn.getresponse().read())
        return out, (time.perf_counter() - t0) * 1000


# -- 1. cold searches by size ------------------------------------------------------------------
def cold_by_size(args: argparse.Namespace, sizes: list[int]) -> list[str]:
    buckets = {"25,000": [0], "10,000": [1], "5,000": [2]}
    rng = random.Random(1)
    for label, low, high in (("~200", 150, 250), ("~50", 40, 60)):
        pool = [u for u, s in enumerate(sizes) if low <= s <= high]
        buckets[label] = rng.sample(pool, min(40, len(pool)))
    took: dict[str, list[float]] = {label: [] for label in buckets}
    for _ in range(args.cold_rounds):
        workers = Workers(1, args.pg, args.schema, args.cache_records, args.port)
        client = Client(workers.ports)
        try:
            client.call(0, "/search", {"namespace": "u9999999", "query": "warm up"})
            for label, users in buckets.items():
                took[label] += [
                    client.call(0, "/search", {"namespace": f"u{u}", "query": "coffee on day 3"})[1]
                    for u in users
                    if u < len(sizes)
                ]
        finally:
            workers.close()
    lines = [
        f"-- 1. first search of a namespace on a fresh worker (client-side ms; "
        f"{args.cold_rounds} fresh workers, each searching every namespace once)"
    ]
    for label, values in took.items():
        if values:
            lines.append(
                f"  {label:>7} records  n={len(values):>3}  p50 {np.percentile(values, 50):8.1f}"
                f"  p95 {np.percentile(values, 95):8.1f}  max {max(values):8.1f}"
            )
    return lines


def connections(pg: str) -> dict[str, int]:
    """Client connections of each worker now (by application name). The parallel workers
    of a query carry its connection's application name too: not counted (they are not
    connections, and ``max_connections`` does not count them)."""
    with psycopg.connect(pg, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT application_name, count(*) FROM pg_stat_activity "
            "WHERE application_name LIKE 'agentmem-worker-%' "
            "AND backend_type = 'client backend' GROUP BY 1"
        ).fetchall()
    return {name: int(n) for name, n in rows}


def load(
    args: argparse.Namespace, sizes: list[int], count: int, only: int | None = None
) -> dict[str, Any]:
    """``--seconds`` of mixed traffic from ``--clients`` clients on ``count`` fresh workers
    (``only``: every request for that one user)."""
    workers = Workers(count, args.pg, args.schema, args.cache_records, args.port)
    ranks = np.random.default_rng(2).permutation(len(sizes))
    weights = 1.0 / np.arange(1, len(sizes) + 1) ** args.zipf
    weights /= weights.sum()
    if only is not None:
        ranks, weights = np.array([only]), np.array([1.0])
    samples: list[tuple[str, bool, float]] = []
    most: dict[str, int] = {}
    begin = time.perf_counter() + args.warmup
    stop = begin + args.seconds
    lock = threading.Lock()

    def clients(seed: int) -> None:
        rng = np.random.default_rng(100 + seed)
        client = Client(workers.ports)
        added: list[tuple[str, str]] = []
        mine: list[tuple[str, bool, float, float]] = []
        while time.perf_counter() < stop:
            user = f"u{ranks[rng.choice(len(ranks), p=weights)]}"
            worker = int(rng.integers(count))
            roll = rng.random()
            if roll < 0.01 and added:
                namespace, rid = added.pop()
                _, ms = client.call(worker, "/delete", {"namespace": namespace, "id": rid})
                mine.append(("delete", False, ms, time.perf_counter()))
            elif roll < 0.10:
                text = f"{user} says {uuid.uuid4().hex[:8]} about trains on day {seed}"
                out, ms = client.call(worker, "/add", {"namespace": user, "text": text})
                added += [(user, rid) for rid in out["ids"]]
                mine.append(("add", False, ms, time.perf_counter()))
            else:
                query = f"note about {['coffee', 'chess', 'rain'][int(rng.integers(3))]}"
                out, ms = client.call(worker, "/search", {"namespace": user, "query": query})
                mine.append(("search", out["first"], ms, time.perf_counter()))
        with lock:
            samples.extend((kind, first, ms) for kind, first, ms, at in mine if at >= begin)

    def sample_connections() -> None:
        while time.perf_counter() < stop:
            for name, n in connections(args.pg).items():
                most[name] = max(most.get(name, 0), n)
            time.sleep(0.2)

    threads = [threading.Thread(target=clients, args=(i,)) for i in range(args.clients)]
    threads.append(threading.Thread(target=sample_connections))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    took = time.perf_counter() - begin
    stats = [Client(workers.ports).call(i, "/stats", {})[0] for i in range(count)]
    workers.close()
    return {"took": took, "samples": samples, "stats": stats, "connections": most}


def load_lines(args: argparse.Namespace, runs: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        f"-- 2. {args.seconds:g} s of traffic (after {args.warmup:g} s not counted) from "
        f"{args.clients} clients (90% search, 9% add, 1% "
        f"delete; users by Zipf s={args.zipf}), fresh workers, cache_records={args.cache_records}"
        f"; 1u: one worker, every request for one user of {ONE_USER_SIZE} records"
    ]
    head = (
        f"{'W':>3} {'req/s':>8} {'ratio':>6} {'warm p50':>9} {'p95':>7} {'p99':>7}"
        f" {'first p50':>10} {'p95':>7} {'n first':>8} {'add p50':>8} {'hits':>6}"
        f" {'RSS MB/worker':>14} {'conns/worker':>13} {'conns':>6}"
    )
    lines.append(head)
    base = None
    for count, run in runs.items():
        rate = len(run["samples"]) / run["took"]
        base = base or rate
        warm = [ms for kind, first, ms in run["samples"] if kind == "search" and not first]
        cold = [ms for kind, first, ms in run["samples"] if kind == "search" and first]
        adds = [ms for kind, _, ms in run["samples"] if kind == "add"]
        hits = sum(s["hits"] for s in run["stats"])
        misses = sum(s["misses"] for s in run["stats"])
        rss = max(s["rss_mb"] for s in run["stats"])
        conns = run["connections"]

        def pct(values: list[float], q: float) -> str:
            return f"{np.percentile(values, q):.1f}" if values else "-"

        lines.append(
            f"{count:>3} {rate:>8.1f} {rate / base:>5.2f}x {pct(warm, 50):>9} {pct(warm, 95):>7}"
            f" {pct(warm, 99):>7} {pct(cold, 50):>10} {pct(cold, 95):>7} {len(cold):>8}"
            f" {pct(adds, 50):>8} {hits / max(hits + misses, 1):>6.3f} {rss:>14.0f}"
            f" {max(conns.values(), default=0):>13} {sum(conns.values()):>6}"
        )
    return lines


# -- 3. visibility --------------------------------------------------------------------------
def visibility(args: argparse.Namespace, sizes: list[int]) -> list[str]:
    workers = Workers(2, args.pg, args.schema, args.cache_records, args.port)
    client = Client(workers.ports)
    rng = random.Random(3)
    small = [u for u, s in enumerate(sizes) if s <= 500]
    stale_adds = stale_deletes = 0
    try:
        for i in range(args.tries):
            user = f"u{rng.choice(small)}"
            one, other = i % 2, 1 - i % 2
            client.call(other, "/search", {"namespace": user, "query": "warm"})  # cached there
            text = f"visibility check {uuid.uuid4().hex} on day {i}"
            (rid,) = client.call(one, "/add", {"namespace": user, "text": text})[0]["ids"]
            found = client.call(other, "/search", {"namespace": user, "query": text})[0]["ids"]
            stale_adds += rid not in found
            client.call(one, "/delete", {"namespace": user, "id": rid})
            found = client.call(other, "/search", {"namespace": user, "query": text})[0]["ids"]
            stale_deletes += rid in found
    finally:
        workers.close()
    return [
        f"-- 3. visibility between two workers, {args.tries} tries each way around "
        "(the reader has the namespace cached before the write)",
        f"  add on one, search on the other, not found:     {stale_adds}",
        f"  delete on one, search on the other, still found: {stale_deletes}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--schema", default="agentmem_workers")
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--reuse", action="store_true", help="keep the users already written")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=10.0, help="traffic not counted first")
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--zipf", type=float, default=1.1)
    parser.add_argument("--cache-records", type=int, default=100_000)
    parser.add_argument("--tries", type=int, default=1_000)
    parser.add_argument("--cold-rounds", type=int, default=3, help="fresh workers, part 1")
    parser.add_argument("--port", type=int, default=18700)
    parser.add_argument("--serve", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        port, url, cache = args.serve
        serve(int(port), url, int(cache))
        return
    sizes = user_sizes(args.users)
    print(f"$ python benchmarks/{Path(__file__).name} {' '.join(sys.argv[1:])}")
    print(f"cores: {os.cpu_count()}; load average before: {os.getloadavg()[0]:.1f}")
    if not args.reuse:
        with psycopg.connect(args.pg, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {args.schema} CASCADE")
        rate = populate(store_url(args.pg, args.schema, "agentmem-populate"), sizes)
        print(
            f"users: {len(sizes):,}, {sum(sizes):,} records (median {int(np.median(sizes))}, "
            f"largest {max(sizes):,}), written at {rate:,.0f} records/s with add_many"
        )
    else:
        print(f"users: {len(sizes):,}, {sum(sizes):,} records (reused)")
    for line in cold_by_size(args, sizes):
        print(line, flush=True)
    runs = {}
    for count in (int(w) for w in args.workers.split(",")):
        runs[str(count)] = load(args, sizes, count)
    one = next(u for u, size in enumerate(sizes) if size == ONE_USER_SIZE)
    runs["1u"] = load(args, sizes, 1, only=one)
    for line in load_lines(args, runs):
        print(line, flush=True)
    for line in visibility(args, sizes):
        print(line, flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
