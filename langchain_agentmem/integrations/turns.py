"""What a turn is, for every adapter: where it starts, what of it is offered to long-term
memory, and how a thread is trimmed to whole turns.

A turn starts at a human message (or, when a summarizer replaced it, at the newest
summary) and runs to the end of the thread. Its messages of the roles asked for are offered
to long-term memory, each with its role, its source and, when the memory reads replies, the
question it answers. Trimming cuts only where a human message starts a turn, so a tool call
is never split from its result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import BaseMessage, HumanMessage, RemoveMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.memory.messages import plain_messages
from langchain_agentmem.text.replies import REPLY_TO, asks

TokenCounter = Callable[[Iterable[BaseMessage]], int]
"""Counts the tokens of a message list."""


# -- what of a turn is remembered ------------------------------------------------------------
DEFAULT_REMEMBER_ROLES = ("human",)
"""What long-term memory is offered by default: the user's words only. Assistant replies
(``"ai"``), tool traffic and system text are remembered only when asked for, and then
stored with their role, so a prompt shows them as the assistant's, never as the user's."""

MESSAGE_TYPES = ("human", "ai", "system", "tool", "function", "chat")
"""``BaseMessage.type`` values a history can be asked to remember."""

CHUNK_TYPES = {
    "AIMessageChunk": "ai",
    "HumanMessageChunk": "human",
    "SystemMessageChunk": "system",
    "ToolMessageChunk": "tool",
    "FunctionMessageChunk": "function",
    "ChatMessageChunk": "chat",
}
"""The type of each message chunk, and the message type it is stored and remembered as."""


def check_roles(roles: object) -> tuple[str, ...]:
    """Validate ``remember_roles``: message types such as ``("human", "ai")``."""
    if isinstance(roles, str):
        roles = (roles,)
    if not isinstance(roles, Iterable):
        raise InvalidTypeError(
            f"remember_roles must be a sequence of message types, got {type(roles).__name__}; "
            f"pick from {MESSAGE_TYPES}"
        )
    out = tuple(roles)
    for role in out:
        if role in CHUNK_TYPES:
            raise InvalidInputError(
                f"remember_roles holds {role!r}, the type of a streamed chunk; pass "
                f"{CHUNK_TYPES[role]!r} (a chunk is stored and remembered as its message)"
            )
        if role not in MESSAGE_TYPES:
            raise InvalidInputError(
                f"remember_roles holds {role!r}, which is not a message type; "
                f"pick from {MESSAGE_TYPES}"
            )
    return out


def message_text(message: BaseMessage) -> str:
    """The text of a message (text blocks only; images and other blocks are skipped)."""
    return str(message.text).strip()


def is_summary(message: BaseMessage) -> bool:
    """Whether ``message`` is a summary a middleware put in place of earlier messages
    (LangChain's ``SummarizationMiddleware`` marks it ``lc_source="summarization"``): a
    model's words in a human message, never the user's."""
    return message.additional_kwargs.get("lc_source") == "summarization"


def replied_to(messages: Sequence[BaseMessage], i: int) -> str:
    """The text of the newest message before ``messages[i]`` from the other side of the
    conversation (human for an AI message, AI for any other; summaries skipped), or ``""``."""
    mine = messages[i].type
    for message in reversed(messages[:i]):
        if message.type in ("human", "ai") and message.type != mine and not is_summary(message):
            text = message_text(message)
            if text:
                return text
    return ""


def keeps_replies(memory: AgentMemory) -> bool:
    """Whether ``memory``'s search reads what a message replies to (so a surface keeps it)."""
    return memory.hybrid.reply_weight > 0


def remembered_metadata(role: str, source: str, reply_to: str) -> dict[str, Any]:
    """What is stored with a remembered message: its role, its source and, when the message
    it replies to asks something, that question (the only replies search reads)."""
    meta: dict[str, Any] = {"role": role, "source": source}
    if asks(reply_to):
        meta[REPLY_TO] = reply_to  # offers.keepable keeps only its question
    return meta


# -- the latest turn -------------------------------------------------------------------------
def latest_human(messages: Sequence[BaseMessage]) -> int | None:
    """Index of the newest human message that is not a summary (:func:`is_summary`), or
    ``None``."""
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage) and not is_summary(messages[i]):
            return i
    return None


def turn_start(messages: Sequence[BaseMessage]) -> int | None:
    """Where the latest turn starts: its human message or, when a summary replaced it, the
    newest summary; ``None`` when there is neither."""
    start = latest_human(messages)
    if start is not None:
        return start
    for i in range(len(messages) - 1, -1, -1):
        if is_summary(messages[i]):
            return i
    return None


def latest_query(messages: Sequence[BaseMessage]) -> str | None:
    """The text of the newest human message; ``None`` when there is none or it has no text."""
    i = latest_human(messages)
    if i is None:
        return None
    return message_text(messages[i]) or None


class TurnItem(NamedTuple):
    """A message of the latest turn offered to long-term memory."""

    message: BaseMessage
    text: str
    reply_to: str
    """The text of the message it answers (the newest earlier human or AI message of the
    other side), or ``""``."""

    def metadata(self, source: str) -> dict[str, Any]:
        """What is stored with it: role, source, the message id and what it replies to."""
        meta = remembered_metadata(self.message.type, source, self.reply_to)
        if self.message.id is not None:
            meta["message_id"] = self.message.id
        return meta


def turn_items(
    messages: Sequence[BaseMessage],
    roles: Sequence[str],
    skip: Iterable[str] = (),
    *,
    replies: bool = True,
) -> list[TurnItem]:
    """The messages of the latest turn worth offering to long-term memory, with their text
    and (when ``replies``) the text they reply to.

    The latest turn runs from :func:`turn_start` to the end. AI messages that only call
    tools, tool results, summaries and messages without text are left out. A message chunk
    counts as its message (an ``AIMessageChunk`` is the assistant's).
    """
    messages = plain_messages(messages)
    start = turn_start(messages)
    if start is None:
        return []
    skipped = set(skip)
    out = []
    for i in range(start, len(messages)):
        message = messages[i]
        if message.type not in roles or (message.id is not None and message.id in skipped):
            continue
        if is_summary(message):
            continue
        text = message_text(message)
        if text:
            out.append(TurnItem(message, text, replied_to(messages, i) if replies else ""))
    return out


# -- trimming to whole turns -----------------------------------------------------------------
def check_positive_int(value: object, *, what: str, meaning: str) -> int:
    """Validate a size such as ``k`` or ``max_tokens`` (an int >= 1)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(
            f"{what} must be an int >= 1 ({meaning}), got {type(value).__name__} {value!r}"
        )
    if value < 1:
        raise InvalidInputError(f"{what} must be >= 1 ({meaning}), got {value!r}")
    return value


def trim_start(
    messages: Sequence[BaseMessage],
    *,
    window: int | None = None,
    max_tokens: int | None = None,
    token_counter: TokenCounter | BaseLanguageModel[Any] = count_tokens_approximately,
) -> int:
    """Index of the first message kept when ``messages`` are trimmed to a window and / or
    a token budget (0: all are kept; a leading system message is always kept).

    Cuts fall only where a human message starts a turn, so an AI tool call is never
    split from its tool result, and the newest turn (with the newest human message) is
    always kept, even when it alone is over the budget.

    Args:
        messages: The thread's messages, oldest first.
        window: Most turns (a human message and what follows it) to keep.
        max_tokens: Token budget of what is kept.
        token_counter: Counts tokens of a message list (a chat model works too).
    """
    starts = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    if not starts:
        return 0
    head = 1 if messages and isinstance(messages[0], SystemMessage) else 0
    cut = starts[0]
    if window is not None and len(starts) > window:
        cut = max(cut, starts[len(starts) - window])
    if max_tokens is not None:
        counter = (
            token_counter.get_num_tokens_from_messages
            if isinstance(token_counter, BaseLanguageModel)
            else token_counter
        )
        system = list(messages[:head])
        for start in starts:
            if start < cut:
                continue
            if start == starts[-1] or counter([*system, *messages[start:]]) <= max_tokens:
                cut = start
                break
    return max(cut, head)


def trim_removals(
    messages: Sequence[BaseMessage],
    *,
    window: int | None = None,
    max_tokens: int | None = None,
    token_counter: TokenCounter | BaseLanguageModel[Any] = count_tokens_approximately,
) -> list[RemoveMessage]:
    """``RemoveMessage`` updates that trim a thread to a window and / or a token budget
    (what :func:`trim_start` keeps; the same arguments)."""
    head = 1 if messages and isinstance(messages[0], SystemMessage) else 0
    cut = trim_start(messages, window=window, max_tokens=max_tokens, token_counter=token_counter)
    removed = messages[head:cut]
    out = []
    for message in removed:
        if message.id is None:
            raise InvalidInputError(
                f"cannot trim a {message.type} message without an id; keep messages in a "
                "state key annotated with langgraph's add_messages reducer (it assigns ids)"
            )
        out.append(RemoveMessage(id=message.id))
    return out


def last_exchanges(messages: list[BaseMessage], k: int) -> list[BaseMessage]:
    """The last ``k`` exchanges (an exchange starts at a human message).

    A leading system message is kept.
    """
    starts = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    if len(starts) <= k:
        return messages
    cut = starts[len(starts) - k]
    head = [messages[0]] if messages and isinstance(messages[0], SystemMessage) else []
    return head + messages[cut:]
