"""What a record replies to: the metadata key and how it is read.

A user's answer often says little on its own ("A sunrise over the lake!"); what it is about
sits in the question before it ("What did you paint last weekend?"). Surfaces store that
question under :data:`REPLY_TO`; search reads its words and policies read that it answered.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from langchain_agentmem.text.sentences import MIN_WORDS, pieces

REPLY_TO = "reply_to"
"""Metadata key of the message a record answers ("What did you paint?" for "A sunrise!")."""

REPLY_TO_ID = "reply_to_id"
"""Metadata key of the id of the stored record whose words :data:`REPLY_TO` copies: set by
the store when the reply is written (the newest earlier record of its thread whose question
it copies), so forgetting that record finds the copy by id, however the words were spaced."""


MAX_QUESTION_CHARS = 300
"""Longest question kept as what a message replies to (one or two sentences)."""

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")

MEMORY_SHAPE = re.compile(
    r"\[(?:(?:\d{4}-\d{2}-\d{2}|\d{1,2} [A-Z][a-z]+ \d{4})(?:,? \d{2}:\d{2}(?::\d{2})? UTC)?"
    r"|undated)\]|\((?:replying to|id) \""
)
"""A memory line as the prompt shows memories (``[18 December 2026, 19:42 UTC] user
(replying to "...")``, or its ISO dates of earlier releases): a model that echoes one wrote
no question of its own there."""

_DATA = re.compile(r"^\s*(?:```\w*\s*)?(?:\{\s*\"|\[\s*[{\"\[])")
"""A reply that is data (a JSON object or list, fenced or not): a model that answers so
(echoing the prompt's fields: "date", "who said it", "question") asked nothing of its own."""


def question_of(text: str) -> str:
    """What of ``text`` a reply to it is kept with: its last sentence that asks something,
    with the sentence before it when both fit in :data:`MAX_QUESTION_CHARS`; ``""`` when no
    sentence asks, or the question alone is longer.

    A reply is about the question it answers, never about the rest of a long message (a
    model's run-on reply, say): only that question is stored, and read. Lines shaped like
    the prompt's memory lines (:data:`MEMORY_SHAPE`) are never read as the question, nor is
    a reply that is data (a JSON object or list).
    """
    if "?" not in text or _DATA.match(text):
        return ""
    if MEMORY_SHAPE.search(text):
        text = "\n".join(line for line in text.splitlines() if not MEMORY_SHAPE.search(line))
    sentences = [part.strip() for part in _SENTENCE_END.split(text.strip()) if part.strip()]
    asking = [i for i, sentence in enumerate(sentences) if "?" in sentence]
    if not asking:
        return ""
    last = asking[-1]
    question = sentences[last]
    if len(question) > MAX_QUESTION_CHARS:
        return ""
    if last > 0 and len(sentences[last - 1]) + 1 + len(question) <= MAX_QUESTION_CHARS:
        question = f"{sentences[last - 1]} {question}"
    return question


def reply_of(metadata: Mapping[str, Any] | None) -> str:
    """The question a record replies to (:func:`question_of` its ``metadata["reply_to"]``,
    so a record stored with a whole message reads as new ones do), or ``""``."""
    value = metadata.get(REPLY_TO) if metadata else None
    return question_of(value) if isinstance(value, str) else ""


def asks(text: str) -> bool:
    """Whether a message asks something (holds a "?"): only then is it kept and indexed as
    what a record replies to."""
    return "?" in text


_WH = {"what", "where", "when", "who", "whom", "whose", "which", "why", "how"}
_AUX = {"do", "does", "did", "is", "are", "am", "was", "were", "have", "has"}
_MODAL = {"can", "could", "would", "will", "should", "shall", "may", "might"}
_QUESTION_WORDS = frozenset(_WH | _AUX | _MODAL)
"""First words of a question typed without its "?" ("where do i live")."""
_CONTRACTION = re.compile(r"['\u2019](?:s|re|d|ll|ve|m)$")
_ANY_QUESTION_WORD = re.compile(rf"\b(?:{'|'.join(sorted(_QUESTION_WORDS))})\b")
"""Any of :data:`_QUESTION_WORDS` as a whole word: a lower-cased text without one, nor a
"?", asks nothing (each load of a namespace reads whether every record only asks)."""


def _sentence_asks(sentence: str) -> bool:
    if "?" in sentence:
        return True
    if sentence.rstrip()[-1:] in (".", "!"):
        return False
    first = sentence.split(maxsplit=1)[0].lower().strip("\"'(")
    return _CONTRACTION.sub("", first) in _QUESTION_WORDS


def only_asks(text: str) -> bool:
    """Whether ``text`` is a question and states nothing: every sentence that counts (two
    or more words, speaker label dropped) holds a "?", or is typed without one but starts
    as a question does and ends without a full stop ("where do i live"). ``"Where do I
    live?"`` only asks; ``"I moved. Where do you live?"`` does not."""
    if "?" not in text and not _ANY_QUESTION_WORD.search(text.lower()):
        return False
    return _sentences_ask(text)


def _sentences_ask(text: str) -> bool:
    """:func:`only_asks`, read sentence by sentence (what its shortcut must agree with)."""
    _, parts = pieces(text)
    counted = [part for part in parts if len(part.split()) >= MIN_WORDS]
    return bool(counted) and all(_sentence_asks(part) for part in counted)


def answers(metadata: Mapping[str, Any] | None) -> bool:
    """Whether a record replies to a question (its ``reply_to`` asks something)."""
    return asks(reply_of(metadata))
