"""Short reactions kept out of newer-first: is the current statement first more often?

Newer-first places a later statement of a speaker above an older one it restates. In the
hand-written sets, most lines it places above the current statement are small talk: a
short reaction to what the other speaker just said ("Coffee at three then.", "Send
photos.", "They're very good beans."), which a change word ("The leaves are all turning
now."), a pair of short lines or a standing out of noise lets in. None of the current
statements of those sets is such a reaction.

Variants, side by side in one run, every turn kept, k=5, on top of the shipped search:

- ``shipped``: as the package searches;
- ``reactions <= N``: a turn of at most ``N`` words (the speaker's name left out) that
  follows, in the same session, a turn of another speaker that asks nothing is never
  placed above another (it is read as a question is: it can still be passed over);
- ``replies <= N``: the same for any turn that follows another speaker's, a question
  or not.

Measured on conversations between people only. In a chat with an assistant almost every
user message follows an assistant statement, so the rule as written here would keep
"I moved to Berlin." from being placed too; it is not a candidate default as it stands.

Sets: the six fact-change sets of :mod:`recency_ablation`, the two hand-written ones and
LoCoMo evidence recall of categories 1-4. Each generated set is also scored with the
variant of the highest mean (cur@5 - stale>cur) over the other five, among variants that
keep LoCoMo recall@10, and recall@10 in each category, at least as high as shipped.

Usage::

    PYTHONPATH=$PWD python benchmarks/experiments/short_reactions.py \\
        --data ../shared/datasets/locomo/locomo_dev.json \\
        --out benchmarks/experiments/results/short_reactions.txt
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.ranking import search as hybrid
from langchain_agentmem.ranking.newer_first import Said
from langchain_agentmem.rl.data import Conversation
from langchain_agentmem.rl.retrieval import hybrid_results
from langchain_agentmem.text.replies import asks

sys.path.insert(0, str(Path(__file__).resolve().parent))
from aboutness import locomo_summary, ranker
from paired_restatements import POOL, fact_parser, fact_sets, variant_rows, write_result
from question_records import recalls
from recency_ablation import SETS, fact_scores

SHIPPED = "shipped"
VARIANTS = (
    (SHIPPED, 0, False),
    ("reactions <= 6", 6, False),
    ("reactions <= 8", 8, False),
    ("reactions <= 10", 10, False),
    ("replies <= 6", 6, True),
    ("replies <= 8", 8, True),
)
"""Name, most words, and whether a reply to a question counts too."""


def reactions(conversations: Sequence[Conversation], words: int, answers: bool) -> set[Said]:
    """Who said, when and what, for each short reaction in ``conversations``."""
    out: set[Said] = set()
    for conv in conversations:
        for before, turn in pairwise(conv.turns):
            if before.session != turn.session or before.speaker == turn.speaker:
                continue
            if (answers or not asks(before.text)) and len(turn.text.split()) - 1 <= words:
                out.add((turn.speaker, turn.timestamp, turn.text))
    return out


@contextmanager
def unplaced(keys: set[Said]) -> Iterator[None]:
    """Inside the ``with`` block, newer-first reads the records ``keys`` as questions."""
    shipped = hybrid.newer_first

    def newer_first(*args: Any, said_of: Callable[[int], Said], **kwargs: Any) -> Any:
        def said(rid: int) -> Said:
            who, when, text = said_of(rid)
            return (who, when, text.rstrip() + " ?" if (who, when, text) in keys else text)

        return shipped(*args, said_of=said, **kwargs)

    hybrid.newer_first = newer_first  # type: ignore[assignment]
    try:
        yield
    finally:
        hybrid.newer_first = shipped  # type: ignore[assignment]


def main(argv: Sequence[str] | None = None) -> None:
    """Score every variant; choose inside folds; print and write the results."""
    args = fact_parser(__doc__).parse_args(argv)
    started = time.perf_counter()
    raw, sets, names, locomo = fact_sets(args.n, args.data)
    generated = [name for name, *_ in SETS]
    every = [c for name in names for c in sets[name]] + locomo
    facts: dict[str, dict[str, tuple[float, ...]]] = {}
    loco: dict[str, list[float]] = {}
    for label, words, answers in VARIANTS:
        keys = reactions(every, words, answers) if words else set()
        with unplaced(keys):
            pools = {
                c.sample_id: hybrid_results(c, range(len(c.turns)), POOL, HybridConfig())
                for c in every
            }
        facts[label] = {s: tuple(fact_scores(sets[s], raw[s], ranker(pools))) for s in names}
        rows = [
            r for c in locomo for r in recalls(c, [[i for i, _ in f] for f in pools[c.sample_id]])
        ]
        loco[label] = list(locomo_summary(rows))

    guarded = [
        label
        for label, *_ in VARIANTS
        if all(a >= b - 1e-9 for a, b in list(zip(loco[label], loco[SHIPPED], strict=True))[2:])
    ]

    def choose(train: list[str]) -> str:
        return max(
            guarded,
            key=lambda label: (
                float(np.mean([facts[label][s][1] - facts[label][s][2] for s in train])),
                label == SHIPPED,
            ),
        )

    width = max(len(label) for label, *_ in VARIANTS) + 2
    lines = variant_rows([label for label, *_ in VARIANTS], facts, loco, names)
    lines += ["", "Each generated set scored with the variant chosen on the other five:", ""]
    for s in generated:
        pick = choose([t for t in generated if t != s])
        lines.append(
            f"{s:<10}{pick:<{width}}"
            + " ".join(f"{a:.3f}" for a in facts[pick][s])
            + "   (shipped: "
            + " ".join(f"{a:.3f}" for a in facts[SHIPPED][s])
            + ")"
        )
    lines.append("")
    lines.append("Chosen on all six generated sets: " + choose(generated) + ".")
    text = "\n".join(lines)
    print(text)
    if args.out:
        write_result(args.out, "short_reactions.py", argv, args.n, started, text)


if __name__ == "__main__":
    main()
