"""What a write costs beside the bare work it cannot avoid, this tree beside another, in one run.

Each tree (this checkout, and each ``--against`` git revision, unpacked with ``git archive``)
runs in its own process, rounds interleaved, torch on one thread:

- **add**: the first ``--turns`` turns of a LoCoMo conversation added one by one to a fresh
  SQLite file (as ``agentmem bench`` stores them), each followed by the same text embedded
  alone by the bare model (``bench.runner._bare_encoder``), then as a record
  (``embeddings.embed_records``: its text and sentences, the pass an add makes); median add
  over median bare, and over median record embedding (what the write adds to its own).
- **ingest CPU**: the process's CPU time (``time.process_time``) for the same turns added to
  a fresh file, in blocks of 25 alternating with bare embeddings of the same block's texts;
  CPU of the adds over CPU of the bare embeddings.
- **add_many**: ``--bulk`` records into one namespace in one call, the vectors given (a
  memoised hashing embedder, so the model is out of the picture), beside a bare
  ``executemany`` of the same rows (id, namespace, text, metadata JSON, vector) in one
  transaction (each started after a full collection; ``add_many``, which pauses the cyclic
  collector, is timed with the full collection after it, the work it put off), on SQLite
  and, with ``--pg``, on PostgreSQL; records per second, and the ratio.
- **forgetting**: an add into a SQLite namespace of 10,000 records below its capacity, beside
  an add that makes a full FIFO of 10,000 forget its oldest record (forgetting drops the
  record's text from the log and the copies replies keep of it); median ms, and the ratio.
- **tokens**: what the encoder reads for an add (the turn and its sentences) over what a
  bare embedding reads (the turn), per turn, this tree; and what one encoder pass costs
  by its length (a part paid whatever the length, a part per token).

Usage::

    python benchmarks/write_path.py --data ../shared/datasets/locomo/locomo_dev.json \\
        --against 2341ab8 --pg postgresql://postgres@127.0.0.1:5432/test \\
        --out benchmarks/results/write_path.txt
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from release_cost import interleaved

BLOCK = 25
"""Turns per block of the ingest measure (adds and bare embeddings alternate)."""
FULL = 10_000
"""Records a FIFO holds when an add makes it forget one (the forgetting measure)."""


def _bulk_rows(n: int) -> tuple[list[str], list[dict[str, Any]], Any]:
    """``n`` notes, their metadata, and a memoised hashing embedder holding their vectors."""
    from many_users import HashEmbeddings, note

    texts = [note(7, i) for i in range(n)]
    metas: list[dict[str, Any]] = [{"source": "import", "i": i} for i in range(n)]
    emb = HashEmbeddings()
    emb.embed_documents(texts)
    return texts, metas, emb


def bare_bulk(n: int, pg: str | None, tmp: Path) -> dict[str, float]:
    """Records per second of a bare ``executemany`` of ``n`` rows, SQLite (and PostgreSQL)."""
    texts, metas, emb = _bulk_rows(n)
    from many_users import bare_executemany

    vectors = emb.embed_documents(texts)
    gc.collect()  # starts as clean as add_many does
    out = {"sqlite": bare_executemany(texts, metas, vectors, tmp / "bare.db")}
    if pg:
        import psycopg

        with psycopg.connect(pg.split("?")[0]) as pcon:
            table = f"bare_{uuid.uuid4().hex[:8]}"
            pcon.execute(
                f"CREATE TABLE {table} (id TEXT UNIQUE, ns TEXT, text TEXT, meta TEXT, e BYTEA)"
            )
            pcon.commit()
            gc.collect()
            t0 = time.perf_counter()
            blobs = [np.asarray(v, dtype="<f4").tobytes() for v in vectors]
            rows = [
                (uuid.uuid4().hex, t, json.dumps(m), b)
                for t, m, b in zip(texts, metas, blobs, strict=True)
            ]
            with pcon.cursor() as cur:
                cur.executemany(f"INSERT INTO {table} VALUES (%s, 'u', %s, %s, %s)", rows)
            pcon.commit()
            out["postgres"] = n / (time.perf_counter() - t0)
            pcon.execute(f"DROP TABLE {table}")
            pcon.commit()
    return out


def measure(data: Path, turns: int, bulk: int, pg: str | None) -> dict[str, float]:
    """Every figure of one tree, in this process's ``langchain_agentmem``."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from langchain_agentmem import AgentMemory
    from langchain_agentmem.bench.runner import _bare_encoder
    from langchain_agentmem.embedding.embeddings import embed_records
    from langchain_agentmem.index.text import reply_texts
    from langchain_agentmem.locomo import load_locomo, turn_metadata, turn_text

    torch.set_num_threads(1)
    conv = load_locomo(data)[0][0]
    texts = [turn_text(t) for t in conv.turns][:turns]
    replies = reply_texts([t.speaker for t in conv.turns], [t.session for t in conv.turns], texts)

    def add(memory: AgentMemory, i: int, namespace: str) -> None:
        turn = conv.turns[i]
        memory.add(
            texts[i],
            namespace=namespace,
            thread=f"session-{turn.session}",
            metadata=turn_metadata(turn, replies[i]),
            timestamp=turn.date,
            record_id=f"turn-{i}",
        )

    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        with AgentMemory(f"sqlite:///{tmp / 'add.db'}") as memory:
            encode = _bare_encoder(memory)
            encode("warm up")
            add(memory, 0, "warm")
            adds, bare, records = [], [], []
            for i in range(len(texts)):
                t0 = time.perf_counter()
                add(memory, i, "add")
                adds.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                encode(texts[i])
                bare.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                embed_records(memory.embeddings, [texts[i]])
                records.append(time.perf_counter() - t0)
            out["add"] = statistics.median(adds) * 1e3
            out["bare"] = statistics.median(bare) * 1e3
            out["record"] = statistics.median(records) * 1e3
            cpu_adds = cpu_bare = 0.0
            for start in range(0, len(texts), BLOCK):
                block = range(start, min(start + BLOCK, len(texts)))
                t0 = time.process_time()
                for i in block:
                    add(memory, i, "ingest")
                cpu_adds += time.process_time() - t0
                t0 = time.process_time()
                for i in block:
                    encode(texts[i])
                cpu_bare += time.process_time() - t0
            out["ingest cpu"] = cpu_adds
            out["bare cpu"] = cpu_bare
        for store, url in (("sqlite", f"sqlite:///{tmp / 'bulk.db'}"), ("postgres", pg)):
            if url is None:
                continue
            if store == "postgres":
                url = f"{url}{'&' if '?' in url else '?'}schema=bench_{uuid.uuid4().hex[:8]}"
            b_texts, metas, emb = _bulk_rows(bulk)
            with AgentMemory(url, embeddings=emb, policy="keep_all", persist_indexes=False) as mem:
                mem.add_many(b_texts[:10], namespace="warm", metadatas=metas[:10])
                gc.collect()
                t0 = time.perf_counter()
                mem.add_many(b_texts, namespace="u", metadatas=metas)
                # A batch pauses the cyclic collector: the collection it put off is its cost.
                gc.collect()
                out[f"add_many {store}"] = bulk / (time.perf_counter() - t0)
                if store == "postgres":
                    mem.delete_namespace("u")
                    mem.delete_namespace("warm")
        for store, rate in bare_bulk(bulk, pg, tmp).items():
            out[f"executemany {store}"] = rate
        out.update(forgetting_adds(tmp, FULL))
    return out


def forgetting_adds(tmp: Path, held: int, adds: int = 200) -> dict[str, float]:
    """Median ms of an add into a namespace of ``held`` records, below its capacity, and of
    an add that makes a full FIFO of that capacity forget its oldest record (a memoised
    hashing embedder: the model is out of the picture; the threads hold 1,000 records each)."""
    from many_users import HashEmbeddings, note

    from langchain_agentmem import AgentMemory

    texts = [note(8, i) for i in range(held + adds)]
    emb = HashEmbeddings()
    emb.embed_documents(texts)
    out = {}
    for name, capacity in (("add below capacity", held + adds), ("add that forgets", held)):
        url = f"sqlite:///{tmp / f'{name}.db'}"
        with AgentMemory(url, embeddings=emb, policy="fifo", capacity=capacity) as mem:
            for start in range(0, held, 1000):
                thread = f"t{start // 1000}"
                mem.add_many(texts[start : start + 1000], namespace="u", thread=thread)
            times = []
            for text in texts[held:]:
                t0 = time.perf_counter()
                mem.add(text, namespace="u", thread="new")
                times.append(time.perf_counter() - t0)
            out[name] = statistics.median(times) * 1e3
    return out


def encoder_tokens(data: Path, turns: int) -> str:
    """What the encoder reads for an add beside a bare embedding of the same turn (this
    tree): the tokens of the text and its sentences over the text's, and how many turns
    have sentences embedded apart."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from langchain_agentmem.embedding.embeddings import SentenceTransformerEmbeddings
    from langchain_agentmem.locomo import load_locomo, turn_text
    from langchain_agentmem.text.sentences import sentences

    tokenizer = SentenceTransformerEmbeddings().model.tokenizer
    conv = load_locomo(data)[0][0]

    def count(text: str) -> int:
        return len(tokenizer(text, truncation=True, max_length=256)["input_ids"])

    ratios, split = [], 0
    for text in [turn_text(t) for t in conv.turns][:turns]:
        parts = sentences(text)
        split += bool(parts)
        ratios.append((count(text) + sum(map(count, parts))) / count(text))
    lengths = sorted(count(t) for t in [turn_text(t) for t in conv.turns][:turns])
    return (
        f"Tokens an add embeds (its text and its sentences) over a bare embedding's, this "
        f"tree: median {statistics.median(ratios):.2f}, mean {statistics.mean(ratios):.2f}; "
        f"{split / len(ratios):.0%} of the turns have two sentences or more; a turn's median "
        f"length {statistics.median(lengths):.0f} tokens.\n" + encoder_scan()
    )


def encoder_scan(lengths: Sequence[int] = (8, 16, 32, 64, 128), repeats: int = 40) -> str:
    """Median time of one pass of the bundled encoder over ``lengths`` tokens (torch, one
    thread): what is paid whatever the length, and what each token adds."""
    import torch

    from langchain_agentmem.embedding.embeddings import SentenceTransformerEmbeddings

    torch.set_num_threads(1)
    encoder = SentenceTransformerEmbeddings().model[0].auto_model
    times = []
    for n in lengths:
        ids = torch.full((1, n), 2000, dtype=torch.long)
        runs = []
        with torch.inference_mode():
            for _ in range(repeats):
                t0 = time.perf_counter()
                encoder(input_ids=ids, attention_mask=torch.ones_like(ids))
                runs.append(time.perf_counter() - t0)
        times.append(statistics.median(runs) * 1e3)
    slope, intercept = np.polyfit(np.asarray(lengths, dtype=float), np.asarray(times), 1)
    shown = ", ".join(f"{n} {t:.1f} ms" for n, t in zip(lengths, times, strict=True))
    return (
        f"One encoder pass by its length in tokens (torch, one thread): {shown}; a straight "
        f"line through them: {intercept:.1f} ms whatever the length + {slope:.3f} ms a token."
    )


def run_tree(path: Path, args: argparse.Namespace) -> dict[str, float]:
    """``measure`` in a fresh process importing the package from ``path``."""
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(path)}
    cmd = [sys.executable, __file__, "--child", "--data", str(args.data)]
    cmd += ["--turns", str(args.turns), "--bulk", str(args.bulk)]
    if args.pg:
        cmd += ["--pg", args.pg]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def table(runs: dict[str, list[dict[str, float]]], pg: bool) -> list[str]:
    """Medians over the rounds of each tree, ratios within each process."""
    rows = [
        ("add p50 / bare embedding p50", "add", "bare", "ms", 1),
        ("add p50 / its record's embedding p50", "add", "record", "ms", 1),
        ("record's embedding p50 / bare p50", "record", "bare", "ms", 1),
        ("ingest CPU / bare embedding CPU", "ingest cpu", "bare cpu", "s", 1),
        ("add_many / executemany, SQLite", "add_many sqlite", "executemany sqlite", "rec/s", 0),
    ]
    if pg:
        rows.append(
            (
                "add_many / executemany, PostgreSQL",
                "add_many postgres",
                "executemany postgres",
                "rec/s",
                0,
            )
        )
    rows.append(
        (f"add forgetting 1 of {FULL:,} / add", "add that forgets", "add below capacity", "ms", 2)
    )
    lines = []
    for title, num, den, unit, digits in rows:
        lines.append(f"{title:<36}{'ours':>12}{'bare':>12}{'ratio':>9}   per round")
        for label, results in runs.items():
            ratios = [r[num] / r[den] for r in results]
            ours = statistics.median(r[num] for r in results)
            bare = statistics.median(r[den] for r in results)
            lines.append(
                f"  {label:<34}{ours:>9,.{digits}f} {unit:<2}{bare:>9,.{digits}f} {unit:<2}"
                f"{statistics.median(ratios):>7.3f}x   " + " ".join(f"{x:.3f}" for x in ratios)
            )
        lines.append("")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--against", action="append", default=[], help="a git revision")
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--bulk", type=int, default=20_000)
    parser.add_argument("--pg", default=None, help="a PostgreSQL URL (add_many there too)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.data, args.turns, args.bulk, args.pg)))
        return
    runs = interleaved(args.against, args.rounds, lambda path: run_tree(path, args))
    command = "python benchmarks/write_path.py --data {} {}{}--out {}".format(
        args.data,
        "".join(f"--against {r} " for r in args.against),
        f"--pg {args.pg} " if args.pg else "",
        args.out,
    )
    intro = (
        f"First {args.turns} turns of the first conversation (add, ingest CPU in blocks of "
        f"{BLOCK}); add_many of {args.bulk:,} records with the vectors given; {args.rounds} "
        f"rounds, trees interleaved, each in its own process; torch 1 thread. "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end."
    )
    tokens = encoder_tokens(args.data, args.turns)
    text = "\n".join([command, "", intro, "", *table(runs, bool(args.pg)), tokens]) + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
