"""Feedback and session ideas on top of the shipped hybrid search, held out on LoCoMo.

Each variant starts from the shipped design as ``locomo_ablation.py`` scores it
(``lift: bm25[dated b=0.3] ceiling all terms (w, a)``: cosine on ``speaker: text``, BM25
on the dated text with ``b = 0.3`` over the query's ceiling, neighbour lift) and adds one
mechanism:

- ``rm3``: pseudo-relevance feedback on the BM25 side. The first pass's best ``n`` turns
  give a term distribution (RM3: each turn's term frequencies over its length, weighted by
  the turn's first-pass score; ``idf``: the same times each term's idf); its best ``m``
  terms, weighted, score every turn over their own ceiling, and that share (``lam``) is
  mixed into the BM25 part before fusing and lifting again.
- ``rocchio``: the query embedding moved toward the mean embedding of the first pass's
  best ``n`` turns (weight ``beta``), renormalised; cosine recomputed, fused, lifted.
- ``session``: each turn gets ``g`` times its session's aggregate score (the session's best
  turn, or the mean of its best three) added.
- ``diversity``: the top 10 picked greedily, each pick from a session already picked from
  costing ``d`` per earlier pick.

Every hyper-parameter, the shipped ones (``w``, ``a``) included, is chosen per held-out
conversation on the other five (leave-one-conversation-out, as the ablation does); the
table pools the held-out questions.

Usage::

    PYTHONPATH=$PWD python benchmarks/experiments/locomo_prf.py \
        --data ../shared/datasets/locomo/locomo_dev.json \
        --out benchmarks/experiments/results/locomo_prf.txt
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from benchmarks.experiments.locomo_ablation import (
    K1,
    Conv,
    Matrix,
    Variant,
    dated_text,
    embed_cached,
    held_out,
    neighbours,
    prepare,
)
from langchain_agentmem.index.lexical import tokenize
from langchain_agentmem.locomo import CATEGORIES, Conversation, load_locomo, turn_text

LEX = "dated b=0.3"
B_SHIPPED = 0.3
W_NEAR = [0.1, 0.15, 0.2, 0.3]
A_NEAR = [0.4, 0.5, 0.6]


@dataclass
class Extra:
    """What feedback needs beyond the ablation's score matrices, for one conversation."""

    contrib: sp.csr_matrix  # turns x vocab: each term's BM25 contribution to each turn
    tf: sp.csr_matrix  # turns x vocab: term frequency over turn length
    idf: Matrix  # (vocab,)
    dvec: Matrix  # turns x dim, normalised embeddings of 'speaker: text'
    qvec: Matrix  # questions x dim
    qmask: sp.csr_matrix  # questions x vocab: 1 where the term is in the question


EXTRA: dict[str, Extra] = {}


def bm25_terms(
    docs: list[list[str]], b: float
) -> tuple[sp.csr_matrix, sp.csr_matrix, Matrix, dict[str, int]]:
    """Per-term BM25 contributions (bm25s's Lucene variant), length-normalised tf, idf."""
    vocab: dict[str, int] = {}
    rows, cols, counts = [], [], []
    for i, toks in enumerate(docs):
        for t, n in Counter(toks).items():
            rows.append(i)
            cols.append(vocab.setdefault(t, len(vocab)))
            counts.append(n)
    shape = (len(docs), len(vocab))
    tf = sp.csr_matrix((np.array(counts, dtype=np.float64), (rows, cols)), shape=shape)
    lengths = np.array([len(d) for d in docs], dtype=np.float64)
    df = np.asarray((tf > 0).sum(axis=0)).ravel()
    n = len(docs)
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
    norm = K1 * (1 - b + b * lengths / lengths.mean())
    coo = tf.tocoo()
    vals = idf[coo.col] * coo.data / (coo.data + norm[coo.row])
    contrib = sp.csr_matrix((vals, (coo.row, coo.col)), shape=shape)
    rel = sp.diags(1 / np.maximum(lengths, 1)) @ tf
    return contrib, sp.csr_matrix(rel), idf, vocab


def prepare_extra(conversations: list[Conversation], convs: list[Conv], cache: Path) -> None:
    """Fill :data:`EXTRA` (embeddings come from the ablation's cache)."""
    from langchain_agentmem.embedding.embeddings import SentenceTransformerEmbeddings

    model = SentenceTransformerEmbeddings().model
    for conv, c in zip(conversations, convs, strict=True):
        qs = [q for q in conv.questions if q.evidence]
        docs = [tokenize(dated_text(t)) for t in conv.turns]
        contrib, rel, idf, vocab = bm25_terms(docs, B_SHIPPED)
        rows, cols = [], []
        qw = np.zeros((len(qs), len(vocab)))
        for i, q in enumerate(qs):
            for t in tokenize(q.question):
                if t in vocab:
                    qw[i, vocab[t]] += 1
                    rows.append(i)
                    cols.append(vocab[t])
        mask = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(qs), len(vocab)))
        mask.data[:] = 1.0
        # The per-term matrix must reproduce the ablation's BM25 exactly.
        check = np.asarray(contrib @ qw.T).T
        if not np.allclose(check, c.bm25[LEX], atol=1e-4):
            raise RuntimeError(f"{c.cid}: per-term BM25 differs from bm25s")
        texts = [turn_text(t) for t in conv.turns]
        dvec = embed_cached(texts, cache, model, "all-MiniLM-L6-v2")
        qvec = embed_cached([q.question for q in qs], cache, model, "all-MiniLM-L6-v2")
        EXTRA[c.cid] = Extra(contrib=contrib, tf=rel, idf=idf, dvec=dvec, qvec=qvec, qmask=mask)


# -- the shipped design and the mechanisms on top ---------------------------------------------
def shipped(
    c: Conv, w: float, a: float, cos: Matrix | None = None, bm: Matrix | None = None
) -> Matrix:
    """The shipped score: ``w * clip(cos) + (1 - w) * bm25 / ceiling``, neighbour lift ``a``."""
    cos = c.cos["speaker"] if cos is None else cos
    bm = c.bm25[LEX] / c.ceiling[LEX] if bm is None else bm
    return neighbours(c, w * np.clip(cos, 0, 1) + (1 - w) * bm, a, how="lift")


def top_rows(s: Matrix, n: int) -> np.ndarray:
    """Column indices of each row's ``n`` best scores, best first (ties: lower index)."""
    return np.argsort(-s, axis=1, kind="stable")[:, :n]


def rm3(c: Conv, p: tuple[Any, ...]) -> Matrix:
    """Shipped score after BM25-side pseudo-relevance feedback (see the module docstring)."""
    w, a, n, m, lam, how = p
    e = EXTRA[c.cid]
    first = shipped(c, w, a)
    top = top_rows(first, n)
    weights = np.take_along_axis(first, top, axis=1)
    weights = weights / np.maximum(weights.sum(axis=1, keepdims=True), 1e-12)
    fb = np.zeros((first.shape[0], e.tf.shape[1]))
    for i in range(first.shape[0]):
        fb[i] = weights[i] @ e.tf[top[i]].toarray()
    if how == "idf":
        fb = fb * e.idf
    if how == "new":  # RM3 weights, terms of the question itself left out
        fb = np.where(e.qmask.toarray() > 0, 0.0, fb)
    keep = np.argsort(-fb, axis=1)[:, :m]
    exp = np.zeros_like(fb)
    rows = np.arange(fb.shape[0])[:, None]
    exp[rows, keep] = fb[rows, keep]
    exp_bm = np.asarray((e.contrib @ exp.T).T) / np.maximum(exp @ e.idf, 1e-12)[:, None]
    bm = (1 - lam) * c.bm25[LEX] / c.ceiling[LEX] + lam * exp_bm
    return shipped(c, w, a, bm=bm)


def rocchio(c: Conv, p: tuple[Any, ...]) -> Matrix:
    """Shipped score with the query embedding moved toward the first pass's best turns."""
    w, a, n, beta = p
    e = EXTRA[c.cid]
    first = shipped(c, w, a)
    top = top_rows(first, n)
    q = e.qvec + beta * e.dvec[top].mean(axis=1)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return shipped(c, w, a, cos=q @ e.dvec.T)


def session_bonus(c: Conv, p: tuple[Any, ...]) -> Matrix:
    """Shipped score plus ``g`` times the session's aggregate (best turn, or mean of top 3)."""
    w, a, g, how = p
    s = shipped(c, w, a)
    out = s.copy()
    for sid in np.unique(c.session):
        cols = np.flatnonzero(c.session == sid)
        part = s[:, cols]
        agg = part.max(axis=1) if how == "max" else -np.sort(-part, axis=1)[:, :3].mean(axis=1)
        out[:, cols] += g * agg[:, None]
    return out


def diversity(c: Conv, p: tuple[Any, ...]) -> Matrix:
    """Shipped score, top 10 picked greedily with ``d`` off per earlier pick of the session."""
    w, a, d = p
    s = shipped(c, w, a)
    out = s - 10.0
    cand = top_rows(s, 50)
    for i in range(s.shape[0]):
        idx = cand[i]
        val = s[i, idx].copy()
        sess = c.session[idx]
        taken: Counter[int] = Counter()
        free = np.ones(len(idx), dtype=bool)
        for rank in range(min(10, len(idx))):
            pen = val - d * np.array([taken[x] for x in sess])
            pen[~free] = -np.inf
            j = int(np.argmax(pen))
            free[j] = False
            taken[int(sess[j])] += 1
            out[i, idx[j]] = 100.0 - rank
    return out


def variants() -> list[Variant]:
    """The baseline row and each mechanism on top of it."""
    base_grid = list(itertools.product(W_NEAR, A_NEAR))
    v = [Variant("shipped: lift bm25[dated b=0.3] (w, a)", base_grid, lambda c, p: shipped(c, *p))]
    for how in ("rm3", "idf", "new"):
        v.append(
            Variant(
                f"rm3[{how}] (w, a, n, m, lam)",
                [
                    (*wa, *x, how)
                    for wa in base_grid
                    for x in itertools.product((3, 5), (5, 10), (0.2, 0.4))
                ],
                rm3,
            )
        )
    v.append(
        Variant(
            "rocchio (w, a, n, beta)",
            [(*wa, *x) for wa in base_grid for x in itertools.product((3, 5), (0.2, 0.5, 1.0))],
            rocchio,
        )
    )
    for how in ("max", "top3"):
        v.append(
            Variant(
                f"session bonus[{how}] (w, a, g)",
                [(*wa, g, how) for wa in base_grid for g in (0.05, 0.1, 0.2, 0.3)],
                session_bonus,
            )
        )
    v.append(
        Variant(
            "session diversity (w, a, d)",
            [(*wa, d) for wa in base_grid for d in (0.02, 0.05, 0.1, 0.2)],
            diversity,
        )
    )
    # Wider grids where the choice above sat at an edge.
    v.append(
        Variant(
            "rm3[rm3] light mix (w, a, n, m, lam<=0.1)",
            [
                (*wa, *x, "rm3")
                for wa in base_grid
                for x in itertools.product((3, 5, 10), (10, 20), (0.05, 0.1))
            ],
            rm3,
        )
    )
    v.append(
        Variant(
            "rocchio wide (w, a, n, beta)",
            [
                (*wa, *x)
                for wa in base_grid
                for x in itertools.product((1, 3, 10), (0.05, 0.1, 0.2, 2.0))
            ],
            rocchio,
        )
    )
    v.append(
        Variant(
            "session bonus[top3] wide (w, a, g)",
            [(*wa, g, "top3") for wa in base_grid for g in (0.02, 0.3, 0.4, 0.5, 0.7, 1.0)],
            session_bonus,
        )
    )
    return v


def options(description: str) -> argparse.Namespace:
    """The options of the held-out LoCoMo scripts (this one, the graph and the context ones)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--data", default="../shared/datasets/locomo/locomo_dev.json")
    parser.add_argument(
        "--cache", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "agentmem-ablation")
    )
    parser.add_argument("--only", default=None, help="run variants whose name contains this")
    parser.add_argument("--out", default=None, help="also write the table to this file")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    return args


def held_out_rows(
    convs: list[Conv], variants: list[Variant], lines: list[str], only: str | None = None
) -> None:
    """Print ``lines``, then append and print the header and one held-out row per variant."""
    for line in lines:
        print(line, flush=True)
    cats = list(CATEGORIES.values())
    lines.append(
        f"{'method (LOO held-out recall@10)':<40}{'all':>7}"
        + "".join(f"{c[:10]:>11}" for c in cats)
        + f"{'in-sample':>10}  chosen per held-out conversation"
    )
    print(lines[-1], flush=True)
    for var in variants:
        if only and only not in var.name:
            continue
        t1 = time.perf_counter()
        r = held_out(convs, var)
        chosen = sorted({tuple(p) for p in r["chosen"]})
        lines.append(
            f"{var.name:<40}{r['held_out']:>7.3f}"
            + "".join(f"{r['categories'][c]:>11.3f}" for c in cats)
            + f"{r['in_sample']:>10.3f}  {chosen}  ({time.perf_counter() - t1:.0f} s)"
        )
        print(lines[-1], flush=True)


def write(out: str | None, lines: list[str]) -> None:
    """Write the table to ``out`` when given."""
    if out:
        Path(out).write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    args = options(__doc__.splitlines()[0])
    conversations, _ = load_locomo(args.data)
    t0 = time.perf_counter()
    convs = prepare(conversations, Path(args.cache))
    prepare_extra(conversations, convs, Path(args.cache))
    lines = [
        "command: PYTHONPATH=$PWD python benchmarks/experiments/locomo_prf.py --data "
        "../shared/datasets/locomo/locomo_dev.json "
        "--out benchmarks/experiments/results/locomo_prf.txt",
        "recall@10, categories 1-4, 885 questions; leave-one-conversation-out over the whole "
        "grid (w, a and the mechanism's own parameters chosen on 5 conversations, scored on "
        "the 6th); 'all' and categories pool the held-out questions; in-sample = best single "
        "grid point on all 6. First row: the shipped design (cosine on 'speaker: text', BM25 "
        "on the dated text, b=0.3, over the query's ceiling, neighbour lift), w in "
        f"{W_NEAR}, a in {A_NEAR}; every other row adds one mechanism to it (module docstring).",
        f"prepared {len(convs)} conversations in {time.perf_counter() - t0:.1f} s",
    ]
    held_out_rows(convs, variants(), lines, args.only)
    write(args.out, lines)


if __name__ == "__main__":
    main()
