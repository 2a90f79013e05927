"""How an answer is scored against LoCoMo's gold answer.

- :func:`locomo_f1`: LoCoMo's own token F1 (its ``task_eval/evaluation.py``): lower case,
  commas, punctuation and the words *a, an, the, and* removed, each word Porter-stemmed
  (nltk's stemmer, as LoCoMo's); a multi-hop gold answer (category 1) is split at commas
  and each part matched with the best part of the answer; an open-domain gold answer
  (category 3) counts up to its first ``;``.
- :func:`bleu1`: BLEU-1 as A-Mem and Memory-R1 report it (nltk's ``sentence_bleu`` with
  weights ``(1, 0, 0, 0)``): clipped unigram precision times the brevity penalty, over
  lower-cased word and punctuation tokens.
- :func:`contains`: the normalised gold answer appears, word for word, in the normalised
  answer.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Callable
from functools import cache

from langchain_agentmem.errors import missing_extra

_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_TOKENS = re.compile(r"\w+|[^\w\s]")


@cache
def _stemmer() -> Callable[[str], str]:
    try:
        from nltk.stem import PorterStemmer
    except ModuleNotFoundError as exc:
        raise missing_extra(
            "bench", "Scoring answers (agentmem bench locomo --answers)", exc
        ) from None
    stem: Callable[[str], str] = PorterStemmer().stem
    return stem


def normalize_answer(text: str) -> str:
    """``text`` as LoCoMo compares answers: lower case, without commas, punctuation and
    the words *a, an, the, and*, single-spaced."""
    text = text.replace(",", "").lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def stems(text: str) -> list[str]:
    """The Porter stems of the words of :func:`normalize_answer` ``(text)``."""
    stem = _stemmer()
    return [stem(word) for word in normalize_answer(text).split()]


def token_f1(prediction: str, gold: str) -> float:
    """Token F1 of the stemmed, normalised words of ``prediction`` against ``gold``."""
    predicted, wanted = stems(prediction), stems(gold)
    same = sum((Counter(predicted) & Counter(wanted)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(wanted)
    return 2 * precision * recall / (precision + recall)


def gold_answer(gold: str, category: int) -> str:
    """The part of a gold answer LoCoMo scores: an open-domain answer (category 3) up to
    its first ``;``, the rest whole."""
    return gold.split(";")[0].strip() if category == 3 else gold


def locomo_f1(prediction: str, gold: str, category: int) -> float:
    """LoCoMo's F1 of an answer to a question of ``category`` (1 to 4).

    Multi-hop (1): the mean, over the comma-separated parts of ``gold``, of the best
    :func:`token_f1` with a comma-separated part of ``prediction``; the others:
    :func:`token_f1` with :func:`gold_answer`.
    """
    gold = gold_answer(gold, category)
    if category != 1:
        return token_f1(prediction, gold)
    predicted = [p.strip() for p in prediction.split(",")]
    wanted = [g.strip() for g in gold.split(",")]
    return sum(max(token_f1(p, g) for p in predicted) for g in wanted) / len(wanted)


def _tokens(text: str) -> list[str]:
    return _TOKENS.findall(text.lower())


def bleu1(prediction: str, gold: str) -> float:
    """BLEU-1 of ``prediction`` against the one reference ``gold`` (0.0 with no word in
    common, as nltk's ``sentence_bleu`` returns)."""
    predicted, wanted = _tokens(prediction), _tokens(gold)
    if not predicted or not wanted:
        return 0.0
    clipped = sum((Counter(predicted) & Counter(wanted)).values())
    if clipped == 0:
        return 0.0
    c, r = len(predicted), len(wanted)
    brevity = 1.0 if c > r else math.exp(1 - r / c)
    return brevity * clipped / c


def contains(prediction: str, gold: str, category: int) -> bool:
    """Whether the normalised :func:`gold_answer` appears word for word in the normalised
    ``prediction`` (an empty gold answer is never contained)."""
    wanted = normalize_answer(gold_answer(gold, category))
    return bool(wanted) and f" {wanted} " in f" {normalize_answer(prediction)} "


__all__ = [
    "bleu1",
    "contains",
    "gold_answer",
    "locomo_f1",
    "normalize_answer",
    "stems",
    "token_f1",
]
