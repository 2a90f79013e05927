"""What the lexical index sees of a record (never what search returns as ``.text``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

from langchain_agentmem.index.lexical import tokenize
from langchain_agentmem.text.replies import asks, only_asks
from langchain_agentmem.types import from_epoch

TERMS_FORMAT = "t1"
"""The first word of what :func:`stored_terms` writes. Bump it when :func:`tokenize` or
:func:`~langchain_agentmem.text.replies.only_asks` read a text otherwise (a test holds a
digest of what they read of sample texts): rows of the old format are then read from their
text again, as rows written before the column existed are."""


class TextTerms(NamedTuple):
    """What the lexical index reads of a text (:func:`text_terms`)."""

    counts: Counter[str]
    """Its terms (:func:`tokenize`), counted."""
    asks_only: bool
    """Whether it only asks (:func:`~langchain_agentmem.text.replies.only_asks`)."""


def text_terms(text: str) -> TextTerms:
    """Read ``text`` as the lexical index does (an add does it before taking the lock)."""
    return TextTerms(Counter(tokenize(text)), only_asks(text))


def stored_terms(text: str, read: TextTerms | None = None) -> str:
    """What a record's row keeps of ``text`` for the lexical index (its ``terms`` column):
    :data:`TERMS_FORMAT`, whether it only asks (``1`` or ``0``), and its terms, each as often
    as it occurs, space-separated (``read``: :func:`text_terms` of ``text``, when done).

    Written with the text, so loading a namespace reads each record's terms instead of
    reading every text again (most of what a load costs).
    """
    read = text_terms(text) if read is None else read
    return f"{TERMS_FORMAT} {int(read.asks_only)} {' '.join(read.counts.elements())}"


def read_stored_terms(stored: str | None) -> TextTerms | None:
    """What :func:`stored_terms` wrote, read back; ``None`` when nothing of this format is
    stored (read the text then)."""
    if not stored or not stored.startswith(TERMS_FORMAT + " "):
        return None
    _, asks_only, words = stored.split(" ", 2)
    return TextTerms(Counter(words.split()), asks_only == "1")


def reply_texts(
    speakers: Sequence[object], sessions: Sequence[object], texts: Sequence[str]
) -> list[str]:
    """For turns in order, what each replies to: the turn before it in the same session when
    another speaker said it, else ``""`` (how a conversation's turns fill ``reply_to``)."""
    return [
        texts[i - 1]
        if i and sessions[i - 1] == sessions[i] and speakers[i - 1] != speakers[i]
        else ""
        for i in range(len(texts))
    ]


def lexical_counts(
    text: str,
    created_at: float | None,
    *,
    dates: bool,
    reply_to: str = "",
    reply_weight: float = 0.0,
    terms: Counter[str] | None = None,
) -> Counter[str]:
    """The term counts the lexical index holds for a record: its text and date (see
    :func:`lexical_text`) and, when the message it replies to asks something (holds a
    "?"), each term of that message at ``reply_weight``.

    The question lets a short answer ("A sunrise!") match what it answers ("What did you
    paint?"); its terms count for less than the record's own, so a record that says a
    thing outranks one that only answers about it. A reply to a statement ("Really? I
    didn't see that coming." after "I adopted a cat.") takes none of its words: it would
    otherwise crowd out the statement. ``terms``: the text already tokenised.
    """
    # The date in front of the text (lexical_text) tokenises apart from it: its terms are
    # read once a day, not once a record.
    day = _date_terms(int(created_at // 86400)) if dates and created_at is not None else ()
    if terms is None:
        counts = Counter(tokenize(text) + list(day) if day else tokenize(text))
    else:
        counts = Counter(terms)
        for term in day:
            counts[term] += 1
    if reply_weight > 0 and asks(reply_to):
        for term, n in Counter(tokenize(reply_to)).items():
            counts[term] += reply_weight * n  # type: ignore[assignment]
    return counts


@lru_cache(maxsize=4096)
def _date_terms(day: int) -> tuple[str, ...]:
    """The terms of the date in front of a record written on UTC ``day`` (days since 1970),
    each as often as it occurs."""
    return tuple(tokenize(lexical_text("", day * 86400.0, dates=True)))


def lexical_text(text: str, created_at: float | None, *, dates: bool) -> str:
    """The record text, with its date in front when ``dates`` (``"[8 May 2023] ..."``).

    The date (UTC, from the record's timestamp) lets BM25 match questions that name a month
    or a year, and evens out BM25's length normalisation across short turns.
    """
    if not dates or created_at is None:
        return text
    day = from_epoch(created_at)
    return f"[{day.day} {day:%B %Y}] {text}"
