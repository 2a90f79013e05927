"""Chat message histories on a real SQLite file with the real embedding model."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_to_dict,
)
from langchain_core.messages.utils import count_tokens_approximately

from langchain_agentmem import (
    AgentMemory,
    AgentMemoryError,
    BufferChatMessageHistory,
    InvalidInputError,
    InvalidTypeError,
    SentenceTransformerEmbeddings,
    TokenBufferChatMessageHistory,
    WindowChatMessageHistory,
)

HistoryFactory = Callable[..., BufferChatMessageHistory]

KINDS: dict[str, HistoryFactory] = {
    "buffer": BufferChatMessageHistory,
    "window": lambda memory, **kw: WindowChatMessageHistory(memory, k=2, **kw),
    "tokens": lambda memory, **kw: TokenBufferChatMessageHistory(memory, max_tokens=60, **kw),
}


def conversation(n: int) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for i in range(n):
        out += [HumanMessage(f"question number {i}"), AIMessage(f"answer number {i}")]
    return out


def rich_messages() -> list[BaseMessage]:
    """Content LangChain allows: content blocks, tool calls and their results."""
    return [
        SystemMessage("You are a helpful assistant."),
        HumanMessage(
            content=[
                {"type": "text", "text": "What is in this picture? 图片里是什么？"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            ],
            id="h-1",
        ),
        AIMessage(
            content="",
            tool_calls=[
                {"name": "describe_image", "args": {"detail": "high"}, "id": "call_1"},
                {"name": "lookup", "args": {"q": "cat", "n": 2}, "id": "call_2"},
            ],
            id="a-1",
        ),
        ToolMessage(content="a grey cat on a sofa", tool_call_id="call_1", name="describe_image"),
        ToolMessage(
            content=[{"type": "text", "text": "cats are mammals"}],
            tool_call_id="call_2",
            name="lookup",
        ),
        AIMessage(
            content=[{"type": "text", "text": "A grey cat sitting on a sofa."}],
            response_metadata={"model_name": "fake"},
        ),
    ]


def reopen(db_path: Path, embeddings: SentenceTransformerEmbeddings) -> AgentMemory:
    return AgentMemory(f"sqlite:///{db_path}", embeddings=embeddings)


# -- durability ----------------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_history_survives_restart(
    kind: str, db_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    written = conversation(6)
    first = reopen(db_path, embeddings)
    history = KINDS[kind](first, namespace="alice", thread="t1")
    for message in written[:4]:
        history.add_message(message)
    history.add_messages(written[4:])
    view_before = history.messages
    first.close()

    second = reopen(db_path, embeddings)
    try:
        again = KINDS[kind](second, namespace="alice", thread="t1")
        assert again.all_messages == written
        assert again.messages == view_before
        assert again.messages[-1] == written[-1]
        again.add_user_message("one more")
        assert again.all_messages[-1] == HumanMessage("one more")
        assert len(again.all_messages) == len(written) + 1
    finally:
        second.close()


@pytest.mark.parametrize("kind", sorted(KINDS))
async def test_async_methods(kind: str, memory: AgentMemory) -> None:
    history = KINDS[kind](memory, namespace="alice", thread="t1")
    other = KINDS[kind](memory, namespace="alice", thread="t2")
    memory.add("Alice keeps bees.", namespace="alice")
    written = conversation(5)
    await history.aadd_messages(written[:3])
    await history.aadd_messages(written[3:])
    await other.aadd_messages([HumanMessage("another thread")])

    assert history.all_messages == written
    assert await history.aget_messages() == history.messages
    assert (await history.aget_messages())[-1] == written[-1]

    await history.aclear()
    assert await history.aget_messages() == []
    assert history.all_messages == []
    # Clearing a thread leaves other threads and long-term memory alone.
    assert await other.aget_messages() == [HumanMessage("another thread")]
    assert [r.text for r in memory.records("alice")] == ["Alice keeps bees."]


def test_clear_is_per_thread_and_durable(
    db_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    with reopen(db_path, embeddings) as mem:
        a = BufferChatMessageHistory(mem, namespace="u", thread="a")
        b = BufferChatMessageHistory(mem, namespace="u", thread="b")
        a.add_messages(conversation(2))
        b.add_messages(conversation(1))
        a.clear()
    with reopen(db_path, embeddings) as mem:
        assert BufferChatMessageHistory(mem, namespace="u", thread="a").messages == []
        assert BufferChatMessageHistory(mem, namespace="u", thread="b").messages == conversation(1)


# -- content kept intact -------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(KINDS))
async def test_content_blocks_and_tool_calls_round_trip(
    kind: str, db_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    written = rich_messages()
    with reopen(db_path, embeddings) as mem:
        KINDS[kind](mem, namespace="u", thread="t").add_messages(written)
    with reopen(db_path, embeddings) as mem:
        history = BufferChatMessageHistory(mem, namespace="u", thread="t")
        got = history.messages
        assert got == written
        assert await history.aget_messages() == written
    human, ai = got[1], got[2]
    assert isinstance(human.content, list)
    assert human.content[1]["image_url"]["url"] == "data:image/png;base64,iVBORw0KGgo="
    assert isinstance(ai, AIMessage)
    assert [c["id"] for c in ai.tool_calls] == ["call_1", "call_2"]
    assert ai.tool_calls[1]["args"] == {"q": "cat", "n": 2}
    assert [type(m) for m in got] == [type(m) for m in written]


# -- the views -----------------------------------------------------------------------------
def test_window_shows_last_k_exchanges_and_keeps_everything(memory: AgentMemory) -> None:
    history = WindowChatMessageHistory(memory, namespace="u", thread="t", k=2)
    system = SystemMessage("Be brief.")
    written = [system, *conversation(4)]
    history.add_messages(written)
    assert history.messages == [system, *written[-4:]]
    assert history.all_messages == written
    # An exchange is a human message and everything after it (tool calls included).
    tools = rich_messages()[1:]
    history.add_messages(tools)
    assert history.messages == [system, *written[-2:], *tools]
    assert history.all_messages == written + tools
    wide = WindowChatMessageHistory(memory, namespace="u", thread="t", k=50)
    assert wide.messages == written + tools


def tool_thread() -> list[BaseMessage]:
    out: list[BaseMessage] = [SystemMessage("You can call tools.")]
    for i in range(4):
        out += [
            HumanMessage(f"What is the weather in city {i}?"),
            AIMessage(
                content="",
                tool_calls=[
                    {"name": "weather", "args": {"city": f"c{i}"}, "id": f"w{i}"},
                    {"name": "clock", "args": {"city": f"c{i}"}, "id": f"c{i}"},
                ],
            ),
            ToolMessage(content=f"sunny, {20 + i} degrees", tool_call_id=f"w{i}"),
            ToolMessage(content=f"{10 + i} o'clock", tool_call_id=f"c{i}"),
            AIMessage(f"It is sunny and {20 + i} degrees in city {i}."),
        ]
    return out


def test_token_view_never_splits_tool_calls_nor_loses_messages(memory: AgentMemory) -> None:
    written = tool_thread()
    BufferChatMessageHistory(memory, namespace="u", thread="t").add_messages(written)
    total = count_tokens_approximately(written)
    system_tokens = count_tokens_approximately(written[:1])
    seen_sizes = set()
    for budget in range(1, total + 20, 3):
        history = TokenBufferChatMessageHistory(
            memory, namespace="u", thread="t", max_tokens=budget
        )
        view = history.messages
        assert history.all_messages == written
        seen_sizes.add(len(view))
        if not view:
            continue
        # The leading system message is always kept, even over budget.
        assert count_tokens_approximately(view) <= max(budget, system_tokens)
        body = view[1:] if isinstance(view[0], SystemMessage) else view
        if isinstance(view[0], SystemMessage):
            assert view[0] == written[0]
        if body:
            # A suffix of the thread, starting on a human turn.
            assert body == written[len(written) - len(body) :]
            assert isinstance(body[0], HumanMessage)
        called = {c["id"] for m in body if isinstance(m, AIMessage) for c in m.tool_calls}
        answered = {m.tool_call_id for m in body if isinstance(m, ToolMessage)}
        assert called == answered, f"budget {budget} split a tool call from its result"
    # The budget really changes the view: from nothing up to the whole thread.
    assert len(written) in seen_sizes and len(seen_sizes) >= 4


def test_token_view_accepts_a_custom_counter(memory: AgentMemory) -> None:
    def one_per_message(messages: Any) -> int:
        return len(list(messages))

    BufferChatMessageHistory(memory, namespace="u", thread="t").add_messages(conversation(5))
    history = TokenBufferChatMessageHistory(
        memory, namespace="u", thread="t", max_tokens=4, token_counter=one_per_message
    )
    assert history.messages == conversation(5)[-4:]


# -- long-term: remember=True -----------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_remember_offers_turns_to_long_term_memory(
    kind: str, db_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    with reopen(db_path, embeddings) as mem:
        history = KINDS[kind](
            mem,
            namespace="alice",
            thread="monday",
            remember=True,
            remember_roles=("human", "ai"),
        )
        history.add_messages(
            [
                HumanMessage("My daughter's name is Maya and she is seven."),
                AIMessage("Lovely, I will remember Maya."),
            ]
        )
        history.add_messages(
            [
                HumanMessage("I am allergic to peanuts."),
                AIMessage("", tool_calls=[{"name": "note", "args": {}, "id": "n1"}]),
                ToolMessage("noted", tool_call_id="n1"),
                AIMessage("Noted: no peanuts."),
            ]
        )
        assert [op.kind.value for op in history.last_ops] == ["ADD", "ADD"]
        records = mem.records("alice")
        # Human and AI text only: empty tool-call turns and tool results are not offered.
        assert [(r.text, r.metadata["role"], r.thread) for r in records] == [
            ("My daughter's name is Maya and she is seven.", "human", "monday"),
            ("Lovely, I will remember Maya.", "ai", "monday"),
            ("I am allergic to peanuts.", "human", "monday"),
            ("Noted: no peanuts.", "ai", "monday"),
        ]
        mem.add("Bob's son is called Leo.", namespace="bob")

    # A new process, a new thread of the same user: the facts are recalled.
    with reopen(db_path, embeddings) as mem:
        friday = KINDS[kind](mem, namespace="alice", thread="friday")
        assert friday.messages == []
        hits = mem.search("What is my daughter called?", namespace="alice", k=1)
        assert "Maya" in hits[0].text
        hits = mem.search("Which food must I avoid?", namespace="alice", k=1)
        assert "peanuts" in hits[0].text
        # Another user recalls none of it.
        other = mem.search("What is my daughter called?", namespace="bob", k=5)
        assert [h.text for h in other] == ["Bob's son is called Leo."]
        assert mem.search("peanuts", namespace="carol", k=5) == []


async def test_remember_async_and_roles(memory: AgentMemory) -> None:
    quiet = BufferChatMessageHistory(memory, namespace="u", thread="t0")
    await quiet.aadd_messages([HumanMessage("I work night shifts."), AIMessage("OK.")])
    assert memory.records("u") == []

    humans_only = BufferChatMessageHistory(
        memory, namespace="u", thread="t1", remember=True, remember_roles=["human"]
    )
    await humans_only.aadd_messages([HumanMessage("I drive a red tram."), AIMessage("Cool!")])
    assert [r.text for r in memory.records("u")] == ["I drive a red tram."]
    assert [op.kind.value for op in humans_only.last_ops] == ["ADD"]
    hits = await memory.asearch("What vehicle do I drive?", namespace="u", k=1)
    assert hits[0].text == "I drive a red tram."

    # The default: the user's words only; the assistant's are kept when asked, as its own.
    default = BufferChatMessageHistory(memory, namespace="v", thread="t2", remember=True)
    await default.aadd_messages([HumanMessage("I live in Lyon."), AIMessage("You live in Nice.")])
    assert [(r.text, r.metadata["role"]) for r in memory.records("v")] == [
        ("I live in Lyon.", "human")
    ]


# -- bad input -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "error", "names"),
    [
        ({"namespace": "", "thread": "t"}, InvalidInputError, "namespace"),
        ({"namespace": "   ", "thread": "t"}, InvalidInputError, "namespace"),
        ({"namespace": None, "thread": "t"}, InvalidTypeError, "namespace"),
        ({"namespace": 7, "thread": "t"}, InvalidTypeError, "namespace"),
        ({"namespace": "u", "thread": ""}, InvalidInputError, "thread"),
        ({"namespace": "u", "thread": None}, InvalidTypeError, "thread"),
        ({"namespace": "u", "thread": "t", "remember_roles": ["user"]}, InvalidInputError, "user"),
        ({"namespace": "u", "thread": "t", "remember_roles": 3}, InvalidTypeError, "int"),
        (
            {"namespace": "u", "thread": "t", "remember_roles": ["AIMessageChunk"]},
            InvalidInputError,
            "streamed chunk; pass 'ai'",
        ),
    ],
)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_bad_construction(
    kind: str,
    kwargs: dict[str, Any],
    error: type[Exception],
    names: str,
    memory: AgentMemory,
) -> None:
    with pytest.raises(error, match=names):
        KINDS[kind](memory, **kwargs)


@pytest.mark.parametrize(
    ("factory", "error", "names"),
    [
        (
            lambda m: WindowChatMessageHistory(m, namespace="u", thread="t", k=0),
            InvalidInputError,
            "k",
        ),
        (
            lambda m: WindowChatMessageHistory(m, namespace="u", thread="t", k=-2),
            InvalidInputError,
            "-2",
        ),
        (
            lambda m: WindowChatMessageHistory(m, namespace="u", thread="t", k="3"),
            InvalidTypeError,
            "'3'",
        ),
        (
            lambda m: WindowChatMessageHistory(m, namespace="u", thread="t", k=True),
            InvalidTypeError,
            "k",
        ),
        (
            lambda m: TokenBufferChatMessageHistory(m, namespace="u", thread="t", max_tokens=0),
            InvalidInputError,
            "max_tokens",
        ),
        (
            lambda m: TokenBufferChatMessageHistory(m, namespace="u", thread="t", max_tokens=2.5),
            InvalidTypeError,
            "max_tokens",
        ),
        (
            lambda m: TokenBufferChatMessageHistory(
                m, namespace="u", thread="t", token_counter="tiktoken"
            ),
            InvalidTypeError,
            "token_counter",
        ),
        (
            lambda m: BufferChatMessageHistory("memory.db", namespace="u", thread="t"),
            InvalidTypeError,
            "AgentMemory",
        ),
    ],
)
def test_bad_sizes(
    factory: Callable[[AgentMemory], Any], error: type[Exception], names: str, memory: AgentMemory
) -> None:
    with pytest.raises(error, match=names):
        factory(memory)


NOT_MESSAGES: list[Any] = [
    ["hello"],
    [{"role": "user", "content": "hello"}],
    [HumanMessage("valid first"), "then a plain string"],
    [HumanMessage("valid first"), None],
    "hello",
    None,
    42,
]


@pytest.mark.parametrize("kind", sorted(KINDS))
async def test_non_messages_rejected_nothing_lost(kind: str, memory: AgentMemory) -> None:
    history = KINDS[kind](memory, namespace="u", thread="t", remember=True)
    history.add_messages(conversation(2))
    before = history.all_messages
    records_before = memory.records("u")
    for bad in NOT_MESSAGES:
        with pytest.raises(InvalidTypeError, match="BaseMessage"):
            history.add_messages(bad)
        with pytest.raises(InvalidTypeError, match="BaseMessage"):
            await history.aadd_messages(bad)
    # Nothing half-written, nothing lost.
    assert history.all_messages == before
    assert memory.records("u") == records_before


def test_unserialisable_content_rejected_nothing_lost(memory: AgentMemory) -> None:
    history = BufferChatMessageHistory(memory, namespace="u", thread="t")
    history.add_messages(conversation(1))
    bad = HumanMessage(content=[{"type": "text", "text": "x", "blob": object()}])
    with pytest.raises(AgentMemoryError, match="JSON"):
        history.add_messages([HumanMessage("fine"), bad])
    assert history.all_messages == conversation(1)


def test_chunks_are_stored_and_read_as_their_messages(memory: AgentMemory) -> None:
    memory.add_messages([HumanMessage("Hi"), AIMessageChunk("Hello!")], namespace="u", thread="t")
    stored = memory.messages(namespace="u", thread="t")
    assert [(type(m), m.type) for m in stored] == [(HumanMessage, "human"), (AIMessage, "ai")]
    # A chunk an earlier version stored is read back as its message.
    payload = json.dumps(message_to_dict(AIMessageChunk("Streamed.")))
    memory.backend.append_messages("u", "old", [payload])
    assert [m.type for m in memory.messages(namespace="u", thread="old")] == ["ai"]


def test_single_message_and_namespaces_are_partitions(memory: AgentMemory) -> None:
    alice = BufferChatMessageHistory(memory, namespace="alice", thread="t")
    bob = BufferChatMessageHistory(memory, namespace="bob", thread="t")
    alice.add_messages(HumanMessage("alone"))  # type: ignore[arg-type]
    bob.add_user_message("bob's turn")
    assert alice.messages == [HumanMessage("alone")]
    assert bob.messages == [HumanMessage("bob's turn")]
    bob.clear()
    assert alice.messages == [HumanMessage("alone")]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_no_deprecation_warning_from_our_histories(kind: str, memory: AgentMemory) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = KINDS[kind](memory, namespace="u", thread="t")
        history.add_user_message("hi")
        assert history.messages
    assert [w for w in caught if issubclass(w.category, DeprecationWarning)] == []
