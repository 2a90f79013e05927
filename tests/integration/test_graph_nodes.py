"""LangGraph recall and policy nodes on real checkpointers, the real model and real SQLite."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph

from langchain_agentmem import (
    AgentMemory,
    InvalidInputError,
    InvalidTypeError,
    OpKind,
    RecallState,
    memories_message,
    policy_node,
    recall_node,
    trim_removals,
)
from tests.fakes import RecordingChatModel
from tests.stores import PG_URL, require_postgres


def cfg(user: str, thread: str) -> RunnableConfig:
    return {"configurable": {"user_id": user, "thread_id": thread}}


def build(
    memory: AgentMemory,
    llm: RecordingChatModel,
    checkpointer: BaseCheckpointSaver[Any] | None,
    **policy: Any,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    def chat(state: RecallState) -> dict[str, Any]:
        system = memories_message(state.get("memories"))
        prompt = [system, *state["messages"]] if system else state["messages"]
        return {"messages": [llm.invoke(prompt)]}

    async def achat(state: RecallState) -> dict[str, Any]:
        system = memories_message(state.get("memories"))
        prompt = [system, *state["messages"]] if system else state["messages"]
        return {"messages": [await llm.ainvoke(prompt)]}

    builder = StateGraph(RecallState)
    builder.add_node("recall", recall_node(memory, k=3))
    builder.add_node("chat", RunnableLambda(chat, afunc=achat))
    builder.add_node("remember", policy_node(memory, **policy))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "chat")
    builder.add_edge("chat", "remember")
    return builder.compile(checkpointer=checkpointer)


def check_recall_across_threads(
    memory: AgentMemory, llm: RecordingChatModel, graph: CompiledStateGraph[Any, Any, Any, Any]
) -> None:
    """What a later thread of alice sends the model; bob sees none of it."""
    prompt = llm.prompt_text(-1)
    assert "My cat is called Miso" in prompt
    assert "<recalled_memories>" in prompt
    assert isinstance(llm.prompts[-1][0], SystemMessage)
    kinds = [d.kind for d in memory.decisions("alice")]
    assert kinds.count(OpKind.ADD) >= 2
    assert all(d.reason for d in memory.decisions("alice"))
    assert memory.records("bob") == []


@pytest.fixture
def llm() -> RecordingChatModel:
    return RecordingChatModel.replying("Noted.", "Your cat is Miso.", "Hello Bob.")


def sqlite_saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


@pytest.fixture(params=["memory", "sqlite"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseCheckpointSaver[Any]]:
    if request.param == "memory":
        yield InMemorySaver()
    else:
        yield from sqlite_saver(tmp_path)


def test_recall_across_threads_not_users(
    memory: AgentMemory, llm: RecordingChatModel, saver: BaseCheckpointSaver[Any]
) -> None:
    graph = build(memory, llm, saver)
    graph.invoke({"messages": [HumanMessage("My cat is called Miso.")]}, cfg("alice", "t1"))
    out = graph.invoke({"messages": [HumanMessage("What is my cat's name?")]}, cfg("alice", "t2"))
    check_recall_across_threads(memory, llm, graph)
    assert out["memories"][0]["text"] == "My cat is called Miso."
    # The new thread's checkpoint holds only its own messages: recall came from memory.
    assert out["messages"][0].text == "What is my cat's name?"

    graph.invoke({"messages": [HumanMessage("What is my cat's name?")]}, cfg("bob", "t3"))
    assert "Miso" not in llm.prompt_text(-1)
    assert "<recalled_memories>" not in llm.prompt_text(-1)
    alice_texts = {r.text for r in memory.records("alice")}
    bob_texts = {r.text for r in memory.records("bob")}
    assert "My cat is called Miso." in alice_texts
    assert bob_texts == {"What is my cat's name?"}  # the user's words, not the reply
    record = next(r for r in memory.records("alice") if r.text == "My cat is called Miso.")
    assert record.thread == "t1"
    assert record.metadata["role"] == "human"
    assert record.metadata["source"] == "graph"


async def test_async_recall_with_async_sqlite_saver(
    memory: AgentMemory, llm: RecordingChatModel, tmp_path: Path
) -> None:
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "cp.db")) as saver:
        graph = build(memory, llm, saver)
        await graph.ainvoke(
            {"messages": [HumanMessage("My cat is called Miso.")]}, cfg("alice", "a1")
        )
        await graph.ainvoke(
            {"messages": [HumanMessage("What is my cat's name?")]}, cfg("alice", "a2")
        )
        check_recall_across_threads(memory, llm, graph)
        # A thread continues from its checkpoint.
        state = await graph.aget_state(cfg("alice", "a1"))
        assert [m.type for m in state.values["messages"]] == ["human", "ai"]


def test_sync_stream_and_restart_with_sqlite_saver(
    tmp_path: Path, embeddings: Any, llm: RecordingChatModel
) -> None:
    url = f"sqlite:///{tmp_path / 'mem.db'}"
    with AgentMemory(url, embeddings=embeddings) as memory:
        for saver in sqlite_saver(tmp_path):
            graph = build(memory, llm, saver)
            list(
                graph.stream(
                    {"messages": [HumanMessage("My cat is called Miso.")]}, cfg("alice", "t1")
                )
            )
    # A new process: new memory object, new saver on the same files.
    with AgentMemory(url, embeddings=embeddings) as memory:
        for saver in sqlite_saver(tmp_path):
            graph = build(memory, llm, saver)
            graph.invoke({"messages": [HumanMessage("What is my cat's name?")]}, cfg("alice", "t1"))
            state = graph.get_state(cfg("alice", "t1"))
            assert [m.type for m in state.values["messages"]] == ["human", "ai", "human", "ai"]
            # The same thread shows the fact in its conversation: it is not recalled again.
            assert llm.prompt_text(-1).count("My cat is called Miso") == 1
            assert "<recalled_memories>" not in llm.prompt_text(-1)
            graph.invoke({"messages": [HumanMessage("What is my cat's name?")]}, cfg("alice", "t2"))
            check_recall_across_threads(memory, llm, graph)


@pytest.mark.postgres
def test_recall_with_postgres_saver(pg_url: str, embeddings: Any, llm: RecordingChatModel) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver

    require_postgres()
    schema = f"agentmem_cp_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in PG_URL else "?"
    try:
        with (
            AgentMemory(pg_url, embeddings=embeddings) as memory,
            PostgresSaver.from_conn_string(
                f"{PG_URL}{sep}options=-csearch_path%3D{schema}"
            ) as saver,
        ):
            saver.setup()
            graph = build(memory, llm, saver)
            graph.invoke({"messages": [HumanMessage("My cat is called Miso.")]}, cfg("alice", "p1"))
            graph.invoke({"messages": [HumanMessage("What is my cat's name?")]}, cfg("alice", "p2"))
            check_recall_across_threads(memory, llm, graph)
            graph.invoke({"messages": [HumanMessage("What is my cat's name?")]}, cfg("bob", "p3"))
            assert "Miso" not in llm.prompt_text(-1)
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


# -- trimming --------------------------------------------------------------------------------
def test_window_trims_state_but_memory_keeps_everything(
    memory: AgentMemory, llm: RecordingChatModel
) -> None:
    graph = build(memory, llm, InMemorySaver(), window=2)
    facts = ["I was born in Porto.", "I work as a baker.", "My sister is Ines.", "I like chess."]
    for fact in facts:
        graph.invoke({"messages": [HumanMessage(fact)]}, cfg("alice", "w"))
    state = graph.get_state(cfg("alice", "w")).values
    assert [m.text for m in state["messages"] if m.type == "human"] == facts[-2:]
    assert {f for f in facts} <= {r.text for r in memory.records("alice")}
    graph.invoke({"messages": [HumanMessage("Where was I born?")]}, cfg("alice", "w"))
    assert "Porto" in llm.prompt_text(-1)


def tool_thread() -> list[Any]:
    call = {"name": "weather", "args": {"city": "Lyon"}, "id": "call-1", "type": "tool_call"}
    return [
        SystemMessage("You are helpful.", id="s"),
        HumanMessage("Hi, I am Ana.", id="h1"),
        AIMessage("Hello Ana.", id="a1"),
        HumanMessage("Weather in Lyon?", id="h2"),
        AIMessage("", tool_calls=[call], id="a2"),
        ToolMessage(
            "Sunny, 24C, light wind from the north all afternoon.", tool_call_id="call-1", id="t2"
        ),
        AIMessage("It is sunny in Lyon.", id="a3"),
        HumanMessage("And tomorrow?", id="h3"),
    ]


def test_token_budget_never_splits_tool_call_or_drops_newest_human() -> None:
    messages = tool_thread()
    for budget in range(1, 200):
        removed = {r.id for r in trim_removals(messages, max_tokens=budget)}
        kept = [m for m in messages if m.id not in removed]
        assert kept[0].id == "s"  # the system message stays
        assert kept[-1].id == "h3"  # the newest human message stays
        assert ("a2" in removed) == ("t2" in removed)  # tool call and result go together
        assert kept[1].type == "human"  # what is kept starts on a turn
    # Generous budget: nothing removed; tiny budget: only the newest turn is left.
    assert trim_removals(messages, max_tokens=10_000) == []
    assert {r.id for r in trim_removals(messages, max_tokens=1)} == {
        "h1",
        "a1",
        "h2",
        "a2",
        "t2",
        "a3",
    }
    assert {r.id for r in trim_removals(messages, window=2)} == {"h1", "a1"}
    assert {r.id for r in trim_removals(messages, window=5)} == set()


def test_policy_node_offers_text_not_tool_traffic(memory: AgentMemory) -> None:
    policy_node(memory).invoke({"messages": tool_thread()[:7]}, cfg("carol", "tools"))
    # By default only the user's words.
    assert [(r.text, r.metadata["role"]) for r in memory.records("carol")] == [
        ("Weather in Lyon?", "human")
    ]
    node = policy_node(memory, max_tokens=40, remember_roles=("human", "ai"))
    update = node.invoke({"messages": tool_thread()[:7]}, cfg("alice", "tools"))
    texts = {r.text for r in memory.records("alice")}
    assert texts == {"Weather in Lyon?", "It is sunny in Lyon."}
    assert update["remembered"] == ["h2", "a2", "t2", "a3"]
    assert {m.id for m in update["messages"]} == {"h1", "a1"}
    # Offered once: the same turn again (as when a graph loops) adds nothing.
    node.invoke(
        {"messages": tool_thread()[:7], "remembered": update["remembered"]}, cfg("alice", "tools")
    )
    assert len(memory.records("alice")) == 2


# -- bad input -------------------------------------------------------------------------------
def test_missing_user_id_is_an_error_and_writes_nothing(memory: AgentMemory) -> None:
    graph = build(memory, RecordingChatModel.replying(), InMemorySaver())
    with pytest.raises(InvalidInputError, match="user_id"):
        graph.invoke({"messages": [HumanMessage("secret")]}, {"configurable": {"thread_id": "x"}})
    with pytest.raises(InvalidInputError, match="user_id"):
        policy_node(memory).invoke({"messages": [HumanMessage("secret")]})
    assert memory.namespaces() == []


def test_custom_user_key(memory: AgentMemory) -> None:
    node = policy_node(memory, user_key="tenant")
    node.invoke({"messages": [HumanMessage("Tenant fact.")]}, {"configurable": {"tenant": "acme"}})
    assert [r.text for r in memory.records("acme")] == ["Tenant fact."]
    found = recall_node(memory, user_key="tenant").invoke(
        {"messages": [HumanMessage("fact?")]}, {"configurable": {"tenant": "acme"}}
    )
    assert found["memories"][0]["text"] == "Tenant fact."


def test_state_without_messages(memory: AgentMemory) -> None:
    with pytest.raises(InvalidInputError, match="no 'messages' key"):
        recall_node(memory).invoke({"question": "hi"}, cfg("alice", "t"))
    with pytest.raises(InvalidTypeError, match="list of LangChain messages"):
        policy_node(memory).invoke({"messages": "hi"}, cfg("alice", "t"))
    # A state with messages but no human one: nothing to recall, nothing to offer.
    assert recall_node(memory).invoke({"messages": []}, cfg("alice", "t")) == {"memories": []}
    assert policy_node(memory).invoke({"messages": [AIMessage("hi")]}, cfg("alice", "t")) == {}
    assert memory.namespaces() == []


def test_non_text_content_is_skipped(memory: AgentMemory) -> None:
    image = HumanMessage(
        content=[{"type": "image", "url": "https://example.com/cat.png"}], id="img"
    )
    assert recall_node(memory).invoke({"messages": [image]}, cfg("alice", "t")) == {"memories": []}
    policy_node(memory).invoke({"messages": [image]}, cfg("alice", "t"))
    assert memory.records("alice") == []
    mixed = HumanMessage(
        content=[{"type": "text", "text": "This is my cat Miso."}, {"type": "image", "url": "x"}]
    )
    policy_node(memory).invoke({"messages": [mixed]}, cfg("alice", "t"))
    assert [r.text for r in memory.records("alice")] == ["This is my cat Miso."]


def test_bad_arguments(memory: AgentMemory) -> None:
    with pytest.raises(InvalidTypeError, match="AgentMemory"):
        recall_node("sqlite:///x.db")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="window"):
        policy_node(memory, window=0)
    with pytest.raises(InvalidTypeError, match="token_counter"):
        policy_node(memory, token_counter=3)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="remember_roles"):
        policy_node(memory, remember_roles=("robot",))


def test_messages_state_works_too(memory: AgentMemory) -> None:
    """A plain MessagesState graph: memories are not kept in state, recall still works."""
    llm = RecordingChatModel.replying()
    recall = recall_node(memory)

    def chat(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        system = memories_message(recall.invoke(state, config)["memories"])
        return {"messages": [llm.invoke([*([system] if system else []), *state["messages"]])]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_node("remember", policy_node(memory))
    builder.add_edge(START, "chat")
    builder.add_edge("chat", "remember")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"messages": [HumanMessage("My favourite colour is teal.")]}, cfg("u", "1"))
    graph.invoke({"messages": [HumanMessage("Which colour do I like?")]}, cfg("u", "2"))
    assert "teal" in llm.prompt_text(-1)
