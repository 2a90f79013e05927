"""What a record replies to: the metadata key and how it is read.

A user's answer often says little on its own ("A sunrise over the lake!"); what it is about
sits in the question before it ("What did you paint last weekend?"). Surfaces store that
question under :data:`REPLY_TO`; search reads its words and policies read that it answered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

REPLY_TO = "reply_to"
"""Metadata key of the message a record answers ("What did you paint?" for "A sunrise!")."""


def reply_of(metadata: Mapping[str, Any] | None) -> str:
    """The text a record replies to (``metadata["reply_to"]``), or ``""``."""
    value = metadata.get(REPLY_TO) if metadata else None
    return value if isinstance(value, str) else ""


def asks(text: str) -> bool:
    """Whether a message asks something (holds a "?"): only then is it kept and indexed as
    what a record replies to."""
    return "?" in text


def answers(metadata: Mapping[str, Any] | None) -> bool:
    """Whether a record replies to a question (its ``reply_to`` asks something)."""
    return asks(reply_of(metadata))
