"""Turns that name the person asked about, by someone else: do they gain with the person's own?

Since ``named_speakers.py``, a question's speaker names leave its words and embedding, and
the named speaker's own records gain ``HybridConfig.named_speaker``. A turn of the other
speaker that names the person ("Sounds awesome, John! Working out together is a great way of
bonding as a family.") lost its match on the name and gained nothing in its place; when it is
the question an answer replies to, the answer ("Three times a week; it keeps us on track.")
loses the lift of its neighbour too. On LoCoMo single-hop this cost more than it gained
(recall@10 0.885 -> 0.878 through ``agentmem bench``).

Rows, all with the names replaced by they/their and newer-first's margin 0.1: what the named
speaker's records gain (``p``) and what another speaker's record gains when its text names a
named speaker (``n``, ``HybridConfig.named_mention``). The first row is the release before
the names change, the floor of the choice; the second is the release before this one.
Choice, scoring and columns as in ``named_speakers.py``, but the guard is wider: a row chosen
may not lose against the first on the training conversations in LoCoMo recall@1 and @5 either,
besides recall@10 and each category's. The fact-change sets hardly tell the rows apart (their
listeners seldom name the speaker), so without it the choice falls to recall@10 alone, which
``n`` can buy at the cost of the first ranks.

Usage::

    PYTHONPATH=$PWD python benchmarks/experiments/named_mentions.py \\
        --data ../shared/datasets/locomo/locomo_dev.json \\
        --out benchmarks/experiments/results/named_mentions.txt
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from named_speakers import Variant, main


def variants() -> list[Variant]:
    """The rows: the release before the names change, the one before this, then the grid."""
    out = [Variant("names as words", None), Variant("[they] p=0.1 n=0", "they", 0.1, 0.1)]
    for gain in (0.05, 0.1, 0.15):
        for mention in (0.025, 0.05, 0.1):
            out.append(Variant(f"[they] p={gain} n={mention}", "they", gain, 0.1, mention))
    return out


if __name__ == "__main__":
    main(
        rows=variants(),
        script="named_mentions.py",
        legend=" n: what another speaker's turn that names a named speaker gains.",
        guard_from=0,
    )
