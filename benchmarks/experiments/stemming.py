"""BM25 with and without stems: LoCoMo evidence recall@10, per conversation and category.

The lexical index stems every token (Snowball English, ``index/lexical.py``), so "painted"
finds "paint" and "kids" finds "kid". Rows: the shipped hybrid search with stems and the
same search with the words as written (stems off in the one place tokens are made), at the
shipped cosine weight and at 0.3, every turn kept; the stem step is a fixed rule, not fitted
to these conversations.

Usage::

    PYTHONPATH=$PWD python benchmarks/experiments/stemming.py \
        --data ../shared/datasets/locomo/locomo_dev.json \
        --out benchmarks/experiments/results/stemming.txt
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import numpy as np

from langchain_agentmem.index import lexical
from langchain_agentmem.locomo import CATEGORIES as CATEGORY_NAMES
from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.rl.data import embed_conversations, load_locomo
from langchain_agentmem.rl.evaluate import per_question


@contextmanager
def stems(on: bool) -> Iterator[None]:
    """Tokens stemmed (as shipped) or as written, while the block runs."""
    shipped = lexical.stem
    if not on:
        lexical.stem = lambda word: word  # type: ignore[assignment]
    try:
        yield
    finally:
        lexical.stem = shipped  # type: ignore[assignment]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", default="../shared/datasets/locomo/locomo_dev.json")
    parser.add_argument("--out", default=None, help="also write the table to this file")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    convs = embed_conversations(load_locomo(args.data))
    shipped = HybridConfig()
    ids = [c.sample_id for c in convs]
    cats = sorted(CATEGORY_NAMES)
    head = (
        f"{'tokens':<10}{'cosine w':>9}{'R@10':>8}   "
        + " ".join(f"{i:>7}" for i in ids)
        + "  "
        + " ".join(f"{CATEGORY_NAMES[c]:>11}" for c in cats)
    )
    lines = [
        "command: PYTHONPATH=$PWD python benchmarks/experiments/stemming.py --data "
        "../shared/datasets/locomo/locomo_dev.json "
        "--out benchmarks/experiments/results/stemming.txt",
        f"{len(convs)} conversations, every turn kept, evidence recall@10 of categories 1-4 "
        "with the shipped hybrid search; 'stemmed': Snowball English stems in the lexical "
        "index and the query (shipped), 'as written': the same words unstemmed.",
        "",
        head,
        "-" * len(head),
    ]
    for on in (False, True):
        for w in sorted({shipped.dense_weight, 0.3}):
            config = replace(shipped, dense_weight=w)
            rows: dict[str, list[tuple[int, float]]] = {}
            with stems(on):
                for conv in convs:
                    found = per_question(conv, np.arange(len(conv.turns)), 10, config=config)
                    rows[conv.sample_id] = [(cat, hit) for cat, hit, _ in found]
            every = [hit for i in ids for _, hit in rows[i]]
            per = " ".join(f"{np.mean([h for _, h in rows[i]]):>7.3f}" for i in ids)
            by_cat = " ".join(
                f"{np.mean([h for i in ids for c, h in rows[i] if c == cat]):>11.3f}"
                for cat in cats
            )
            mark = "  (shipped)" if on and w == shipped.dense_weight else ""
            name = "stemmed" if on else "as written"
            lines.append(f"{name:<10}{w:>9g}{np.mean(every):>8.4f}   {per}  {by_cat}{mark}")
    lines.append(f"\nran in {time.perf_counter() - started:.0f} s")
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
