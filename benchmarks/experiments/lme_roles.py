"""Whose words a question asks for: the user's, or the assistant's long replies, on LongMemEval.

Every haystack (a question's sessions plus ``--distractors`` sessions of other questions,
each at its date, as ``agentmem bench longmemeval`` builds them) is stored twice through
``BufferChatMessageHistory``: the user's words only, and the user's words with the
assistant's replies (``remember_roles=("human", "ai")``). Each question is then asked of
hybrid search with the records of the side it does not ask about weighed by
``HybridConfig.role_weight`` (1: off, the release before), of dense and of lexical search.
The weight applies to the base score, before the neighbour lift, and the weighed records are
not lifted (shipped); the rows ``other side lifted`` lift them like any record (the rule
before), the row ``after the lift`` applies the weight to the final score instead (each
reply then still lifts the user's turns beside it by what it matched).

Choice inside folds: the questions are split in two by a seeded hash of their id; the weight
is chosen on one fold (the mean of evidence recall@5 and @10 over the questions with the
assistant's replies kept, ties to the larger weight) and scored on the other, and the other
way round; the table pools both held-out folds.

Usage::

    PYTHONPATH=$PWD python benchmarks/experiments/lme_roles.py \\
        --data ../shared/datasets/longmemeval/longmemeval_oracle_dev.json \\
        --store /tmp/lme-roles.db --out benchmarks/experiments/results/lme_roles.txt
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_agentmem import AgentMemory
from langchain_agentmem.bench.longmemeval import (
    QUESTION_TYPES,
    SHORT_TYPES,
    Haystack,
    haystacks,
    load_longmemeval,
)
from langchain_agentmem.bench.longmemeval_runner import KEEPS, ReplayClock, store_haystack
from langchain_agentmem.bench.memoised import MemoisedEmbeddings
from langchain_agentmem.bench.metrics import recall_at_k
from langchain_agentmem.embedding.embeddings import resolve_embeddings
from langchain_agentmem.namespace import view
from langchain_agentmem.ranking import HybridConfig, stages
from langchain_agentmem.ranking.newer_first import newer_first
from langchain_agentmem.ranking.roles import asked_role

LIFTED = "other side lifted"
"""The rows of :func:`_lifted`: the side not asked about weighed, then lifted by its
neighbours like any record (the rule before; the ``hybrid`` rows are the shipped one, where
it keeps its weighed score)."""

WEIGHTS = (1.0, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1)
"""``role_weight`` values tried (1.0: off)."""

KS = (5, 10)


def namespace(keep: str, stack: Haystack) -> str:
    return f"lme-{keep}-{stack.question.id}"


def build(path: Path, stacks: list[Haystack]) -> None:
    """Store every haystack, both ways, in ``path`` (namespaces already there are kept)."""
    embeddings = MemoisedEmbeddings(resolve_embeddings(None))
    clock = ReplayClock()
    memory = AgentMemory(f"sqlite:///{path}", embeddings=embeddings, clock=clock)
    try:
        have = set(memory.namespaces())
        for keep in KEEPS:
            for i, stack in enumerate(stacks):
                if namespace(keep, stack) not in have:
                    store_haystack(memory, clock, stack, namespace(keep, stack), KEEPS[keep])
                if i % 25 == 0:
                    print(f"stored {keep} {i}/{len(stacks)}", file=sys.stderr, flush=True)
    finally:
        memory.close()


def _before(
    query: Any, k: int, corpus: Any, *, after_lift: bool = False
) -> list[tuple[int, float]]:
    """Hybrid search as it was before the side a query does not ask about was kept from the
    neighbour lift: that side's records weighed (on the base score, or with ``after_lift`` on
    the final one) and lifted toward their neighbours like any record."""
    config = corpus.config
    pool = stages.gather(query.text, query.vector, k, corpus, query.labels.terms)
    match_arr = stages.base_scores(pool, config)
    base_arr = match_arr
    if query.named and (config.named_speaker > 0 or config.named_mention > 0):
        base_arr = base_arr + stages.named_gain(pool.keys, corpus.said, query.named, config)
    base = dict(zip(pool.keys, base_arr.tolist(), strict=True))
    if not after_lift:
        base = stages.role_weight(base, corpus.said, query.asked, config.role_weight)
    match = dict(zip(pool.keys, match_arr.tolist(), strict=True))
    scores = stages.neighbour_lift(base, pool, corpus.order, config.neighbour_lift)
    scores = newer_first(
        query.text,
        query.vector,
        scores,
        said_of=corpus.said,
        embeddings_of=corpus.embeddings,
        config=config,
        match=match,
    )
    if after_lift:
        scores = stages.role_weight(scores, corpus.said, query.asked, config.role_weight)
    scores = stages.question_weight(scores, corpus.questions, config.question_weight)
    scores = stages.statement_first(scores, corpus.questions, pool)
    scores = stages.replaced_below(
        scores, corpus, query.text, config.restatement_relevance, query.labels.topics, match
    )
    return stages.best(scores, k)


def _lifted(query: Any, k: int, corpus: Any) -> list[tuple[int, float]]:
    """The rule before: the weighed side lifted by its neighbours."""
    return _before(query, k, corpus)


def _after_lift(query: Any, k: int, corpus: Any) -> list[tuple[int, float]]:
    """The weight on the final score, after the lift (a variant never shipped)."""
    return _before(query, k, corpus, after_lift=True)


def turn_ids(stacks: list[Haystack]) -> dict[tuple[str, str], str]:
    """(thread, text) -> the turn it holds."""
    out: dict[tuple[str, str], str] = {}
    for stack in stacks:
        for session in stack.sessions:
            for turn in session.turns:
                out.setdefault((session.key, turn.text.strip()), turn.id)
    return out


def rankings(
    path: Path, stacks: list[Haystack], keep: str, config: HybridConfig, mode: str
) -> dict[str, list[str]]:
    """Each question's ranked turn ids (top ``max(KS)``)."""
    turns = turn_ids(stacks)
    memory = AgentMemory(
        f"sqlite:///{path}",
        embeddings=MemoisedEmbeddings(resolve_embeddings(None)),
        hybrid=config,
        persist_indexes=False,
    )
    out = {}
    try:
        for stack in stacks:
            question = stack.question
            if not question.evidence:
                continue
            hits = memory.search(
                question.question, namespace=namespace(keep, stack), k=max(KS), mode=mode
            )
            out[question.id] = [turns.get((h.thread or "", h.text.strip()), h.id) for h in hits]
    finally:
        memory.close()
    return out


def scores(stacks: list[Haystack], ranked: dict[str, list[str]], ids: set[str]) -> dict[str, Any]:
    """Recall@k overall and per type over the questions ``ids``."""
    sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    counts: dict[str, int] = defaultdict(int)
    for stack in stacks:
        q = stack.question
        if q.id not in ids or q.id not in ranked:
            continue
        for group in ("all", q.group):
            counts[group] += 1
            for k in KS:
                sums[group][f"R@{k}"] += recall_at_k(ranked[q.id], q.evidence, k)
    return {g: {m: v / counts[g] for m, v in s.items()} | {"n": counts[g]} for g, s in sums.items()}


def asking(stacks: list[Haystack]) -> int:
    """How many of the questions ask for the assistant's words."""
    return sum(asked_role(s.question.question) == "assistant" for s in stacks)


def fold_of(qid: str) -> int:
    return hashlib.sha256(f"lme-roles:{qid}".encode()).digest()[0] % 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--store", required=True, help="SQLite file (built once, then reused)")
    parser.add_argument("--distractors", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    questions = load_longmemeval(args.data)
    stacks = haystacks(questions, questions, distractors=args.distractors, seed=args.seed)
    t0 = time.perf_counter()
    build(Path(args.store), stacks)
    built = time.perf_counter() - t0
    runs: dict[tuple[str, str], dict[str, list[str]]] = {}
    for keep in KEEPS:
        for w in WEIGHTS:
            config = replace(HybridConfig(), role_weight=w)
            runs[keep, f"hybrid w={w}"] = rankings(Path(args.store), stacks, keep, config, "hybrid")
        shipped = view.hybrid_search
        view.hybrid_search = _after_lift  # type: ignore[assignment]
        try:
            config = replace(HybridConfig(), role_weight=0.3)
            runs[keep, "after the lift, w=0.3"] = rankings(
                Path(args.store), stacks, keep, config, "hybrid"
            )
            view.hybrid_search = _lifted  # type: ignore[assignment]
            for w in WEIGHTS[1:]:
                config = replace(HybridConfig(), role_weight=w)
                runs[keep, f"{LIFTED} w={w}"] = rankings(
                    Path(args.store), stacks, keep, config, "hybrid"
                )
        finally:
            view.hybrid_search = shipped
        for mode in ("dense", "lexical"):
            runs[keep, mode] = rankings(Path(args.store), stacks, keep, HybridConfig(), mode)
    folds = [{s.question.id for s in stacks if fold_of(s.question.id) == f} for f in (0, 1)]
    every = folds[0] | folds[1]

    def goal(keep: str, name: str, ids: set[str]) -> float:
        s = scores(stacks, runs[keep, name], ids)["all"]
        return (s["R@5"] + s["R@10"]) / 2

    chosen: dict[str, list[float]] = {}
    for rule, weights in (("hybrid", WEIGHTS), (LIFTED, WEIGHTS[1:])):
        chosen[rule] = []
        for held in (0, 1):
            train = folds[1 - held]
            chosen[rule].append(
                max(weights, key=lambda w: (goal("user+assistant", f"{rule} w={w}", train), w))
            )
        # the held-out rows: each fold's questions ranked with the weight the other fold chose
        for keep in KEEPS:
            runs[keep, f"{rule}, chosen in folds"] = {
                qid: runs[keep, f"{rule} w={chosen[rule][fold_of(qid)]}"][qid]
                for qid in runs[keep, "dense"]
            }
    groups = ["all", *QUESTION_TYPES, "abstention"]
    assistant = [s for s in stacks if s.question.type == "single-session-assistant"]
    lines = [
        "Command: PYTHONPATH=$PWD python benchmarks/experiments/lme_roles.py --data "
        f"{args.data} --store {args.store} --distractors {args.distractors} --out {args.out}",
        f"Haystacks: {len(stacks)} (each question's sessions + {args.distractors} distractor "
        "sessions of other questions, none dated after the question, seed "
        f"{args.seed}); stored in {built:.0f} s (both ways; 0 when the store was there).",
        f"Questions asking for the assistant's words (asked_role): {asking(stacks)} of "
        f"{len(stacks)}; of the single-session-assistant ones: {asking(assistant)} of "
        f"{len(assistant)}.",
        "Weight chosen in folds (fold 0 held out, fold 1 held out): hybrid "
        f"{chosen['hybrid'][0]}, {chosen['hybrid'][1]}; {LIFTED} {chosen[LIFTED][0]}, "
        f"{chosen[LIFTED][1]}.",
        "",
    ]
    for keep in KEEPS:
        table = {name: scores(stacks, r, every) for (k, name), r in runs.items() if k == keep}
        lines.append(f"kept: {keep}; evidence recall@5 / @10 (questions with evidence)")
        lines.append(
            f"{'search':<26}" + "".join(f"{SHORT_TYPES.get(g, g)[:9]:>14}" for g in groups)
        )
        for name, s in table.items():
            cells = "".join(
                f"{s[g]['R@5']:>7.3f}/{s[g]['R@10']:.3f}" if g in s else f"{'-':>14}"
                for g in groups
            )
            lines.append(f"{name:<26}{cells}")
        first = next(iter(table.values()))
        lines.append(f"{'n':<26}" + "".join(f"{first.get(g, {}).get('n', 0):>14}" for g in groups))
        lines.append("")
    text = "\n".join(lines)
    Path(args.out).write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
