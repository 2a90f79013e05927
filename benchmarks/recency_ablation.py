"""Would a search that prefers newer restatements find changed facts, and at what cost?

Search has no notion of "current": when a fact changed ("I live in Lisbon" ... "I left
Lisbon and now I'm based in Berlin"), the older statement often ranks first. This script
measures one remedy on the hybrid search's own results: a record is lifted toward the score
of an *older* record in the same result pool that says nearly the same thing (cosine >=
``tau``), by ``lift`` of the gap (1.0 puts it just above the older one). It scores, side by
side in one run, the synthetic fact-change conversations (``rl.synthetic``; every turn
kept) and LoCoMo evidence recall@10 (every turn kept), for a grid of ``tau`` and ``lift``.

Usage::

    python benchmarks/recency_ablation.py --data ../shared/datasets/locomo/locomo_dev.json \
        --out benchmarks/results/recency_ablation.txt
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from langchain_agentmem.rl.data import Conversation, embed_conversations, load_locomo
from langchain_agentmem.rl.retrieval import hybrid_results
from langchain_agentmem.rl.synthetic import generate, write

POOL = 50
GRID: tuple[tuple[float | None, float], ...] = (
    (None, 0.0),
    (0.8, 0.5),
    (0.8, 1.0),
    (0.7, 0.5),
    (0.7, 1.0),
    (0.6, 1.0),
)


def pools(conv: Conversation) -> list[list[tuple[int, float]]]:
    """Each question's ``POOL`` best turns by the shipped hybrid search, with scores."""
    return hybrid_results(conv, range(len(conv.turns)), POOL)


def rerank(
    conv: Conversation, found: list[tuple[int, float]], tau: float | None, lift: float, k: int
) -> list[int]:
    """The top ``k`` after lifting records toward older near-restatements that outscore them."""
    ids = [rid for rid, _ in found]
    if tau is None or not ids:
        return ids[:k]
    score = np.array([s for _, s in found])
    vectors = conv.turn_vectors[ids]
    when = np.array([conv.turns[i].timestamp for i in ids])
    sims = vectors @ vectors.T
    lifted = score.copy()
    for b in range(len(ids)):
        older = (when < when[b]) & (sims[:, b] >= tau) & (score > score[b])
        if older.any():
            gap = float(score[older].max() - score[b])
            lifted[b] = score[b] + lift * gap + (1e-6 if lift >= 1.0 else 0.0)
    return [ids[i] for i in np.argsort(-lifted, kind="stable")[:k]]


def main(argv: Sequence[str] | None = None) -> None:
    """Score every grid point on both data sets; print and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", required=True, help="LoCoMo JSON file")
    parser.add_argument("--n", type=int, default=6, help="synthetic conversations")
    parser.add_argument("--out", help="text file for the table")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    raw = generate(args.n, seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        synthetic = embed_conversations(load_locomo(write(Path(tmp) / "facts.json", raw)))
    locomo = embed_conversations(load_locomo(args.data))
    facts = {str(r["sample_id"]): [q["fact"] for q in r["qa"]] for r in raw}
    s_pools = [pools(c) for c in synthetic]
    l_pools = [pools(c) for c in locomo]
    head = (
        f"{'tau':>5} {'lift':>5} {'cur@1':>6} {'cur@5':>6} {'stale>cur':>9} {'before@5':>9} "
        f"{'LoCoMo R@10':>12}"
    )
    lines = [head, "-" * len(head)]
    for tau, lift in GRID:
        cur1 = cur5 = n_cur = stale_above = changed = before5 = n_before = 0
        for conv, found in zip(synthetic, s_pools, strict=True):
            for q, fact, pool in zip(conv.questions, facts[conv.sample_id], found, strict=True):
                top = rerank(conv, pool, tau, lift, 5)
                current = q.evidence[0]
                pos = top.index(current) if current in top else 5
                if fact["kind"] == "before":
                    n_before += 1
                    before5 += pos < 5
                    continue
                n_cur += 1
                cur1 += pos == 0
                cur5 += pos < 5
                if fact["stale"]:
                    changed += 1
                    stale = {i for i, t in enumerate(conv.turns) if t.dia_id in fact["stale"]}
                    stale_above += any(t in stale for t in top[:pos])
        recall = [
            len(set(rerank(conv, pool, tau, lift, 10)) & set(q.evidence)) / len(q.evidence)
            for conv, found in zip(locomo, l_pools, strict=True)
            for q, pool in zip(conv.questions, found, strict=True)
        ]
        lines.append(
            f"{'off' if tau is None else tau:>5} {lift:>5.1f} {cur1 / n_cur:>6.3f} "
            f"{cur5 / n_cur:>6.3f} {stale_above / max(changed, 1):>9.3f} "
            f"{before5 / max(n_before, 1):>9.3f} {float(np.mean(recall)):>12.4f}"
        )
    table = "\n".join(lines)
    print(table)
    if args.out:
        command = "python benchmarks/recency_ablation.py " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
        Path(args.out).write_text(
            f"{command}\n\nEvery turn kept (no policy). Synthetic: {args.n} fact-change "
            "conversations (seed 0), current-fact and 'before' questions, k=5 (columns as in "
            "policy_fact_change.txt). LoCoMo: evidence recall@10 of categories 1-4. A record "
            "is lifted toward an older record of its result pool with cosine >= tau that "
            "outscores it, by lift x the gap. Ran in "
            f"{time.perf_counter() - started:.0f} s.\n\n{table}\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
