"""``AgentMemory``'s short-term memory: each thread's durable chat message log."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from langchain_core.messages import (
    BaseMessage,
    BaseMessageChunk,
    message_chunk_to_message,
    message_to_dict,
    messages_from_dict,
)

from langchain_agentmem.backends import Backend
from langchain_agentmem.backends.encoding import dump_json
from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.validation import check_k, check_name, check_namespace


def plain_messages(messages: Iterable[BaseMessage]) -> list[BaseMessage]:
    """``messages`` with each chunk turned into its message (``AIMessageChunk`` into
    ``AIMessage``, ...); anything else is left as it is.

    Streaming (``RunnableWithMessageHistory.stream``) hands a history the reply as a
    chunk, whose type (``"AIMessageChunk"``) names no role: stored as it came, it would be
    neither remembered as the assistant's nor seen as what the next message replies to.
    """
    return [message_chunk_to_message(m) if isinstance(m, BaseMessageChunk) else m for m in messages]


def serialise(messages: Sequence[BaseMessage]) -> list[str]:
    """Messages as JSON payloads to store (each checked to be a ``BaseMessage``; a chunk
    is stored as its message)."""
    if isinstance(messages, BaseMessage):
        messages = [messages]
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Iterable):
        raise InvalidTypeError(
            f"messages must be a list of LangChain BaseMessage objects, got "
            f"{type(messages).__name__}; wrap text in HumanMessage / AIMessage"
        )
    payloads = []
    for message in messages:
        if not isinstance(message, BaseMessage):
            raise InvalidTypeError(
                f"messages must be LangChain BaseMessage objects, got "
                f"{type(message).__name__}; wrap text in HumanMessage / AIMessage"
            )
        try:
            payloads.append(dump_json(message_to_dict(message_chunk_to_message(message))))
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(
                f"message content is not JSON-serialisable ({exc}); store text or "
                "LangChain content blocks"
            ) from None
    return payloads


def deserialise(payloads: Sequence[str]) -> list[BaseMessage]:
    """The messages stored as ``payloads`` (a chunk stored by an earlier version is read
    back as its message)."""
    return plain_messages(messages_from_dict([json.loads(p) for p in payloads]))


class MemoryMessages:
    """The chat messages of each thread (short-term memory; ``AgentMemory``'s part).

    Args:
        backend: The store.
    """

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    def add_messages(self, messages: Sequence[BaseMessage], *, namespace: str, thread: str) -> None:
        """Append messages to a thread's durable log, in one transaction."""
        namespace = check_namespace(namespace)
        thread = check_name(thread, what="thread")
        self.backend.append_messages(namespace, thread, serialise(messages))

    def messages(
        self, *, namespace: str, thread: str, last: int | None = None
    ) -> list[BaseMessage]:
        """A thread's messages, oldest first (only the newest ``last`` when given)."""
        namespace = check_namespace(namespace)
        thread = check_name(thread, what="thread")
        if last is not None:
            last = check_k(last)
        return deserialise(self.backend.get_messages(namespace, thread, last=last))

    def clear_messages(self, *, namespace: str, thread: str) -> int:
        """Delete a thread's messages (long-term records stay); returns how many."""
        namespace = check_namespace(namespace)
        thread = check_name(thread, what="thread")
        cleared = self.backend.clear_messages(namespace, thread)
        if cleared:
            self.backend.truncate_log()  # best effort: a reader may hold the log
        return cleared

    def threads(self, namespace: str) -> list[str]:
        """Threads of ``namespace`` that hold messages, oldest first."""
        return self.backend.threads(check_namespace(namespace))
