"""Budgets counted in words, and extractive compression of what memory keeps, on LoCoMo.

The record budgets of ``agentmem bench`` count turns: a memory of 10% holds a tenth of a
conversation's turns, whatever their length. Here the budget is a share of the
conversation's words instead, held at every step: each policy runs with the largest record
capacity whose memory never holds more words than the budget (found per conversation by
bisection on the capacity), so every policy gets the same budget.

Two forms of what is stored, the policy deciding on the whole turn either way:

- ``whole``: the turn as the bench stores it (``speaker: text [shares a photo: ...]``);
- ``content``: an extractive compression that keeps the speaker and the words that are not
  stop words (the BM25 stop list), in their order and case, numbers and names included. It
  is re-embedded (the dense side sees the compressed text, as a user's store would).
- ``head<n>``: the first ``n`` of those words (long turns cut);
- ``rare<n>``: the ``n`` of those words held by the fewest turns so far (the turn's own
  count included; nothing later is looked at), in their order;
- ``learn<n>``: the ``n`` words a logistic regression rates likeliest to be asked or
  answered about (a word of a question whose evidence is the turn, or of its answer),
  trained on the other five conversations (leave one out) from features known when the turn
  is written (how many turns held the word so far, capitals, digits, place, length, photo
  caption, speaker name).

The last column, ``answer@10``, asks what evidence recall cannot: a compressed turn may be
found and no longer hold the answer. It is the share of the answer's words (stop words out)
in the ten stored texts search returns, with their dates.

Scored as ``agentmem bench`` scores: evidence recall@10 of the shipped hybrid search over
what is kept, per category, with the share of the evidence still held (``retained``).

Usage::

    PYTHONPATH=$PWD python benchmarks/experiments/token_budget.py \
        --data ../shared/datasets/locomo/locomo_dev.json \
        --out benchmarks/experiments/results/token_budget.txt
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np

from langchain_agentmem.index.lexical import tokenize
from langchain_agentmem.index.text import lexical_text
from langchain_agentmem.locomo import CATEGORIES
from langchain_agentmem.rl.data import Conversation, embed_conversations, load_locomo
from langchain_agentmem.rl.evaluate import HEURISTICS, PolicyFactory, heuristic_factories, replay
from langchain_agentmem.rl.retrieval import hybrid_orders
from langchain_agentmem.text.words import STOP_WORDS as _STOP
from langchain_agentmem.types import OpKind

_WORD = re.compile(r"\S+")
_ALNUM = re.compile(r"[A-Za-z0-9]+")


def words(text: str) -> int:
    """Words of a stored text (whitespace-separated)."""
    return len(_WORD.findall(text))


def content_words(text: str, limit: int | None = None) -> str:
    """The speaker and the non-stop words of ``text``, in order, the first ``limit`` of them."""
    speaker, _, said = text.partition(": ")
    kept = [
        w for w in _WORD.findall(said) if any(t.lower() not in _STOP for t in _ALNUM.findall(w))
    ]
    return f"{speaker}: {' '.join(kept[:limit])}"


def rare_words(text: str, limit: int, df: dict[str, int]) -> str:
    """The speaker and the ``limit`` content words of ``text`` held by the fewest turns so far.

    ``df`` counts, per lower-cased word, the turns that held it up to this one (this one
    included, so the count is known when the turn is written); kept words stay in order.
    """
    speaker, _, said = content_words(text).partition(": ")
    toks = said.split()
    keys = [w.lower().strip(".,!?;:\"'()[]") for w in toks]
    for key in set(keys):
        df[key] = df.get(key, 0) + 1
    order = sorted(range(len(toks)), key=lambda i: (df[keys[i]], i))[:limit]
    return f"{speaker}: {' '.join(toks[i] for i in sorted(order))}"


def compressed(conv: Conversation, limit: int | None = None, how: str = "head") -> Conversation:
    """A copy of ``conv`` whose turns hold the compressed form (vectors not filled)."""
    if how == "rare" and limit is not None:
        df: dict[str, int] = {}
        texts = [rare_words(t.text, limit, df) for t in conv.turns]
    else:
        texts = [content_words(t.text, limit) for t in conv.turns]
    turns = [replace(t, text=x) for t, x in zip(conv.turns, texts, strict=True)]
    return Conversation(conv.sample_id, turns, conv.questions)


def peak_words(
    factory: PolicyFactory, capacity: int, conv: Conversation, cost: list[int]
) -> tuple[int, np.ndarray]:
    """The most words memory ever holds with ``capacity`` records, and what it keeps."""
    content: dict[str, int] = {}
    held = 0
    peak = 0

    def track(i: int, ops: list) -> None:  # mirrors replay's bookkeeping, in words
        nonlocal held, peak
        for op in ops:
            if op.kind is OpKind.ADD:
                content[f"t{i}"] = i
                held += cost[i]
            elif op.kind is OpKind.DELETE:
                for rid in op.record_ids:
                    held -= cost[content.pop(rid)]
            elif op.kind is OpKind.UPDATE:
                for rid in op.record_ids:
                    held += cost[i] - cost[content[rid]]
                    content[rid] = i
        peak = max(peak, held)

    result = replay(factory(capacity, conv), conv, on_decision=track)
    return peak, result.kept


def fit(factory: PolicyFactory, conv: Conversation, cost: list[int], budget: int) -> np.ndarray:
    """What the policy keeps at the largest capacity whose memory stays within ``budget``."""
    lo, hi = 1, len(conv.turns)
    best = peak_words(factory, 1, conv, cost)[1]
    while lo <= hi:
        mid = (lo + hi) // 2
        peak, kept = peak_words(factory, mid, conv, cost)
        if peak <= budget:
            best, lo = kept, mid + 1
        else:
            hi = mid - 1
    return best


def word_features(conv: Conversation) -> list[tuple[list[str], np.ndarray]]:
    """Per turn, its content words and their features (all known when the turn is written)."""
    names = {t.lower() for turn in conv.turns for t in tokenize(turn.speaker)}
    df: dict[str, int] = {}
    out = []
    for n, turn in enumerate(conv.turns):
        said = content_words(turn.text).partition(": ")[2]
        toks = said.split()
        keys = [" ".join(tokenize(w)) for w in toks]
        for key in set(keys):
            df[key] = df.get(key, 0) + 1
        photo = said.find("[shares")
        cut = len(said[:photo].split()) if photo >= 0 else len(toks)
        feats = np.array(
            [
                [
                    np.log1p(df[key]),
                    np.log1p(df[key]) / np.log(n + 2),
                    float(w[:1].isupper() and i > 0),
                    float(any(ch.isdigit() for ch in w)),
                    i / max(len(toks), 1),
                    min(len(w), 15) / 15,
                    float(i >= cut),
                    float(key in names),
                    float(keys.count(key) > 1),
                    float(not key),
                ]
                for i, (w, key) in enumerate(zip(toks, keys, strict=True))
            ]
        ).reshape(len(toks), 10)
        out.append((toks, feats))
    return out


def learned_compression(
    convs: list[Conversation], answers: dict[str, list[set[str]]], limit: int
) -> list[Conversation]:
    """Each conversation compressed to ``limit`` words chosen by a word classifier trained on
    the other conversations (leave one out): does the word name something a question about
    the turn asks or answers?"""
    from sklearn.linear_model import LogisticRegression

    data = []
    for conv in convs:
        asked: list[set[str]] = [set() for _ in conv.turns]
        for q, answer in zip(conv.questions, answers[conv.sample_id], strict=True):
            for e in q.evidence:
                asked[e] |= set(tokenize(q.text)) | answer
        feats = word_features(conv)
        x = np.vstack([f for _, f in feats])
        y = np.array(
            [
                any(t in asked[i] for t in tokenize(w))
                for i, (toks, _) in enumerate(feats)
                for w in toks
            ]
        )
        data.append((feats, x, y))
    out = []
    for held, conv in enumerate(convs):
        x = np.vstack([d[1] for j, d in enumerate(data) if j != held])
        y = np.concatenate([d[2] for j, d in enumerate(data) if j != held])
        model = LogisticRegression(max_iter=1000).fit(x, y)
        texts = []
        for turn, (toks, f) in zip(conv.turns, data[held][0], strict=True):
            p = model.predict_proba(f)[:, 1] if len(toks) else np.zeros(0)
            keep = sorted(np.argsort(-p, kind="stable")[:limit])
            texts.append(f"{turn.speaker}: {' '.join(toks[i] for i in keep)}")
        turns = [replace(t, text=x) for t, x in zip(conv.turns, texts, strict=True)]
        out.append(Conversation(conv.sample_id, turns, conv.questions))
    return out


def within(
    factory: PolicyFactory, costs: dict[str, list[int]], share: float, conv: Conversation
) -> np.ndarray:
    """What the policy keeps of ``conv`` within ``share`` of its words (stored as ``costs``)."""
    budget = int(share * sum(words(t.text) for t in conv.turns))
    return fit(factory, conv, costs[conv.sample_id], budget)


def answers_of(path: str, loaded: list[Conversation]) -> dict[str, list[set[str]]]:
    """Per conversation (``loaded`` from ``path``), the word set of each scored question's
    answer, in question order."""
    import json

    out: dict[str, list[set[str]]] = {}
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    convs = {c.sample_id: c for c in loaded}
    for item in raw:
        conv = convs[str(item["sample_id"])]
        out[conv.sample_id] = []
        pending = [(str(qa["question"]), qa.get("answer", "")) for qa in item.get("qa", [])]
        j = 0
        for q in conv.questions:  # the loader keeps a subset of the questions, in order
            while pending[j][0] != q.text:
                j += 1
            out[conv.sample_id].append(set(tokenize(str(pending[j][1]))))
            j += 1
    return out


def scores(
    conv: Conversation, kept: np.ndarray, answers: list[set[str]], k: int = 10
) -> list[tuple[int, float, float, float]]:
    """Per question: category, evidence recall@k, evidence retained, answer words in the top k.

    The last is the share of the answer's words (stop words out) found in the ``k`` stored
    texts search returns, with their dates (``nan`` when the answer has no such word).
    """
    orders = hybrid_orders(conv, kept, k) if len(kept) else [[] for _ in conv.questions]
    held = set(np.asarray(kept).tolist())
    rows = []
    for q, order, answer in zip(conv.questions, orders, answers, strict=True):
        ev = set(q.evidence)
        found: set[str] = set()
        for i in order:
            found.update(
                tokenize(lexical_text(conv.turns[i].text, conv.turns[i].timestamp, dates=True))
            )
        share = len(answer & found) / len(answer) if answer else float("nan")
        rows.append((q.category, len(set(order) & ev) / len(ev), len(held & ev) / len(ev), share))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/datasets/locomo/locomo_dev.json")
    parser.add_argument("--budgets", default="0.1,0.25")
    parser.add_argument("--policies", default=",".join([*HEURISTICS, "learned"]))
    parser.add_argument("--forms", default=None, help="only these forms (and whole)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    from langchain_agentmem.policies.learned import LearnedPolicy, load_policy

    t0 = time.perf_counter()
    whole = embed_conversations(load_locomo(args.data))
    answers = answers_of(args.data, whole)
    forms = {"whole": whole, "content": embed_conversations([compressed(c) for c in whole])}
    for how, limit in (("head", 12), ("rare", 6), ("rare", 12), ("rare", 24)):
        forms[f"{how}{limit}"] = embed_conversations([compressed(c, limit, how) for c in whole])
    for limit in (6, 12):
        forms[f"learn{limit}"] = embed_conversations(learned_compression(whole, answers, limit))
    if args.forms:
        forms = {f: cs for f, cs in forms.items() if f == "whole" or f in args.forms.split(",")}
    layers, _ = load_policy(None)
    names = args.policies.split(",")
    factories: dict[str, PolicyFactory] = heuristic_factories([n for n in names if n != "learned"])
    if "learned" in names:
        factories["learned"] = lambda cap, conv: LearnedPolicy(cap, layers=layers)
    n_words = {f: sum(words(t.text) for c in cs for t in c.turns) for f, cs in forms.items()}
    lines = [
        "command: PYTHONPATH=$PWD python benchmarks/experiments/token_budget.py --data "
        "../shared/datasets/locomo/locomo_dev.json "
        "--out benchmarks/experiments/results/token_budget.txt",
        f"{len(whole)} conversations, {sum(len(c.turns) for c in whole)} turns; words stored "
        "per form (share of whole): "
        + ", ".join(f"{f} {n} ({n / n_words['whole']:.2f})" for f, n in n_words.items())
        + f"; prepared in {time.perf_counter() - t0:.0f} s.",
        "Budget = share of each conversation's words (whole form), held at every step. "
        "R@10: evidence recall@10 of the shipped hybrid search over what is kept; answer@10: "
        "share of the answer's words (stop words out) in the 10 stored texts found, with their "
        "dates; retained: share of the evidence still held. The learned policy is the shipped "
        "one (trained on these conversations: in-sample).",
    ]
    lines.append(
        f"{'budget':>7} {'policy':<18}{'form':<9}{'turns':>7}{'retained':>9}{'R@10':>7}"
        + "".join(f"{name[:10]:>11}" for name in CATEGORIES.values())
        + f"{'answer@10':>10}"
    )
    for line in lines:
        print(line, flush=True)

    def row(
        share: str, name: str, form: str, kept_of: Callable[[Conversation], np.ndarray]
    ) -> None:
        rows: list[tuple[int, float, float, float]] = []
        n_kept = 0
        for c_whole, c_form in zip(whole, forms[form], strict=True):
            kept = kept_of(c_whole)
            n_kept += len(kept)
            rows.extend(scores(c_form, kept, answers[c_whole.sample_id]))
        arr = np.array(rows, dtype=np.float64)
        per_cat = [arr[arr[:, 0] == c, 1].mean() for c in CATEGORIES]
        lines.append(
            f"{share:>7} {name:<18}{form:<9}{n_kept:>7}{arr[:, 2].mean():>9.3f}"
            f"{arr[:, 1].mean():>7.3f}"
            + "".join(f"{v:>11.3f}" for v in per_cat)
            + f"{np.nanmean(arr[:, 3]):>10.3f}"
        )
        print(lines[-1], flush=True)

    for form in forms:
        row("all", "everything", form, lambda c: np.arange(len(c.turns), dtype=np.int64))
    for share in [float(b) for b in args.budgets.split(",")]:
        for name, factory in factories.items():
            for form, convs in forms.items():
                costs = {c.sample_id: [words(t.text) for t in c.turns] for c in convs}
                row(f"{share:.2f}", name, form, partial(within, factory, costs, share))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
