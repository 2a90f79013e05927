"""Which earlier statements the model is asked about: fewer, surer candidates for the judge.

For each statement a chat model annotated, the model is asked whether it makes earlier
statements of its speaker out of date: at most ``judging.JUDGED`` of them, those whose facts
set one of its attributes to another value first, then the closest in meaning (cosine
``judging.JUDGE_MIN_COSINE`` or more). Before this experiment every such candidate was asked
about; the local 0.5B model says yes to about a third of the pairs it is shown, and most of
its links join statements that change nothing. Each rule here asks about a subset of those
candidates, so the model's answers come from the cache ``benchmarks/annotations.py``
filled (run it first); nothing is asked anew.

Rules:

- ``judge all (before)``: every candidate, as before;
- ``facts only``: only earlier statements that set one of the new statement's attributes
  to another value (no candidate by meaning alone);
- ``one``: at most one candidate;
- ``cosine >= c``: candidates by meaning need cosine ``c``;
- ``shared label (shipped)``: a candidate by meaning must share a label or attribute name
  with the new statement (names at cosine ``annotations.SAME_ATTRIBUTE`` or more), as the
  issue's "a handful of candidates that share a label" reads; the rule ``judging`` ships.

Sets: the fact-change sets of ``annotations.py`` (``--n`` of each generated set, both
hand-written ones), every turn kept, k=5; the rule is chosen on the mean over the six
generated sets of (cur@1 + cur@5 - stale>cur), each generated set scored with the rule
chosen on the other five (held out), the hand-written sets with the rule chosen on all six.

With ``--locomo``: the same rules on LoCoMo conversations (evidence recall in hybrid mode,
answers from the cache ``benchmarks/annotations_locomo.py`` filled).

Usage::

    eval "$(../shared/llm/serve-model)"
    PYTHONPATH=$PWD python benchmarks/annotations.py --n 1
    PYTHONPATH=$PWD python benchmarks/experiments/judge_candidates.py --n 1 \\
        --out benchmarks/experiments/results/judge_candidates.txt
    PYTHONPATH=$PWD python benchmarks/annotations_locomo.py \\
        --data ../shared/datasets/locomo/locomo_dev.json --conversations conv-30
    PYTHONPATH=$PWD python benchmarks/experiments/judge_candidates.py \\
        --locomo ../shared/datasets/locomo/locomo_dev.json --conversations conv-30 \\
        --out benchmarks/experiments/results/judge_candidates_locomo.txt
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

import langchain_agentmem.annotation.annotator as annotator_module
import langchain_agentmem.memory.judging as judging
from langchain_agentmem import AgentMemory
from langchain_agentmem.annotation.annotations import Notes
from langchain_agentmem.annotation.annotator import LinkCandidate
from langchain_agentmem.locomo import load_locomo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from annotations import CACHE, conversations, links, model_from_env
from annotations_locomo import KS, link_counts, measure
from answer_cache import JsonFileCache
from fact_change import SETS, Counts, ingest, score

from langchain_agentmem.rl.synthetic_conversations import write

Figures = tuple[float, float, float, float]
Found = list[LinkCandidate]
Keep = Callable[[AgentMemory, str, str, Notes, Found], Found]
"""Which of the candidates to judge: ``(memory, namespace, new text, notes, candidates)``."""

BY_MEANING = "the model judged it replaced"
"""How the reason of a candidate found by meaning alone ends (not by its facts)."""


def _all(memory: AgentMemory, namespace: str, text: str, notes: Notes, found: Found) -> Found:
    return found


def _facts_only(
    memory: AgentMemory, namespace: str, text: str, notes: Notes, found: Found
) -> Found:
    return [c for c in found if not c.why.endswith(BY_MEANING)]


def _one(memory: AgentMemory, namespace: str, text: str, notes: Notes, found: Found) -> Found:
    return found[:1]


def _cosine(least: float) -> Keep:
    def keep(memory: AgentMemory, namespace: str, text: str, notes: Notes, found: Found) -> Found:
        def close(c: LinkCandidate) -> bool:
            a, b = memory.embeddings.embed_documents([c.text, text])
            return float(np.dot(a, b)) >= least

        return [c for c in found if not c.why.endswith(BY_MEANING) or close(c)]

    return keep


def _shared_label(
    memory: AgentMemory, namespace: str, text: str, notes: Notes, found: Found
) -> Found:
    """The shipped rule, through the shipped pieces (``shares_name``, ``judging._names``)."""
    mine = set(notes.about) | set(notes.facts)

    def shares(c: LinkCandidate) -> bool:
        record = memory.backend.get_record(namespace, c.record_id)
        return record is not None and _shares(
            mine, judging._names(record), memory._reads.labels.vectors
        )

    return [c for c in found if not c.why.endswith(BY_MEANING) or shares(c)]


SHIP = "shared label (shipped)"
BEFORE = "judge all (before)"

RULES: dict[str, Keep] = {
    BEFORE: _all,
    "facts only": _facts_only,
    "one": _one,
    "cosine >= 0.4": _cosine(0.4),
    "cosine >= 0.5": _cosine(0.5),
    SHIP: _shared_label,
}

_shipped = judging.MemoryAnnotationStore.link_candidates
_shares = judging.shares_name


@contextmanager
def rule(keep: Keep) -> Iterator[None]:
    """Judge only the candidates ``keep`` leaves of every candidate (the rule before)."""

    def candidates(
        self: judging.MemoryAnnotationStore,
        namespace: str,
        record_id: str,
        text: str,
        notes: Notes,
    ) -> list[LinkCandidate]:
        found = _shipped(self, namespace, record_id, text, notes)
        return keep(self.memory, namespace, text, notes, found)  # type: ignore[arg-type]

    judging.MemoryAnnotationStore.link_candidates = candidates  # type: ignore[method-assign]
    judging.shares_name = _any  # every candidate
    try:
        yield
    finally:
        judging.MemoryAnnotationStore.link_candidates = _shipped  # type: ignore[method-assign]
        judging.shares_name = _shares


def _any(mine: set[str], theirs: set[str], label_vectors: Any) -> bool:
    return True


def run(raws: dict[str, list[dict[str, Any]]], model: Any) -> dict[str, Any]:
    """Each set's counts with one rule, and its links and judging calls."""
    out: dict[str, Any] = {"sets": {}, "made": 0, "right": 0, "changes": 0}
    with (
        tempfile.TemporaryDirectory() as tmp,
        AgentMemory(f"sqlite:///{tmp}/m.db", model=model) as memory,
    ):
        for name, raw in raws.items():
            ingest(memory, write(Path(tmp) / f"{name}.json", raw))
            memory.wait_annotated()
            out["sets"][name] = sum((score(memory, conv) for conv in raw), Counts())
            for conv in raw:
                m, r, c = links(memory, conv)
                out["made"], out["right"] = out["made"] + m, out["right"] + r
                out["changes"] += c
        assert memory.annotator is not None
        out["judged"] = memory.annotator.judgements
    return out


def run_locomo_rule(conversations: Sequence[Any], model: Any) -> dict[str, Any]:
    """Hybrid evidence recall on LoCoMo with one rule, and the links and judging calls."""
    seen: dict[str, Any] = {}

    def settle(memory: AgentMemory) -> None:
        memory.wait_annotated()
        assert memory.annotator is not None
        seen["judged"] = memory.annotator.judgements
        seen["counts"] = link_counts(memory, [f"locomo-{c.sample_id}" for c in conversations])

    with tempfile.TemporaryDirectory() as tmp:
        scores = measure(
            conversations, lambda: AgentMemory(f"sqlite:///{tmp}/m.db", model=model), settle
        )
    return {"scores": scores, **seen}


def locomo_main(args: argparse.Namespace, model: Any, cache: JsonFileCache) -> str:
    """Every rule on the LoCoMo conversations asked for (answers from the cache of
    ``annotations_locomo.py``)."""
    loaded, _ = load_locomo(args.locomo)
    wanted = [s.strip() for s in args.conversations.split(",")]
    conversations = [c for c in loaded if c.sample_id in wanted]
    start = time.perf_counter()
    rows = []
    for name, keep in RULES.items():
        with rule(keep):
            res = run_locomo_rule(conversations, model)
        sc = res["scores"]
        _, linked, same = res["counts"]
        rows.append(
            f"{name:<24}{res['judged']:>8}{linked:>7}{same:>9}"
            + "".join(f"{sc[f'recall@{k}']:>8.3f}" for k in KS)
        )
        print(rows[-1], flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        bare = measure(conversations, lambda: AgentMemory(f"sqlite:///{tmp}/bare.db"))
    rows.append(f"{'bare (no model)':<48}" + "".join(f"{bare[f'recall@{k}']:>8.3f}" for k in KS))
    return "\n".join(
        [
            "PYTHONPATH=$PWD python benchmarks/experiments/judge_candidates.py --locomo "
            f"{args.locomo} --conversations {args.conversations}"
            + (f" --out {args.out}" if args.out else ""),
            "",
            f"LoCoMo {', '.join(wanted)}, every turn kept, hybrid search, AgentMemory(model=...) "
            "with each rule; the model's answers from the cache of annotations_locomo.py "
            f"(asked anew: {cache.misses}). Ran in {time.perf_counter() - start:.0f} s.",
            "",
            f"{'rule':<24}{'judged':>8}{'links':>7}{'session':>9}"
            + "".join(f"{f'R@{k}':>8}" for k in KS)
            + "   (session: links within one session)",
            *rows,
        ]
    )


def goal(f: Figures) -> float:
    return f[0] + f[1] - f[2]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--locomo", type=Path, help="measure on these LoCoMo conversations")
    parser.add_argument("--conversations", default="conv-30")
    parser.add_argument(
        "--rules", help="only these rules, comma-separated (the shipped one and before always)"
    )
    parser.add_argument("--sets", help="only these sets, comma-separated (default: every set)")
    args = parser.parse_args(argv)
    if args.rules:
        asked = {SHIP, BEFORE, *(r.strip() for r in args.rules.split(","))}
        if asked - set(RULES):
            parser.error(f"unknown rule(s) {sorted(asked - set(RULES))}; use {list(RULES)}")
        for name in set(RULES) - asked:
            del RULES[name]
    annotator_module.RETRY_WAITS = ()
    start = time.perf_counter()
    cache = JsonFileCache(CACHE)
    model = model_from_env(cache)
    if args.locomo:
        text = locomo_main(args, model, cache)
    else:
        raws = conversations(args.n)
        if args.sets:
            asked_sets = [name.strip() for name in args.sets.split(",")]
            unknown = sorted(set(asked_sets) - set(raws))
            if unknown:
                parser.error(f"unknown set(s) {unknown}; use {list(raws)}")
            raws = {name: raws[name] for name in asked_sets}
        text = sets_main(args, raws, model, cache, start)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


def sets_main(
    args: argparse.Namespace,
    raws: dict[str, list[dict[str, Any]]],
    model: Any,
    cache: JsonFileCache,
    start: float,
) -> str:
    """Every rule on the fact-change sets ``raws``, with the rule chosen inside folds."""
    results = {}
    for name, keep in RULES.items():
        with rule(keep):
            results[name] = run(raws, model)
        print(name, results[name]["made"], results[name]["right"], flush=True)
    generated = [name for name, _, _ in SETS if name in raws]
    figures = {r: {s: c.figures() for s, c in res["sets"].items()} for r, res in results.items()}

    def best(on: Sequence[str]) -> str:
        return max(RULES, key=lambda r: (np.mean([goal(figures[r][s]) for s in on]), r == SHIP))

    lines = [
        f"PYTHONPATH=$PWD python benchmarks/experiments/judge_candidates.py --n {args.n}"
        + (f" --rules {args.rules!r}" if args.rules else "")
        + (f" --sets {args.sets!r}" if args.sets else "")
        + (f" --out {args.out}" if args.out else ""),
        "",
        f"{args.n} conversation(s) of each generated set and both hand-written sets, every "
        "turn kept, k=5, AgentMemory(model=...) with the shipped search; answers from the "
        f"cache of annotations.py (asked anew: {cache.misses}). Ran in "
        f"{time.perf_counter() - start:.0f} s.",
        "",
        f"{'rule':<24}{'judged':>8}{'links':>7}{'right':>7}{'cur@1':>8}{'cur@5':>8}"
        f"{'stale>cur':>11}{'before@5':>10}   (all sets together)",
    ]
    for r, res in results.items():
        total = sum(res["sets"].values(), Counts()).figures()
        lines.append(
            f"{r:<24}{res['judged']:>8}{res['made']:>7}{res['right']:>5}/{res['changes']:<3}"
            f"{total[0]:>6.3f}{total[1]:>8.3f}{total[2]:>11.3f}{total[3]:>10.3f}"
        )
    lines += ["", "per set (cur@1 / cur@5 / stale>cur), each rule:"]
    lines.append(f"{'set':<10}" + "".join(f"{r:>26}" for r in RULES))
    for s in raws:
        cells = "".join(
            f"{f'{figures[r][s][0]:.3f} {figures[r][s][1]:.3f} {figures[r][s][2]:.3f}':>26}"
            for r in RULES
        )
        lines.append(f"{s:<10}{cells}")
    lines += [
        "",
        "chosen inside folds (generated sets: on the other five; hand-written: on six; a tie "
        "goes to the shipped rule):",
    ]
    held: list[Figures] = []
    for s in raws:
        chosen = best([g for g in generated if g != s] if s in generated else generated)
        held.append(figures[chosen][s])
        f = figures[chosen][s]
        lines.append(f"  {s:<10}{chosen:<24}{f[0]:.3f} {f[1]:.3f} {f[2]:.3f}")
    mean = np.mean(held, axis=0)
    ship = np.mean([figures[SHIP][s] for s in raws], axis=0)
    before = np.mean([figures[BEFORE][s] for s in raws], axis=0)
    lines += [
        f"  mean over the sets, held out: {mean[0]:.3f} / {mean[1]:.3f} / {mean[2]:.3f}; "
        f"shipped: {ship[0]:.3f} / {ship[1]:.3f} / {ship[2]:.3f}; before: {before[0]:.3f} / "
        f"{before[1]:.3f} / {before[2]:.3f}",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
