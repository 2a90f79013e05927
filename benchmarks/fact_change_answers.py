"""Facts that change, answered: does a chat model told the memories name the current value?

The generated fact-change sets of ``benchmarks/fact_change.py`` (``--n`` conversations of
each; the hand-written sets have no gold answers), ingested turn by turn as ``agentmem
bench`` does, every turn kept. Each question is asked through the path an application runs:
the shipped ``AgentMemoryMiddleware`` in a ``create_agent`` agent, under the system prompt
of ``agentmem bench locomo --answers``, with the defaults (and, with ``--annotate``, on a
memory whose chat model annotates each statement: ``AgentMemory(model=...)``).

- cur@1: the current statement ranks first in a search of the question (k=5), as
  ``fact_change.py`` counts it;
- current named: the answer names the current value and not the earlier one;
- stale named: the answer names the earlier value (alone or with the current one);
- before named: for questions about the earlier value, the answer names it.

An answer names a value when it holds one of the value's content words (``a tortoise named
Atlas``: tortoise or atlas), stemmed as LoCoMo's F1 stems them.

Usage::

    AGENTMEM_LLM_CTX=32768 ../shared/llm/serve-model 8766
    PYTHONPATH=$PWD python benchmarks/fact_change_answers.py --n 2 --annotate \\
        --model-url http://127.0.0.1:8766/v1 --model qwen \\
        --out benchmarks/results/fact_change_answers.txt
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from langchain_agentmem import AgentMemory
from langchain_agentmem.bench.answer_models import answering_model, bench_model
from langchain_agentmem.bench.answer_rows import AnnotatedRow, AnswerRow, ConversationRun, MemoryRow
from langchain_agentmem.bench.answer_scores import stems
from langchain_agentmem.bench.runner import turn_adds
from langchain_agentmem.locomo import load_locomo
from langchain_agentmem.models import ANNOTATION_TOKENS
from langchain_agentmem.rl.data import cache_dir
from langchain_agentmem.rl.synthetic_conversations import SLOT_SETS, generate, write

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fact_change import SETS

FILLER = {"a", "an", "the", "named", "called", "my", "her", "his", "at", "in", "of", "to", "and"}
"""Words of a value that do not name it."""


def content(value: str) -> set[str]:
    """The stemmed words that name ``value`` (its words less :data:`FILLER`)."""
    words = [w for w in re.findall(r"[\w']+", value.lower()) if w not in FILLER]
    return set(stems(" ".join(words)))


def names(answer: str, value: str) -> bool:
    """Whether ``answer`` holds a word that names ``value``."""
    wanted = content(value)
    return bool(wanted) and bool(wanted & set(stems(answer)))


@dataclass
class Tally:
    """One row's counts over some conversations."""

    current: int = 0
    cur1: int = 0
    named: int = 0
    stale: int = 0
    before: int = 0
    before_named: int = 0

    def add(self, other: Tally) -> None:
        for key in vars(self):
            setattr(self, key, getattr(self, key) + getattr(other, key))

    def line(self, name: str) -> str:
        c, b = max(self.current, 1), max(self.before, 1)
        return (
            f"{name:<34}{self.current:>5}{self.cur1 / c:>8.3f}{self.named / c:>10.3f}"
            f"{self.stale / c:>9.3f}{self.before:>5}{self.before_named / b:>10.3f}"
        )


def earlier_values(raw: dict[str, Any]) -> dict[str, str]:
    """Turn id -> the earlier value it states: the gold answer of the "before" question
    whose evidence it is (a current question's ``stale`` turns are such turns)."""
    return {
        turn: qa["answer"]
        for qa in raw["qa"]
        if qa["fact"]["kind"] == "before"
        for turn in qa["evidence"]
    }


def ask(
    row: AnswerRow, run: ConversationRun, raw: dict[str, Any], model: Any, log: Path | None
) -> Tally:
    """``row``'s answers to ``raw``'s questions, counted (each written to ``log``)."""
    tally = Tally()
    earlier = earlier_values(raw)
    row.start(run, model)
    for question, qa in zip(run.conv.questions, raw["qa"], strict=True):
        asked = row.ask(run, question)
        answer = asked.answer
        fact = qa["fact"]
        if log is not None:
            entry = {"question": question.question, "gold": qa["answer"], "fact": fact}
            entry |= {"earlier": [earlier.get(d) for d in fact["stale"]], "answer": answer}
            entry |= {"shown": asked.shown, "row": row.name}
            with log.open("a", encoding="utf-8") as out:
                out.write(json.dumps(entry) + "\n")
        if fact["kind"] == "before":
            tally.before += 1
            tally.before_named += names(answer, qa["answer"])
            continue
        tally.current += 1
        hits = run.memory.search(question.question, namespace=run.namespace, k=5)
        tally.cur1 += bool(hits) and hits[0].metadata.get("dia_id") == qa["evidence"][0]
        stale = [earlier[d] for d in fact["stale"] if d in earlier]
        said_stale = any(names(answer, value) for value in stale)
        tally.stale += said_stale
        tally.named += names(answer, qa["answer"]) and not said_stale
    return tally


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2, help="conversations per generated set")
    parser.add_argument("--model-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--annotate", action="store_true")
    parser.add_argument(
        "--variants",
        default=None,
        help="also these blocks of experiments/answer_block.py (comma-separated names)",
    )
    parser.add_argument("--cache", default=None)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--log", type=Path, help="every answer, one JSON object a line")
    args = parser.parse_args(argv)
    if args.log is not None:
        args.log.write_text("")
    start = time.perf_counter()
    cache = args.cache or cache_dir() / "answers.jsonl"
    model = answering_model(args.model_url, args.model, cache)
    tallies: dict[str, dict[str, Tally]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        memory = AgentMemory(f"sqlite:///{Path(tmp) / 'bare.db'}")
        annotated = None
        rows: list[tuple[str, AnswerRow]] = [("defaults", MemoryRow())]
        if args.variants:
            sys.path.insert(0, str(Path(__file__).resolve().parent / "experiments"))
            from answer_block import variants

            table = variants()
            rows += [(n, MemoryRow(n, **table[n])) for n in args.variants.split(",")]
        if args.annotate:
            annotator = bench_model(args.model_url, args.model, cache, max_tokens=ANNOTATION_TOKENS)
            annotated = AgentMemory(f"sqlite:///{Path(tmp) / 'model.db'}", model=annotator)
            rows.append(("defaults, model annotates", AnnotatedRow(annotated)))
        try:
            for name, slots, seed in SETS:
                raws = generate(args.n, seed=seed, slots=SLOT_SETS[slots])
                for raw in raws:
                    raw["sample_id"] = f"{slots}-{raw['sample_id']}"
                convs, _ = load_locomo(write(Path(tmp) / f"{slots}.json", raws))
                tallies[name] = {label: Tally() for label, _ in rows}
                for conv, raw in zip(convs, raws, strict=True):
                    namespace = f"facts-{conv.sample_id}"
                    for add in turn_adds(conv, namespace):
                        memory.add(**add)
                    for label, row in rows:
                        held = (
                            row.store(conv, namespace) if isinstance(row, AnnotatedRow) else memory
                        )
                        run = ConversationRun.of(conv, held, namespace)
                        tallies[name][label].add(ask(row, run, raw, model, args.log))
        finally:
            memory.close()
            if annotated is not None:
                annotated.close()
    head = (
        f"{'set / row':<34}{'cur':>5}{'cur@1':>8}{'cur named':>10}{'stale':>9}"
        f"{'bef':>5}{'bef named':>10}"
    )
    lines = [head, "-" * len(head)]
    totals = {label: Tally() for label, _ in rows}
    for name, by_row in tallies.items():
        for label, tally in by_row.items():
            lines.append(tally.line(f"{name}: {label}"))
            totals[label].add(tally)
    lines.append("-" * len(head))
    lines += [tally.line(f"all sets: {label}") for label, tally in totals.items()]
    command = (
        f"PYTHONPATH=$PWD python benchmarks/fact_change_answers.py --n {args.n}"
        f"{' --annotate' if args.annotate else ''} --model-url {args.model_url} "
        f"--model {args.model}"
    )
    intro = (
        f"Answer model: {args.model} at {args.model_url}, temperature 0 (and the annotating "
        "model with --annotate). cur: questions about a current value; cur@1: its statement "
        "ranks first (k=5 search); cur named: the answer names the current value and not the "
        "earlier one; stale: it names the earlier one; bef: questions about the earlier "
        f"value, bef named: the answer names it. Ran in {time.perf_counter() - start:.0f} s."
    )
    text = "\n".join([command, "", intro, "", *lines]) + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
