"""What marks a turn worth keeping: per-turn evidence fitted from features, held out.

For each LoCoMo conversation, a ridge regression fitted on the other five predicts how much
evidence each turn holds (its share of each question's evidence, summed); the top 10% / 25%
of turns by the prediction are kept and searched with the shipped hybrid search. This is a
static ranking of the whole conversation, a ceiling for a policy that reads the same
features as turns arrive (a priority policy that evicts the lowest keeps exactly that top
share when its scores do not change). Rows differ only in the features:

- ``importance rule``: no fit, the rule's own score;
- ``text features``: the policy's text features without ``answers``;
- ``+ answers``: with whether the turn answers the other speaker's question (``reply_to``);
- ``+ previous turn``: with the text features of the turn before it;
- ``+ embedding``: with the turn's MiniLM embedding (384 numbers);
- ``embedding only``.

Usage::

    PYTHONPATH=$PWD python benchmarks/evidence_fit.py \
        --data ../shared/datasets/locomo/locomo_dev.json --out benchmarks/results/evidence_fit.txt
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from langchain_agentmem.policies.features import TEXT_FEATURES, text_features
from langchain_agentmem.rl.budget import capacity_for
from langchain_agentmem.rl.data import embed_conversations, load_locomo
from langchain_agentmem.rl.evaluate import evidence_weight, per_question, summarise
from langchain_agentmem.rl.retrieval import turn_metadata
from langchain_agentmem.rl.train import ridge_fit, with_intercept

BUDGETS = (0.1, 0.25)
CATEGORIES = ("multi-hop", "temporal", "open-domain", "single-hop")
ANSWERS = TEXT_FEATURES.index("answers")
IMPORTANCE = TEXT_FEATURES.index("importance")


Features = Callable[[int], np.ndarray]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", default="../shared/datasets/locomo/locomo_dev.json")
    parser.add_argument("--out", default=None, help="also write the table to this file")
    args = parser.parse_args()
    started = time.perf_counter()
    convs = embed_conversations(load_locomo(args.data))
    text = [
        np.stack([text_features(t.text, m) for t, m in zip(c.turns, turn_metadata(c), strict=True)])
        for c in convs
    ]
    previous = [np.vstack([np.zeros((1, t.shape[1])), t[:-1]]) for t in text]
    labels = [evidence_weight(c) for c in convs]
    plain = [t[:, [i for i in range(t.shape[1]) if i != ANSWERS]] for t in text]
    rows: dict[str, Features | None] = {
        "importance rule (no fit)": None,
        "text features": lambda j: plain[j],
        "+ answers": lambda j: text[j],
        "+ answers + previous turn": lambda j: np.hstack([text[j], previous[j]]),
        "+ answers + embedding": lambda j: np.hstack([text[j], convs[j].turn_vectors]),
        "embedding only": lambda j: convs[j].turn_vectors,
    }
    head = f"{'features':<28}{'budget':>7}{'R@10':>7}{'retained':>9}" + "".join(
        f"{c[:11]:>12}" for c in CATEGORIES
    )
    lines = [
        "command: PYTHONPATH=$PWD python benchmarks/evidence_fit.py --data "
        "../shared/datasets/locomo/locomo_dev.json --out benchmarks/results/evidence_fit.txt",
        f"{len(convs)} conversations, leave-one-conversation-out ridge fits (alpha 1) of "
        "per-turn evidence; the top budget share of turns by the fit is kept and searched "
        "with the shipped hybrid search; R@10 = evidence recall@10, retained = share of "
        "each question's evidence kept; categories: R@10.",
        "",
        head,
        "-" * len(head),
    ]
    for name, features in rows.items():
        for budget in BUDGETS:
            found: list[tuple[int, float, float]] = []
            for i, conv in enumerate(convs):
                if features is None:
                    score = text[i][:, IMPORTANCE]
                else:
                    rest = [j for j in range(len(convs)) if j != i]
                    coef = ridge_fit(
                        np.vstack([features(j) for j in rest]),
                        np.concatenate([labels[j] for j in rest]),
                    )
                    score = with_intercept(features(i)) @ coef
                cap = capacity_for(budget, len(conv.turns))
                kept = np.sort(np.argsort(-score, kind="stable")[:cap])
                found.extend(per_question(conv, kept, 10))
            s = summarise(found, 10)
            cats = "".join(f"{s.get(f'recall@10/cat{k + 1}', 0.0):>12.3f}" for k in range(4))
            lines.append(f"{name:<28}{budget:>7g}{s['recall@10']:>7.3f}{s['retained']:>9.3f}{cats}")
            print(lines[-1], flush=True)
    lines.append(f"\nran in {time.perf_counter() - started:.0f} s")
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
