"""Answers, not evidence: a chat model asked every LoCoMo question from what each row shows.

:class:`AnswerBench` runs beside the recall bench (:func:`~langchain_agentmem.bench.runner.
run_locomo` hands it each conversation once it is stored): for every row
(:mod:`~langchain_agentmem.bench.answer_rows`) it asks the conversation's questions one after
another (a server that reuses the prompt prefix reads a full conversation once), scores each
answer (:mod:`~langchain_agentmem.bench.answer_scores`; a judge's verdict when one is given)
and sums the scores per row, overall and per question category.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm import tqdm

from langchain_agentmem.bench.answer_rows import AnswerRow, Asked, ConversationRun
from langchain_agentmem.bench.answer_scores import bleu1, contains, locomo_f1
from langchain_agentmem.bench.judge import judge_answer
from langchain_agentmem.bench.metrics import percentile_ms
from langchain_agentmem.errors import missing_extra
from langchain_agentmem.files import open_private, write_figure
from langchain_agentmem.locomo import Conversation, Question
from langchain_agentmem.memory import AgentMemory

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

CATEGORY_IDS = ("1", "2", "3", "4")
"""LoCoMo's question categories scored, as the JSON keys them: 1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop."""


@dataclass
class Scored:
    """One row's answer to one question, scored."""

    conversation: str
    question: str
    category: int | str
    """LoCoMo's category; LongMemEval's question type (or ``abstention``)."""
    gold: str
    answer: str
    f1: float | None
    """``None``: not scored without a judge (a LongMemEval preference rubric)."""
    bleu1: float
    contains: bool | None
    judge: bool | None
    prompt_tokens: int
    latency_s: float | None
    recall: float | None
    """The share of the question's evidence turns the model was shown (``None``: the
    question names no evidence)."""
    shown: int
    declined: bool | None = None
    """Whether the answer says it cannot know (scored on LongMemEval only)."""
    stale: bool | None = None
    """A knowledge update's answer that names a value only its other evidence holds, not
    the gold one (LongMemEval; ``None``: not told)."""


def sample_questions(conv: Conversation, n: int | None, seed: int = 0) -> list[Question]:
    """The first ``n`` of ``conv``'s questions in an order shuffled by ``seed`` and the
    conversation's id (so every row and run asks the same, and a smaller ``n`` asks a part
    of what a larger one asks), in the conversation's order; all of them when ``n`` is
    ``None`` or not below their number."""
    questions = list(conv.questions)
    if n is None or n >= len(questions):
        return questions
    order = list(range(len(questions)))
    random.Random(f"{seed}:{conv.sample_id}").shuffle(order)
    chosen = set(order[:n])
    return [q for i, q in enumerate(questions) if i in chosen]


Scorer = Callable[[Conversation, Question, Asked, "bool | None"], Scored]
"""Scores one answer: the conversation, the question, what the row answered, a judge's
verdict (``None``: no judge)."""


def score(conv: Conversation, question: Question, asked: Asked, judged: bool | None) -> Scored:
    """``asked`` scored against ``question``'s gold answer and evidence."""
    evidence = set(question.evidence)
    recall = len(evidence & set(asked.shown)) / len(evidence) if evidence else None
    return Scored(
        conversation=conv.sample_id,
        question=question.question,
        category=question.category,
        gold=question.answer,
        answer=asked.answer,
        f1=locomo_f1(asked.answer, question.answer, question.category),
        bleu1=bleu1(asked.answer, question.answer),
        contains=contains(asked.answer, question.answer, question.category),
        judge=judged,
        prompt_tokens=asked.prompt_tokens,
        latency_s=asked.latency_s,
        recall=recall,
        shown=len(asked.shown),
    )


def _mean(values: Sequence[float | bool | None]) -> float | None:
    """The mean of the values that are not ``None`` (``None`` when none is)."""
    known = [float(v) for v in values if v is not None]
    return round(sum(known) / len(known), 4) if known else None


def _means(rows: Sequence[Scored]) -> dict[str, Any]:
    out = {
        "f1": _mean([r.f1 for r in rows]),
        "bleu1": _mean([r.bleu1 for r in rows]),
        "contains": _mean([r.contains for r in rows]),
        "judge": _mean([r.judge for r in rows]),
        "n": len(rows),
    }
    declined = [r.declined for r in rows if r.declined is not None]
    if declined:
        out["declined"] = _mean(declined)
    stale = [r.stale for r in rows if r.stale is not None]
    if stale:
        out["stale"] = _mean(stale)
        out["stale_n"] = len(stale)
    return out


@dataclass(frozen=True)
class Grouping:
    """How a table splits answers: the JSON key and the groups, by ``Scored.category``."""

    key: str
    groups: tuple[str, ...]


LOCOMO_GROUPS = Grouping("by_category", CATEGORY_IDS)
"""LoCoMo's categories."""


def summarise(rows: Sequence[Scored], grouping: Grouping = LOCOMO_GROUPS) -> dict[str, Any]:
    """A row's scores: means overall and per group, prompt tokens, latency, recall."""
    out = _means(rows)
    out["judged"] = sum(1 for r in rows if r.judge is not None)
    out[grouping.key] = {
        c: _means([r for r in rows if str(r.category) == c]) for c in grouping.groups
    }
    out["prompt_tokens"] = round(float(np.mean([r.prompt_tokens for r in rows])), 1) if rows else 0
    latencies = [r.latency_s for r in rows if r.latency_s is not None]
    out["latency_p50_ms"] = round(percentile_ms(latencies, 50), 1) if latencies else None
    out["latency_p95_ms"] = round(percentile_ms(latencies, 95), 1) if latencies else None
    recalls = [r.recall for r in rows if r.recall is not None]
    out["evidence_recall"] = round(float(np.mean(recalls)), 4) if recalls else None
    out["shown"] = round(float(np.mean([r.shown for r in rows])), 2) if rows else 0
    return out


class AnswerBench:
    """Every row's answers to every conversation handed to it, scored.

    Args:
        rows: The rows, in the table's order.
        model: The chat model that answers (give it a cache: a rerun then costs nothing).
        judge: A chat model that judges each answer, or ``None``.
        per_conversation: Ask this many questions of each conversation
            (:func:`sample_questions`; ``None``: all).
        log: A file that gets every scored answer, one JSON object a line.
        progress: Show a progress bar.
        total: Questions to expect in all (for the progress bar).
        cache: Where the model's answers are kept (said when a run stops early).
        grouping: How the table splits answers (LoCoMo's categories by default).
        run: Named in each line of ``log`` (several benches of one run share it: the first
            empties it, the others pass ``fresh_log=False``).
        fresh_log: Empty ``log`` first.
    """

    def __init__(
        self,
        rows: Sequence[AnswerRow],
        model: BaseChatModel,
        *,
        judge: BaseChatModel | None = None,
        per_conversation: int | None = None,
        log: str | Path | None = None,
        progress: bool = True,
        total: int | None = None,
        cache: str | Path | None = None,
        grouping: Grouping = LOCOMO_GROUPS,
        run: str | None = None,
        fresh_log: bool = True,
    ) -> None:
        self.rows = list(rows)
        self.run = run
        self.grouping = grouping
        self.cache = cache
        self.model = model
        self.judge = judge
        self.per_conversation = per_conversation
        self.log = Path(log) if log is not None else None
        self.scored: dict[str, list[Scored]] = {row.name: [] for row in self.rows}
        self.bar = tqdm(
            total=None if total is None else total * len(self.rows),
            desc="answers",
            unit="answer",
            disable=not progress,
            dynamic_ncols=True,
        )
        if self.log is not None:  # the answers quote the conversations: owner-only
            os.close(open_private(self.log, os.O_WRONLY | (os.O_TRUNC if fresh_log else 0)))

    def __call__(self, memory: AgentMemory, conv: Conversation, namespace: str) -> None:
        """Ask every row ``conv``'s questions (stored in ``memory`` under ``namespace``)."""
        run = ConversationRun.of(conv, memory, namespace)
        self.ask(run, sample_questions(conv, self.per_conversation), score)

    def ask(self, run: ConversationRun, questions: Sequence[Question], scorer: Scorer) -> None:
        """Ask every row ``questions`` of ``run``, each answer scored by ``scorer``."""
        conv = run.conv
        for row in self.rows:
            self.bar.set_postfix_str(f"{conv.sample_id}: {row.name}")
            row.start(run, self.model)
            for question in questions:
                asked = row.ask(run, question)
                judged = (
                    None
                    if self.judge is None
                    else judge_answer(self.judge, question.question, question.answer, asked.answer)
                )
                scored = scorer(conv, question, asked, judged)
                self.scored[row.name].append(scored)
                if self.log is not None:
                    fd = open_private(self.log, os.O_WRONLY | os.O_APPEND)
                    with os.fdopen(fd, "a", encoding="utf-8") as out:
                        named = {"run": self.run} if self.run is not None else {}
                        line = {"row": row.name, **named, **asdict(scored)}
                        out.write(json.dumps(line) + "\n")
                self.bar.update(1)

    def close(self) -> None:
        """Close the progress bar."""
        self.bar.close()

    def result(self) -> dict[str, Any]:
        """Each row's :func:`summarise`, with what the row says of itself, by row name."""
        return {
            row.name: {**summarise(self.scored[row.name], self.grouping), **row.describe()}
            for row in self.rows
        }


def format_answers(answers: dict[str, Any], *, model: str) -> str:
    """The answers table as plain text: a line a row, F1 per category."""
    head = (
        f"{'row':<24}{'F1':>7}{'BLEU-1':>8}{'contains':>9}{'judge':>7}"
        f"{'multi-hop':>10}{'temporal':>9}{'open-dom':>9}{'single':>8}"
        f"{'tokens':>8}{'p50 ms':>8}{'recall':>8}"
    )
    lines = [f"answers by {model} (LoCoMo token F1; per category: F1)", head]

    def cell(value: Any, width: int, digits: int = 3) -> str:
        if value is None:
            return f"{'-':>{width}}"
        return f"{value:>{width}.{digits}f}"

    for name, r in answers.items():
        cats = "".join(
            cell(r["by_category"][c]["f1"], w)
            for c, w in zip(CATEGORY_IDS, (10, 9, 9, 8), strict=True)
        )
        lines.append(
            f"{name:<24}{cell(r['f1'], 7)}{cell(r['bleu1'], 8)}{cell(r['contains'], 9)}"
            f"{cell(r['judge'], 7)}{cats}{cell(r['prompt_tokens'], 8, 0)}"
            f"{cell(r['latency_p50_ms'], 8, 0)}{cell(r['evidence_recall'], 8)}"
        )
    first = next(iter(answers.values()), None)
    if first is not None:
        counts = ", ".join(f"{c}: {first['by_category'][c]['n']}" for c in CATEGORY_IDS)
        lines.append(f"questions per row: {first['n']} (by category {counts})")
    for name, r in answers.items():
        if "turns_cut" in r:
            lines.append(
                f"{name}: {r['turns_cut']} of {r['turns']} turns cut from the oldest end to fit "
                f"{r['context_tokens']} tokens"
            )
    return "\n".join(lines)


def plot_answers(answers: dict[str, Any], path: str | Path, *, model: str) -> None:
    """F1 against prompt tokens per question, a point per row, to a PNG."""
    try:
        import matplotlib
    except ModuleNotFoundError as exc:
        raise missing_extra("bench", "A plot (--answers-plot)", exc) from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, r in answers.items():
        tokens = max(float(r["prompt_tokens"]), 1.0)
        ax.scatter([tokens], [r["f1"]], s=40)
        ax.annotate(name, (tokens, r["f1"]), textcoords="offset points", xytext=(6, 4), fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("prompt tokens per question (mean, log scale)")
    ax.set_ylabel("LoCoMo token F1")
    ax.set_title(f"Answers by {model}, LoCoMo categories 1-4")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    write_figure(fig, path, dpi=120)
    plt.close(fig)


__all__ = [
    "CATEGORY_IDS",
    "LOCOMO_GROUPS",
    "AnswerBench",
    "Grouping",
    "Scored",
    "Scorer",
    "format_answers",
    "plot_answers",
    "sample_questions",
    "score",
    "summarise",
]
