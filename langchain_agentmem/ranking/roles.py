"""Whose words a query asks for, in a user's chat with an assistant.

Where the assistant's replies are remembered beside the user's words (``remember_roles``
with ``"ai"``), a reply of a few kilobytes shares many of a question's words and much of its
subject with it: "How old was I when I moved to the United States?" finds the assistant's
long advice on visa interviews before the user's "I'm 32 and trying to understand the green
card process". Yet the user's question about themselves asks for what they said; only a
question about what the assistant said ("Can you remind me which restaurant you
recommended?", "our previous conversation about ...") asks for the assistant's words.

So hybrid search reads which side a query asks about (:func:`asked_role`) and weighs the
records of the other side down (``HybridConfig.role_weight``): their score times that weight,
and no lift from the thread neighbours beside them.
Only records stored with a role (``metadata["role"]``: the adapters' ``human`` and ``ai``) are
weighed; named speakers, tool notes and unattributed records never are, and nothing moves
where the candidates hold no record of the side asked about.
"""

from __future__ import annotations

import re

USER = "user"
ASSISTANT = "assistant"

ROLES = {"human": USER, "user": USER, "ai": ASSISTANT, "assistant": ASSISTANT}
"""A record's stored role (a LangChain message type, or the OpenAI role name) -> its side."""

_SAID = (
    r"mentioned|said|told|recommended|suggested|gave|given|provided|listed|explained|shared|"
    r"described|named|proposed|referred|showed|shown|wrote|written|advised|offered|"
    r"compiled|created|made|came up with|put together|played"
)

ASKS_ASSISTANT = re.compile(
    rf"\byou(?:'ve| have| had)?\s+(?:\w+\s+)?(?:{_SAID})\b"
    rf"|\bdid\s+you\s+(?:say|mention|recommend|suggest|tell|give|provide|list|call|name|use|make|play)\b"
    r"|\b(?:our|we)\s+(?:\w+\s+)?(?:conversation|conversations|chat|chats|discussion|talk|exchange)\b"
    r"|\bwe\s+(?:talked|discussed|spoke|chatted|decided|covered|went over|agreed)\b"
    r"|\bdid\s+we\s+(?:decide|discuss|talk|say|agree|choose|pick|settle|name|call)\b",
    re.IGNORECASE,
)
"""What a query about the assistant's own words says: "you recommended", "did you say",
"our previous conversation", "we talked about", "what did we decide"."""


def asked_role(query: str) -> str:
    """The side whose words ``query`` asks for: :data:`ASSISTANT` when it speaks of what the
    assistant said or of an earlier conversation, else :data:`USER` (a user asking about
    themselves, or asking for something)."""
    return ASSISTANT if ASKS_ASSISTANT.search(query) else USER


def side_of(role: str | None) -> str | None:
    """The side of a record's stored role (``None``: a speaker's name, or no role)."""
    return None if role is None else ROLES.get(role)


__all__ = ["ASKS_ASSISTANT", "ASSISTANT", "ROLES", "USER", "asked_role", "side_of"]
