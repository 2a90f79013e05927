"""LongMemEval's questions answered by a chat model from what each row shows it.

The rows are the LoCoMo answers bench's (:mod:`~langchain_agentmem.bench.answer_rows`),
under a system prompt that lets the model say it does not know (:data:`LME_SYSTEM`):
LongMemEval asks some questions whose answer is "you never told me". Each question is asked
on its own haystack, with its date as today (the memory's clock). Scores per question type:

- token F1 and contains against the gold answer (:mod:`~langchain_agentmem.bench.
  answer_scores`, LoCoMo's normalisation, the whole gold answer), number words read as
  digits in both (:func:`digits`: the gold answers write "Two" and "2" alike);
- abstention questions (ids ``_abs``): right when the answer declines (:func:`declines`),
  F1 and contains both 1 or 0 by that;
- preference questions: the gold answer is a rubric ("The user would prefer ..."), which
  token overlap cannot score: F1 and contains are left out (``None``), and only a judge
  scores them;
- every answer: whether it declines, so the table shows how often a row says it does not
  know where it should not.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_agentmem.bench.answer_rows import Asked, ConversationRun
from langchain_agentmem.bench.answer_scores import bleu1, contains, token_f1
from langchain_agentmem.bench.answers import AnswerBench, Grouping, Scored
from langchain_agentmem.bench.longmemeval import ABSTENTION, SHORT_TYPES, Haystack
from langchain_agentmem.bench.longmemeval import Question as LmeQuestion
from langchain_agentmem.bench.longmemeval_runner import GROUPS
from langchain_agentmem.locomo import Conversation, Question, Turn
from langchain_agentmem.memory import AgentMemory

LME_SYSTEM = (
    "You are a helpful assistant who remembers past conversations with this user. Answer "
    "the question in a short phrase (a name, a number, a date or a few words), using the "
    "exact words you remember where you can. If nothing you remember tells, say that you "
    "do not know."
)
"""The system prompt of every LongMemEval row."""

LME_GROUPS = Grouping("by_type", GROUPS)
"""How the table splits LongMemEval's answers: the six types, then abstention."""

PREFERENCE = "single-session-preference"

_DECLINES = re.compile(
    r"\b(?:"
    r"(?:i|we)\s+(?:do\s+not|don't|dont|cannot|can't|can\s+not|could\s+not|couldn't)\s+"
    r"(?:know|recall|remember|tell|say|find|see|determine|answer)"
    r"|not\s+(?:mentioned|specified|provided|stated|enough|sure|known|available|given)"
    r"|no\s+(?:information|record|mention|memory|memories|details?|data|idea)"
    r"|(?:you|we)\s+(?:never|did\s+not|didn't|have\s+not|haven't)\s+"
    r"(?:mention|mentioned|tell|told|say|said|talk|talked|discuss|discussed|share|shared)"
    r"|(?:is|are)\s+unknown|unable\s+to|i\s+have\s+no"
    r")\b",
    re.IGNORECASE,
)


def declines(answer: str) -> bool:
    """Whether ``answer`` says it cannot know ("I don't know", "You never mentioned ...",
    "There is no information about ...")."""
    return _DECLINES.search(answer) is not None


def as_conversation(haystack: Haystack) -> Conversation:
    """``haystack`` in the shape the answer rows read: each session numbered from 1 in date
    order, each turn named by its id, spoken by ``user`` or ``assistant``."""
    turns = [
        Turn(dia_id=turn.id, session=n, speaker=turn.role, text=turn.text, date=session.date)
        for n, session in enumerate(haystack.sessions, 1)
        for turn in session.turns
    ]
    question = haystack.question
    asked = Question(question.question, question.answer, 0, question.evidence)
    return Conversation(question.id, ("user", "assistant"), tuple(turns), (asked,))


NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
_WORD_NUMBER = re.compile(r"\b(?:" + "|".join(NUMBER_WORDS) + r")\b", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:\.\d+)?|\b(?:" + "|".join(NUMBER_WORDS) + r")\b", re.IGNORECASE)


def digits(text: str) -> str:
    """``text`` with number words as digits ("Two" -> "2"): LongMemEval's gold answers write
    numbers both ways, and "2" answers "Two"."""
    return _WORD_NUMBER.sub(lambda m: NUMBER_WORDS[m.group(0).lower()], text)


def numbers(text: str) -> set[str]:
    """The numbers ``text`` names, as digits ("four" and "4" alike)."""
    return {NUMBER_WORDS.get(n.lower(), n) for n in _NUMBER.findall(text)}


def names_other_value(question: LmeQuestion, answer: str) -> bool | None:
    """For a knowledge update whose gold answer holds a number: whether ``answer`` names a
    number that only the question's other evidence states (an out-of-date value, or for a
    question about the earlier value, the newer one) and not the gold's. ``None`` where it
    cannot be told (another type, a gold answer without a number)."""
    if question.type != "knowledge-update" or question.abstention:
        return None
    gold = numbers(question.answer)
    if not gold:
        return None
    said = {t.id: t.text for s in question.sessions for t in s.turns}
    evidence = {t: said[t] for t in question.evidence if t in said}
    holding = [t for t, text in evidence.items() if gold & numbers(text)]
    other = set().union(*(numbers(text) for t, text in evidence.items() if t not in holding))
    other -= gold | set().union(*(numbers(evidence[t]) for t in holding))
    named = numbers(answer)
    return bool(named & other) and not named & gold


def score_lme(question: LmeQuestion, asked: Asked, judged: bool | None) -> Scored:
    """``asked`` scored against ``question`` (see the module)."""
    declined = declines(asked.answer)
    evidence = set(question.evidence)
    f1: float | None
    held: bool | None
    if question.abstention:
        f1, held = float(declined), declined
    elif question.type == PREFERENCE:
        f1, held = None, None
    else:
        f1 = token_f1(digits(asked.answer), digits(question.answer))
        held = contains(digits(asked.answer), digits(question.answer), 0)
    return Scored(
        conversation=question.id,
        question=question.question,
        category=question.group,
        gold=question.answer,
        answer=asked.answer,
        f1=f1,
        bleu1=bleu1(asked.answer, question.answer),
        contains=held,
        judge=judged,
        prompt_tokens=asked.prompt_tokens,
        latency_s=asked.latency_s,
        recall=len(evidence & set(asked.shown)) / len(evidence) if evidence else None,
        shown=len(asked.shown),
        declined=declined,
        stale=names_other_value(question, asked.answer),
    )


class LongMemEvalAnswers:
    """Hands each stored haystack to ``bench``'s rows (the ``after`` of
    :func:`~langchain_agentmem.bench.longmemeval_runner.run_longmemeval`)."""

    def __init__(self, bench: AnswerBench) -> None:
        self.bench = bench

    def __call__(
        self,
        memory: AgentMemory,
        haystack: Haystack,
        namespace: str,
        turns_of: dict[str, list[str]],
    ) -> None:
        question = haystack.question
        conv = as_conversation(haystack)
        dia_ids = {rid: turns[0] for rid, turns in turns_of.items() if turns}
        run = ConversationRun(conv, memory, namespace, dia_ids, today=question.date)

        def scorer(conv: Conversation, q: Question, asked: Asked, judged: bool | None) -> Scored:
            return score_lme(question, asked, judged)

        self.bench.ask(run, conv.questions, scorer)


def format_lme_answers(answers: dict[str, Any], *, model: str) -> str:
    """The LongMemEval answers table as plain text: a line a row, F1 per type (abstention:
    the share declined), then how often each row declines questions it could answer."""
    groups = LME_GROUPS.groups
    head = f"{'row':<26}{'F1':>7}{'contains':>9}{'judge':>7}" + "".join(
        f"{SHORT_TYPES[g]:>9}" for g in groups
    )
    head += f"{'declines':>9}{'tokens':>8}{'recall':>8}"
    lines = [
        f"answers by {model} (LongMemEval; token F1 per type; abstain: declined; ss-pref "
        "needs a judge: '-'; declines: share of the other questions declined)",
        head,
    ]

    def cell(value: Any, width: int, digits: int = 3) -> str:
        if value is None:
            return f"{'-':>{width}}"
        return f"{value:>{width}.{digits}f}"

    for name, r in answers.items():
        by = r["by_type"]
        others = [by[g] for g in groups if g != ABSTENTION and by[g]["n"]]
        asked = sum(g["n"] for g in others)
        wrongly = sum(g.get("declined", 0.0) * g["n"] for g in others)
        lines.append(
            f"{name:<26}{cell(r['f1'], 7)}{cell(r['contains'], 9)}{cell(r['judge'], 7)}"
            + "".join(cell(by[g]["f1"], 9) for g in groups)
            + f"{cell(wrongly / asked if asked else None, 9)}{cell(r['prompt_tokens'], 8, 0)}"
            + f"{cell(r['evidence_recall'], 8)}"
        )
    first = next(iter(answers.values()), None)
    if first is not None:
        counts = ", ".join(f"{SHORT_TYPES[g]} {first['by_type'][g]['n']}" for g in groups)
        lines.append(f"questions per row: {first['n']} ({counts})")
        lines.append(
            "knowledge updates whose gold answer is a number: the answer names the gold "
            "value / a value only the other evidence states:"
        )
        for name, r in answers.items():
            update = r["by_type"]["knowledge-update"]
            if update.get("stale_n"):
                lines.append(
                    f"  {name:<24} {cell(update['contains'], 5)} / {cell(update['stale'], 5)}"
                    f" (of {update['n']}; {update['stale_n']} with a number)"
                )
    return "\n".join(lines)


__all__ = [
    "LME_GROUPS",
    "LME_SYSTEM",
    "LongMemEvalAnswers",
    "as_conversation",
    "declines",
    "digits",
    "format_lme_answers",
    "names_other_value",
    "numbers",
    "score_lme",
]
