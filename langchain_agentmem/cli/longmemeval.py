"""``agentmem bench longmemeval``: recall (and a model's answers) on a user's chats with an
assistant, each question in its own haystack, one table per thing kept."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from langchain_agentmem.cli.args import add_command, cutoffs, positive_int, whole_number
from langchain_agentmem.files import write_text

KEEP_NAMES = ("user", "user+assistant")
"""What ``--keep`` may name (``bench.longmemeval_runner.KEEPS``; kept here so ``--help``
imports nothing heavy)."""


def _keeps(value: str) -> list[str]:
    names = [part.strip() for part in value.split(",") if part.strip()]
    wrong = [n for n in names if n not in KEEP_NAMES]
    if not names or wrong:
        raise argparse.ArgumentTypeError(
            f"--keep takes a comma-separated list of {', '.join(KEEP_NAMES)}; got {value!r}"
        )
    return list(dict.fromkeys(names))


def add_parser(which: Any) -> None:
    """Add ``bench longmemeval`` to the ``bench`` sub-commands."""
    lme = add_command(
        which,
        "longmemeval",
        help="evidence and session recall@k per question type on LongMemEval (a user's chats "
        "with an assistant)",
        examples=[
            "agentmem bench longmemeval --data longmemeval_oracle.json --out lme.json",
            "agentmem bench longmemeval --data longmemeval_oracle.json --out lme.json "
            "--questions 60 --answers --answer-questions 30",
        ],
    )
    lme.add_argument(
        "--data", required=True, help="LongMemEval JSON (e.g. longmemeval_oracle.json)"
    )
    lme.add_argument("--out", required=True, help="where to write the results (JSON)")
    lme.add_argument("--k", type=cutoffs, default=[1, 5, 10], help="cut-offs, e.g. 1,5,10")
    lme.add_argument(
        "--distractors",
        type=whole_number,
        default=8,
        help="sessions of other questions in each haystack (none dated after the question)",
    )
    lme.add_argument(
        "--questions",
        type=positive_int,
        default=None,
        help="this many questions, every type in its share, drawn with --seed (default: all)",
    )
    lme.add_argument("--seed", type=whole_number, default=0, help="draws questions and distractors")
    lme.add_argument(
        "--keep",
        type=_keeps,
        default=list(KEEP_NAMES),
        help="what long-term memory keeps, a table each: the user's words; and the assistant's "
        "replies too",
    )
    lme.add_argument(
        "--ingest-sample",
        type=whole_number,
        default=2,
        help="haystacks stored again cold (the model embedding every text), each thing kept, "
        "timed beside a bare embedding of the same texts (0: none)",
    )
    lme.add_argument(
        "--embeddings", default=None, help="sentence-transformers model folder (default: bundled)"
    )
    lme.add_argument("--torch-threads", type=int, default=1, help="torch threads for the model")
    lme.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_answer_arguments(lme)
    lme.set_defaults(func=run_bench)


def _add_answer_arguments(lme: argparse.ArgumentParser) -> None:
    """``--answers`` and what a model's answers need."""
    answers = lme.add_argument_group(
        "answers",
        "with --answers, a chat model (OpenAI protocol) answers each question from what each "
        "row shows it (no memory, the seed's plain RAG, the defaults with and without today's "
        "date, the whole haystack cut to the model's context); JSON key 'answers'",
    )
    answers.add_argument("--answers", action="store_true", help="also score a model's answers")
    answers.add_argument(
        "--answer-questions",
        type=positive_int,
        default=None,
        help="answer only N of the questions drawn, every type in its share (default: all)",
    )
    answers.add_argument(
        "--answer-rows",
        type=_row_names,
        default=None,
        help="answer only these rows, by name (comma-separated: no-memory, seed-faiss-l2, "
        "agentmem-hybrid, agentmem-hybrid+today, full-context; default: all), e.g. the "
        "memory's rows alone for another thing kept, whose other rows it does not change",
    )
    answers.add_argument("--model-url", default=None, help="the model's server ($OPENAI_BASE_URL)")
    answers.add_argument("--model", default=None, help="the model (default: $OPENAI_MODEL)")
    answers.add_argument(
        "--judge-url", default=None, help="a judge's server (default: --model-url)"
    )
    answers.add_argument(
        "--judge-model", default=None, help="a model that judges each answer (rubrics too)"
    )
    answers.add_argument(
        "--context-tokens",
        type=positive_int,
        default=None,
        help="the model's context, for the full-context row (default: what the server reports)",
    )
    answers.add_argument(
        "--cache",
        default=None,
        help="the models' answers, kept for reruns (default: $AGENTMEM_HOME/cache/answers.jsonl)",
    )
    answers.add_argument("--answers-log", default=None, help="every scored answer (JSON lines)")


def _unknown_rows(names: tuple[str, ...] | None) -> str | None:
    """What is wrong with ``--answer-rows`` (``None``: nothing)."""
    from langchain_agentmem.bench.answer_rows import FullContext, NoMemory, memory_rows

    known = [NoMemory.name, *(row.name for row in memory_rows()), FullContext.name]
    unknown = [name for name in names or () if name not in known]
    if unknown:
        return f"--answer-rows names no row {', '.join(unknown)}; the rows: {', '.join(known)}"
    return None


def _row_names(value: str) -> tuple[str, ...]:
    """``--answer-rows``: row names, comma-separated."""
    names = tuple(name.strip() for name in value.split(",") if name.strip())
    if not names:
        raise argparse.ArgumentTypeError("name at least one row, e.g. agentmem-hybrid")
    return names


ANSWER_FLAGS = (
    "--answer-questions",
    "--answer-rows",
    "--model-url",
    "--model",
    "--judge-url",
    "--judge-model",
    "--context-tokens",
    "--cache",
    "--answers-log",
)


def _usage_error(args: argparse.Namespace) -> str | None:
    if args.answers:
        from langchain_agentmem.bench.answer_scores import token_f1

        token_f1("a", "a")  # the stemmer: a missing extra is told before the long part
        return _unknown_rows(args.answer_rows)
    for flag in ANSWER_FLAGS:
        if getattr(args, flag.lstrip("-").replace("-", "_")) not in (None, False):
            return f"{flag} goes with --answers"
    return None


def run_bench(args: argparse.Namespace) -> int:
    """Run ``bench longmemeval`` with parsed arguments; print a table per thing kept."""
    from openai import OpenAIError

    from langchain_agentmem.bench.longmemeval import haystacks, load_longmemeval, pick_questions
    from langchain_agentmem.bench.longmemeval_runner import (
        ReplayClock,
        ingest_cost,
        run_longmemeval,
    )
    from langchain_agentmem.bench.longmemeval_summary import format_lme_summary
    from langchain_agentmem.bench.memoised import MemoisedEmbeddings
    from langchain_agentmem.embedding.embeddings import resolve_embeddings
    from langchain_agentmem.memory import AgentMemory

    problem = _usage_error(args)
    if problem is not None:
        print(f"agentmem bench: {problem}", file=sys.stderr)
        return 2
    questions = load_longmemeval(args.data)  # a missing or bad file: one line, 1
    chosen = pick_questions(questions, args.questions, args.seed)
    stacks = haystacks(chosen, questions, distractors=args.distractors, seed=args.seed)
    if args.torch_threads >= 1:
        import torch

        torch.set_num_threads(args.torch_threads)
    # A session sits in many haystacks: each text is embedded once, by the model itself.
    embeddings = MemoisedEmbeddings(resolve_embeddings(args.embeddings))
    result: dict[str, Any] = {
        "data": str(args.data),
        "seed": args.seed,
        "distractors": args.distractors,
        "questions_drawn": len(chosen),
        "runs": {},
    }
    clock = ReplayClock()
    with tempfile.TemporaryDirectory(prefix="agentmem-lme-") as tmp:
        memory = AgentMemory(
            f"sqlite:///{Path(tmp) / 'longmemeval.db'}", embeddings=embeddings, clock=clock
        )
        try:
            for i, keep in enumerate(args.keep):
                bench = _answers(args, chosen, keep, first=i == 0) if args.answers else None
                try:
                    run = run_longmemeval(
                        stacks,
                        memory=memory,
                        clock=clock,
                        keep=keep,
                        ks=args.k,
                        progress=not args.no_progress,
                        after=bench,
                    )
                except OpenAIError as exc:
                    print(
                        f"agentmem bench: the model's server failed ({type(exc).__name__}: "
                        f"{exc}); the answers it gave are kept in the cache: run the same "
                        "command again to go on from there",
                        file=sys.stderr,
                    )
                    return 1
                finally:
                    if bench is not None:
                        bench.close()
                if bench is not None:
                    run["answers"] = bench.result()
                result["runs"][keep] = run
        finally:
            memory.close()
        if args.ingest_sample:
            base = embeddings.base
            result["ingest"] = ingest_cost(stacks[: args.ingest_sample], base, Path(tmp))
    result["embedded_texts"] = embeddings.embedded
    if args.answers:
        result["answers_setup"] = _answers_setup(args)
    out = Path(args.out)
    write_text(out, json.dumps(result, indent=2) + "\n", private=False)
    print(format_lme_summary(result))
    return 0


class _Answering:
    """The answers bench of one thing kept, asking only the questions ``asked`` names."""

    def __init__(self, bench: Any, asked: set[str]) -> None:
        self.bench = bench
        self.asked = asked

    def __call__(self, memory: Any, haystack: Any, namespace: str, turns_of: Any) -> None:
        if haystack.question.id in self.asked:
            self.bench(memory, haystack, namespace, turns_of)

    def close(self) -> None:
        self.bench.bench.close()

    def result(self) -> dict[str, Any]:
        result: dict[str, Any] = self.bench.bench.result()
        return result


def _answers(args: argparse.Namespace, chosen: list[Any], keep: str, *, first: bool) -> _Answering:
    """The rows the flags ask for, for one thing kept (no memory and full context: the first
    only, as what is stored does not change them)."""
    from langchain_agentmem.bench.answer_models import bench_models, server_context, server_url
    from langchain_agentmem.bench.answer_rows import AnswerRow, FullContext, NoMemory, memory_rows
    from langchain_agentmem.bench.answers import AnswerBench
    from langchain_agentmem.bench.longmemeval import pick_questions
    from langchain_agentmem.bench.longmemeval_answers import (
        LME_GROUPS,
        LME_SYSTEM,
        LongMemEvalAnswers,
    )
    from langchain_agentmem.integrations.prompt import SHOW_TODAY

    cache, model, judge = bench_models(
        args.model_url, args.model, args.judge_url, args.judge_model, args.cache
    )
    rows: list[AnswerRow] = [NoMemory()] if first else []
    rows += memory_rows()
    if first:
        context = args.context_tokens or server_context(server_url(args.model_url))
        rows.append(FullContext(context, show_today=SHOW_TODAY))
    if args.answer_rows is not None:
        rows = [row for row in rows if row.name in args.answer_rows]
    for row in rows:
        row.system = LME_SYSTEM
    # a smaller draw of the same kind: every type in its share
    asked = {q.id for q in pick_questions(chosen, args.answer_questions, args.seed)}
    bench = AnswerBench(
        rows,
        model,
        judge=judge,
        log=args.answers_log,
        run=keep,
        fresh_log=first,
        progress=not args.no_progress,
        total=len(asked),
        cache=cache,
        grouping=LME_GROUPS,
    )
    return _Answering(LongMemEvalAnswers(bench), asked)


def _answers_setup(args: argparse.Namespace) -> dict[str, Any]:
    from langchain_agentmem.bench.answer_models import model_name, server_url
    from langchain_agentmem.bench.answer_rows import ANSWER_TOKENS
    from langchain_agentmem.bench.judge import JUDGE_PROMPT
    from langchain_agentmem.bench.longmemeval_answers import LME_SYSTEM

    return {
        "model": model_name(args.model),
        "model_url": server_url(args.model_url),
        "judge": args.judge_model,
        "judge_prompt": JUDGE_PROMPT if args.judge_model else None,
        "system_prompt": LME_SYSTEM,
        "answer_tokens": ANSWER_TOKENS,
        "temperature": 0,
        "answer_questions": args.answer_questions,
    }


__all__ = ["add_parser", "run_bench"]
