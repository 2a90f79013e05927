"""Long-term recall for langchain-classic chains (``BaseMemory``).

``AgentMemoryRecall`` puts the memories of a user (namespace) that are relevant to the
current input into a memory variable, and offers each exchange back to long-term memory
through the store's policy. What one thread was told, another thread of the same user
recalls. Pair it with ``ConversationBufferMemory(chat_memory=BufferChatMessageHistory(...))``
in a ``CombinedMemory`` to have both the current thread and the long-term recall.
"""

from __future__ import annotations

from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage, SystemMessage
from pydantic import PrivateAttr

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError, missing_extra
from langchain_agentmem.integrations.offers import offered
from langchain_agentmem.integrations.prompt import (
    DEFAULT_HEADER,
    MemoryFormatter,
    check_formatter,
    render,
)
from langchain_agentmem.integrations.recall import arecall, recall, shown_texts
from langchain_agentmem.integrations.turns import (
    DEFAULT_REMEMBER_ROLES,
    check_roles,
    keeps_replies,
    remembered_metadata,
)
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.types import MemoryOp, MemoryRecord
from langchain_agentmem.validation import (
    check_k,
    check_min_score,
    check_name,
    check_optional_name,
)

try:
    from langchain_classic.base_memory import BaseMemory
except ModuleNotFoundError as exc:  # the classic extra
    raise missing_extra("classic", "AgentMemoryRecall (classic chains' memory)", exc) from None

_CHAIN_ROLES = ("human", "ai")


def _as_text(value: object, *, what: str) -> str:
    """The text of a chain input or output (a str, a message, or a list of messages)."""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseMessage):
        return value.text
    if isinstance(value, list) and value and all(isinstance(m, BaseMessage) for m in value):
        return str(value[-1].text)
    raise InvalidTypeError(
        f"{what} must be a str or LangChain messages, got {type(value).__name__}; "
        "set input_key / output_key to the chain's text field"
    )


class AgentMemoryRecall(BaseMemory):
    """Recall a user's long-term memories into a classic chain's prompt.

    On each call the chain's input is searched in the namespace's long-term memory and
    the best matches fill the memory variable (one fenced block of dated, attributed
    memories; see :mod:`langchain_agentmem.integrations.prompt`); after the call the
    user's input (and the chain's output, when asked for) is offered to long-term memory,
    where the store's policy decides what to keep. What the prompt already shows (the
    input, and the messages of ``history`` when given) is not recalled again.

    Setup:
        ``pip install langchain-agentmem`` (langchain-classic comes with it).

    Instantiate:
        .. code-block:: python

            from langchain_agentmem import AgentMemory, AgentMemoryRecall

            memory = AgentMemory("sqlite:///memory.db")
            recall = AgentMemoryRecall(memory, namespace="alice", thread="t2", k=4)

    Usage:
        .. code-block:: python

            from langchain_classic.chains import ConversationChain

            chain = ConversationChain(llm=llm, memory=recall)
            chain.invoke({"input": "What is my name?"})  # the prompt holds what alice said

    Args:
        memory: The store.
        namespace: The user (or agent) whose memories are recalled and written.
        thread: The conversation the saved exchanges come from.
        k: How many memories to recall per call.
        min_score: Drop recalled memories whose ``score`` (as ``AgentMemory.search``
            gives it) is below this.
        memory_key: The prompt variable filled with the recalled memories.
        input_key: The chain input to search with and save (default: the only input
            that is not a memory variable).
        output_key: The chain output to save (default: the only output).
        return_messages: Fill the variable with a list of messages (one ``SystemMessage``,
            or none when nothing is recalled) instead of a string.
        header: The line written inside the memories block before the memories.
        remember_roles: Which side of the exchange to offer: ``"human"`` (the input, the
            default), ``"ai"`` (the output, stored as the assistant's), or both.
        formatter: Replaces the default :func:`format_memories` (a function of a list
            of ``MemoryRecord`` returning a str).
        history: The chat history the chain also shows (the ``chat_memory`` of a
            ``ConversationBufferMemory`` beside this one): its messages are not recalled.
    """

    memory: AgentMemory
    namespace: str
    thread: str | None = None
    k: int = 4
    min_score: float | None = None
    memory_key: str = "history"
    input_key: str | None = None
    output_key: str | None = None
    return_messages: bool = False
    header: str | None = DEFAULT_HEADER
    remember_roles: tuple[str, ...] = DEFAULT_REMEMBER_ROLES
    formatter: MemoryFormatter | None = None
    history: BaseChatMessageHistory | None = None

    _last_recalled: list[MemoryRecord] = PrivateAttr(default_factory=list)
    _last_ops: list[MemoryOp] = PrivateAttr(default_factory=list)
    _last_output: str = PrivateAttr(default="")

    def __init__(
        self,
        memory: AgentMemory,
        *,
        namespace: str,
        thread: str | None = None,
        k: int = 4,
        min_score: float | None = None,
        memory_key: str = "history",
        input_key: str | None = None,
        output_key: str | None = None,
        return_messages: bool = False,
        header: str | None = DEFAULT_HEADER,
        remember_roles: tuple[str, ...] | list[str] = DEFAULT_REMEMBER_ROLES,
        formatter: MemoryFormatter | None = None,
        history: BaseChatMessageHistory | None = None,
    ) -> None:
        # Checked here (not by pydantic) so bad input raises the package's errors.
        if not isinstance(memory, AgentMemory):
            raise InvalidTypeError(
                f"memory must be an AgentMemory, got {type(memory).__name__}; pass AgentMemory(url)"
            )
        min_score = check_min_score(min_score)
        if history is not None and not isinstance(history, BaseChatMessageHistory):
            raise InvalidTypeError(
                f"history must be a BaseChatMessageHistory, got {type(history).__name__}; "
                "pass the chat_memory your chain shows, or leave it out"
            )
        roles = check_roles(remember_roles)
        for role in roles:
            if role not in _CHAIN_ROLES:
                raise InvalidInputError(
                    f"remember_roles holds {role!r}; a chain exchange has only {_CHAIN_ROLES}"
                )
        fields: dict[str, Any] = dict(
            memory=memory,
            namespace=check_name(namespace, what="namespace"),
            thread=check_optional_name(thread, what="thread"),
            k=check_k(k),
            min_score=min_score,
            memory_key=check_name(memory_key, what="memory_key"),
            input_key=check_optional_name(input_key, what="input_key"),
            output_key=check_optional_name(output_key, what="output_key"),
            return_messages=bool(return_messages),
            header=header,
            remember_roles=roles,
            formatter=check_formatter(formatter),
            history=history,
        )
        super().__init__(**fields)

    # -- what the chain sees ---------------------------------------------------------------
    @property
    def memory_variables(self) -> list[str]:
        """The one variable this memory fills."""
        return [self.memory_key]

    @property
    def last_recalled(self) -> list[MemoryRecord]:
        """The memories recalled by the latest load, best first."""
        return list(self._last_recalled)

    @property
    def last_ops(self) -> list[MemoryOp]:
        """The ops the policy applied for the latest saved exchange."""
        return list(self._last_ops)

    def _input_key(self, inputs: dict[str, Any]) -> str:
        if self.input_key is not None:
            if self.input_key not in inputs:
                raise InvalidInputError(
                    f"input_key {self.input_key!r} is not among the chain inputs "
                    f"{sorted(inputs)}; set input_key to one of them"
                )
            return self.input_key
        keys = sorted(set(inputs).difference([*self.memory_variables, "stop"]))
        if len(keys) != 1:
            raise InvalidInputError(
                f"cannot tell which chain input to recall with among {keys}; "
                "set input_key (for example input_key='input')"
            )
        return keys[0]

    def _query(self, inputs: dict[str, Any]) -> str | None:
        text = _as_text(inputs[self._input_key(inputs)], what="the chain input")
        return text if text.strip() else None

    def _variables(self, records: list[MemoryRecord]) -> dict[str, Any]:
        limit = self.memory.limits.max_recall_chars
        text = (
            render(records, self.formatter, header=self.header, max_chars=limit) if records else ""
        )
        self._last_recalled = records
        if not text:
            return {self.memory_key: [] if self.return_messages else ""}
        if self.return_messages:
            return {self.memory_key: [SystemMessage(content=text)]}
        return {self.memory_key: text}

    def _shown(self, query: str, history: list[BaseMessage]) -> set[str]:
        return shown_texts([query, *history])

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Recall the memories most relevant to the chain's input."""
        query = self._query(inputs)
        if query is None:
            return self._variables([])
        shown = self._shown(query, [] if self.history is None else self.history.messages)
        found = recall(
            self.memory,
            query,
            namespace=self.namespace,
            k=self.k,
            min_score=self.min_score,
            shown=shown,
        )
        return self._variables(found)

    async def aload_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Async :meth:`load_memory_variables`."""
        query = self._query(inputs)
        if query is None:
            return self._variables([])
        history = [] if self.history is None else await self.history.aget_messages()
        found = await arecall(
            self.memory,
            query,
            namespace=self.namespace,
            k=self.k,
            min_score=self.min_score,
            shown=self._shown(query, history),
        )
        return self._variables(found)

    # -- writes ----------------------------------------------------------------------------
    def _exchange(
        self, inputs: dict[str, Any], outputs: dict[str, Any]
    ) -> list[tuple[str, str, str]]:
        """``(role, text, reply_to)`` of each side offered: the input replies to the previous
        exchange's output (of this object), the output to the input."""
        if self.output_key is not None:
            if self.output_key not in outputs:
                raise InvalidInputError(
                    f"output_key {self.output_key!r} is not among the chain outputs "
                    f"{sorted(outputs)}; set output_key to one of them"
                )
            output_key = self.output_key
        elif len(outputs) == 1:
            output_key = next(iter(outputs))
        else:
            raise InvalidInputError(
                f"cannot tell which chain output to remember among {sorted(outputs)}; "
                "set output_key"
            )
        sides = {
            "human": _as_text(inputs[self._input_key(inputs)], what="the chain input"),
            "ai": _as_text(outputs[output_key], what="the chain output"),
        }
        replies = (
            {"human": self._last_output.strip(), "ai": sides["human"].strip()}
            if keeps_replies(self.memory)
            else {"human": "", "ai": ""}
        )
        self._last_output = sides["ai"]
        return [
            (role, sides[role], replies[role])
            for role in self.remember_roles
            if sides[role].strip()
        ]

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Offer the exchange to long-term memory (the policy decides what is kept)."""
        texts, metadatas = offered(
            self.memory.limits,
            [
                (role, text, remembered_metadata(role, "chain", reply))
                for role, text, reply in self._exchange(inputs, outputs)
            ],
        )
        decided = self.memory.add_many(
            texts, namespace=self.namespace, thread=self.thread, metadatas=metadatas
        )
        self._last_ops = [op for item_ops in decided for op in item_ops]

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Async :meth:`save_context`."""
        texts, metadatas = offered(
            self.memory.limits,
            [
                (role, text, remembered_metadata(role, "chain", reply))
                for role, text, reply in self._exchange(inputs, outputs)
            ],
        )
        decided = await self.memory.aadd_many(
            texts, namespace=self.namespace, thread=self.thread, metadatas=metadatas
        )
        self._last_ops = [op for item_ops in decided for op in item_ops]

    def _mine(self, records: list[MemoryRecord]) -> list[str]:
        return [r.id for r in records if self.thread is None or r.thread == self.thread]

    def clear(self) -> None:
        """Forget the namespace's long-term records from ``thread``.

        With no ``thread`` set this forgets every long-term record of the namespace.
        Each deletion is logged in the audit log.
        """
        for record_id in self._mine(self.memory.records(self.namespace)):
            self.memory.delete(record_id, namespace=self.namespace, missing_ok=True)

    async def aclear(self) -> None:
        """Async :meth:`clear`."""
        for record_id in self._mine(await self.memory.arecords(self.namespace)):
            await self.memory.adelete(record_id, namespace=self.namespace, missing_ok=True)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(namespace={self.namespace!r}, thread={self.thread!r}, "
            f"k={self.k}, memory_key={self.memory_key!r})"
        )
