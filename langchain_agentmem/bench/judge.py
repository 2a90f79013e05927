"""A chat model judging an answer CORRECT or WRONG against the gold answer, generously.

The field's LLM judges (Mem0's, A-Mem's, Zep's) accept an answer that names the same thing
as the gold answer in other words, at another length, or a date in another format; so does
this one. Its prompt is :data:`JUDGE_PROMPT`, printed on the benchmarks page.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from langchain_core.messages import HumanMessage

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

JUDGE_PROMPT = """Your task is to label an answer to a question as CORRECT or WRONG.
You are given a question, a gold answer and a generated answer.
Be generous: the generated answer is CORRECT when it names the same thing as the gold
answer, even in other words or at greater length. For a question about time, a date or
period in another format ("May 7th" for "7 May 2023") or a relative one that comes to the
same date is CORRECT. It is WRONG when it names something else, misses the point, or says
it does not know.

Question: {question}
Gold answer: {gold}
Generated answer: {answer}

Reply with one word: CORRECT or WRONG."""

JUDGE_TOKENS = 8
"""Most tokens of a judge's reply (one word)."""

_VERDICT = re.compile(r"\b(CORRECT|WRONG|INCORRECT)\b", re.IGNORECASE)


def verdict(reply: str) -> bool | None:
    """``True`` for CORRECT, ``False`` for WRONG (or INCORRECT), by the first such word of
    ``reply``; ``None`` when it holds neither (the judgement is left out)."""
    found = _VERDICT.search(reply)
    if found is None:
        return None
    return found.group(1).upper() == "CORRECT"


def judge_answer(judge: BaseChatModel, question: str, gold: str, answer: str) -> bool | None:
    """Ask ``judge`` whether ``answer`` to ``question`` is right (:func:`verdict`)."""
    prompt = JUDGE_PROMPT.format(question=question, gold=gold, answer=answer)
    reply = judge.invoke([HumanMessage(prompt)])
    return verdict(str(reply.text))


__all__ = ["JUDGE_PROMPT", "judge_answer", "verdict"]
