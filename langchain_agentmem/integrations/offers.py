"""What of a conversation long-term memory can keep, and search with, for the adapters.

An adapter offers messages as a side effect of a conversation: a chat history's
``add_messages``, a chain memory's ``save_context``, the policy node, the middleware. A
message the memory would refuse (longer than ``max_text_chars``, a NUL character, a lone
surrogate) is not offered: the conversation goes on with the message in it, and one
warning on :data:`logger` says so. A message is offered with only
the question the message it replies to asks (:func:`~langchain_agentmem.text.replies.question_of`:
one or two sentences, 300 characters at most), and without it when the memory would refuse
that message as a text (so a message not remembered is not kept as another's ``reply_to``
either), or when only that question makes its metadata larger than ``max_metadata_bytes``.
Failing the turn instead would lose it after the model
answered; ``AgentMemory.add`` with the same text is an error, as any bad input is.

Recall is such a side effect too (``AgentMemoryRecall``, ``recall_node``, the middleware):
it searches with :func:`recall_query` of the user's message, the message cleaned of what
search refuses, so the turn goes on and the message's other words still recall.
``AgentMemory.search``, the retriever, the vector store and the memory tools take a query
someone chose, and refuse such a query with an error.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.text.replies import REPLY_TO, question_of
from langchain_agentmem.validation import MAX_QUERY_CHARS, Limits, check_text

logger = logging.getLogger(__name__)
"""Warns of a message the memory cannot keep (the conversation goes on without it)."""

_WHOSE = {"human": "the user's message", "ai": "the assistant's reply"}


def _refused(whose: str, why: str) -> None:
    logger.warning("%s is not remembered: %s; it stays in the conversation", whose, why)


def _refusal(limits: Limits, text: str) -> str | None:
    """Why the memory would refuse ``text`` as a text of its own, or ``None``."""
    if len(text) > limits.max_text_chars:
        return (
            f"this memory keeps at most {limits.max_text_chars:,} characters per text "
            "(max_text_chars)"
        )
    try:
        check_text(text)
    except InvalidInputError as exc:
        return str(exc)
    return None


def recall_query(text: str) -> str | None:
    """``text`` as a search query: its first ``MAX_QUERY_CHARS`` characters (the longest
    query a search takes), NUL characters as spaces, a surrogate pair held as two code
    points as its character and a lone surrogate as U+FFFD; ``None`` when no word is left."""
    text = text[:MAX_QUERY_CHARS].replace("\x00", " ")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text if text.strip() else None


def keepable(
    limits: Limits, role: str, text: str, metadata: dict[str, Any]
) -> dict[str, Any] | None:
    """The metadata to offer ``text`` with, or ``None`` (one warning) when the memory would
    refuse the message."""
    whose = _WHOSE.get(role, f"the {role} message")
    why = _refusal(limits, text)
    if why is not None:
        long = len(text) > limits.max_text_chars
        _refused(f"{whose} ({len(text):,} characters)" if long else whose, why)
        return None
    without_reply = {k: v for k, v in metadata.items() if k != REPLY_TO}
    reply = metadata.get(REPLY_TO)
    if reply is not None:
        # Only the question a message asks is kept with its reply (question_of), and
        # nothing of a message the memory would not keep as a text of its own.
        question = (
            "" if not isinstance(reply, str) or _refusal(limits, reply) else question_of(reply)
        )
        metadata = {**without_reply, REPLY_TO: question} if question else without_reply
    for attempt in (metadata, without_reply):
        try:
            return limits.metadata(attempt)
        except InvalidInputError:
            continue
    _refused(whose, "its metadata is larger than this memory keeps (max_metadata_bytes)")
    return None


def offered(
    limits: Limits, items: Sequence[tuple[str, str, dict[str, Any]]]
) -> tuple[list[str], list[dict[str, Any]]]:
    """The texts and metadatas of the ``(role, text, metadata)`` items the memory can keep."""
    texts: list[str] = []
    metadatas: list[dict[str, Any]] = []
    for role, text, metadata in items:
        meta = keepable(limits, role, text, metadata)
        if meta is not None:
            texts.append(text)
            metadatas.append(meta)
    return texts, metadatas
