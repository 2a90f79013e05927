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
prompt is built.

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

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any, NamedTuple, TypedDict
from urllib.parse import quote

from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import (
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.config import get_config
from langgraph.graph.message import add_messages
from langgraph.runtime import get_runtime

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.index import check_mode
from langchain_agentmem.integrations.chat_history import (
    DEFAULT_REMEMBER_ROLES,
    check_positive_int,
    check_roles,
    is_summary,
    keeps_replies,
    remembered_metadata,
    replied_to,
)
from langchain_agentmem.integrations.offers import offered
from langchain_agentmem.integrations.prompt import (
    DEFAULT_HEADER,
    MemoryFormatter,
    MemoryItem,
    as_records,
    check_formatter,
    check_memory_items,
    format_memories,
    item_id,
    memory_ref,
    render,
    resolve_items,
)
from langchain_agentmem.integrations.recall import arecall, recall, shown_texts
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.messages import plain_messages
from langchain_agentmem.types import MemoryRecord
from langchain_agentmem.validation import (
    DEFAULT_MAX_RECALL_CHARS,
    check_k,
    check_min_score,
    check_name,
    check_namespace,
)

TokenCounter = Callable[[Iterable[BaseMessage]], int]


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


# -- shared helpers (also used by the middleware and the store) -------------------------------
def check_memory(memory: object) -> AgentMemory:
    """``memory`` if it is an ``AgentMemory``, else a clear error."""
    if not isinstance(memory, AgentMemory):
        raise InvalidTypeError(
            f"memory must be an AgentMemory, got {type(memory).__name__}; pass AgentMemory(url)"
        )
    return memory


AUTH_USER_KEY = "langgraph_auth_user_id"
"""The ``configurable`` key where a LangGraph server puts the authenticated user's id."""


def user_namespace(
    config: Mapping[str, Any] | None, user_key: str, *, context: object = None
) -> str:
    """The namespace of the user a run belongs to.

    On a LangGraph server with authentication, the user is the authenticated identity
    (``configurable["langgraph_auth_user_id"]``), which clients cannot set; a
    ``user_key`` value that names someone else is refused. Otherwise it is read from
    ``config["configurable"][user_key]``, else from the run context (a mapping or an
    object with that attribute). Both present and different is an error: memory is never
    written to a namespace the caller did not mean.

    Raises:
        InvalidInputError: no user id anywhere, or two that disagree.
    """
    configurable = (config or {}).get("configurable") or {}
    from_config = configurable.get(user_key)
    if isinstance(context, Mapping):
        from_context = context.get(user_key)
    else:
        from_context = getattr(context, user_key, None)
    if from_config is not None and from_context is not None and from_config != from_context:
        raise InvalidInputError(
            f"the run names two users: configurable[{user_key!r}]={from_config!r} and "
            f"context.{user_key}={from_context!r}; pass one"
        )
    user = from_config if from_config is not None else from_context
    authenticated = configurable.get(AUTH_USER_KEY)
    if authenticated:
        if user is not None and user != authenticated:
            raise InvalidInputError(
                f"the run names user {user!r} but the authenticated user is "
                f"{authenticated!r}; on a LangGraph server memory belongs to the "
                "authenticated user, leave the user id out of the config"
            )
        return check_namespace(authenticated, what=f"configurable[{AUTH_USER_KEY!r}]")
    if user is None:
        raise InvalidInputError(
            f"no user id in the run config or context: pass config={{'configurable': "
            f"{{{user_key!r}: 'alice', 'thread_id': 't1'}}}} or the run context "
            f"context={{{user_key!r}: 'alice'}} (memory is per user; it is never shared by "
            "default)"
        )
    where = f"configurable[{user_key!r}]" if from_config is not None else f"context.{user_key}"
    return check_namespace(user, what=where)


def run_context() -> object:
    """The context of the LangGraph run this is called in (``invoke(..., context=...)``);
    ``None`` outside a graph run or when the run has none.

    LangGraph hands it to a node as ``runtime.context``; nodes built as runnables (those of
    this module) read it from the run (``langgraph.runtime.get_runtime``), sync or async.
    """
    try:
        runtime = get_runtime()
    except (RuntimeError, KeyError):  # outside a runnable, or a config without configurable
        return None
    return getattr(runtime, "context", None)


def user_thread_id(user: str, thread: str) -> str:
    """A LangGraph ``thread_id`` for ``thread`` of ``user`` that no other pair shares.

    LangGraph keys checkpoints by ``thread_id`` alone; both parts are percent-encoded
    before they are joined, so ``("a/b", "c")`` and ``("a", "b/c")`` never collide.
    """
    thread = check_name(thread, what="thread")
    return f"{user_threads_prefix(user)}{quote(thread, safe='')}"


def user_threads_prefix(user: str) -> str:
    """What every :func:`user_thread_id` of ``user`` starts with, and no other user's does."""
    return f"{quote(check_name(user, what='user'), safe='')}/"


def run_thread(config: Mapping[str, Any] | None) -> str | None:
    """LangGraph's ``thread_id`` of a run, if any."""
    thread = ((config or {}).get("configurable") or {}).get("thread_id")
    return None if thread is None else check_name(str(thread), what="thread_id")


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


def message_text(message: BaseMessage) -> str:
    """The text of a message (text blocks only; images and other blocks are skipped)."""
    return str(message.text).strip()


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


def memory_refs(records: Sequence[MemoryRecord]) -> list[dict[str, Any]]:
    """Recalled records as the graph state keeps them: ids and scores, no text."""
    return [memory_ref(r) for r in records]


def _run_namespace(
    config: Mapping[str, Any] | None,
    context: object,
    namespace: str | None,
    user_key: str,
    what: str,
) -> str:
    """The namespace the memories are read from: ``namespace``, else the run's user (from
    its config or context, as the nodes read it)."""
    if namespace is not None:
        if config is not None or context is not None:
            given = "config=" if config is not None else "context="
            raise InvalidInputError(
                f"{what} got both {given} and namespace={namespace!r}; pass one (the run's "
                "config or context names the user)"
            )
        return check_namespace(namespace)
    if context is None:
        context = run_context()
    if config is None:
        try:
            config = get_config()
        except RuntimeError:  # called outside a graph run
            if context is None:
                raise InvalidInputError(
                    f"{what} reads the memories from the memory and needs to know whose they "
                    "are: call it inside a graph node, or pass config= (the run's config), "
                    "context= (the run's context) or namespace="
                ) from None
            config = {}
    return user_namespace(config, _check_key(user_key, "user_key"), context=context)


def _plan(
    memories: object,
    memory: AgentMemory | None,
    config: Mapping[str, Any] | None,
    context: object,
    namespace: str | None,
    user_key: str,
    what: str,
) -> tuple[list[MemoryItem], str | None, list[str]]:
    """The items, the namespace to read them from, and the ids to read (checked)."""
    items = check_memory_items(memories)
    if memory is None:
        for i, item in enumerate(items):
            if isinstance(item, Mapping) and not isinstance(item.get("text"), str):
                raise InvalidInputError(
                    f"memories[{i}] is a reference without text (recall_node keeps only "
                    "record ids in the graph state, never the text); pass the memory to "
                    f"read it from: {what}(state['memories'], memory)"
                )
        return items, None, []
    check_memory(memory)
    ids = list(dict.fromkeys(rid for rid in map(item_id, items) if rid is not None))
    if not ids:
        return items, None, []
    return items, _run_namespace(config, context, namespace, user_key, what), ids


def recalled_memories(
    memories: Sequence[Mapping[str, Any] | MemoryRecord] | None,
    memory: AgentMemory,
    *,
    config: Mapping[str, Any] | None = None,
    context: object = None,
    namespace: str | None = None,
    user_key: str = "user_id",
) -> list[MemoryRecord]:
    """The records ``state["memories"]`` refers to, as the memory holds them now.

    :func:`recall_node` keeps only record ids and scores in the graph state (state is
    checkpointed, and a checkpoint must not keep a copy of a memory that is later
    forgotten); this reads the texts by id, in the recalled order, with their scores. A
    record deleted since it was recalled is left out. Dicts without an ``id`` that
    carry a ``text`` are taken as they are.

    Args:
        memories: ``state["memories"]`` as filled by :func:`recall_node` (references,
            records, or dicts with ``text``).
        memory: The store the recall node searched.
        config: The run's config; default: the config of the graph run this is called in.
        context: The run's context (``runtime.context``); default: the context of the
            graph run this is called in.
        namespace: The user's namespace, instead of reading it from the config or context.
        user_key: The ``configurable`` (or context) key that names the user (as given to
            :func:`recall_node`).

    Raises:
        InvalidTypeError: ``memories`` is not a list of references or records, or
            ``memory`` is not an ``AgentMemory``.
        InvalidInputError: the user cannot be told (outside a graph run without
            ``config``, ``context`` or ``namespace``; no user id in the config or context,
            or two that disagree).
    """
    what = "recalled_memories"
    items, ns, ids = _plan(
        memories, check_memory(memory), config, context, namespace, user_key, what
    )
    found = memory.get_many(ids, namespace=ns) if ns is not None else []
    return resolve_items(items, found)


async def arecalled_memories(
    memories: Sequence[Mapping[str, Any] | MemoryRecord] | None,
    memory: AgentMemory,
    *,
    config: Mapping[str, Any] | None = None,
    context: object = None,
    namespace: str | None = None,
    user_key: str = "user_id",
) -> list[MemoryRecord]:
    """Async :func:`recalled_memories`."""
    what = "arecalled_memories"
    items, ns, ids = _plan(
        memories, check_memory(memory), config, context, namespace, user_key, what
    )
    found = await memory.aget_many(ids, namespace=ns) if ns is not None else []
    return resolve_items(items, found)


def _message(
    records: Sequence[MemoryRecord],
    formatter: MemoryFormatter | None,
    header: str | None,
    memory: AgentMemory | None,
) -> SystemMessage | None:
    limit = DEFAULT_MAX_RECALL_CHARS if memory is None else memory.limits.max_recall_chars
    text = render(records, formatter, header=header, max_chars=limit) if records else ""
    return SystemMessage(content=text) if text else None


def memories_message(
    memories: Sequence[Mapping[str, Any] | MemoryRecord] | None,
    memory: AgentMemory | None = None,
    *,
    config: Mapping[str, Any] | None = None,
    context: object = None,
    namespace: str | None = None,
    user_key: str = "user_id",
    header: str | None = DEFAULT_HEADER,
    formatter: MemoryFormatter | None = None,
) -> SystemMessage | None:
    """A system message holding the recalled memories, fenced, or ``None`` when none.

    In a graph node, ``memories_message(state["memories"], memory)``: the state holds
    only record ids (see :func:`recall_node`), so the texts are read from ``memory`` now,
    for the user of the run (its config or context); a memory deleted since it was
    recalled is not told. Without ``memory``, only records or dicts that carry their
    ``text`` can be told.

    Args:
        memories: ``state["memories"]`` as filled by :func:`recall_node` (or records).
        memory: The store the recall node searched.
        config: The run's config; default: the config of the graph run this is called in.
        context: The run's context (``runtime.context``); default: the context of the
            graph run this is called in.
        namespace: The user's namespace, instead of reading it from the config or context.
        user_key: The ``configurable`` (or context) key that names the user (as given to
            :func:`recall_node`).
        header: The line written inside the block before the memories.
        formatter: Replaces :func:`format_memories` (a function of a list of
            ``MemoryRecord`` returning a str).

    Raises:
        InvalidInputError: references without ``memory``; or the user cannot be told
            (outside a graph run without ``config``, ``context`` or ``namespace``, no user
            id in the config or context, or two that disagree).
        InvalidTypeError: ``memories`` is not a list of references or records.
    """
    formatter = check_formatter(formatter)
    items, ns, ids = _plan(
        memories, memory, config, context, namespace, user_key, "memories_message"
    )
    if memory is None:
        return _message(as_records(items), formatter, header, None)
    found = memory.get_many(ids, namespace=ns) if ns is not None else []
    return _message(resolve_items(items, found), formatter, header, memory)


async def amemories_message(
    memories: Sequence[Mapping[str, Any] | MemoryRecord] | None,
    memory: AgentMemory | None = None,
    *,
    config: Mapping[str, Any] | None = None,
    context: object = None,
    namespace: str | None = None,
    user_key: str = "user_id",
    header: str | None = DEFAULT_HEADER,
    formatter: MemoryFormatter | None = None,
) -> SystemMessage | None:
    """Async :func:`memories_message` (reads the texts without blocking the event loop)."""
    formatter = check_formatter(formatter)
    items, ns, ids = _plan(
        memories, memory, config, context, namespace, user_key, "amemories_message"
    )
    if memory is None:
        return _message(as_records(items), formatter, header, None)
    found = await memory.aget_many(ids, namespace=ns) if ns is not None else []
    return _message(resolve_items(items, found), formatter, header, memory)


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
    counter: TokenCounter | BaseLanguageModel[Any] = token_counter or count_tokens_approximately
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
        update: dict[str, Any] = {}
        start = latest_human(messages)
        if start is not None:
            update["remembered"] = [m.id for m in messages[start:] if m.id is not None]
        removals = trim_removals(
            messages, window=window, max_tokens=max_tokens, token_counter=counter
        )
        if removals:
            update[messages_key] = removals
        return update

    def retain(state: object, config: RunnableConfig) -> dict[str, Any]:
        namespace, thread, items, messages = _plan(state, config)
        texts, metadatas = offered(
            memory.limits, [(i.message.type, i.text, i.metadata(source)) for i in items]
        )
        memory.add_many(texts, namespace=namespace, thread=thread, metadatas=metadatas)
        return _update(messages)

    async def aretain(state: object, config: RunnableConfig) -> dict[str, Any]:
        namespace, thread, items, messages = _plan(state, config)
        texts, metadatas = offered(
            memory.limits, [(i.message.type, i.text, i.metadata(source)) for i in items]
        )
        await memory.aadd_many(texts, namespace=namespace, thread=thread, metadatas=metadatas)
        return _update(messages)

    return RunnableLambda(retain, afunc=aretain, name="remember")


__all__ = [
    "DEFAULT_HEADER",
    "RecallState",
    "amemories_message",
    "arecalled_memories",
    "format_memories",
    "memories_message",
    "policy_node",
    "recall_node",
    "recalled_memories",
    "trim_removals",
    "user_thread_id",
]
