"""LangGraph nodes backed by ``AgentMemory``: recall, and a policy node that retains or forgets.

The user (namespace) comes from ``config["configurable"]["user_id"]`` or from LangGraph's
run context (``graph.invoke(..., context={"user_id": ...})``, a dict or an object of the
graph's ``context_schema``; the key is configurable), or on a LangGraph server with
authentication from the authenticated identity (``langgraph_auth_user_id``), and the
conversation from LangGraph's ``thread_id``, so one compiled graph serves every user;
what one thread of a user was told, the user's other threads recall, and no other user
ever sees it. The nodes work with any checkpointer (``InMemorySaver``, ``SqliteSaver``,
``PostgresSaver``), sync (``invoke`` / ``stream``) and async. The recall node keeps only
record ids in the graph state, never a memory's text, so checkpoints hold no copy of what
the user later deletes; :func:`memories_message` reads the texts from the memory when the
prompt is built. Whose run it is lives in :mod:`langchain_agentmem.integrations.runs`,
reading the memories back in :mod:`langchain_agentmem.integrations.recalled`, what a turn
is in :mod:`langchain_agentmem.integrations.turns`.

Usage:
    .. code-block:: python

        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.graph import START, StateGraph

        from langchain_agentmem import (
            AgentMemory, RecallState, memories_message, policy_node, recall_node,
        )

        memory = AgentMemory("sqlite:///memory.db")

        def chat(state: RecallState) -> dict:
            system = memories_message(state["memories"], memory)  # texts read by id, now
            return {"messages": [llm.invoke([*([system] if system else []), *state["messages"]])]}

        builder = StateGraph(RecallState)
        builder.add_node("recall", recall_node(memory, k=4))
        builder.add_node("chat", chat)
        builder.add_node("remember", policy_node(memory, window=10))
        builder.add_edge(START, "recall")
        builder.add_edge("recall", "chat")
        builder.add_edge("chat", "remember")
        graph = builder.compile(checkpointer=InMemorySaver())
        graph.invoke({"messages": [("user", "I live in Lyon.")]},
                     {"configurable": {"user_id": "alice", "thread_id": "t1"}})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, TypedDict

from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import AnyMessage, BaseMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.graph.message import add_messages

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.integrations.offers import offered
from langchain_agentmem.integrations.prompt import DEFAULT_HEADER, format_memories
from langchain_agentmem.integrations.recall import arecall, recall, shown_texts
from langchain_agentmem.integrations.recalled import memory_ref
from langchain_agentmem.integrations.runs import (
    check_memory,
    run_context,
    run_thread,
    user_namespace,
)
from langchain_agentmem.integrations.turns import (
    DEFAULT_REMEMBER_ROLES,
    TokenCounter,
    TurnItem,
    check_positive_int,
    check_roles,
    keeps_replies,
    latest_human,
    latest_query,
    trim_removals,
    turn_items,
)
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.ranking import check_mode
from langchain_agentmem.types import MemoryRecord
from langchain_agentmem.validation import check_k, check_min_score, check_name


class RecallState(TypedDict, total=False):
    """A graph state with messages and what the recall node found.

    Extend it (or add the same keys to your own state) to use the nodes.
    """

    messages: Annotated[list[AnyMessage], add_messages]
    """The conversation (LangGraph's message reducer)."""
    memories: list[dict[str, Any]]
    """References to the memories recalled for the latest human message: ``{"id",
    "score"}`` each, never their text (the state is checkpointed; a checkpoint must not
    keep a copy of a memory that is later forgotten). :func:`memories_message` reads the
    texts from the memory when the prompt is built."""
    remembered: list[str]
    """Ids of the messages of the latest turn already offered to long-term memory."""


def state_messages(state: object, key: str = "messages") -> list[BaseMessage]:
    """The message list of a graph state (a mapping or an object).

    Raises:
        InvalidInputError: the state has no such key.
        InvalidTypeError: it is not a list of messages.
    """
    if isinstance(state, Mapping):
        if key not in state:
            raise InvalidInputError(
                f"the graph state has no {key!r} key (keys: {sorted(state)}); use a state "
                f"with messages such as RecallState, or set messages_key"
            )
        value = state[key]
    elif hasattr(state, key):
        value = getattr(state, key)
    else:
        raise InvalidInputError(
            f"the graph state {type(state).__name__} has no {key!r} field; use a state with "
            "messages such as RecallState, or set messages_key"
        )
    if not isinstance(value, list) or not all(isinstance(m, BaseMessage) for m in value):
        raise InvalidTypeError(
            f"state[{key!r}] must be a list of LangChain messages, got {type(value).__name__}; "
            "annotate it with langgraph's add_messages reducer"
        )
    return value


def memory_refs(records: Sequence[MemoryRecord]) -> list[dict[str, Any]]:
    """Recalled records as the graph state keeps them: ids and scores, no text."""
    return [memory_ref(r) for r in records]


def _check_key(value: object, what: str) -> str:
    return check_name(value, what=what)


# -- recall ----------------------------------------------------------------------------------
def recall_node(
    memory: AgentMemory,
    *,
    k: int = 4,
    min_score: float | None = None,
    mode: str = "hybrid",
    user_key: str = "user_id",
    messages_key: str = "messages",
    output_key: str = "memories",
) -> RunnableLambda[Any, dict[str, Any]]:
    """A node that recalls the memories relevant to the latest human message.

    It writes ``{output_key: [{"id": ..., "score": ...}, ...]}`` into the state, best
    first (an empty list when the latest human message has no text, or there is none):
    record ids, never the memories' text, so the graph's checkpoints hold no copy of a
    memory that is later deleted. Turn them into a prompt with
    ``memories_message(state[output_key], memory)``, which reads the texts by id when the
    prompt is built (:func:`recalled_memories` gives the records). Records whose text is
    already one of the state's messages are not recalled again.

    Args:
        memory: The store.
        k: Most memories to recall.
        min_score: Drop memories scoring below this (see ``AgentMemory.search``).
        mode: Search mode: ``"hybrid"``, ``"dense"`` or ``"lexical"``.
        user_key: The ``configurable`` (or run context) key that names the user (the
            namespace).
        messages_key: The state key holding the messages.
        output_key: The state key the memories are written to.

    Raises:
        InvalidInputError: at run time, when neither the config nor the run context names
            a user, they name two, or the state has no messages.
    """
    memory = check_memory(memory)
    k = check_k(k)
    min_score = check_min_score(min_score)
    mode = check_mode(mode)
    user_key = _check_key(user_key, "user_key")
    messages_key = _check_key(messages_key, "messages_key")
    output_key = _check_key(output_key, "output_key")

    def _query(state: object, config: RunnableConfig) -> tuple[str, str | None, set[str]]:
        namespace = user_namespace(config, user_key, context=run_context())
        messages = state_messages(state, messages_key)
        return namespace, latest_query(messages), shown_texts(messages)

    def run(state: object, config: RunnableConfig) -> dict[str, Any]:
        namespace, query, shown = _query(state, config)
        if query is None:
            return {output_key: []}
        found = recall(
            memory, query, namespace=namespace, k=k, mode=mode, min_score=min_score, shown=shown
        )
        return {output_key: memory_refs(found)}

    async def arun(state: object, config: RunnableConfig) -> dict[str, Any]:
        namespace, query, shown = _query(state, config)
        if query is None:
            return {output_key: []}
        found = await arecall(
            memory, query, namespace=namespace, k=k, mode=mode, min_score=min_score, shown=shown
        )
        return {output_key: memory_refs(found)}

    return RunnableLambda(run, afunc=arun, name="recall")


# -- policy: retain and forget ---------------------------------------------------------------
def _trimming(
    window: int | None,
    max_tokens: int | None,
    token_counter: TokenCounter | BaseLanguageModel[Any] | None,
) -> tuple[int | None, int | None, TokenCounter | BaseLanguageModel[Any]]:
    """The checked window, token budget and token counter of a policy node."""
    if window is not None:
        window = check_positive_int(window, what="window", meaning="turns kept in the state")
    if max_tokens is not None:
        max_tokens = check_positive_int(
            max_tokens, what="max_tokens", meaning="token budget of the state's messages"
        )
    if token_counter is not None and not (
        callable(token_counter) or isinstance(token_counter, BaseLanguageModel)
    ):
        raise InvalidTypeError(
            f"token_counter must be a function of a message list or a chat model, got "
            f"{type(token_counter).__name__}; leave it out for the approximate counter"
        )
    return window, max_tokens, token_counter or count_tokens_approximately


def _after_turn(
    messages: list[BaseMessage],
    messages_key: str,
    window: int | None,
    max_tokens: int | None,
    counter: TokenCounter | BaseLanguageModel[Any],
) -> dict[str, Any]:
    """What :func:`policy_node` writes back to the state: the ids of the latest turn's
    messages (offered now, not again) and the removals that trim the older turns."""
    update: dict[str, Any] = {}
    start = latest_human(messages)
    if start is not None:
        update["remembered"] = [m.id for m in messages[start:] if m.id is not None]
    removals = trim_removals(messages, window=window, max_tokens=max_tokens, token_counter=counter)
    if removals:
        update[messages_key] = removals
    return update


def policy_node(
    memory: AgentMemory,
    *,
    remember_roles: Sequence[str] = DEFAULT_REMEMBER_ROLES,
    window: int | None = None,
    max_tokens: int | None = None,
    token_counter: TokenCounter | BaseLanguageModel[Any] | None = None,
    user_key: str = "user_id",
    messages_key: str = "messages",
    source: str = "graph",
) -> RunnableLambda[Any, dict[str, Any]]:
    """A node that offers the latest turn to long-term memory and trims short-term state.

    Each text message of the latest turn of the roles asked for (by default only the
    user's words: not the AI answer, not tool traffic; pass ``remember_roles=("human",
    "ai")`` to keep answers too, stored as the assistant's) is offered to the memory's
    policy, which decides ADD / UPDATE / DELETE / NOOP and logs why
    (``memory.decisions(user)``). Messages already offered are not offered twice when
    the state has a ``remembered`` key (as :class:`RecallState` does): their ids are kept
    there. Then, when ``window`` or
    ``max_tokens`` is set, older turns are removed from the state with ``RemoveMessage``
    (see :func:`trim_removals`): the thread's checkpoint stays small while long-term
    memory keeps what the policy retained.

    A state without a human message is a no-op.

    Args:
        memory: The store.
        remember_roles: Message types to offer (default ``("human",)``; ``"ai"``,
            ``"tool"`` ... on request).
        window: Most turns to keep in the state (``None``: no window).
        max_tokens: Token budget of the state's messages (``None``: no budget).
        token_counter: Counts tokens of a message list (default: LangChain's approximate
            counter); a chat model works too.
        user_key: The ``configurable`` (or run context) key that names the user (the
            namespace).
        messages_key: The state key holding the messages.
        source: Stored in each record's metadata as ``source``.
    """
    memory = check_memory(memory)
    roles = check_roles(remember_roles)
    window, max_tokens, counter = _trimming(window, max_tokens, token_counter)
    user_key = _check_key(user_key, "user_key")
    messages_key = _check_key(messages_key, "messages_key")

    def _plan(
        state: object, config: RunnableConfig
    ) -> tuple[str, str | None, list[TurnItem], list[BaseMessage]]:
        namespace = user_namespace(config, user_key, context=run_context())
        thread = run_thread(config)
        messages = state_messages(state, messages_key)
        done = state.get("remembered") if isinstance(state, Mapping) else None
        items = turn_items(messages, roles, done or (), replies=keeps_replies(memory))
        return namespace, thread, items, messages

    def _update(messages: list[BaseMessage]) -> dict[str, Any]:
        return _after_turn(messages, messages_key, window, max_tokens, counter)

    def offers(items: list[TurnItem]) -> tuple[list[str], list[dict[str, Any]]]:
        return offered(memory.limits, [(i.message.type, i.text, i.metadata(source)) for i in items])

    def retain(state: object, config: RunnableConfig) -> dict[str, Any]:
        namespace, thread, items, messages = _plan(state, config)
        texts, metadatas = offers(items)
        memory.add_many(texts, namespace=namespace, thread=thread, metadatas=metadatas)
        return _update(messages)

    async def aretain(state: object, config: RunnableConfig) -> dict[str, Any]:
        namespace, thread, items, messages = _plan(state, config)
        texts, metadatas = offers(items)
        await memory.aadd_many(texts, namespace=namespace, thread=thread, metadatas=metadatas)
        return _update(messages)

    return RunnableLambda(retain, afunc=aretain, name="remember")


__all__ = [
    "DEFAULT_HEADER",
    "RecallState",
    "format_memories",
    "policy_node",
    "recall_node",
]
