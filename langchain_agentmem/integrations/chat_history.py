"""Durable chat message histories (``BaseChatMessageHistory``) backed by ``AgentMemory``.

They work wherever LangChain takes a chat history: ``RunnableWithMessageHistory``, or as
``chat_memory`` of langchain-classic's ``ConversationBufferMemory`` in a
``ConversationChain``. The full thread is always kept in the store; the window and token
variants only change what ``messages`` returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import BaseMessage, SystemMessage, trim_messages
from langchain_core.messages.utils import count_tokens_approximately

from langchain_agentmem.errors import InvalidTypeError
from langchain_agentmem.integrations.offers import offered
from langchain_agentmem.integrations.turns import (
    DEFAULT_REMEMBER_ROLES,
    TokenCounter,
    check_positive_int,
    check_roles,
    keeps_replies,
    last_exchanges,
    remembered_metadata,
    replied_to,
)
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.memory.messages import plain_messages
from langchain_agentmem.types import MemoryOp
from langchain_agentmem.validation import check_name

REPLY_LOOKBACK = 8
"""Stored messages read before an append, to find what the first new message replies to."""


def as_message_list(messages: object) -> list[BaseMessage]:
    """``messages`` as a list (one message alone is accepted), each chunk turned into its
    message (a streamed reply comes as an ``AIMessageChunk``); types are checked on write."""
    if isinstance(messages, BaseMessage):
        return plain_messages([messages])
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Iterable):
        raise InvalidTypeError(
            f"messages must be a list of LangChain BaseMessage objects, got "
            f"{type(messages).__name__}; wrap text in HumanMessage / AIMessage"
        )
    return plain_messages(messages)


class BufferChatMessageHistory(BaseChatMessageHistory):
    """Every message of one thread, kept durably in an ``AgentMemory`` store.

    Setup:
        An ``AgentMemory`` (``AgentMemory()`` opens the embedded SQLite default).

    Instantiate:
        .. code-block:: python

            from langchain_agentmem import AgentMemory, BufferChatMessageHistory

            memory = AgentMemory("sqlite:///memory.db")
            history = BufferChatMessageHistory(memory, namespace="alice", thread="t1",
                                               remember=True)

    Usage:
        .. code-block:: python

            from langchain_core.runnables.history import RunnableWithMessageHistory

            chain_with_history = RunnableWithMessageHistory(
                chain,
                lambda session_id: BufferChatMessageHistory(
                    memory, namespace="alice", thread=session_id
                ),
            )

    Args:
        memory: The store.
        namespace: The user (or agent) the thread belongs to.
        thread: The conversation.
        remember: Also offer each new message to long-term memory (through the policy),
            so later threads of the same namespace can recall it.
        remember_roles: Message types offered when ``remember`` is on (default: the
            user's words, ``("human",)``; add ``"ai"`` to keep replies as the assistant's).
    """

    def __init__(
        self,
        memory: AgentMemory,
        *,
        namespace: str,
        thread: str,
        remember: bool = False,
        remember_roles: Sequence[str] = DEFAULT_REMEMBER_ROLES,
    ) -> None:
        if not isinstance(memory, AgentMemory):
            raise InvalidTypeError(
                f"memory must be an AgentMemory, got {type(memory).__name__}; pass AgentMemory(url)"
            )
        self.memory = memory
        self.namespace = check_name(namespace, what="namespace")
        self.thread = check_name(thread, what="thread")
        self.remember = bool(remember)
        self.remember_roles = check_roles(remember_roles)
        self.last_ops: list[MemoryOp] = []
        """Ops of the latest long-term write (what the policy decided)."""

    # -- what the chain sees ---------------------------------------------------------------
    def select(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        """Choose which stored messages the chain sees (all of them here)."""
        return messages

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """The thread's messages as the chain sees them."""
        return self.select(self.memory.messages(namespace=self.namespace, thread=self.thread))

    async def aget_messages(self) -> list[BaseMessage]:
        """Async :attr:`messages`."""
        stored = await self.memory.amessages(namespace=self.namespace, thread=self.thread)
        return self.select(stored)

    @property
    def all_messages(self) -> list[BaseMessage]:
        """Every stored message of the thread, whatever the view."""
        return self.memory.messages(namespace=self.namespace, thread=self.thread)

    # -- writes ----------------------------------------------------------------------------
    def _to_remember(
        self, messages: Sequence[BaseMessage], earlier: Sequence[BaseMessage] = ()
    ) -> list[tuple[str, str, str]]:
        """``(role, text, reply_to)`` of each message offered (``earlier``: the thread's
        newest stored messages before these)."""
        if not self.remember:
            return []
        every = [*earlier, *messages]
        keep = keeps_replies(self.memory)
        out = []
        for i in range(len(earlier), len(every)):
            message = every[i]
            if message.type in self.remember_roles:
                text = str(message.text)
                if text.strip():
                    out.append((message.type, text, replied_to(every, i) if keep else ""))
        return out

    def _needs_earlier(self, messages: Sequence[BaseMessage]) -> bool:
        """Whether to read the thread's newest messages: something is offered and the
        memory keeps what it replies to."""
        return (
            self.remember
            and keeps_replies(self.memory)
            and any(
                isinstance(m, BaseMessage) and m.type in self.remember_roles and str(m.text).strip()
                for m in messages
            )
        )

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append messages (and offer them to long-term memory when ``remember``)."""
        messages = as_message_list(messages)
        earlier: list[BaseMessage] = []
        if self._needs_earlier(messages):
            earlier = self.memory.messages(
                namespace=self.namespace, thread=self.thread, last=REPLY_LOOKBACK
            )
        self.memory.add_messages(messages, namespace=self.namespace, thread=self.thread)
        texts, metadatas = offered(
            self.memory.limits,
            [
                (role, text, remembered_metadata(role, "chat", reply))
                for role, text, reply in self._to_remember(messages, earlier)
            ],
        )
        if texts:
            decided = self.memory.add_many(
                texts, namespace=self.namespace, thread=self.thread, metadatas=metadatas
            )
            self._note_ops(decided)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Async :meth:`add_messages`."""
        messages = as_message_list(messages)
        earlier: list[BaseMessage] = []
        if self._needs_earlier(messages):
            earlier = await self.memory.amessages(
                namespace=self.namespace, thread=self.thread, last=REPLY_LOOKBACK
            )
        await self.memory.aadd_messages(messages, namespace=self.namespace, thread=self.thread)
        texts, metadatas = offered(
            self.memory.limits,
            [
                (role, text, remembered_metadata(role, "chat", reply))
                for role, text, reply in self._to_remember(messages, earlier)
            ],
        )
        if texts:
            decided = await self.memory.aadd_many(
                texts, namespace=self.namespace, thread=self.thread, metadatas=metadatas
            )
            self._note_ops(decided)

    def _note_ops(self, decided: list[list[MemoryOp]]) -> None:
        ops = [op for item_ops in decided for op in item_ops]
        if ops:
            self.last_ops = ops

    def clear(self) -> None:
        """Forget this thread's messages (long-term records stay)."""
        self.memory.clear_messages(namespace=self.namespace, thread=self.thread)

    async def aclear(self) -> None:
        """Async :meth:`clear`."""
        await self.memory.aclear_messages(namespace=self.namespace, thread=self.thread)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(namespace={self.namespace!r}, thread={self.thread!r}, "
            f"remember={self.remember})"
        )


class WindowChatMessageHistory(BufferChatMessageHistory):
    """A thread whose chain sees only the last ``k`` exchanges (all are kept in the store).

    Args:
        memory: The store.
        namespace: The user (or agent).
        thread: The conversation.
        k: How many exchanges (human message and what follows it) the chain sees.
        remember: Offer new messages to long-term memory too.
        remember_roles: Message types offered when ``remember`` is on.
    """

    def __init__(
        self,
        memory: AgentMemory,
        *,
        namespace: str,
        thread: str,
        k: int = 5,
        remember: bool = False,
        remember_roles: Sequence[str] = DEFAULT_REMEMBER_ROLES,
    ) -> None:
        k = check_positive_int(k, what="k", meaning="exchanges the chain sees")
        super().__init__(
            memory,
            namespace=namespace,
            thread=thread,
            remember=remember,
            remember_roles=remember_roles,
        )
        self.k = k

    def select(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        return last_exchanges(messages, self.k)


class TokenBufferChatMessageHistory(BufferChatMessageHistory):
    """A thread whose chain sees the newest messages that fit in ``max_tokens``.

    Whole messages only, starting on a human message, so an AI tool call is never split
    from its tool result. A leading system message is always kept (it counts against the
    budget; when it alone exceeds the budget the chain sees just the system message).

    Args:
        memory: The store.
        namespace: The user (or agent).
        thread: The conversation.
        max_tokens: Token budget of what the chain sees.
        token_counter: Counts tokens of a message list (default: LangChain's approximate
            counter); a chat model works too.
        remember: Offer new messages to long-term memory too.
        remember_roles: Message types offered when ``remember`` is on.
    """

    def __init__(
        self,
        memory: AgentMemory,
        *,
        namespace: str,
        thread: str,
        max_tokens: int = 2000,
        token_counter: TokenCounter | BaseLanguageModel[Any] | None = None,
        remember: bool = False,
        remember_roles: Sequence[str] = DEFAULT_REMEMBER_ROLES,
    ) -> None:
        max_tokens = check_positive_int(
            max_tokens, what="max_tokens", meaning="token budget of what the chain sees"
        )
        super().__init__(
            memory,
            namespace=namespace,
            thread=thread,
            remember=remember,
            remember_roles=remember_roles,
        )
        self.max_tokens = max_tokens
        if token_counter is not None and not (
            callable(token_counter) or isinstance(token_counter, BaseLanguageModel)
        ):
            raise InvalidTypeError(
                f"token_counter must be a function of a message list or a chat model, got "
                f"{type(token_counter).__name__}; leave it out for the approximate counter"
            )
        self.token_counter: TokenCounter | BaseLanguageModel[Any] = (
            token_counter or count_tokens_approximately
        )

    def select(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        if not messages:
            return messages
        return list(
            trim_messages(
                messages,
                max_tokens=self.max_tokens,
                token_counter=self.token_counter,
                strategy="last",
                start_on="human",
                include_system=isinstance(messages[0], SystemMessage),
                allow_partial=False,
            )
        )
