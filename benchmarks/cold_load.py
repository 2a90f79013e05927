"""A namespace's first search in a fresh process, on real chat text: its records' stored
terms read back, beside the same records read from their text (rows written before schema 6).

Loading a namespace reads every record and indexes its text side; on real turns most of that
is reading the text (words, stems, whether it only asks). Since schema 6 each row keeps
those terms, written with the text. This writes the same texts to two namespaces of one
store, clears the terms of the second (as rows written before the column existed are), and
times the first search of each in fresh processes, rounds alternating, on PostgreSQL and on
SQLite (saved dense indexes off: the figures are the load's). Texts: LoCoMo's turns (both
speakers, as a conversation's turns are stored) and LongMemEval's user turns (each with the
assistant's question it answers as ``reply_to``, as the chat adapters store it), cycled to
the sizes asked; hashed embeddings, so the figures are the store's and the indexes', not a
model's.

Usage:
    python benchmarks/cold_load.py [--sizes 2000,25000] [--rounds 5]
        [--pg postgresql://postgres@127.0.0.1:5432/test] [--out benchmarks/results/cold_load.txt]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from langchain_agentmem import AgentMemory
from langchain_agentmem.text.replies import question_of

sys.path.insert(0, str(Path(__file__).resolve().parent))
from many_users import HashEmbeddings

DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets"
SCHEMA = "agentmem_cold_load"


def turns() -> list[tuple[str, dict[str, Any]]]:
    """Real turns with the metadata the adapters give them."""
    out: list[tuple[str, dict[str, Any]]] = []
    for conversation in json.loads((DATA / "locomo" / "locomo_dev.json").read_text()):
        sessions = conversation["conversation"]
        for key in sorted(k for k in sessions if k.startswith("session_") and k[8:].isdigit()):
            for turn in sessions[key]:
                out.append((f"{turn['speaker']}: {turn['text']}", {"speaker": turn["speaker"]}))
    lme = json.loads((DATA / "longmemeval" / "longmemeval_oracle_dev.json").read_text())
    for question in lme:
        for session in question["haystack_sessions"]:
            before = ""
            for turn in session:
                if turn["role"] == "user":
                    meta: dict[str, Any] = {"role": "human", "source": "agent"}
                    if question_of(before):
                        meta["reply_to"] = question_of(before)
                    out.append((turn["content"], meta))
                before = turn["content"]
    return out


def write(url: str, size: int, texts: list[tuple[str, dict[str, Any]]]) -> dict[str, int]:
    """Namespaces ``stored-N`` and ``text-N`` of ``size`` records each, the second's terms
    cleared (a text met again is marked with its round). Returns the records each holds."""
    rows = [texts[i % len(texts)] for i in range(size)]
    marked = [t if i < len(texts) else f"{t} ({i // len(texts)})" for i, (t, _) in enumerate(rows)]
    held = {}
    with AgentMemory(url, embeddings=HashEmbeddings(), persist_indexes=False) as memory:
        for namespace in (f"stored-{size}", f"text-{size}"):
            for start in range(0, size, 1_000):
                memory.add_many(
                    marked[start : start + 1_000],
                    namespace=namespace,
                    thread="t",
                    metadatas=[dict(m) for _, m in rows[start : start + 1_000]],
                )
            held[namespace] = len(memory.records(namespace))
        with memory.backend._write() as cur:  # type: ignore[attr-defined]
            cur.execute(
                memory.backend.q("UPDATE agentmem_records SET terms = NULL WHERE namespace = ?"),  # type: ignore[attr-defined]
                (f"text-{size}",),
            )
    return held


def first_search(url: str, namespace: str) -> float:
    """(In a fresh process) ms of a namespace's first search."""
    out = subprocess.run(
        [sys.executable, __file__, "--measure", url, namespace],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def measure(url: str, namespace: str) -> None:
    memory = AgentMemory(url, embeddings=HashEmbeddings(), persist_indexes=False)
    memory.search("warm up", namespace="nobody", k=5)
    t0 = time.perf_counter()
    memory.search("What did they paint last weekend?", namespace=namespace, k=5)
    print((time.perf_counter() - t0) * 1000)
    memory.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,25000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--measure", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(*args.measure)
        return
    texts = turns()
    sizes = [int(s) for s in args.sizes.split(",")]
    lines = [
        f"$ python benchmarks/{Path(__file__).name} {' '.join(sys.argv[1:])}",
        f"cores: {os.cpu_count()}; texts: {len(texts):,} real turns (LoCoMo dev, LongMemEval "
        f"dev user turns), mean {np.mean([len(t) for t, _ in texts]):.0f} characters, cycled; "
        f"first search in a fresh process, median of {args.rounds} rounds (alternating), ms",
        "",
        f"{'store':<11}{'records':>8}{'terms read from text':>22}{'terms stored':>14}{'ratio':>8}",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        stores = {"PostgreSQL": f"{args.pg}?schema={SCHEMA}", "SQLite": f"sqlite:///{tmp}/s.db"}
        with psycopg.connect(args.pg, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        try:
            for store, url in stores.items():
                for size in sizes:
                    held = write(url, size, texts)
                    took: dict[str, list[float]] = {"text": [], "stored": []}
                    for _ in range(args.rounds):
                        for kind in ("text", "stored"):
                            took[kind].append(first_search(url, f"{kind}-{size}"))
                    text, stored = (float(np.median(took[k])) for k in ("text", "stored"))
                    n = held[f"stored-{size}"]
                    assert n == held[f"text-{size}"], held
                    lines.append(
                        f"{store:<11}{n:>8,}{text:>22.1f}{stored:>14.1f}{stored / text:>7.2f}x"
                    )
                    print(lines[-1], flush=True)
        finally:
            with psycopg.connect(args.pg, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
