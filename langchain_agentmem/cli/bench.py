"""``agentmem bench locomo``: the command-line face of the bench runner."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import langchain_agentmem.cli.longmemeval as longmemeval
from langchain_agentmem.bench.summary import format_summary, plot_recall
from langchain_agentmem.cli.args import add_command, cutoffs
from langchain_agentmem.errors import InvalidInputError, missing_extra
from langchain_agentmem.files import write_text


def add_parsers(subparsers: Any) -> None:
    """Add ``bench locomo`` and ``bench longmemeval`` to the ``agentmem`` sub-commands."""
    bench = add_command(
        subparsers,
        "bench",
        help="measure recall and speed on public benchmarks",
        examples=["agentmem bench locomo --data locomo10.json --out results.json"],
    )
    which = bench.add_subparsers(dest="bench", required=True)
    locomo = add_command(
        which,
        "locomo",
        help="evidence recall@k of each search mode and baselines on LoCoMo conversations",
        examples=[
            "agentmem bench locomo --data locomo10.json --out results.json --plot recall.png",
            "agentmem bench locomo --data locomo10.json --out results.json --budget 0.1,0.25",
        ],
    )
    locomo.add_argument("--data", required=True, help="LoCoMo JSON file (e.g. locomo_dev.json)")
    locomo.add_argument("--out", required=True, help="where to write the results (JSON)")
    locomo.add_argument(
        "--k", type=cutoffs, default=[1, 5, 10, 20], help="cut-offs, e.g. 1,5,10,20"
    )
    locomo.add_argument("--plot", default=None, help="also draw recall@k per method to this PNG")
    locomo.add_argument(
        "--embeddings", default=None, help="sentence-transformers model folder (default: bundled)"
    )
    locomo.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="torch threads for the embedding model (1 holds up best on a busy machine)",
    )
    locomo.add_argument(
        "--budget",
        default=None,
        help="also compare every memory policy with memory holding these shares of each "
        "conversation's turns, e.g. 0.1,0.25 (JSON key 'budget')",
    )
    locomo.add_argument(
        "--budget-plot", default=None, help="with --budget: recall@10 against budget to this PNG"
    )
    locomo.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_answer_arguments(locomo)
    locomo.set_defaults(func=run_bench)
    longmemeval.add_parser(which)


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"takes a whole number >= 1, got {value!r}")
    return number


def _add_answer_arguments(locomo: argparse.ArgumentParser) -> None:
    answers = locomo.add_argument_group(
        "answers",
        "with --answers, a chat model (OpenAI protocol) is asked every question from what "
        "each row shows it: no memory, the seed's plain RAG, the defaults, the whole "
        "conversation (and each policy with --budget); the defaults also with today's date "
        "told or not, whichever is not the default (today: the last session's date); JSON "
        "key 'answers'",
    )
    answers.add_argument(
        "--answers", action="store_true", help="also score what a chat model answers"
    )
    answers.add_argument(
        "--model-url", default=None, help="the model's server (default: $OPENAI_BASE_URL)"
    )
    answers.add_argument("--model", default=None, help="the model (default: $OPENAI_MODEL)")
    answers.add_argument(
        "--judge-url", default=None, help="a judge's server (default: --model-url)"
    )
    answers.add_argument(
        "--judge-model", default=None, help="a model that judges each answer CORRECT or WRONG"
    )
    answers.add_argument(
        "--context-tokens",
        type=_positive,
        default=None,
        help="the model's context, for the full-context row (default: what the server reports)",
    )
    answers.add_argument(
        "--annotate",
        action="store_true",
        help="also the defaults with the model's annotations (AgentMemory(model=...))",
    )
    answers.add_argument(
        "--questions",
        type=_positive,
        default=None,
        help="ask this many questions of each conversation, drawn at random with a fixed "
        "seed (default: all)",
    )
    answers.add_argument(
        "--cache",
        default=None,
        help="the models' answers, kept for reruns and resumed runs (default: "
        "$AGENTMEM_HOME/cache/answers.jsonl)",
    )
    answers.add_argument("--answers-plot", default=None, help="F1 against prompt tokens, a PNG")
    answers.add_argument(
        "--answers-log", default=None, help="every scored answer to this file (JSON lines)"
    )


def _checked(args: argparse.Namespace) -> list[float] | None:
    """The budgets of ``--budget`` once every flag is checked, before the long part;
    ``None`` (said on stderr) for a usage error.

    Raises:
        MissingExtraError: a plot without the ``rl`` extra, ``--answers`` without the
            ``bench`` extra.
    """
    if args.plot or args.budget_plot:  # say so before the run, not once it is done
        try:
            import matplotlib  # noqa: F401
        except ModuleNotFoundError as exc:  # the rl extra brings it
            raise missing_extra("rl", "A plot (--plot, --budget-plot)", exc) from None
    budgets: list[float] = []
    if args.budget is not None:
        from langchain_agentmem.rl.budget import parse_budgets

        try:
            budgets = parse_budgets(args.budget)
        except InvalidInputError as exc:  # a bad value of a flag: a usage error
            print(f"agentmem bench: {exc}", file=sys.stderr)
            return None
    if args.answers:
        from langchain_agentmem.bench.answer_scores import token_f1

        token_f1("a", "a")  # the stemmer: a missing extra is told before the long part
    else:
        for flag in ANSWER_FLAGS:
            if getattr(args, flag.lstrip("-").replace("-", "_")) not in (None, False):
                print(f"agentmem bench: {flag} goes with --answers", file=sys.stderr)
                return None
    return budgets


def run_bench(args: argparse.Namespace) -> int:
    """Run ``bench locomo`` with parsed arguments; print a summary table."""
    from openai import OpenAIError

    from langchain_agentmem.bench.runner import run_locomo
    from langchain_agentmem.embedding.embeddings import resolve_embeddings
    from langchain_agentmem.locomo import load_locomo
    from langchain_agentmem.memory import AgentMemory

    budgets = _checked(args)
    if budgets is None:
        return 2
    conversations, report = load_locomo(args.data)  # a missing or bad file: one line, 1
    for line in report.lines():
        print(f"note: {line}", file=sys.stderr)
    if args.torch_threads >= 1:
        import torch

        torch.set_num_threads(args.torch_threads)
    embeddings = resolve_embeddings(args.embeddings)
    with tempfile.TemporaryDirectory(prefix="agentmem-bench-") as tmp:

        def factory() -> AgentMemory:
            return AgentMemory(f"sqlite:///{Path(tmp) / 'locomo.db'}", embeddings=embeddings)

        bench = (
            answer_bench(args, conversations, budgets, Path(tmp), embeddings)
            if args.answers
            else None
        )
        try:
            result = run_locomo(
                conversations,
                memory_factory=factory,
                ks=args.k,
                report=report,
                progress=not args.no_progress,
                after=bench,
            )
        except OpenAIError as exc:  # the model's server: one line, what was got is kept
            print(
                f"agentmem bench: the model's server failed ({type(exc).__name__}: {exc}); "
                f"the answers it gave are kept in {bench.cache if bench else '-'}: run the "
                "same command again to go on from there",
                file=sys.stderr,
            )
            return 1
        finally:
            if bench is not None:
                bench.close()
    result["data"] = str(args.data)
    if bench is not None:
        result["answers"] = bench.result()
        result["answers_setup"] = answers_setup(args, report, bench)
    if budgets:
        add_policy_comparison(result, args.data, budgets, plot=args.budget_plot)
    out = Path(args.out)
    write_text(out, json.dumps(result, indent=2) + "\n", private=False)
    print(format_summary(result))
    if args.plot:
        plot_recall(result, args.plot)
    if bench is not None:
        from langchain_agentmem.bench.answers import format_answers, plot_answers

        model = result["answers_setup"]["model"]
        print()
        print(format_answers(result["answers"], model=model))
        if args.answers_plot:
            plot_answers(result["answers"], args.answers_plot, model=model)
    return 0


ANSWER_FLAGS = (
    "--model-url",
    "--model",
    "--judge-url",
    "--judge-model",
    "--context-tokens",
    "--annotate",
    "--questions",
    "--cache",
    "--answers-plot",
    "--answers-log",
)
"""The flags that only mean something with ``--answers``."""


def answer_bench(
    args: argparse.Namespace,
    conversations: list[Any],
    budgets: list[float],
    folder: Path,
    embeddings: Any,
) -> Any:
    """The :class:`~langchain_agentmem.bench.answers.AnswerBench` the flags ask for."""
    from langchain_agentmem.bench.answer_models import bench_models, server_context, server_url
    from langchain_agentmem.bench.answer_rows import (
        AnnotatedRow,
        AnswerRow,
        FullContext,
        NoMemory,
        memory_rows,
    )
    from langchain_agentmem.bench.answers import AnswerBench
    from langchain_agentmem.integrations.prompt import SHOW_TODAY
    from langchain_agentmem.memory import AgentMemory

    cache, model, judge = bench_models(
        args.model_url, args.model, args.judge_url, args.judge_model, args.cache
    )
    context = args.context_tokens or server_context(server_url(args.model_url))
    rows: list[AnswerRow] = [
        NoMemory(),
        *memory_rows(),
        FullContext(context, show_today=SHOW_TODAY),
    ]
    if args.annotate:
        from langchain_agentmem.bench.answer_models import bench_model
        from langchain_agentmem.models import ANNOTATION_TOKENS

        annotator = bench_model(args.model_url, args.model, cache, max_tokens=ANNOTATION_TOKENS)
        annotated = AgentMemory(
            f"sqlite:///{folder / 'annotated.db'}", embeddings=embeddings, model=annotator
        )
        rows.append(AnnotatedRow(annotated))
    if budgets:
        from langchain_agentmem.bench.answer_budget import PolicyPicks
        from langchain_agentmem.integrations.prompt import RECALL_K

        rows += PolicyPicks(args.data, conversations, k=RECALL_K).rows(budgets)
    total = sum(
        len(c.questions) if args.questions is None else min(args.questions, len(c.questions))
        for c in conversations
    )
    bench = AnswerBench(
        rows,
        model,
        judge=judge,
        per_conversation=args.questions,
        log=args.answers_log,
        progress=not args.no_progress,
        total=total,
        cache=cache,
    )
    return bench


def answers_setup(args: argparse.Namespace, report: Any, bench: Any) -> dict[str, Any]:
    """What the answers were asked of and how (JSON key ``answers_setup``)."""
    from langchain_agentmem.bench.answer_models import model_name, server_url
    from langchain_agentmem.bench.answer_rows import ANSWER_SYSTEM, ANSWER_TOKENS
    from langchain_agentmem.bench.judge import JUDGE_PROMPT

    return {
        "model": model_name(args.model),
        "model_url": server_url(args.model_url),
        "judge": args.judge_model,
        "judge_prompt": JUDGE_PROMPT if args.judge_model else None,
        "system_prompt": ANSWER_SYSTEM,
        "answer_tokens": ANSWER_TOKENS,
        "temperature": 0,
        "questions_per_conversation": args.questions,
        "category_5_not_asked": report.skipped_category_5,
        "rows": [row.name for row in bench.rows],
    }


def add_policy_comparison(
    result: dict[str, Any], data: str, budgets: list[float], *, plot: str | None = None
) -> None:
    """Every policy at every budget, side by side, under ``result["budget"]``.

    Policies decide turn by turn what a memory of ``budget`` x turns keeps; the questions
    are then asked of what was kept (see :func:`langchain_agentmem.rl.evaluate.evaluate`).
    """
    from langchain_agentmem.rl.evaluate import compare_policies
    from langchain_agentmem.rl.report import markdown, plot_budgets

    comparison = compare_policies(data, budgets)
    result["budget"] = comparison["budget"]
    result["learned_trained_on_these"] = comparison.get("learned_trained_on_these", [])
    print(markdown(comparison["budget"]))
    if result["learned_trained_on_these"]:
        print(
            "note: the shipped learned policy was trained on "
            f"{', '.join(result['learned_trained_on_these'])}: its figures here are not "
            "held-out (benchmarks/results/policy_locomo.md has cross-validated ones)"
        )
    if plot:
        plot_budgets(
            comparison["budget"], Path(plot), held_out=not result["learned_trained_on_these"]
        )
