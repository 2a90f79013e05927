"""Facts that change, through ``AgentMemory``: is the current statement found, and first?

Conversations in which a person states a fact and later a new value of it ("I'm seeing
Alex" ... "Sam asked me out and I said yes"), then questions for the current value ("Who is
Rosa seeing?") and for the one before ("Who was Rosa seeing before Sam?"). Six generated
sets (``rl.synthetic_conversations``; each written apart from the rules tuned on the ones
before it, see ``experiments/recency_ablation.py``) and two written by hand in phrasings of
their own (``data/aboutness_facts.json``; ``data/news_facts.json``, most changes told as news
without a change word, written after pairs were chosen). Each conversation is ingested turn
by turn into its own namespace of one SQLite memory, exactly as ``agentmem bench locomo``
does ("Name: text", the speaker in ``metadata``, one thread per session, the session date),
every turn kept, and each question searched with the shipped defaults, k=5:

- cur@1 / cur@5: the current statement first / in the top 5 (questions for a current value);
- stale>cur: of those whose fact changed, the share with an older statement of it above the
  current one in the top 5 (or in the top 5 without it);
- before@5: the earlier statement in the top 5 (questions for the value before).

Per set, and per conversation (mean, sd, min of cur@5 over the generated ones).

Usage::

    python benchmarks/fact_change.py --out benchmarks/results/fact_change.txt
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from langchain_agentmem import AgentMemory
from langchain_agentmem.index.text import reply_texts
from langchain_agentmem.locomo import load_locomo, turn_metadata, turn_text
from langchain_agentmem.rl.synthetic_conversations import SLOT_SETS, generate, write

HAND = Path(__file__).resolve().parent / "data" / "aboutness_facts.json"
NEWS = Path(__file__).resolve().parent / "data" / "news_facts.json"
SETS = (
    ("tuned", "tuned", 0),
    ("held out", "heldout", 1),
    ("check", "check", 2),
    ("fresh", "fresh", 3),
    ("unseen", "unseen", 4),
    ("sealed", "sealed", 5),
)
"""Name, slot set and seed of each generated set (as ``experiments/recency_ablation.py``)."""


@dataclass
class Counts:
    """What one conversation's (or a set's) questions found."""

    cur1: int = 0
    cur5: int = 0
    current: int = 0
    stale_above: int = 0
    changed: int = 0
    before5: int = 0
    before: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))

    def figures(self) -> tuple[float, float, float, float]:
        """cur@1, cur@5, stale>cur, before@5."""
        return (
            self.cur1 / max(self.current, 1),
            self.cur5 / max(self.current, 1),
            self.stale_above / max(self.changed, 1),
            self.before5 / max(self.before, 1),
        )


def ingest(memory: AgentMemory, path: Path) -> None:
    """Every conversation of ``path`` into its own namespace, turn by turn."""
    conversations, _ = load_locomo(path)
    for conv in conversations:
        texts = [turn_text(t) for t in conv.turns]
        replies = reply_texts(
            [t.speaker for t in conv.turns], [t.session for t in conv.turns], texts
        )
        for i, (turn, text) in enumerate(zip(conv.turns, texts, strict=True)):
            memory.add(
                text,
                namespace=f"facts-{conv.sample_id}",
                thread=f"{conv.sample_id}-session-{turn.session}",
                metadata=turn_metadata(turn, replies[i]),
                timestamp=turn.date,
                record_id=f"{conv.sample_id}:{turn.dia_id}",
            )


def score(memory: AgentMemory, conv: dict[str, Any]) -> Counts:
    """What the questions of ``conv`` (already ingested) find in its top 5."""
    cid = str(conv["sample_id"])
    c = Counts()
    for qa in conv["qa"]:
        hits = memory.search(qa["question"], namespace=f"facts-{cid}", k=5)
        top = [str(h.metadata["dia_id"]) for h in hits]
        target = str(qa["evidence"][0])
        pos = top.index(target) if target in top else 5
        fact = qa["fact"]
        if fact["kind"] == "before":
            c.before += 1
            c.before5 += pos < 5
            continue
        c.current += 1
        c.cur1 += pos == 0
        c.cur5 += pos < 5
        if fact["stale"]:
            c.changed += 1
            c.stale_above += any(d in fact["stale"] for d in top[:pos])
    return c


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=6, help="conversations per generated set")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    raws = {name: generate(args.n, seed=seed, slots=SLOT_SETS[slots]) for name, slots, seed in SETS}
    raws["hand"] = json.loads(HAND.read_text())
    raws["news"] = json.loads(NEWS.read_text())
    rows: dict[str, list[Counts]] = {}
    with tempfile.TemporaryDirectory() as tmp, AgentMemory(f"sqlite:///{Path(tmp) / 'f.db'}") as m:
        for name, raw in raws.items():
            for conv in raw:  # sample ids repeat across sets: one namespace prefix per set
                conv["sample_id"] = f"{name.replace(' ', '-')}-{conv['sample_id']}"
            ingest(m, write(Path(tmp) / f"{name}.json", raw))
            rows[name] = [score(m, conv) for conv in raw]
    head = f"{'set':<12}{'convs':>6}{'cur@1':>8}{'cur@5':>8}{'stale>cur':>11}{'before@5':>10}"
    lines = [head, "-" * len(head)]
    for name, per_conv in rows.items():
        figures = sum(per_conv, Counts()).figures()
        lines.append(
            f"{name:<12}{len(per_conv):>6}"
            + "".join(f"{x:>8.3f}" for x in figures[:2])
            + f"{figures[2]:>11.3f}{figures[3]:>10.3f}"
        )
    sets = {name for name, *_ in SETS}
    generated = [c.figures()[1] for name, pc in rows.items() if name in sets for c in pc]
    lines += [
        "",
        f"cur@5 over the {len(generated)} generated conversations: mean "
        f"{statistics.mean(generated):.3f}, sd {statistics.pstdev(generated):.3f}, "
        f"min {min(generated):.3f}, max {max(generated):.3f}.",
    ]
    command = f"python benchmarks/fact_change.py --out {args.out}"
    intro = (
        "Every turn kept, k=5, AgentMemory with its defaults on SQLite, ingested as agentmem "
        "bench does. hand: benchmarks/data/aboutness_facts.json, written apart from the "
        "generator; news: benchmarks/data/news_facts.json, written by hand after pairs were "
        "chosen and measured once they were fixed, most changes told as news. Ran in "
        f"{time.perf_counter() - start:.0f} s."
    )
    text = "\n".join([command, "", intro, "", *lines]) + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
