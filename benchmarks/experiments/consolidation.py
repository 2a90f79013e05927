"""Consolidation: what a bounded memory drops, folded into notes on the records it keeps.

A policy at a record budget (10% / 25% of a conversation's turns) keeps whole turns and
drops the rest. Here nothing it drops is lost outright: when a turn is skipped or a record
evicted, a compressed form of it (the ``n`` rarest content words so far, ``rare_words`` of
``token_budget.py``, known when the turn is written) joins the notes of one record still
kept, as an UPDATE of that record would. Each record's notes hold at most ``cap`` words;
past that the oldest notes go (a record's own text always stays). An evicted record's own
form and its notes move to other records the same way. Everything is decided as turns
arrive (nothing later is looked at).

Where notes go (``host``):

- ``nearest``: the kept record whose embedding is closest to the dropped turn's;
- ``thread``: the newest kept record of the dropped turn's session (else ``nearest``).

What the search sees of the notes (``notes in``):

- ``bm25``: the record's BM25 terms (as the replied-to question is indexed); its vector and
  its text are its own;
- ``text``: the record's text (and so its vector, re-embedded) holds the notes.

A record found credits its own turn and every turn in its notes: evidence recall@10 counts
compressed evidence as found. ``answer@10`` checks that it still holds the answer: the
share of the answer's words (stop words out) in the ten texts found, notes included. Words
are what memory holds at its fullest over the conversation, as a share of the
conversation's words; ``same words`` is the same policy keeping whole turns only, at the
largest capacity whose memory never holds more words than the consolidated one did
(``token_budget.fit``): the comparison at an equal token budget.

The learned policy is the shipped one (trained on these conversations: in-sample), so only
differences between rows of one policy mean something.

Usage::

    PYTHONPATH=$PWD python benchmarks/experiments/consolidation.py \
        --data ../shared/datasets/locomo/locomo_dev.json \
        --out benchmarks/experiments/results/consolidation.txt
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from langchain_agentmem.embedding.embeddings import embed_records, resolve_embeddings
from langchain_agentmem.index.dense import DenseIndex
from langchain_agentmem.index.lexical import tokenize
from langchain_agentmem.index.text import lexical_text
from langchain_agentmem.policies.learned import LearnedPolicy
from langchain_agentmem.ranking import HybridConfig, hybrid_search, query_of
from langchain_agentmem.rl.budget import capacity_for
from langchain_agentmem.rl.data import Conversation, embed_conversations, load_locomo
from langchain_agentmem.rl.evaluate import PolicyFactory, heuristic_factories, replay
from langchain_agentmem.rl.retrieval import KeptTurns, replies
from langchain_agentmem.types import OpKind

sys.path.insert(0, str(Path(__file__).resolve().parent))
from token_budget import answers_of, fit, rare_words, words

BUDGETS = (0.1, 0.25)
CATEGORIES = ("multi-hop", "temporal", "open-domain", "single-hop")


@dataclass
class Memory:
    """Records (turn indices) and the notes each holds: ``(turn, compressed words)``."""

    notes: dict[int, list[tuple[int, list[str]]]] = field(default_factory=dict)
    peak: int = 0

    def words(self, conv: Conversation) -> int:
        own = sum(words(conv.turns[r].text) for r in self.notes)
        return own + sum(len(w) for ns in self.notes.values() for _, w in ns)


def consolidate(
    factory: PolicyFactory,
    capacity: int,
    conv: Conversation,
    forms: list[list[str]],
    *,
    cap: int,
    host: str,
) -> Memory:
    """Replay ``conv`` through the policy; fold what it drops into notes of kept records."""
    mem = Memory()
    vectors = conv.turn_vectors
    sessions = [t.session for t in conv.turns]

    def home(pieces: list[tuple[int, list[str]]]) -> None:
        if cap <= 0 or not mem.notes:
            return
        ids = np.array(list(mem.notes))
        for turn, piece in pieces:
            target = -1
            if host == "thread":
                same = [r for r in ids.tolist() if sessions[r] == sessions[turn]]
                target = max(same) if same else -1
            if target < 0:
                target = int(ids[int(np.argmax(vectors[ids] @ vectors[turn]))])
            notes = mem.notes[target]
            notes.append((turn, piece))
            while sum(len(w) for _, w in notes) > cap:
                notes.pop(0)

    def track(i: int, ops: list) -> None:
        dropped: list[tuple[int, list[str]]] = []
        added = False
        for op in ops:
            if op.kind is OpKind.ADD:
                added = True
            elif op.kind is OpKind.DELETE:
                for rid in op.record_ids:
                    r = int(rid[1:])
                    dropped.append((r, forms[r]))
                    dropped.extend(mem.notes.pop(r))
            elif op.kind is OpKind.UPDATE:
                for rid in op.record_ids:  # the record now holds turn i: its old turn drops
                    r = int(rid[1:])
                    old = mem.notes.pop(r, [])
                    mem.notes[i] = [*old, (r, forms[r])]
        if added:
            mem.notes[i] = []
        elif not any(op.kind is OpKind.UPDATE for op in ops):
            dropped.append((i, forms[i]))
        home(dropped)
        mem.peak = max(mem.peak, mem.words(conv))

    replay(factory(capacity, conv), conv, on_decision=track)
    return mem


def search(
    conv: Conversation, mem: Memory, where: str, embeddings: object, k: int = 10
) -> list[list[int]]:
    """Per question, the records (turn indices) hybrid search returns, best first."""
    cfg = HybridConfig()
    ids = sorted(mem.notes)
    if not ids:
        return [[] for _ in conv.questions]
    note_text = {r: " ".join(w for _, ws in mem.notes[r] for w in ws) for r in ids}
    text = {r: conv.turns[r].text for r in ids}
    if where == "text":
        text = {r: (f"{text[r]} Notes: {note_text[r]}" if note_text[r] else text[r]) for r in ids}
        vecs = embed_records(embeddings, [text[r] for r in ids])  # type: ignore[arg-type]
        vector = {r: vecs[j] for j, r in enumerate(ids)}
    else:
        vector = {r: conv.turn_vectors[r] for r in ids}
    vectors = conv.turn_vectors.copy()
    for r in ids:
        vectors[r] = vector[r]
    corpus = KeptTurns(config=cfg, vectors=vectors)
    corpus.dense = DenseIndex(vectors.shape[1])
    corpus.dense.add(ids, vectors[ids])
    reply = replies(conv)
    for r in ids:
        corpus.index_text(
            r,
            text[r],
            conv.turns[r].timestamp,
            thread=f"session-{conv.turns[r].session}",
            speaker=conv.turns[r].speaker,
            reply_to=reply[r],
            terms=None if where == "text" else Counter(tokenize(f"{text[r]} {note_text[r]}")),
        )
    return [
        [rid for rid, _ in hybrid_search(query_of(q.text, conv.question_vectors[qi]), k, corpus)]
        for qi, q in enumerate(conv.questions)
    ]


def record_words(conv: Conversation, mem: Memory, r: int) -> int:
    """Words of record ``r`` as a prompt shows it: its text and its notes."""
    return words(conv.turns[r].text) + sum(len(w) for _, w in mem.notes[r])


def score(
    conv: Conversation,
    mem: Memory,
    orders: list[list[int]],
    answers: list[set[str]],
    prompt: list[int] | None = None,
) -> list[tuple[int, float, float, float, float]]:
    """Per question: category, recall (notes credited), retained, answer words found, and
    the words of the records found.

    The records found are the first 10 of ``orders``, or with ``prompt``, the fewest of
    ``orders`` holding at least that question's ``prompt`` words.
    """
    covered = {r: {r, *(t for t, _ in ns)} for r, ns in mem.notes.items()}
    held = set().union(*covered.values()) if covered else set()
    rows = []
    for qi, (q, order, answer) in enumerate(zip(conv.questions, orders, answers, strict=True)):
        ev = set(q.evidence)
        got: set[int] = set()
        found: set[str] = set()
        shown = 0
        for j, r in enumerate(order):
            if (prompt is None and j >= 10) or (prompt is not None and shown >= prompt[qi]):
                break
            got |= covered[r]
            shown += record_words(conv, mem, r)
            t = conv.turns[r]
            found.update(tokenize(lexical_text(t.text, t.timestamp, dates=True)))
            found.update(tokenize(" ".join(w for _, ws in mem.notes[r] for w in ws)))
        share = len(answer & found) / len(answer) if answer else float("nan")
        rows.append(
            (q.category, len(got & ev) / len(ev), len(held & ev) / len(ev), share, float(shown))
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", default="../shared/datasets/locomo/locomo_dev.json")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    started = time.perf_counter()
    embeddings = resolve_embeddings(None)
    convs = embed_conversations(load_locomo(args.data))
    answers = answers_of(args.data, convs)
    forms = {}
    for c in convs:
        df: dict[str, int] = {}
        forms[c.sample_id] = [rare_words(t.text, 6, df).partition(": ")[2].split() for t in c.turns]
    cost = {c.sample_id: [words(t.text) for t in c.turns] for c in convs}
    total = {c.sample_id: sum(cost[c.sample_id]) for c in convs}
    factories: dict[str, PolicyFactory] = {
        "learned": lambda cap, _c: LearnedPolicy(cap),
        **heuristic_factories(["importance"]),
    }
    variants = [("-", 0, "nearest", "bm25")]
    variants += [
        (host, cap, host, "bm25") for cap in (12, 24, 48) for host in ("nearest", "thread")
    ]
    variants.append(("nearest", 24, "nearest", "text"))
    head = (
        f"{'budget':>6} {'policy':<10} {'host':<8} {'cap':>4} {'notes in':<8} {'words':>6}"
        f" {'R@10':>6} {'retained':>8} {'answer@10':>9} {'shown':>5}"
        + "".join(f" {c[:10]:>10}" for c in CATEGORIES)
        + f" {'same words':>10} {'+ shown':>10} {'answer@10':>9}"
    )
    lines = [head, "-" * len(head)]
    print(head, flush=True)
    for budget in BUDGETS:
        for name, factory in factories.items():
            for label, cap, host, where in variants:
                rows: list[tuple[int, float, float, float, float]] = []
                same: list[tuple[int, float, float, float, float]] = []
                shown: list[tuple[int, float, float, float, float]] = []
                peak = 0.0
                for c in convs:
                    capacity = capacity_for(budget, len(c.turns))
                    mem = consolidate(factory, capacity, c, forms[c.sample_id], cap=cap, host=host)
                    found = score(c, mem, search(c, mem, where, embeddings), answers[c.sample_id])
                    rows += found
                    peak += mem.peak / total[c.sample_id] / len(convs)
                    if cap:
                        kept = fit(factory, c, cost[c.sample_id], mem.peak)
                        plain = Memory(notes={int(r): [] for r in kept})
                        orders = search(c, plain, "bm25", embeddings, k=60)
                        same += score(c, plain, orders, answers[c.sample_id])
                        words_shown = [int(r[4]) for r in found]
                        shown += score(c, plain, orders, answers[c.sample_id], words_shown)
                arr = np.array(rows, dtype=np.float64)
                cats = "".join(
                    f" {arr[arr[:, 0] == k + 1, 1].mean():>10.3f}" for k in range(len(CATEGORIES))
                )
                ref = "".join(
                    f" {np.mean([r[1] for r in x]):>10.3f}" if x else f" {'':>10}"
                    for x in (same, shown)
                )
                ref += f" {np.nanmean([r[3] for r in shown]):>9.3f}" if shown else f" {'':>9}"
                line = (
                    f"{budget:>6g} {name:<10} {label:<8} {cap:>4} {where if cap else '-':<8}"
                    f" {peak:>6.3f} {arr[:, 1].mean():>6.3f} {arr[:, 2].mean():>8.3f}"
                    f" {np.nanmean(arr[:, 3]):>9.3f} {arr[:, 4].mean():>5.0f}{cats}{ref}"
                )
                lines.append(line)
                print(line, flush=True)
    if args.out:
        Path(args.out).write_text(
            "command: PYTHONPATH=$PWD python benchmarks/experiments/consolidation.py --data "
            "../shared/datasets/locomo/locomo_dev.json "
            "--out benchmarks/experiments/results/consolidation.txt"
            f"\n{len(convs)} conversations. Dropped turns folded, as their 6 rarest content "
            "words so far, into the notes of a kept record (host; cap: most note words per "
            "record, oldest dropped past it; 'notes in': BM25 terms only, or the record's text "
            "and vector). words: memory at its fullest, share of the conversation's words. "
            "R@10: evidence recall@10, a found record crediting the turns in its notes; "
            "answer@10: share of the answer's words in the 10 texts found, notes included; "
            "shown: mean words of the 10 records found (text and notes); "
            "same words: the same policy keeping whole turns within the same words "
            "(largest capacity), R@10; + shown: that memory searched for as many records as "
            "it takes to show each question at least the words the consolidated memory showed "
            "it, and its answer@10 so. Learned: the shipped policy, in-sample.\n\n"
            + "\n".join(lines)
            + f"\n\nran in {time.perf_counter() - started:.0f} s\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
