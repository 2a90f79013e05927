"""A record's vector: its whole text, or its whole text plus the mean of its sentences?

A mean-pooled embedding weighs a message's sentences by their length, so a long aside can
drown the short statement a question asks about. The shipped rule
(:func:`~langchain_agentmem.embedding.embeddings.embed_records`) embeds a record of two or more
sentences (two words or more each) as ``normalise(whole + normalise(sum of sentences))``;
queries are embedded as before. This script scores, side by side in one run:

- LoCoMo evidence recall@10 with every turn kept (shipped hybrid search), per category and
  per conversation, for whole-text vectors, the shipped rule, and neighbours of the rule
  (other sentence lengths; a single sentence left after fragments drop; no speaker label on
  each sentence). The rule has no fitted weight: the neighbours show how much its exact
  form matters, they were not used to choose it on these conversations beyond what the
  table shows (the shipped form was fixed before this table was run);
- the same under 10% / 25% record budgets for the importance and novelty rules, the shipped
  learned policy (trained on these conversations, whole-text vectors: in-sample) and the
  oracle;
- what writing costs: seconds to embed all turns as records, each way, in one batch per
  conversation, alternated over repeats (ratio to whole-text vectors).

Usage::

    PYTHONPATH=$PWD python benchmarks/experiments/sentence_vectors.py \
        --data ../shared/datasets/locomo/locomo_dev.json \
        --out benchmarks/experiments/results/sentence_vectors.txt
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from langchain_agentmem.embedding.embeddings import embed_records, embed_texts, resolve_embeddings
from langchain_agentmem.policies.learned import load_policy
from langchain_agentmem.rl.data import Conversation, embed_conversations, load_locomo
from langchain_agentmem.rl.evaluate import (
    _learned_from,
    evaluate,
    heuristic_factories,
    per_question,
    summarise,
)
from langchain_agentmem.text.sentences import pieces, sentences

CATEGORIES = ("multi-hop", "temporal", "open-domain", "single-hop")


def variant(
    min_words: int, *, single: bool = False, label: bool = True
) -> Callable[[str], list[str]]:
    """A neighbour of :func:`sentences`: sentences of ``min_words`` words or more; ``single``:
    also one sentence left after fragments drop; ``label``: each keeps the speaker label."""

    def split(text: str) -> list[str]:
        head, every = pieces(text)
        parts = [s for s in every if len(s.split()) >= min_words]
        if len(parts) >= 2 or (single and parts and len(every) > len(parts)):
            return [head + s if label else s for s in parts]
        return []

    return split


def with_vectors(
    convs: Sequence[Conversation], vectors: Sequence[np.ndarray]
) -> list[Conversation]:
    """Copies of ``convs`` whose turns carry ``vectors``."""
    out = []
    for conv, vec in zip(convs, vectors, strict=True):
        twin = copy.copy(conv)
        twin.turn_vectors = np.ascontiguousarray(vec, dtype=np.float32)
        out.append(twin)
    return out


def everything_kept(convs: Sequence[Conversation]) -> tuple[dict[str, float], list[float]]:
    """Pooled recall@10 summary and per-conversation recall@10, every turn kept."""
    rows: list[tuple[int, float, float]] = []
    per: list[float] = []
    for conv in convs:
        found = per_question(conv, np.arange(len(conv.turns)), 10)
        rows.extend(found)
        per.append(summarise(found, 10)["recall@10"])
    return summarise(rows, 10), per


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", default="../shared/datasets/locomo/locomo_dev.json")
    parser.add_argument("--out", default=None, help="also write the table to this file")
    parser.add_argument("--repeats", type=int, default=3, help="timing repeats of each way")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    emb = resolve_embeddings(None)
    convs = embed_conversations(load_locomo(args.data))  # questions; turns as shipped
    texts = [[t.text for t in c.turns] for c in convs]
    splits: dict[str, Callable[[str], list[str]] | None] = {
        "whole text": None,
        "whole + sentences (shipped: >= 2 words)": sentences,  # as the data's turns are
        "  >= 3 words": variant(3),
        "  >= 4 words": variant(4),
        "  >= 2 words, also one left": variant(2, single=True),
        "  >= 3 words, also one left": variant(3, single=True),
        "  >= 2 words, no speaker label": variant(2, label=False),
    }
    shipped = "whole + sentences (shipped: >= 2 words)"
    vectors: dict[str, list[np.ndarray]] = {shipped: [c.turn_vectors for c in convs]}
    for name, split in splits.items():
        if split is None:
            vectors[name] = [embed_texts(emb, t) for t in texts]
        elif name != shipped:
            vectors[name] = [embed_records(emb, t, split=split) for t in texts]
    multi = np.mean([bool(sentences(t)) for ts in texts for t in ts])
    ids = " ".join(c.sample_id for c in convs)
    head = f"{'vectors':<42}{'R@10':>7}" + "".join(f"{c[:11]:>12}" for c in CATEGORIES)
    head += f"   per conversation ({ids})"
    lines = [
        "command: PYTHONPATH=$PWD python benchmarks/experiments/sentence_vectors.py --data "
        "../shared/datasets/locomo/locomo_dev.json "
        "--out benchmarks/experiments/results/sentence_vectors.txt",
        f"{len(convs)} conversations, {sum(map(len, texts))} turns, {multi:.1%} of them of two "
        "or more sentences (shipped rule). Every turn kept; evidence recall@10 of categories "
        "1-4, shipped hybrid search (dense side reads the vectors below, BM25 unchanged).",
        "",
        head,
        "-" * len(head),
    ]
    for name in splits:
        s, per = everything_kept(with_vectors(convs, vectors[name]))
        cats = "".join(f"{s.get(f'recall@10/cat{k + 1}', 0.0):>12.3f}" for k in range(4))
        lines.append(
            f"{name:<42}{s['recall@10']:>7.4f}{cats}   " + " ".join(f"{x:.3f}" for x in per)
        )
        print(lines[-1], flush=True)

    layers, _ = load_policy(None)
    factories = heuristic_factories(["importance", "novelty"])
    factories["learned"] = _learned_from(layers)
    lines += [
        "",
        "Record budgets (capacity = round(budget x turns)); recall@10 / retained share of "
        "the evidence; the learned policy is the shipped one (in-sample).",
        f"{'vectors':<42}{'budget':>7}" + "".join(f"{p:>18}" for p in [*factories, "oracle"]),
    ]
    for name in ("whole text", shipped):
        table = evaluate(factories, with_vectors(convs, vectors[name]), (0.1, 0.25), dense=False)
        for budget, rows in table.items():
            cells = "".join(
                f"{rows[p]['recall@10']:>11.3f} / {rows[p]['retained']:.3f}"[-18:].rjust(18)
                for p in [*factories, "oracle (knows the evidence)"]
            )
            lines.append(f"{name:<42}{budget:>7}{cells}")
            print(lines[-1], flush=True)

    took: dict[str, list[float]] = {"whole text": [], shipped: []}
    for _ in range(args.repeats):
        for name in took:
            t0 = time.perf_counter()
            for t in texts:
                if name == "whole text":
                    embed_texts(emb, t)
                else:
                    embed_records(emb, t)
            took[name].append(time.perf_counter() - t0)
    base = float(np.median(took["whole text"]))
    lines += ["", f"Embedding every turn as a record, median of {args.repeats} alternated runs:"]
    for name, runs in took.items():
        med = float(np.median(runs))
        lines.append(f"  {name:<42}{med:>7.1f} s   {med / base:.2f}x")
    lines.append(f"\nran in {time.perf_counter() - started:.0f} s")
    print("\n".join(lines[-4:]))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
