"""Term expansion from the embedding space: do near words find changed facts?

The current statement of a changed fact often shares no word with the question ("Got the
keys to a place in the university quarter!" for "Which part of town does Maren live in?").
The idea scored here: hidden extra BM25 terms taken from the bundled model's own embedding
space, never from first hits (that is :mod:`locomo_prf`) and never from a hand-written list
(that is :mod:`aboutness`). The vocabulary is every whole word of the model's tokenizer (3
letters or more, not a bm25s stop word), each embedded once on its own.

Variants, side by side in one run, every turn kept, k=5, all on top of the shipped search
(``HybridConfig()``, newer-first on):

- ``shipped``: the shipped hybrid search;
- ``record m/floor``: document expansion, a record gets the ``m`` vocabulary words nearest
  its embedding (cosine >= ``floor``) that its text does not hold;
- ``query n/floor``: query expansion, each content word of the question (names and stop
  words out, :func:`~langchain_agentmem.text.words.question_words`) brings its ``n``
  nearest vocabulary words (cosine >= ``floor``, other forms of the word itself out),
  appended to the question;
- ``query n/floor xW``: the same near words, their BM25 counted ``W`` times and divided by
  the ceiling of the question's own words (RM3's mixing, the terms from the embedding space);
- ``both``: record and query expansion together.

Sets and the choice inside training folds are those of :mod:`aboutness`: the six fact-change
sets of :mod:`recency_ablation`, the hand-written set, LoCoMo evidence recall of categories
1-4; a variant is chosen per held-out conversation on the rest by the highest mean
(cur@5 - stale>cur) over the first five fact-change sets, with LoCoMo recall@10 not below
the shipped search's on the same training conversations.

A diagnostic follows the table: for each current question of the fresh set (the set whose
figures sit closest to the held-back check), whether the question's expansion meets the
words of the current statement, and of a stale one.

Usage::

    PYTHONPATH=$PWD python benchmarks/experiments/term_expansion.py \\
        --data ../shared/datasets/locomo/locomo_dev.json \\
        --out benchmarks/experiments/results/term_expansion.txt
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from bm25s.stopwords import STOPWORDS_EN

from langchain_agentmem.embedding.embeddings import SentenceTransformerEmbeddings, embed_texts
from langchain_agentmem.index.lexical import LexicalIndex, tokenize
from langchain_agentmem.index.speakers import NamedQuery
from langchain_agentmem.locomo import CATEGORIES
from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.rl.data import Conversation, embed_conversations, load_locomo, searched_as
from langchain_agentmem.rl.retrieval import hybrid_results, turn_counts
from langchain_agentmem.text.words import question_words as content_words

sys.path.insert(0, str(Path(__file__).resolve().parent))
from aboutness import HAND, TaggedLexical, locomo_summary
from question_records import recalls
from recency_ablation import SETS, embedded_sets, fact_scores

POOL = 100
FloatArray = npt.NDArray[np.float32]
Pools = dict[str, list[list[tuple[int, float]]]]
LocomoRows = list[tuple[int, list[float]]]


@dataclass(frozen=True)
class Variant:
    """Which side is expanded, and how far (``m``/``n`` 0: that side is not)."""

    name: str
    m: int = 0
    """Near words a record gets."""
    record_floor: float = 0.4
    n: int = 0
    """Near words each content word of a query brings."""
    query_floor: float = 0.6
    mix: float = 1.0
    """Weight of the query's near words against its own (1.0: appended to the query)."""


class Vocabulary:
    """The tokenizer's whole words, each embedded on its own, with nearest-word lookups."""

    def __init__(self) -> None:
        emb = SentenceTransformerEmbeddings()
        model = emb.model
        words = sorted(
            w
            for w in model.tokenizer.vocab
            if re.fullmatch(r"[a-z]{3,}", w) and w not in STOPWORDS_EN
        )
        self.words = words
        self.vectors: FloatArray = embed_texts(emb, words)
        self.index = {w: i for i, w in enumerate(words)}
        self._emb = emb
        self._cache: dict[str, list[tuple[str, float]]] = {}

    def near_vector(self, vector: FloatArray, m: int, floor: float) -> list[str]:
        """The ``m`` words nearest ``vector`` with cosine >= ``floor``, nearest first."""
        sims = self.vectors @ vector
        top = np.argpartition(-sims, m)[: m + 1]
        top = top[np.argsort(-sims[top])]
        return [self.words[i] for i in top if sims[i] >= floor][:m]

    def near_word(self, word: str, n: int, floor: float) -> list[str]:
        """The ``n`` words nearest ``word`` (other forms of it out), cosine >= ``floor``."""
        key = word.lower()
        if key not in self._cache:
            if key in self.index:
                vector = self.vectors[self.index[key]]
            else:
                vector = embed_texts(self._emb, [key])[0]
            sims = self.vectors @ vector
            top = np.argsort(-sims)[:40]
            own = set(tokenize(key))
            self._cache[key] = [
                (self.words[i], float(sims[i]))
                for i in top
                if not own & set(tokenize(self.words[i]))
            ]
        return [w for w, s in self._cache[key] if s >= floor][:n]


class MixedLexical(LexicalIndex):
    """BM25 whose query's near words score ``mix`` times their BM25, over the ceiling of
    the query's own words (RM3's mixing, the feedback terms taken from the embedding
    space)."""

    def __init__(self, extra: dict[str, str], mix: float) -> None:
        super().__init__()
        self.extra = extra
        self.mix = mix

    def normalised(self, query: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        rids, scores = self.scores(query)
        top = self.ceiling(query)
        if top <= 0 or not len(scores):
            return rids, np.zeros(len(rids), dtype=np.float32)
        near = self.extra.get(query, "")
        if near:
            scores = scores + np.float32(self.mix) * self.scores(near)[1]
        return rids, np.clip(scores / np.float32(top), 0.0, 1.0).astype(np.float32)


def query_terms(vocab: Vocabulary, query: str, n: int, floor: float) -> list[str]:
    """The expansion words of ``query``: each content word's near words."""
    out: list[str] = []
    for word in content_words(query):
        out += [w for w in vocab.near_word(word, n, floor) if w not in out]
    return out


def record_terms(
    vocab: Vocabulary, text: str, vector: FloatArray, m: int, floor: float
) -> list[str]:
    """The expansion words of a record: near its embedding, not already in its text."""
    own = set(tokenize(text))
    return [w for w in vocab.near_vector(vector, m + 8, floor) if not own & set(tokenize(w))][:m]


def expanded_results(
    conv: Conversation, vocab: Vocabulary, variant: Variant, config: HybridConfig
) -> list[list[tuple[int, float]]]:
    """:func:`~langchain_agentmem.rl.retrieval.hybrid_results` (every turn kept), with the
    variant's hidden words in the lexical index and its queries."""
    ids = list(range(len(conv.turns)))
    counts = turn_counts(conv, ids, config)
    if variant.m:
        for i, c in enumerate(counts):
            extra = record_terms(
                vocab, conv.turns[i].text, conv.turn_vectors[i], variant.m, variant.record_floor
            )
            c.update(Counter(t for w in extra for t in tokenize(w)))
    asked = [
        searched_as(conv, q.text) if config.named_speaker > 0 else NamedQuery(q.text)
        for q in conv.questions
    ]
    query_extra: dict[str, str] = {}
    if variant.n:
        for q, a in zip(conv.questions, asked, strict=True):
            query_extra[a.text] = " ".join(
                query_terms(vocab, q.text, variant.n, variant.query_floor)
            )
    lexical = (
        TaggedLexical(query_extra) if variant.mix == 1.0 else MixedLexical(query_extra, variant.mix)
    )
    lexical.add_counts(ids, counts)
    return hybrid_results(conv, ids, POOL, config, queries=asked, lexical=lexical)


def variants() -> list[Variant]:
    """Every variant scored, the shipped search first."""
    out = [Variant("shipped")]
    for m in (3, 5):
        for floor in (0.4, 0.5):
            out.append(Variant(f"record m={m} floor={floor}", m=m, record_floor=floor))
    for n in (3, 5):
        for floor in (0.5, 0.6):
            out.append(Variant(f"query n={n} floor={floor}", n=n, query_floor=floor))
    for n in (3, 5, 8):
        for floor in (0.5, 0.6):
            for mix in (0.1, 0.2, 0.3, 0.5):
                out.append(
                    Variant(f"query n={n} floor={floor} x{mix}", n=n, query_floor=floor, mix=mix)
                )
    for m, n in ((3, 3), (5, 5)):
        out.append(Variant(f"both m={m} n={n} floors 0.4/0.5", m=m, n=n, query_floor=0.5))
    return out


def ranked(pool: list[list[tuple[int, float]]], qi: int, k: int) -> list[int]:
    """The first ``k`` keys of question ``qi``'s results."""
    return [rid for rid, _ in pool[qi][:k]]


def diagnostic(
    vocab: Vocabulary, conv_raw: list[tuple[Conversation, dict[str, object]]], variant: Variant
) -> list[str]:
    """For each current question: does its expansion meet the current / a stale statement?"""
    lines = []
    meets_cur = meets_stale = n = 0
    for conv, raw in conv_raw:
        facts = [q["fact"] for q in raw["qa"]]  # type: ignore[index]
        for q, fact in zip(conv.questions, facts, strict=True):
            if fact["kind"] != "current":
                continue
            n += 1
            qwords = {t for w in content_words(q.text) for t in tokenize(w)} | {
                t
                for w in query_terms(vocab, q.text, variant.n, variant.query_floor)
                for t in tokenize(w)
            }

            def words(i: int, conv: Conversation = conv) -> set[str]:
                t = conv.turns[i]
                said = t.text.split(": ", 1)[-1]
                extra = record_terms(
                    vocab, t.text, conv.turn_vectors[i], variant.m, variant.record_floor
                )
                return set(tokenize(said)) | {x for w in extra for x in tokenize(w)}

            cur = qwords & words(q.evidence[0])
            olds = [i for i, t in enumerate(conv.turns) if t.dia_id in fact["stale"]]
            stale = set().union(*(qwords & words(i) for i in olds)) if olds else set()
            meets_cur += bool(cur)
            meets_stale += bool(stale)
            lines.append(
                f"  {q.text!r}: current {conv.turns[q.evidence[0]].text!r} meets "
                f"{sorted(cur) or '-'}; stale meets {sorted(stale) or '-'}"
            )
    head = (
        f"{variant.name}: of {n} current questions, the expanded question (names out) "
        f"shares a word with the current statement (its speaker's name out, its near words "
        f"in) in {meets_cur}, with a stale one in {meets_stale}."
    )
    return [head, *lines]


def main(argv: Sequence[str] | None = None) -> None:
    """Score every variant on the fact-change sets, the hand-written set and LoCoMo."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", required=True, help="LoCoMo JSON file")
    parser.add_argument("--n", type=int, default=6, help="synthetic conversations per set")
    parser.add_argument("--out", help="text file for the results")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    config = HybridConfig()
    raw, sets = embedded_sets(args.n)
    raw["hand"] = json.loads(HAND.read_text(encoding="utf-8"))
    sets["hand"] = embed_conversations(load_locomo(HAND))
    names = [name for name, *_ in SETS] + ["hand"]
    locomo = embed_conversations(load_locomo(args.data))
    t0 = time.perf_counter()
    vocab = Vocabulary()
    t_vocab = time.perf_counter() - t0
    check = locomo[0]
    assert expanded_results(check, vocab, Variant("shipped"), config) == hybrid_results(
        check, range(len(check.turns)), POOL, config
    ), "the unexpanded search must be the shipped one"
    every = [c for name in names for c in sets[name]] + locomo
    pools: dict[str, Pools] = {}
    for variant in variants():
        t0 = time.perf_counter()
        pools[variant.name] = {
            c.sample_id: expanded_results(c, vocab, variant, config) for c in every
        }
        print(f"{variant.name}: {time.perf_counter() - t0:.1f} s", flush=True)
    facts: dict[str, dict[str, tuple[float, float, float, float]]] = {}
    loco: dict[str, list[LocomoRows]] = {}
    for name, pool in pools.items():

        def rank(conv: Conversation, qi: int, k: int, pool: Pools = pool) -> list[int]:
            return ranked(pool[conv.sample_id], qi, k)

        facts[name] = {s: fact_scores(sets[s], raw[s], rank) for s in names}
        loco[name] = [
            recalls(c, [[rid for rid, _ in f] for f in pool[c.sample_id]]) for c in locomo
        ]
    width = 34
    head = f"{'variant':<{width}}" + "".join(f"{s + ': c@1 c@5 st>c b@5':>30}" for s in names)
    head += f"{'R@1':>8}{'R@5':>8}{'R@10':>8}" + "".join(f"{c:>12}" for c in CATEGORIES.values())
    lines = [head, "-" * len(head)]

    def row(label: str, fs: dict[str, tuple[float, ...]], rows: LocomoRows) -> str:
        out = f"{label:<{width}}"
        for s in names:
            c1, c5, st, b5 = fs[s]
            out += f"{c1:>12.3f} {c5:>5.3f} {st:>5.3f} {b5:>5.3f}"
        vals = locomo_summary(rows)
        return (
            out + "".join(f"{v:>8.4f}" for v in vals[:3]) + "".join(f"{v:>12.3f}" for v in vals[3:])
        )

    for name in pools:
        lines.append(row(name, facts[name], [r for c in loco[name] for r in c]))

    first5 = [name for name, *_ in SETS[:5]]

    def select(skip_locomo: int | None, skip_fact: str | None) -> str:
        def train(name: str) -> tuple[float, float]:
            rows = [r for i, c in enumerate(loco[name]) if i != skip_locomo for r in c]
            r10 = float(np.mean([r[1][2] for r in rows]))

            def rank(conv: Conversation, qi: int, k: int) -> list[int]:
                return ranked(pools[name][conv.sample_id], qi, k)

            gain = [
                fact_scores([c for c in sets[s] if c.sample_id != skip_fact], raw[s], rank)
                for s in first5
            ]
            return float(np.mean([g[1] - g[2] for g in gain])), r10

        scored = {name: train(name) for name in pools}
        floor = scored["shipped"][1]
        allowed = [name for name in pools if scored[name][1] >= floor]
        return max(allowed, key=lambda name: scored[name])

    overall = select(None, None)
    choice = {c.sample_id: overall for c in every}
    picks = []
    for i, c in enumerate(locomo):
        choice[c.sample_id] = select(i, None)
        picks.append(f"{c.sample_id}: {choice[c.sample_id]}")
    fact_picks: Counter[str] = Counter()
    for s in first5:
        for c in sets[s]:
            choice[c.sample_id] = select(None, c.sample_id)
            fact_picks[choice[c.sample_id]] += 1

    def held(conv: Conversation, qi: int, k: int) -> list[int]:
        return ranked(pools[choice[conv.sample_id]][conv.sample_id], qi, k)

    held_facts = {s: fact_scores(sets[s], raw[s], held) for s in names}
    held_loco = [
        recalls(c, [[rid for rid, _ in f] for f in pools[choice[c.sample_id]][c.sample_id]])
        for c in locomo
    ]
    lines.append("-" * len(head))
    lines.append(row("held-out choice", held_facts, [r for c in held_loco for r in c]))
    lines += [
        "",
        f"Choice on all training data (sealed, hand): {overall}.",
        "LoCoMo held-out choices: " + "; ".join(picks) + ".",
        "Fact-change held-out choices (30 conversations): "
        + ", ".join(f"{k} x{v}" for k, v in fact_picks.most_common())
        + ".",
        "Spread over LoCoMo conversations, recall@10 (shipped -> held-out choice): "
        + "; ".join(
            f"{c.sample_id} {locomo_summary(a)[2]:.3f}->{locomo_summary(b)[2]:.3f}"
            for c, a, b in zip(locomo, loco["shipped"], held_loco, strict=True)
        )
        + ".",
        "",
        f"Vocabulary: {len(vocab.words)} words, embedded in {t_vocab:.1f} s "
        f"({vocab.vectors.nbytes / 2**20:.1f} MiB as float32).",
        "Near words of the fresh set's question words (query floor 0.5, n=5): "
        + "; ".join(
            f"{w}: {', '.join(vocab.near_word(w, 5, 0.5)) or '-'}"
            for w in ("partner", "seeing", "part", "town", "live", "flat", "hobby", "weekends")
        )
        + ".",
        "",
        "Fresh set, current questions:",
    ]
    by_id = {str(r["sample_id"]): r for r in raw["fresh"]}
    fresh = [(c, by_id[c.sample_id]) for c in sets["fresh"]]
    lines += diagnostic(vocab, fresh, Variant("both", m=5, n=5, query_floor=0.5))

    # LoCoMo first: recall@10 on the training conversations, fact-change sets as a guard.
    def train_gain(name: str) -> float:
        def rank(conv: Conversation, qi: int, k: int) -> list[int]:
            return ranked(pools[name][conv.sample_id], qi, k)

        gain = [fact_scores(sets[s], raw[s], rank) for s in first5]
        return float(np.mean([g[1] - g[2] for g in gain]))

    guard = {name: train_gain(name) for name in pools}
    safe = [name for name in pools if guard[name] >= guard["shipped"]]

    def select_locomo(skip: int) -> str:
        def r10(name: str) -> float:
            rows = [r for i, c in enumerate(loco[name]) if i != skip for r in c]
            return float(np.mean([r[1][2] for r in rows]))

        return max(safe, key=lambda name: (r10(name), name == "shipped"))

    first = [select_locomo(i) for i in range(len(locomo))]
    first_loco = [
        recalls(c, [[rid for rid, _ in f] for f in pools[name][c.sample_id]])
        for c, name in zip(locomo, first, strict=True)
    ]
    shipped_sum = locomo_summary([r for c in loco["shipped"] for r in c])
    first_sum = locomo_summary([r for c in first_loco for r in c])
    labels = ["R@1", "R@5", "R@10", *CATEGORIES.values()]
    lines += [
        "",
        "LoCoMo first (each held-out LoCoMo conversation scored with the variant of the "
        "highest recall@10 on the other five, among variants whose mean cur@5 - stale>cur "
        "over the first five fact-change sets is not below the shipped search's; "
        f"{len(safe)} of {len(pools)} pass that guard): "
        + "; ".join(f"{c.sample_id}: {n}" for c, n in zip(locomo, first, strict=True))
        + ".",
        "  shipped -> held out: "
        + ", ".join(
            f"{lab} {a:.4f}->{b:.4f}"
            for lab, a, b in zip(labels, shipped_sum, first_sum, strict=True)
        )
        + ".",
        "  per conversation, recall@10: "
        + "; ".join(
            f"{c.sample_id} {locomo_summary(a)[2]:.3f}->{locomo_summary(b)[2]:.3f}"
            for c, a, b in zip(locomo, loco["shipped"], first_loco, strict=True)
        )
        + ".",
    ]
    body = "\n".join(lines)
    print(body)
    if args.out:
        command = "PYTHONPATH=$PWD python benchmarks/experiments/term_expansion.py " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
        Path(args.out).write_text(
            f"{command}\n\nEvery turn kept (no policy), k=5, every row on top of the shipped "
            "search (HybridConfig(), newer-first on). Fact-change sets as recency_ablation.py "
            f"({args.n} conversations each; columns cur@1, cur@5, stale>cur, before@5) and the "
            "hand-written set. LoCoMo: evidence recall of categories 1-4, per category "
            "recall@10. 'record': a record's m nearest vocabulary words as hidden BM25 terms; "
            "'query': each content word of a question brings its n nearest vocabulary words "
            "(xW: their BM25 counted W times, over the question's own ceiling); "
            f"see the docstring. Ran in {time.perf_counter() - started:.0f} s.\n\n{body}\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
