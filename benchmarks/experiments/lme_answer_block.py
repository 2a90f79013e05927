"""What the recalled-memories block shows, judged by a model's answers on LongMemEval.

Each haystack is stored as ``agentmem bench longmemeval`` stores it (``--keep``: the user's
words, or the assistant's replies too); a draw of its questions (every type in its share,
seed 0) is then answered by the shipped ``AgentMemoryMiddleware`` with one thing changed at a
time (how many memories, today's date), beside the seed's plain RAG (exact faiss over every
record) showing as many memories: the figures say whether a gap between the defaults and the
seed comes from what is ranked or from how much is shown. ``--prompts`` writes each prompt
sent (JSON lines), to read what the model was shown.

Usage::

    AGENTMEM_LLM_CTX=32768 ../shared/llm/serve-model 8766
    PYTHONPATH=$PWD python benchmarks/experiments/lme_answer_block.py \\
        --data ../shared/datasets/longmemeval/longmemeval_oracle_dev.json \\
        --model-url http://127.0.0.1:8766/v1 --model qwen --questions 60 \\
        --out benchmarks/experiments/results/lme_answer_block.txt
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from langchain_agentmem import AgentMemory
from langchain_agentmem.bench.answer_models import answering_model
from langchain_agentmem.bench.answer_rows import (
    AnswerRow,
    Asked,
    ConversationRun,
    GivenRow,
    MemoryRow,
    seed_faiss_l2,
)
from langchain_agentmem.bench.answers import AnswerBench
from langchain_agentmem.bench.longmemeval import haystacks, load_longmemeval, pick_questions
from langchain_agentmem.bench.longmemeval_answers import (
    LME_GROUPS,
    LME_SYSTEM,
    LongMemEvalAnswers,
    format_lme_answers,
)
from langchain_agentmem.bench.longmemeval_runner import ReplayClock, run_longmemeval
from langchain_agentmem.bench.memoised import MemoisedEmbeddings
from langchain_agentmem.embedding.embeddings import resolve_embeddings
from langchain_agentmem.integrations.prompt import (
    CLOSE,
    DEFAULT_HEADER,
    OPEN,
    format_memories,
    memory_line,
    replaced_ids,
    stamps,
    today_line,
)
from langchain_agentmem.locomo import Question
from langchain_agentmem.types import MemoryRecord


class Logged(AnswerRow):
    """``row``, each prompt it sent kept (``prompts``)."""

    def __init__(self, row: Any, prompts: list[dict[str, Any]]) -> None:
        self.row = row
        self.name = row.name
        self.prompts = prompts

    @property  # type: ignore[override]
    def system(self) -> str:
        return str(self.row.system)

    @system.setter
    def system(self, value: str) -> None:
        self.row.system = value

    def start(self, run: ConversationRun, model: Any) -> None:
        self.row.start(run, model)

    def ask(self, run: ConversationRun, question: Question) -> Asked:
        asked: Asked = self.row.ask(run, question)
        sent = self.row.recorder.sent
        self.prompts.append(
            {"row": self.name, "id": run.conv.sample_id, "prompt": sent, "answer": asked.answer}
        )
        return asked


def ago(when: datetime, today: datetime) -> str:
    """How long before ``today`` ``when`` was, as people say it: ``today``, ``yesterday``,
    ``12 days ago`` (under 8 weeks: days), ``3 months ago`` (under 2 years), ``4 years ago``."""
    days = (today.date() - when.date()).days
    if days <= 0:
        return "today"
    if days == 1:
        return "yesterday"
    if days < 56:
        return f"{days} days ago"
    months = round(days / 30.44)
    if months < 24:
        return f"{months} months ago"
    return f"{round(days / 365.25)} years ago"


def aged(today: datetime | None) -> Callable[[Sequence[MemoryRecord]], str]:
    """The shipped block with today's date, each memory's date followed by its age."""

    def fmt(records: Sequence[MemoryRecord]) -> str:
        shown = [r for r in records if r.text.strip()]
        gone = replaced_ids(shown)
        when = stamps(shown)
        lines = [
            memory_line(
                r,
                w if today is None or r.created_at is None else f"{w}, {ago(r.created_at, today)}",
                replaced=r.id in gone,
            )
            for r, w in zip(shown, when, strict=True)
        ]
        if not lines:
            return ""
        head = [DEFAULT_HEADER] + ([today_line(today)] if today is not None else [])
        return "\n".join([OPEN, *head, *lines, CLOSE])

    return fmt


class AgedRow(MemoryRow):
    """The shipped middleware, its block dating each memory by its age too."""

    def start(self, run: ConversationRun, model: Any) -> None:
        self.middleware["formatter"] = aged(run.today)
        super().start(run, model)


def best_last(records: Sequence[MemoryRecord]) -> str:
    """The shipped block, its memories in reverse order: the best one last, next to the
    question (a small model leans on what it read last)."""
    return format_memories(list(reversed(records)))


def variants(ks: Sequence[int]) -> list[AnswerRow]:
    """The rows: the shipped block, then one thing changed, and the seed's RAG at each k."""
    rows: list[AnswerRow] = [MemoryRow("shipped (k=4)")]
    rows += [MemoryRow(f"k={k}", k=k) for k in ks if k != 4]
    rows.append(MemoryRow("shipped + today", show_today=True))
    rows.append(AgedRow("today and ages"))
    rows.append(MemoryRow("best last", formatter=best_last))
    rows += [GivenRow(f"seed RAG k={k}", seed_faiss_l2(k)) for k in sorted({4, *ks})]
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--model-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--distractors", type=int, default=8)
    parser.add_argument("--keep", default="user")
    parser.add_argument("--ks", default="4,10", help="memories shown, comma-separated")
    parser.add_argument("--only", default=None, help="comma-separated row names")
    parser.add_argument("--cache", default=None)
    parser.add_argument("--log", default=None, help="every scored answer (JSON lines)")
    parser.add_argument("--prompts", default=None, help="every prompt sent (JSON lines)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)

    from langchain_agentmem.rl.data import cache_dir

    questions = load_longmemeval(args.data)
    chosen = pick_questions(questions, args.questions, 0)
    stacks = haystacks(chosen, questions, distractors=args.distractors, seed=0)
    prompts: list[dict[str, Any]] = []
    rows: list[AnswerRow] = variants([int(k) for k in args.ks.split(",")])
    if args.only:
        rows = [r for r in rows if r.name in args.only.split(",")]
    rows = [Logged(r, prompts) for r in rows]
    for row in rows:
        row.system = LME_SYSTEM
    model = answering_model(args.model_url, args.model, args.cache or cache_dir() / "answers.jsonl")
    bench = AnswerBench(
        rows, model, log=args.log, run=args.keep, total=len(chosen), grouping=LME_GROUPS
    )
    started = time.time()
    embeddings = MemoisedEmbeddings(resolve_embeddings(None))
    clock = ReplayClock()
    with tempfile.TemporaryDirectory() as tmp:
        memory = AgentMemory(f"sqlite:///{Path(tmp) / 'm.db'}", embeddings=embeddings, clock=clock)
        try:
            run_longmemeval(
                stacks,
                memory=memory,
                clock=clock,
                keep=args.keep,
                ks=(5, 10),
                progress=False,
                after=LongMemEvalAnswers(bench),
            )
        finally:
            bench.close()
            memory.close()
    if args.prompts:
        with open(args.prompts, "w", encoding="utf-8") as out:
            out.writelines(json.dumps(p) + "\n" for p in prompts)
    text = "\n".join(
        [
            "# The block judged by answers on LongMemEval: python benchmarks/experiments/"
            f"lme_answer_block.py --data {args.data} --model-url {args.model_url} "
            f"--model {args.model} --questions {args.questions} --keep {args.keep} "
            f"--ks {args.ks}" + (f" --only {args.only!r}" if args.only else ""),
            "",
            f"Answer model: {args.model} (Qwen2.5-Coder-0.5B-Instruct Q4_K_M, llama.cpp), "
            f"temperature 0; {len(chosen)} questions (every type in its share, seed 0), "
            f"{args.distractors} distractor sessions each; kept: {args.keep}; system prompt: "
            "LME_SYSTEM.",
            "",
            format_lme_answers(bench.result(), model=args.model),
            f"({time.time() - started:.0f} s)",
        ]
    )
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
