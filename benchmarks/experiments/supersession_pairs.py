"""Does a learned judgement of "B restates A" find changed facts that newer-first misses?

Newer-first (:mod:`langchain_agentmem.ranking.newer_first`) pairs a later statement B with an older
one A of the same speaker when B is closer to A than background by a cosine margin (and, for
B without a change word, stands out as an answer to the query). The changes it still misses
on the fact-change sets written apart from its tuning are pairs that cosine does not tie
("My phone is the latest iPhone." ... "Upgraded to a Pixel on Friday."). This script asks
whether a judgement learned from labelled pairs, made once per pair and without the query
(so it could be made at write time), does better.

- **Pairs:** every (earlier A, later B) of one speaker's statements (questions left out) in
  each synthetic fact-change conversation; positive when both state the same fact (a
  current statement and the stale ones it replaces, or two stale ones), about 1 in 400.
- **Judge:** a logistic regression (balanced classes, C=0.1) on ``[a * b, |a - b|]`` of the
  bundled model's embeddings. Each set is judged by a model trained on the other five,
  whose slots differ from its own, so every figure is on facts and phrasings the judge did
  not see; LoCoMo by a model trained on all six.
- **Pair table:** ROC AUC and average precision of the judge's score and of plain cosine.
- **Ranking table:** the shipped ranking and three ways of adding the judge to it, each
  applied to the same top-100 candidates as the shipped step (threshold ``t`` on the judge's
  log-odds): ``or standing`` (a pair the judge accepts stands in for the query-standing test
  of statements without a change word), ``or margin`` (it stands in for the cosine margin),
  ``alone`` (it suffices on its own; the relevance gate and present-value question filter
  still apply). The row ``no judge`` is this script's re-implementation of the shipped step
  and must equal ``shipped``.

Usage::

    PYTHONPATH=$PWD python benchmarks/experiments/supersession_pairs.py \
        --data ../shared/datasets/locomo/locomo_dev.json \
        --out benchmarks/experiments/results/supersession_pairs.txt
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import average_precision_score, roc_auc_score

from benchmarks.experiments.recency_ablation import (
    POOL,
    SETS,
    Ranker,
    embedded_sets,
    shipped,
    table_head,
    table_row,
)
from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.ranking.newer_first import (
    asks_current_value,
    background,
    is_restatement,
    standing,
)
from langchain_agentmem.rl.data import Conversation, embed_conversations, load_locomo
from langchain_agentmem.rl.retrieval import hybrid_results

CONFIG = HybridConfig()
PLAIN = HybridConfig(newer_first=False)
Judge = tuple[np.ndarray, float]
"""Logistic regression weights over pair features, and intercept."""


def features(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pair features of embeddings ``a`` and ``b`` (broadcast over leading axes)."""
    return np.concatenate([a * b, np.abs(a - b)], axis=-1)


def is_statement(text: str) -> bool:
    """Whether a turn states something (is not a question)."""
    return not text.rstrip().endswith("?")


def labelled_pairs(convs: list[Conversation], raw: list[dict[str, Any]]) -> tuple[Any, Any]:
    """Features and labels of every (earlier, later) pair of one speaker's statements."""
    xs, ys = [], []
    for conv, item in zip(convs, raw, strict=True):
        index = {turn.dia_id: i for i, turn in enumerate(conv.turns)}
        fact_of: dict[int, tuple[str, str]] = {}
        for q in item["qa"]:
            fact = q["fact"]
            if fact["kind"] == "current":
                for dia in [*q["evidence"], *fact["stale"]]:
                    fact_of[index[dia]] = (fact["slot"], conv.turns[index[dia]].speaker)
        vectors = conv.turn_vectors
        for b, later in enumerate(conv.turns):
            if not is_statement(later.text):
                continue
            older = [
                a
                for a in range(b)
                if conv.turns[a].speaker == later.speaker and is_statement(conv.turns[a].text)
            ]
            if older:
                xs.append(features(vectors[older], vectors[b]))
                ys.extend(int(b in fact_of and fact_of.get(a) == fact_of[b]) for a in older)
    return np.concatenate(xs), np.asarray(ys)


def fit(pairs: Sequence[tuple[Any, Any]]) -> Judge:
    """A judge trained on the given sets' pairs."""
    x = np.concatenate([p[0] for p in pairs])
    y = np.concatenate([p[1] for p in pairs])
    model = LogisticRegression(C=0.1, max_iter=2000, class_weight="balanced").fit(x, y)
    return model.coef_.ravel().astype(np.float32), float(model.intercept_[0])


def judged(judge: Judge | None, way: str, t: float) -> Ranker:
    """Newer-first over the plain top-100 candidates, with the judge added ``way``."""
    pools: dict[str, list[list[tuple[int, float]]]] = {}

    def rank(conv: Conversation, qi: int, k: int) -> list[int]:
        if conv.sample_id not in pools:
            pools[conv.sample_id] = hybrid_results(conv, range(len(conv.turns)), POOL, PLAIN)
        found = pools[conv.sample_id][qi]
        keys = [rid for rid, _ in found]
        if not asks_current_value(conv.questions[qi].text):
            return keys[:k]
        texts = [conv.turns[i].text for i in keys]
        statement = np.array([is_statement(text) for text in texts])
        cued = np.array([is_restatement(text) for text in texts])
        names = [conv.turns[i].speaker for i in keys]
        speaker = np.array([names.index(name) for name in names])
        vectors = conv.turn_vectors[keys]
        cosine = vectors @ conv.question_vectors[qi]
        stands = (standing(cosine, speaker) >= CONFIG.unmarked_standing) & statement[:, None]
        accepted = np.zeros_like(stands)
        if judge is not None:
            score = features(vectors[:, None, :], vectors[None, :, :]) @ judge[0] + judge[1]
            accepted = (score >= t) & statement[:, None] & statement[None, :]
        sims = (vectors @ vectors.T).astype(np.float64)
        close = sims - background(vectors, list(range(len(keys))), sims) >= (
            CONFIG.restatement_margin
        )
        said = cued[:, None] | stands
        gate = {
            "or standing": close & (said | accepted),
            "or margin": (close | accepted) & said,
            "alone": (close & said) | accepted,
        }[way]
        base = np.array([score for _, score in found])
        when = np.empty(len(keys), dtype=np.int64)
        order = sorted(range(len(keys)), key=lambda i: (conv.turns[keys[i]].timestamp, keys[i]))
        when[order] = np.arange(len(keys))
        placed, best = base.copy(), base.copy()
        for b in order:
            older = (
                (when < when[b])
                & (speaker == speaker[b])
                & gate[b]
                & (placed > placed[b])
                & (base[b] >= CONFIG.restatement_relevance * best)
            )
            if older.any():
                top = int(np.flatnonzero(older)[np.argmax(placed[older])])
                placed[b], best[b] = placed[top] + 1e-6, best[top]
        ranked = sorted(range(len(keys)), key=lambda i: (-placed[i], keys[i]))
        return [keys[i] for i in ranked[:k]]

    return rank


def main(argv: Sequence[str] | None = None) -> None:
    """Score the judge on pairs and in the ranking; print and write both tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", required=True, help="LoCoMo JSON file")
    parser.add_argument("--n", type=int, default=6, help="synthetic conversations per set")
    parser.add_argument("--out", help="text file for the tables")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    names = [name for name, *_ in SETS]
    raw, sets = facts = embedded_sets(args.n)
    locomo = embed_conversations(load_locomo(args.data))
    pairs = {name: labelled_pairs(sets[name], raw[name]) for name in names}
    judges = {name: fit([pairs[o] for o in names if o != name]) for name in names}
    everything = fit(list(pairs.values()))

    lines = [f"{'set':<10}{'pairs':>8}{'same fact':>10}{'judge AUC':>11}{'AP':>7}"
             f"{'cosine AUC':>12}{'AP':>7}"]  # fmt: skip
    for name in names:
        x, y = pairs[name]
        score = x @ judges[name][0] + judges[name][1]
        cosine = x[:, : x.shape[1] // 2].sum(axis=1)
        lines.append(
            f"{name:<10}{len(y):>8}{int(y.sum()):>10}{roc_auc_score(y, score):>11.3f}"
            f"{average_precision_score(y, score):>7.3f}{roc_auc_score(y, cosine):>12.3f}"
            f"{average_precision_score(y, cosine):>7.3f}"
        )
    rows: list[tuple[str, dict[str, Ranker], Ranker]] = [
        ("shipped", {n: shipped(CONFIG) for n in names}, shipped(CONFIG)),
        ("no judge", {n: judged(None, "or standing", 0) for n in names}, judged(None, "alone", 0)),
    ]
    for way in ("or standing", "or margin", "alone"):
        for t in (2.0, 4.0):
            per_set = {n: judged(judges[n], way, t) for n in names}
            rows.append((f"{way}, t={t:g}", per_set, judged(everything, way, t)))
    head = table_head(20)
    lines += ["", head, "-" * len(head)]
    for label, per_set, on_locomo in rows:
        lines.append(table_row(label, 20, facts, locomo, per_set.__getitem__, on_locomo))
        print(lines[-1], flush=True)
    table = "\n".join(lines)
    print(table)
    if args.out:
        command = "python benchmarks/experiments/supersession_pairs.py " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
        Path(args.out).write_text(
            f"{command}\n\nEvery turn kept, k=5, columns as in recency_ablation.txt. Each "
            "synthetic set judged by a model trained on the other five (leave one set out); "
            "LoCoMo by one trained on all six. t: threshold on the judge's log-odds. Ran in "
            f"{time.perf_counter() - started:.0f} s.\n\n{table}\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
