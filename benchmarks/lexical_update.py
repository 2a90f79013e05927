"""BM25 in a chat loop: one add, then one search, at growing namespace sizes.

Side by side in one run: ``LexicalIndex`` (an inverted index updated record by record) and
a ``bm25s`` model rebuilt on the first search after a change (how the index worked before).
Both score the same tokens with the same k1 and b; the script checks that they agree.

Usage::

    python benchmarks/lexical_update.py --out benchmarks/results/lexical_update.txt
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np

from langchain_agentmem.index.lexical import DEFAULT_B, DEFAULT_K1, LexicalIndex, tokenize


class RebuiltBM25:
    """A ``bm25s`` model rebuilt from every record's tokens on the first search after a change."""

    def __init__(self) -> None:
        self.tokens: dict[int, list[str]] = {}
        self.model: bm25s.BM25 | None = None

    def add(self, rids: Sequence[int], texts: Sequence[str]) -> None:
        for rid, text in zip(rids, texts, strict=True):
            self.tokens[rid] = tokenize(text)
        self.model = None

    def scores(self, query: str) -> np.ndarray:
        if self.model is None:
            self.model = bm25s.BM25(k1=DEFAULT_K1, b=DEFAULT_B)
            self.model.index(list(self.tokens.values()), show_progress=False)
        terms = [t for t in tokenize(query) if t in self.model.vocab_dict]
        return np.asarray(self.model.get_scores(terms)) if terms else np.zeros(len(self.tokens))


def sentence(rng: random.Random, words: list[str]) -> str:
    return " ".join(rng.choices(words, k=rng.randint(5, 25)))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--turns", type=int, default=20, help="add + search rounds per size")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    rng = random.Random(0)
    # Zipf-like vocabulary: a few common words, a long tail of rare ones.
    words = [f"w{i}" for i in range(30_000)]
    weights = [1.0 / (i + 1) for i in range(len(words))]
    lines = [
        f"{'records':>8} {'rebuilt add+search':>19} {'updated add+search':>19} {'ratio':>8} "
        f"{'rebuilt search':>15} {'updated search':>15}"
    ]
    for n in [int(s) for s in args.sizes.split(",")]:
        texts = [" ".join(rng.choices(words, weights, k=rng.randint(5, 25))) for _ in range(n)]
        queries = [" ".join(rng.choices(words, weights, k=4)) for _ in range(args.turns)]
        new = [sentence(rng, words[:2000]) for _ in range(args.turns)]
        updated, rebuilt = LexicalIndex(), RebuiltBM25()
        updated.add(list(range(n)), texts)
        rebuilt.add(list(range(n)), texts)
        rebuilt.scores(queries[0])
        times: dict[str, list[float]] = {"rebuilt": [], "updated": []}
        for i, (query, text) in enumerate(zip(queries, new, strict=True)):
            for name, index in (("rebuilt", rebuilt), ("updated", updated)):
                start = time.perf_counter()
                index.add([n + i], [text])
                index.scores(query)
                times[name].append(time.perf_counter() - start)
        search: dict[str, list[float]] = {"rebuilt": [], "updated": []}
        for query in queries:
            for name, index in (("rebuilt", rebuilt), ("updated", updated)):
                start = time.perf_counter()
                index.scores(query)
                search[name].append(time.perf_counter() - start)
            rids, ours = updated.scores(query)
            np.testing.assert_allclose(ours[np.argsort(rids)], rebuilt.scores(query), rtol=1e-4)
        med = {k: float(np.median(v)) * 1000 for k, v in times.items()}
        smed = {k: float(np.median(v)) * 1000 for k, v in search.items()}
        lines.append(
            f"{n:>8} {med['rebuilt']:>16.2f} ms {med['updated']:>16.3f} ms "
            f"{med['updated'] / med['rebuilt']:>8.4f} {smed['rebuilt']:>12.3f} ms "
            f"{smed['updated']:>12.3f} ms"
        )
    table = "\n".join(lines)
    print(table)
    if args.out:
        command = "python benchmarks/lexical_update.py " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
        Path(args.out).write_text(
            f"{command}\n\nMedian of {args.turns} rounds; each round adds one record and then "
            "searches (the chat loop). 'rebuilt': bm25s re-indexed on the first search after "
            "a change; 'updated': LexicalIndex, updated record by record. ratio: updated / "
            "rebuilt. Scores checked equal (rtol 1e-4). Synthetic Zipf-like texts, 5-25 words; "
            "2 shared cores.\n\n"
            f"{table}\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
