"""Fast ablation of hybrid-search fusion on LoCoMo, held out one conversation at a time.

Every turn text (in each indexed-text variant) and every question is embedded once and
cached as ``.npy`` (never pickle) under ``--cache``; each fusion variant is then scored in
numpy and ``bm25s`` per conversation, without ``AgentMemory``. Hyper-parameters are chosen
by leave-one-conversation-out: for each conversation, the grid point with the best
recall@10 on the other conversations is scored on it; the table reports the pooled
held-out recall (questions weighted equally, as in ``agentmem bench locomo``).

Usage::

    python benchmarks/experiments/locomo_ablation.py \
        --data ../shared/datasets/locomo/locomo_dev.json
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import numpy.typing as npt

from langchain_agentmem.index.lexical import tokenize
from langchain_agentmem.locomo import CATEGORIES, Conversation, Turn, load_locomo, turn_text

Matrix = npt.NDArray[np.float64]
K = 10
K1, B = 1.5, 0.75


def dated_text(turn: Turn) -> str:
    """The turn text with its session date in front (``"[8 May 2023] Ann: ..."``)."""
    if turn.date is None:
        return turn_text(turn)
    return f"[{turn.date.day} {turn.date:%B %Y}] {turn_text(turn)}"


def bare_text(turn: Turn) -> str:
    """The turn text without the speaker's name."""
    text = turn.text
    if turn.caption:
        text += f" [shares an image: {turn.caption}]"
    return text


TEXTS: dict[str, Callable[[Turn], str]] = {
    "speaker": turn_text,
    "dated": dated_text,
    "bare": bare_text,
}


# -- embeddings, cached ------------------------------------------------------------------------
def embed_cached(texts: list[str], cache: Path, model: Any, tag: str) -> Matrix:
    """Normalised embeddings of ``texts``, read from / written to ``cache`` as ``.npy``."""
    digest = hashlib.sha256(("\x00".join([tag, *texts])).encode("utf-8")).hexdigest()[:24]
    path = cache / f"emb-{digest}.npy"
    if path.exists():
        return np.load(path, allow_pickle=False).astype(np.float64)  # type: ignore[no-any-return]
    vectors = model.encode(
        texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True
    ).astype(np.float32)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors, allow_pickle=False)
    return vectors.astype(np.float64)  # type: ignore[no-any-return]


# -- per-conversation score matrices -----------------------------------------------------------
@dataclass
class Conv:
    """Score matrices of one conversation (questions x turns)."""

    cid: str
    cos: dict[str, Matrix]  # text variant -> cosine
    bm25: dict[str, Matrix]  # text variant -> raw BM25
    ceiling: dict[str, Matrix]  # text variant -> per-question max attainable BM25 (m, 1)
    ceiling_vocab: dict[str, Matrix]  # same, over in-vocabulary query terms only
    evidence: list[npt.NDArray[np.int64]]
    categories: npt.NDArray[np.int64]
    when: npt.NDArray[np.bool_]
    session: npt.NDArray[np.int64]


def bm25_matrix(
    doc_tokens: list[list[str]], queries: list[list[str]], b: float = B
) -> tuple[Matrix, Matrix, Matrix]:
    """Raw BM25 (bm25s, Lucene), and each query's ceiling (sum of idf) with and without
    unseen terms."""
    model = bm25s.BM25(k1=K1, b=b)
    model.index(doc_tokens, show_progress=False)
    n = len(doc_tokens)
    df: dict[str, int] = {}
    for toks in doc_tokens:
        for t in set(toks):
            df[t] = df.get(t, 0) + 1
    scores = np.zeros((len(queries), n))
    ceiling = np.zeros((len(queries), 1))
    ceiling_vocab = np.zeros((len(queries), 1))
    for i, q in enumerate(queries):
        terms = [t for t in q if t in model.vocab_dict]
        if terms:
            scores[i] = model.get_scores(terms)
        for t in q:
            # bm25s's Lucene variant scores idf * tf / (tf + k1 * norm): at most idf.
            idf = math.log(1 + (n - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5))
            ceiling[i] += idf
            if t in model.vocab_dict:
                ceiling_vocab[i] += idf
    return scores, np.maximum(ceiling, 1e-9), np.maximum(ceiling_vocab, 1e-9)


def prepare(conversations: Sequence[Conversation], cache: Path) -> list[Conv]:
    """Embed (cached) and score every conversation once."""
    from langchain_agentmem.embedding.embeddings import SentenceTransformerEmbeddings

    model = SentenceTransformerEmbeddings().model
    tag = "all-MiniLM-L6-v2"
    out = []
    for conv in conversations:
        qs = [q for q in conv.questions if q.evidence]
        pos = {t.dia_id: i for i, t in enumerate(conv.turns)}
        qvec = embed_cached([q.question for q in qs], cache, model, tag)
        qtok = [tokenize(q.question) for q in qs]
        cos, bm, ceil, ceil_v = {}, {}, {}, {}
        for name, fn in TEXTS.items():
            texts = [fn(t) for t in conv.turns]
            dvec = embed_cached(texts, cache, model, tag)
            cos[name] = qvec @ dvec.T
            bm[name], ceil[name], ceil_v[name] = bm25_matrix([tokenize(t) for t in texts], qtok)
            if name in ("speaker", "dated"):
                for b in (0.3, 0.5):
                    key = f"{name} b={b}"
                    bm[key], ceil[key], ceil_v[key] = bm25_matrix(
                        [tokenize(t) for t in texts], qtok, b
                    )
        out.append(
            Conv(
                cid=conv.sample_id,
                cos=cos,
                bm25=bm,
                ceiling=ceil,
                ceiling_vocab=ceil_v,
                evidence=[np.array([pos[e] for e in q.evidence]) for q in qs],
                categories=np.array([q.category for q in qs]),
                when=np.array([q.question.lower().startswith("when") for q in qs]),
                session=np.array([t.session for t in conv.turns]),
            )
        )
    return out


# -- scoring -----------------------------------------------------------------------------------
def recall(c: Conv, scores: Matrix, k: int = K) -> npt.NDArray[np.float64]:
    """Recall@k of every question of ``c`` under the ranking ``scores`` (m x n)."""
    kk = min(k, scores.shape[1])
    # Stable tie-break on turn order, as an index does on insertion order.
    top = np.argsort(-scores, axis=1, kind="stable")[:, :kk]
    return np.array([np.isin(ev, t).mean() for ev, t in zip(c.evidence, top, strict=True)])


def ranks(scores: Matrix, valid: npt.NDArray[np.bool_] | None = None) -> Matrix:
    """1-based rank of every column per row (``inf`` where not ``valid``)."""
    order = np.argsort(-scores, axis=1, kind="stable")
    r = np.empty_like(scores)
    rows = np.arange(scores.shape[0])[:, None]
    r[rows, order] = np.arange(1, scores.shape[1] + 1)
    if valid is not None:
        r = np.where(valid, r, np.inf)
    return r


def minmax_top(cos: Matrix, bm: Matrix, w: float, n: int = 100) -> Matrix:
    """The old fusion: min-max over the union of each side's top ``n``, weighted sum."""
    out = np.full(cos.shape, -np.inf)
    for i in range(cos.shape[0]):
        cand = set(np.argsort(-cos[i])[:n].tolist())
        pos = np.flatnonzero(bm[i] > 0)
        cand |= set(pos[np.argsort(-bm[i, pos])[:n]].tolist())
        idx = np.array(sorted(cand))
        d, lex = cos[i, idx], bm[i, idx]
        dn = (d - d.min()) / (d.max() - d.min()) if d.max() - d.min() > 1e-12 else (d > 0) * 1.0
        ln = (
            (lex - lex.min()) / (lex.max() - lex.min())
            if lex.max() - lex.min() > 1e-12
            else (lex > 0) * 1.0
        )
        out[i, idx] = w * dn + (1 - w) * ln
    return out


def zscore(x: Matrix) -> Matrix:
    """Row-wise z-scores."""
    sd = x.std(axis=1, keepdims=True)
    return (x - x.mean(axis=1, keepdims=True)) / np.where(sd > 1e-12, sd, 1.0)


def neighbours(c: Conv, s: Matrix, a: float, how: str = "mean") -> Matrix:
    """Add ``a`` times the mean (or max) score of the adjacent turns of the same session."""
    if a == 0:
        return s
    left = np.zeros_like(s)
    right = np.zeros_like(s)
    same = c.session[1:] == c.session[:-1]
    left[:, 1:] = np.where(same, s[:, :-1], 0.0)
    right[:, :-1] = np.where(same, s[:, 1:], 0.0)
    if how == "max":
        return s + a * np.maximum(left, right)
    if how == "lift":  # move toward the best neighbour when it scores higher; stays in [0, 1]
        return s + a * np.maximum(np.maximum(left, right) - s, 0.0)
    return s + a * (left + right) / 2


def rrf_top(c: Conv, kc: float, depth: int) -> Matrix:
    """Plain RRF of each side's top ``depth`` list (the bench's ``rrf-dense-bm25``)."""
    bm = c.bm25["speaker"]
    rd = ranks(c.cos["speaker"])
    rb = ranks(bm, bm > 0)
    return np.where(rd <= depth, 1 / (kc + rd), 0) + np.where(rb <= depth, 1 / (kc + rb), 0)


Scorer = Callable[[Conv, tuple[Any, ...]], Matrix]


@dataclass
class Variant:
    """One fusion method and its hyper-parameter grid."""

    name: str
    grid: list[tuple[Any, ...]]
    score: Scorer


def absolute(c: Conv, dv: str, lv: str, w: float, *, vocab: bool = False) -> Matrix:
    """Convex mix of clipped cosine and BM25 over the query's attainable maximum."""
    ceiling = c.ceiling_vocab[lv] if vocab else c.ceiling[lv]
    return w * np.clip(c.cos[dv], 0, 1) + (1 - w) * c.bm25[lv] / ceiling


def rrf(c: Conv, dv: str, lv: str, kc: float, w: float = 0.5) -> Matrix:
    """Weighted reciprocal-rank fusion (BM25 ranks only where a term matched)."""
    bm = c.bm25[lv]
    return w / (kc + ranks(c.cos[dv])) + (1 - w) / (kc + ranks(bm, bm > 0))


W = [0.0, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0]
W_COARSE = [round(x, 2) for x in np.arange(0.2, 0.9001, 0.1)]


def variants() -> list[Variant]:
    """Every measured method."""
    v: list[Variant] = []
    for t in TEXTS:
        v.append(Variant(f"dense [{t}]", [()], lambda c, p, t=t: c.cos[t]))
        v.append(Variant(f"bm25 [{t}]", [()], lambda c, p, t=t: c.bm25[t]))
    v.append(
        Variant(
            "minmax top100 w=0.5 (old)",
            [(0.5,)],
            lambda c, p: minmax_top(c.cos["speaker"], c.bm25["speaker"], p[0]),
        )
    )
    v.append(
        Variant(
            "minmax top100 (w tuned)",
            [(w,) for w in W_COARSE],
            lambda c, p: minmax_top(c.cos["speaker"], c.bm25["speaker"], p[0]),
        )
    )
    v.append(Variant("rrf k=60", [(60,)], lambda c, p: rrf(c, "speaker", "speaker", p[0])))
    ks = [1, 2, 5, 10, 20, 40, 60, 100]
    v.append(
        Variant("rrf (k tuned)", [(k,) for k in ks], lambda c, p: rrf(c, "speaker", "speaker", *p))
    )
    v.append(
        Variant(
            "rrf (k, w tuned)",
            list(itertools.product(ks, W_COARSE)),
            lambda c, p: rrf(c, "speaker", "speaker", *p),
        )
    )
    v.append(
        Variant(
            "zscore (w tuned)",
            [(w,) for w in W],
            lambda c, p: p[0] * zscore(c.cos["speaker"]) + (1 - p[0]) * zscore(c.bm25["speaker"]),
        )
    )
    v.append(
        Variant(
            "abs: cos + bm25/ceiling(vocab terms)",
            [(w,) for w in W],
            lambda c, p: absolute(c, "speaker", "speaker", p[0], vocab=True),
        )
    )
    v.append(
        Variant(
            "abs: cos + bm25/ceiling(all terms)",
            [(w,) for w in W],
            lambda c, p: absolute(c, "speaker", "speaker", p[0]),
        )
    )
    for dv, lv in [
        ("dated", "speaker"),
        ("dated", "dated"),
        ("speaker", "dated"),
        ("bare", "bare"),
        ("speaker", "speaker b=0.3"),
        ("speaker", "speaker b=0.5"),
    ]:
        v.append(
            Variant(
                f"abs: dense[{dv}] bm25[{lv}]",
                [(w,) for w in W],
                lambda c, p, dv=dv, lv=lv: absolute(c, dv, lv, p[0]),
            )
        )
    v.append(
        Variant(
            "rrf (k tuned) dense[dated]",
            [(k,) for k in ks],
            lambda c, p: rrf(c, "dated", "speaker", *p),
        )
    )
    v.append(
        Variant(
            "rrf k=60 over each side's top 20 (bench baseline)",
            [(60, 20)],
            lambda c, p: rrf_top(c, *p),
        )
    )
    a_grid = [0.0, 0.2, 0.4, 0.5, 0.6, 0.8, 1.0]
    for dv, lv in [("speaker", "speaker"), ("speaker", "dated"), ("dated", "dated")]:
        v.append(
            Variant(
                f"abs dense[{dv}] bm25[{lv}] + neighbours (w, a)",
                list(itertools.product(W, a_grid)),
                lambda c, p, dv=dv, lv=lv: neighbours(c, absolute(c, dv, lv, p[0]), p[1]),
            )
        )
        v.append(
            Variant(
                f"abs dense[{dv}] bm25[{lv}] + max neighbour (w, a)",
                list(itertools.product(W, a_grid)),
                lambda c, p, dv=dv, lv=lv: neighbours(
                    c, absolute(c, dv, lv, p[0]), p[1], how="max"
                ),
            )
        )

    for lv in ("speaker b=0.3", "speaker b=0.5", "dated"):
        for how in ("max", "lift"):
            v.append(
                Variant(
                    f"nb: abs bm25[{lv}] + {how} neighbour (w, a)",
                    list(itertools.product(W, a_grid)),
                    lambda c, p, lv=lv, how=how: neighbours(
                        c, absolute(c, "speaker", lv, p[0]), p[1], how=how
                    ),
                )
            )
    for lv in ("speaker", "speaker b=0.3", "dated", "dated b=0.3"):
        for vocab in (True, False):
            v.append(
                Variant(
                    f"lift: bm25[{lv}] ceiling {'vocab' if vocab else 'all'} terms (w, a)",
                    list(itertools.product(W, a_grid)),
                    lambda c, p, lv=lv, vocab=vocab: neighbours(
                        c, absolute(c, "speaker", lv, p[0], vocab=vocab), p[1], how="lift"
                    ),
                )
            )
    b_keys = ("speaker", "speaker b=0.5", "speaker b=0.3")
    v.append(
        Variant(
            "nb: abs + lift neighbour (w, a, b tuned)",
            list(itertools.product(W, a_grid, b_keys)),
            lambda c, p: neighbours(c, absolute(c, "speaker", p[2], p[0]), p[1], how="lift"),
        )
    )

    def when_split(c: Conv, p: tuple[Any, ...], dv: str) -> Matrix:
        w = np.where(c.when[:, None], p[1], p[0])
        return w * np.clip(c.cos[dv], 0, 1) + (1 - w) * c.bm25["speaker"] / c.ceiling["speaker"]

    for dv in ("speaker", "dated"):
        v.append(
            Variant(
                f"abs dense[{dv}], own w for 'when' questions",
                list(itertools.product(W, W)),
                lambda c, p, dv=dv: when_split(c, p, dv),
            )
        )

    def when_dated(c: Conv, p: tuple[Any, ...]) -> Matrix:
        cos = np.where(c.when[:, None], c.cos["dated"], c.cos["speaker"])
        bm = c.bm25["speaker"] / c.ceiling["speaker"]
        return p[0] * np.clip(cos, 0, 1) + (1 - p[0]) * bm

    v.append(Variant("abs, dense[dated] only for 'when' questions", [(w,) for w in W], when_dated))
    return v


def held_out(convs: list[Conv], var: Variant) -> dict[str, Any]:
    """Leave-one-conversation-out: pooled held-out recall@10, per category, chosen params."""
    # per conversation x grid point: recall of every question
    per = [[recall(c, var.score(c, p)) for p in var.grid] for c in convs]
    sums = np.array([[r.sum() for r in row] for row in per])  # (convs, grid)
    chosen, held = [], []
    for i in range(len(convs)):
        others = sums.sum(axis=0) - sums[i]
        j = int(np.argmax(others))
        chosen.append(var.grid[j])
        held.append(per[i][j])
    allq = np.concatenate(held)
    cats = np.concatenate([c.categories for c in convs])
    best_all = int(np.argmax(sums.sum(axis=0)))
    return {
        "held_out": float(allq.mean()),
        "categories": {name: float(allq[cats == n].mean()) for n, name in CATEGORIES.items()},
        "chosen": chosen,
        "in_sample": float(sums[:, best_all].sum() / len(allq)),
        "best_all": var.grid[best_all],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/datasets/locomo/locomo_dev.json")
    parser.add_argument(
        "--cache", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "agentmem-ablation")
    )
    parser.add_argument("--only", default=None, help="run variants whose name contains this")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    conversations, _ = load_locomo(args.data)
    t0 = time.perf_counter()
    convs = prepare(conversations, Path(args.cache))
    print(f"prepared {len(convs)} conversations in {time.perf_counter() - t0:.1f} s")
    cats = list(CATEGORIES.values())
    print(
        f"{'method (LOO held-out recall@10)':<48}{'all':>7}"
        + "".join(f"{c[:10]:>11}" for c in cats)
        + f"{'in-sample':>10}  chosen per held-out conversation"
    )
    for var in variants():
        if args.only and args.only not in var.name:
            continue
        r = held_out(convs, var)
        chosen = sorted(
            {tuple(float(x) if isinstance(x, float) else x for x in p) for p in r["chosen"]}
        )
        print(
            f"{var.name:<48}{r['held_out']:>7.3f}"
            + "".join(f"{r['categories'][c]:>11.3f}" for c in cats)
            + f"{r['in_sample']:>10.3f}  {chosen if chosen != [()] else ''}",
            flush=True,
        )


if __name__ == "__main__":
    main()
