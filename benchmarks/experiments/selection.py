"""Which turns to keep at 10% / 25%: spread across sessions, diversity, and richer fits.

The learned policy keeps the turns it scores highest. Could the same scores, or a better
fit of the same evidence, pick better? Rows, each keeping ``round(budget x turns)`` turns
of every LoCoMo conversation and searched with the shipped hybrid search:

- ``top``: the highest-scoring turns (what a priority memory holds at the end);
- ``session quota m``: each session keeps ``floor(m x its share of the capacity)`` of its
  best turns, the rest of the capacity goes to the best turns left (m = 1: in proportion to
  session length);
- ``mmr lam``: turns picked one by one by score minus ``lam`` x their highest cosine to a
  turn already picked (maximal marginal relevance);

for the shipped policy's scores of turns (in-sample: it was trained on these conversations)
and the importance rule's; and leave-one-conversation-out fits of per-turn evidence (as in
``evidence_fit.py``): ridge and gradient-boosted trees (scikit-learn's
``HistGradientBoostingRegressor``) on the policy's text features with the turn before it,
with or without ``online`` features known when the turn arrives (mean and max IDF of its
content words over the turns so far, how many of them are new, how many capitalised names it
is the first to use).

Usage::

    PYTHONPATH=$PWD python benchmarks/experiments/selection.py \
        --data ../shared/datasets/locomo/locomo_dev.json \
        --out benchmarks/experiments/results/selection.txt
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor

from langchain_agentmem.policies.features import (
    content_words,
    neutral_observation,
    priority_from,
)
from langchain_agentmem.policies.learned import forward, load_policy
from langchain_agentmem.rl.budget import capacity_for
from langchain_agentmem.rl.data import Conversation, embed_conversations, load_locomo
from langchain_agentmem.rl.evaluate import evidence_weight, per_question, summarise
from langchain_agentmem.rl.train import ridge_fit, with_intercept
from langchain_agentmem.text.sentences import strip_speaker

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evidence_fit import turn_features

BUDGETS = (0.1, 0.25)
_NAME = re.compile(r"\b[A-Z][a-z]+")
Pick = Callable[[Conversation, np.ndarray, int], np.ndarray]


def top(_conv: Conversation, score: np.ndarray, cap: int) -> np.ndarray:
    """The ``cap`` best turns."""
    return np.argsort(-score, kind="stable")[:cap]


def quota(mix: float) -> Pick:
    """Each session first keeps its share (x ``mix``) of the capacity, best turns first."""

    def pick(conv: Conversation, score: np.ndarray, cap: int) -> np.ndarray:
        sessions = np.array([t.session for t in conv.turns])
        kept: list[int] = []
        for s in np.unique(sessions):
            idx = np.flatnonzero(sessions == s)
            share = math.floor(mix * cap * len(idx) / len(sessions))
            kept += idx[np.argsort(-score[idx], kind="stable")[:share]].tolist()
        taken = set(kept)
        rest = [int(i) for i in np.argsort(-score, kind="stable") if int(i) not in taken]
        return np.array(kept + rest[: cap - len(kept)])

    return pick


def mmr(lam: float) -> Pick:
    """Greedy picks by score minus ``lam`` x the highest cosine to a turn already picked."""

    def pick(conv: Conversation, score: np.ndarray, cap: int) -> np.ndarray:
        v = conv.turn_vectors
        closest = np.zeros(len(score))
        free = np.ones(len(score), dtype=bool)
        kept = []
        for _ in range(cap):
            i = int(np.argmax(np.where(free, score - lam * closest, -np.inf)))
            kept.append(i)
            free[i] = False
            closest = np.maximum(closest, v @ v[i])
        return np.array(kept)

    return pick


def online_features(conv: Conversation) -> np.ndarray:
    """Per turn, from the turns up to it: mean / max IDF of its content words, share of
    words never seen, names it is the first to use."""
    df: dict[str, int] = {}
    names: set[str] = set()
    rows = []
    for i, turn in enumerate(conv.turns):
        said = strip_speaker(turn.text)
        ws = content_words(said)
        idf = [math.log((i + 2) / (df.get(w, 0) + 1)) for w in ws] or [0.0]
        own = set(_NAME.findall(said)) - {"I"}
        new = sum(df.get(w, 0) == 0 for w in ws)
        rows.append([np.mean(idf), max(idf), new / 10, len(own - names), len(ws) / 20])
        for w in ws:
            df[w] = df.get(w, 0) + 1
        names |= own
    return np.array(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", default="../shared/datasets/locomo/locomo_dev.json")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    started = time.perf_counter()
    convs = embed_conversations(load_locomo(args.data))
    text, previous = turn_features(convs)
    online = [online_features(c) for c in convs]
    labels = [evidence_weight(c) for c in convs]
    layers, _ = load_policy()

    def policy_scores(j: int, cap: int, learned: bool) -> np.ndarray:
        out = []
        for row in text[j]:
            obs = neutral_observation(row.astype(np.float32), cap)
            out.append(priority_from(obs, forward(layers, obs) if learned else 0.0))
        return np.array(out)

    def fitted(features: Callable[[int], np.ndarray], model: str) -> Callable[[int], np.ndarray]:
        def score(i: int) -> np.ndarray:
            rest = [j for j in range(len(convs)) if j != i]
            x = np.vstack([features(j) for j in rest])
            y = np.concatenate([labels[j] for j in rest])
            if model == "ridge":
                return with_intercept(features(i)) @ ridge_fit(x, y, alpha=1.0)
            trees = HistGradientBoostingRegressor(
                max_iter=200,
                learning_rate=0.05,
                max_leaf_nodes=15,
                min_samples_leaf=40,
                random_state=0,
            )
            return np.asarray(trees.fit(x, y).predict(features(i)))

        return score

    base = lambda j: np.hstack([text[j], previous[j]])  # noqa: E731
    richer = lambda j: np.hstack([text[j], previous[j], online[j]])  # noqa: E731
    fits = {
        "ridge, text + previous": fitted(base, "ridge"),
        "ridge, + online": fitted(richer, "ridge"),
        "trees, text + previous": fitted(base, "trees"),
        "trees, + online": fitted(richer, "trees"),
    }
    picks: dict[str, Pick] = {"top": top}
    picks.update({f"session quota {m}": quota(m) for m in (0.5, 1.0)})
    picks.update({f"mmr {lam}": mmr(lam) for lam in (0.05, 0.1, 0.2)})
    head = f"{'scores':<24}{'pick':<20}{'budget':>7}{'R@10':>7}{'retained':>9}"
    lines = [head, "-" * len(head)]
    print(head, flush=True)
    scored: dict[tuple[str, int, int], np.ndarray] = {}  # fits do not depend on the capacity
    for budget in BUDGETS:
        rows: list[tuple[str, str]] = [(s, p) for s in ("learned", "importance") for p in picks]
        rows += [(name, "top") for name in fits]
        for source, how in rows:
            found: list[tuple[int, float, float]] = []
            for i, conv in enumerate(convs):
                cap = capacity_for(budget, len(conv.turns))
                key = (source, i, 0 if source in fits else cap)
                if key not in scored:
                    scored[key] = (
                        fits[source](i)
                        if source in fits
                        else policy_scores(i, cap, source == "learned")
                    )
                score = scored[key]
                kept = np.sort(picks[how](conv, score, cap))
                found.extend(per_question(conv, kept, 10))
            s = summarise(found, 10)
            lines.append(
                f"{source:<24}{how:<20}{budget:>7g}{s['recall@10']:>7.3f}{s['retained']:>9.3f}"
            )
            print(lines[-1], flush=True)
    lines.append(f"\nran in {time.perf_counter() - started:.0f} s")
    if args.out:
        Path(args.out).write_text(
            "command: PYTHONPATH=$PWD python benchmarks/experiments/selection.py --data "
            "../shared/datasets/locomo/locomo_dev.json "
            "--out benchmarks/experiments/results/selection.txt\n"
            f"{len(convs)} conversations; evidence recall@10 (categories 1-4) of the shipped "
            "hybrid search over the kept turns, and the share of each question's evidence "
            "kept. 'learned' / 'importance': the shipped policy's (in-sample) and the rule's "
            "score of each turn alone; fits: leave one conversation out.\n\n"
            + "\n".join(lines)
            + "\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
