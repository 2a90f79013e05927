"""The bundled all-MiniLM-L6-v2 through torch and through ONNX Runtime int8, one thread.

Two embedders of the same model, each on one thread (torch intra-op and inter-op 1; ONNX
Runtime intra-op 1; OMP/MKL/tokenizers 1):

- **torch**: ``SentenceTransformerEmbeddings()``, the default;
- **int8**: ``QuantizedEmbeddings(threads=1)`` (the ``onnx`` extra): the model exported to
  ONNX from its own weights, int8-quantised (dynamic), run by ONNX Runtime; exported into
  ``--cache-dir`` on first use, which is timed and reported.

Measured, the two interleaved (each text, or each batch set, runs both in an order that
alternates, so load on the machine falls on both alike):

1. one text at a time, over the texts of the first ``--turns`` LoCoMo turns (``"speaker:
   text"``, as the bench stores them): a query, ``embeddings.embed_query(emb, text)`` (what
   a search embeds), and the add path, ``embeddings.embed_records(emb, [text])`` (a record's
   text and its sentences, packed in one pass by both, see
   ``langchain_agentmem.embedding.packing``): p50 / p95 latency, per second, ratio to torch;
2. batches of 32 and 256 of those texts (``embeddings.embed_texts``, one pass per batch):
   texts/s and ratio;
3. agreement: cosine between torch's vector and int8's of the same text, mean and min, for
   the one-text and the batch-256 vectors, and for the add path's record vectors;
4. with ``--recall``: ``run_locomo`` (what ``agentmem bench locomo`` runs) once per embedder,
   one after another: recall@k of agentmem-hybrid and agentmem-dense (the bench's timings
   come along, but they are not side by side).

Nothing is downloaded: HF_HUB_OFFLINE=1, and the model loads from its folder only.

Usage::

    python benchmarks/embedding_backends.py --data ../shared/datasets/locomo/locomo_dev.json \\
        --out benchmarks/results/embedding_backends.txt --recall
"""

from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"
os.environ["MKL_NUM_THREADS"] = "1"
os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
os.environ["HF_HUB_OFFLINE"] = "1"

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import torch

from langchain_agentmem.embedding import quantized
from langchain_agentmem.embedding.embeddings import (
    SentenceTransformerEmbeddings,
    default_model_path,
    embed_query,
    embed_records,
    embed_texts,
)
from langchain_agentmem.embedding.quantized import QuantizedEmbeddings
from langchain_agentmem.locomo import load_locomo, turn_text

VARIANTS = ("torch", "int8")
BATCHES = (32, 256)


def make(name: str, cache_dir: Path, batch_size: int = 64) -> Any:
    if name == "torch":
        return SentenceTransformerEmbeddings(batch_size=batch_size)
    return QuantizedEmbeddings(cache_dir=cache_dir, batch_size=batch_size, threads=1)


def order(round_: int) -> list[str]:
    """The variants rotated by ``round_``."""
    shift = round_ % len(VARIANTS)
    return list(VARIANTS[shift:] + VARIANTS[:shift])


def time_singles(
    embedders: dict[str, Any], texts: list[str], rounds: int
) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, np.ndarray], dict[str, Any]]:
    """Per-text latencies of ``embed_query`` and of ``embed_records`` (the add path)."""
    query_s: dict[str, list[float]] = {v: [] for v in VARIANTS}
    record_s: dict[str, list[float]] = {v: [] for v in VARIANTS}
    queries: dict[str, list[np.ndarray]] = {v: [] for v in VARIANTS}
    records: dict[str, list[np.ndarray]] = {v: [] for v in VARIANTS}
    for r in range(rounds):
        for i, text in enumerate(texts):
            for name in order(r + i):
                t0 = time.perf_counter()
                vec = embed_query(embedders[name], text)
                query_s[name].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                rec = embed_records(embedders[name], [text])[0]
                record_s[name].append(time.perf_counter() - t0)
                if r == 0:
                    queries[name].append(vec)
                    records[name].append(rec)
    return (
        query_s,
        record_s,
        {v: np.stack(queries[v]) for v in VARIANTS},
        {v: np.stack(records[v]) for v in VARIANTS},
    )


def time_batches(
    embedders: dict[str, Any], texts: list[str], rounds: int
) -> tuple[dict[int, dict[str, list[float]]], dict[str, np.ndarray], dict[int, int]]:
    """Seconds per round to embed the texts in batches of each size (whole batches only)."""
    seconds: dict[int, dict[str, list[float]]] = {n: {v: [] for v in VARIANTS} for n in BATCHES}
    counts = {n: len(texts) // n * n or len(texts) for n in BATCHES}  # whole batches
    big: dict[str, np.ndarray] = {}
    for r in range(rounds):
        for n in BATCHES:
            chunks = [texts[a : a + n] for a in range(0, counts[n], n)]
            for name in order(r):
                t0 = time.perf_counter()
                outs = [embed_texts(embedders[name], chunk) for chunk in chunks]
                seconds[n][name].append(time.perf_counter() - t0)
                if r == 0 and n == max(BATCHES):
                    big[name] = np.concatenate(outs)
    return seconds, big, counts


def ms(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values) * 1000.0, q))


def single_table(title: str, seconds: dict[str, list[float]]) -> list[str]:
    base = ms(seconds["torch"], 50)
    lines = [
        title,
        f"{'variant':<11}{'p50 ms':>9}{'p95 ms':>9}{'per s (p50)':>13}{'speed-up p50':>14}",
    ]
    for name in VARIANTS:
        p50 = ms(seconds[name], 50)
        lines.append(
            f"{name:<11}{p50:>9.2f}{ms(seconds[name], 95):>9.2f}{1000.0 / p50:>13.1f}"
            f"{base / p50:>13.2f}x"
        )
    return lines


def batch_table(seconds: dict[int, dict[str, list[float]]], counts: dict[int, int]) -> list[str]:
    lines = [
        "batches: embeddings.embed_texts(emb, batch), texts/s from the median round",
        f"{'batch':>5}  {'texts':>5}  {'variant':<11}{'texts/s':>9}{'speed-up':>10}"
        f"   per round (s)",
    ]
    for n in BATCHES:
        base = counts[n] / statistics.median(seconds[n]["torch"])
        for name in VARIANTS:
            rate = counts[n] / statistics.median(seconds[n][name])
            rounds = " ".join(f"{s:.2f}" for s in seconds[n][name])
            lines.append(
                f"{n:>5}  {counts[n]:>5}  {name:<11}{rate:>9.1f}{rate / base:>9.2f}x   {rounds}"
            )
    return lines


def agreement_table(pairs: dict[str, dict[str, np.ndarray]]) -> list[str]:
    lines = [
        "cosine between torch's vector and int8's of the same text",
        f"{'vectors':<32}{'mean':>9}{'min':>9}{'p1':>9}",
    ]
    for title, vectors in pairs.items():
        cosine = (vectors["torch"] * vectors["int8"]).sum(axis=1)
        lines.append(
            f"{title:<32}{cosine.mean():>9.4f}{cosine.min():>9.4f}{np.percentile(cosine, 1):>9.4f}"
        )
    return lines


def recall(data: str, factory_embeddings: Any, conversations: int | None) -> dict[str, Any]:
    """``run_locomo`` as ``agentmem bench locomo`` runs it, with the given embedder."""
    from langchain_agentmem.bench.runner import run_locomo
    from langchain_agentmem.memory import AgentMemory

    convs, report = load_locomo(data)
    if conversations is not None:
        convs = convs[:conversations]
    with tempfile.TemporaryDirectory(prefix="agentmem-backends-") as tmp:

        def factory() -> AgentMemory:
            url = f"sqlite:///{Path(tmp) / 'locomo.db'}"
            return AgentMemory(url, embeddings=factory_embeddings)

        t0 = time.perf_counter()
        result = run_locomo(convs, memory_factory=factory, report=report, progress=False)
        result["wall_s"] = time.perf_counter() - t0
    return result


def recall_table(results: dict[str, dict[str, Any]]) -> list[str]:
    base = results["torch"]["retrieval"]["agentmem-hybrid"]["recall@10"]
    lines = [
        f"{'variant':<11}{'hybrid R@5':>11}{'R@10':>7}{'R@20':>7}{'R@10 - torch':>14}"
        f"{'dense R@10':>12}{'add p50 ms':>12}{'bare emb p50':>14}{'hybrid p50':>12}{'wall s':>8}",
    ]
    for name, result in results.items():
        hybrid = result["retrieval"]["agentmem-hybrid"]
        timing = result["timing"]
        lines.append(
            f"{name:<11}{hybrid['recall@5']:>11.3f}{hybrid['recall@10']:>7.3f}"
            f"{hybrid['recall@20']:>7.3f}{hybrid['recall@10'] - base:>+14.3f}"
            f"{result['retrieval']['agentmem-dense']['recall@10']:>12.3f}"
            f"{timing['add_p50_ms']:>12.1f}{timing['bare_embed_p50_ms']:>14.1f}"
            f"{timing['search']['hybrid']['p50_ms']:>12.1f}{result['wall_s']:>8.0f}"
        )
    return lines


def version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="LoCoMo JSON (e.g. locomo_dev.json)")
    parser.add_argument("--out", required=True, help="where to write the tables")
    parser.add_argument("--turns", type=int, default=300, help="texts: the first N turns")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the speed measures")
    parser.add_argument(
        "--cache-dir", default=None, help="where the int8 model is exported (default: a temp dir)"
    )
    parser.add_argument("--recall", action="store_true", help="also run the LoCoMo recall bench")
    parser.add_argument(
        "--conversations", type=int, default=None, help="recall on the first N only (a check)"
    )
    args = parser.parse_args(argv)

    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    with tempfile.TemporaryDirectory(prefix="agentmem-onnx-") as tmp:
        cache_dir = Path(args.cache_dir or tmp)
        t0 = time.perf_counter()
        QuantizedEmbeddings(cache_dir=cache_dir, threads=1).load()
        first_use_s = time.perf_counter() - t0
        return run(args, argv, cache_dir, first_use_s)


def run(args: Any, argv: list[str] | None, cache_dir: Path, first_use_s: float) -> int:
    embedders = {name: make(name, cache_dir) for name in VARIANTS}
    batchers = {name: make(name, cache_dir, batch_size=max(BATCHES)) for name in VARIANTS}
    conversations, _ = load_locomo(args.data)
    texts = [turn_text(t) for c in conversations for t in c.turns][: args.turns]
    for name in VARIANTS:  # warm up (and the packing probe, once per model)
        embed_texts(batchers[name], texts[:8])
        embed_records(embedders[name], [texts[0]])

    load_before = Path("/proc/loadavg").read_text(encoding="utf-8").split()[:3]
    query_s, record_s, queries, records = time_singles(embedders, texts, args.rounds)
    batch_s, big, counts = time_batches(batchers, texts, args.rounds)
    load_after = Path("/proc/loadavg").read_text(encoding="utf-8").split()[:3]

    given = argv if argv is not None else sys.argv[1:]
    command = "python " + " ".join([sys.argv[0], *given])
    exported = sorted((cache_dir / "onnx").glob("*/model_int8.onnx"))
    size = f"{exported[0].stat().st_size / 1e6:.1f} MB" if exported else "?"
    lines = [
        command,
        "",
        f"machine: {os.cpu_count()} cores (shared), 1 thread everywhere (torch intra/inter-op 1, "
        "ONNX Runtime intra-op 1, OMP/MKL/RAYON 1, tokenizers not parallel); load average "
        f"{' '.join(load_before)} before the speed measures, {' '.join(load_after)} after",
        "versions: "
        + ", ".join(
            f"{p} {version(p)}"
            for p in ("onnxruntime", "onnx", "sentence-transformers", "transformers", "torch")
        ),
        f"model: bundled all-MiniLM-L6-v2 ({default_model_path()}); int8: QuantizedEmbeddings, "
        f"dynamic quantisation {quantized.QUANTISATION}, int8 weights; first use (export, "
        f"check, quantise, load) {first_use_s:.1f} s, file {size}",
        f"texts: the first {len(texts)} LoCoMo turns as the bench stores them ('speaker: text'); "
        f"{args.rounds} rounds, variants interleaved (order alternating per text / per round)",
        "",
        *single_table("one query: embeddings.embed_query(emb, text)", query_s),
        "",
        *single_table(
            "one record: embeddings.embed_records(emb, [text]) (the add path: text + its "
            "sentences, packed in one pass)",
            record_s,
        ),
        "",
        *batch_table(batch_s, counts),
        "",
        *agreement_table(
            {"one query": queries, "one record (packed)": records, "batch of 256": big}
        ),
    ]
    if args.recall:
        results: dict[str, dict[str, Any]] = {}
        for name in VARIANTS:
            print(f"recall: {name}", file=sys.stderr)
            results[name] = recall(args.data, make(name, cache_dir), args.conversations)
        first = results["torch"]
        lines += [
            "",
            f"recall: run_locomo (agentmem bench locomo) on {', '.join(first['conversations'])}: "
            f"{first['turns']} turns, {first['questions']} questions; variants one after "
            "another (timings not side by side)",
            *recall_table(results),
        ]
    text = "\n".join(lines) + "\n"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
