"""LangGraph recall and policy nodes on real checkpointers, the real model and real SQLite."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import psycopg
import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
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
    amemories_message,
    arecalled_memories,
    memories_message,
    policy_node,
    recall_node,
    recalled_memories,
    trim_removals,
)
from langchain_agentmem.integrations.prompt import written
from tests.fakes import RecordingChatModel
from tests.stores import PG_URL, require_postgres


def cfg(user: str, thread: str) -> RunnableConfig:
    return {"configurable": {"user_id": user, "thread_id": thread}}


def build(
    memory: AgentMemory,
    llm: RecordingChatModel,
    checkpointer: BaseCheckpointSaver[Any] | None,
    interrupt_before: list[str] | None = None,
    context_schema: type[Any] | None = None,
    **policy: Any,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    def chat(state: RecallState) -> dict[str, Any]:
        system = memories_message(state.get("memories"), memory)
        prompt = [system, *state["messages"]] if system else state["messages"]
        return {"messages": [llm.invoke(prompt)]}

    async def achat(state: RecallState) -> dict[str, Any]:
        system = await amemories_message(state.get("memories"), memory)
        prompt = [system, *state["messages"]] if system else state["messages"]
        return {"messages": [await llm.ainvoke(prompt)]}

    builder = StateGraph(RecallState, context_schema=context_schema)
    builder.add_node("recall", recall_node(memory, k=3))
    builder.add_node("chat", RunnableLambda(chat, afunc=achat))
    builder.add_node("remember", policy_node(memory, **policy))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "chat")
    builder.add_edge("chat", "remember")
    return builder.compile(checkpointer=checkpointer, interrupt_before=interrupt_before)


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
    # The state holds a reference; the text is read from memory by id.
    assert set(out["memories"][0]) == {"id", "score"}
    recalled = recalled_memories(out["memories"], memory, config=cfg("alice", "t2"))
    assert recalled[0].text == "My cat is called Miso."
    assert recalled[0].score == out["memories"][0]["score"]
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


# -- the user from LangGraph's run context -----------------------------------------------------
@dataclass
class UserContext:
    """A run context as a dataclass (LangGraph's ``context_schema``)."""

    user_id: str


class UserContextDict(TypedDict):
    """A run context as a TypedDict."""

    user_id: str


def thread(name: str) -> RunnableConfig:
    return {"configurable": {"thread_id": name}}


@pytest.mark.parametrize(
    "context",
    [UserContext, UserContextDict, None],
    ids=["dataclass", "typeddict", "no-schema"],
)
@pytest.mark.parametrize("run", ["sync", "async"])
async def test_nodes_read_the_user_from_the_run_context(
    memory: AgentMemory, llm: RecordingChatModel, context: type[Any] | None, run: str
) -> None:
    """``invoke(..., context=...)`` with no configurable user: every node finds the user."""
    graph = build(memory, llm, InMemorySaver(), context_schema=context)

    def ctx(user: str) -> Any:
        return UserContext(user) if context is UserContext else {"user_id": user}

    async def turn(text: str, user: str, name: str) -> dict[str, Any]:
        state = {"messages": [HumanMessage(text)]}
        if run == "sync":
            return graph.invoke(state, thread(name), context=ctx(user))
        return await graph.ainvoke(state, thread(name), context=ctx(user))

    await turn("My cat is called Miso.", "alice", "t1")
    out = await turn("What is my cat's name?", "alice", "t2")
    check_recall_across_threads(memory, llm, graph)  # told from memory, read by id
    assert [r.text for r in recalled_memories(out["memories"], memory, namespace="alice")] == [
        "My cat is called Miso."
    ]
    await turn("What is my cat's name?", "bob", "t3")
    assert "Miso" not in llm.prompt_text(-1)
    assert {r.text for r in memory.records("bob")} == {"What is my cat's name?"}


async def test_recalled_memories_in_a_node_read_the_user_from_the_context(
    memory: AgentMemory,
) -> None:
    memory.add(CAT, namespace="alice", metadata={"role": "human"})
    recall = recall_node(memory)
    told: list[list[str]] = []

    def chat(state: RecallState, config: RunnableConfig) -> dict[str, Any]:
        refs = recall.invoke(state, config)["memories"]
        told.append([r.text for r in recalled_memories(refs, memory)])
        told.append([r.text for r in recalled_memories(refs, memory, config=config)])
        return {}

    async def achat(state: RecallState, config: RunnableConfig) -> dict[str, Any]:
        refs = (await recall.ainvoke(state, config))["memories"]
        told.append([r.text for r in await arecalled_memories(refs, memory)])
        message = await amemories_message(refs, memory, config=config)
        told.append([CAT] if message is not None and CAT in message.text else [])
        return {}

    builder = StateGraph(RecallState, context_schema=UserContext)
    builder.add_node("chat", RunnableLambda(chat, afunc=achat))
    builder.add_edge(START, "chat")
    graph = builder.compile()
    question = {"messages": [HumanMessage("my cat?")]}
    graph.invoke(question, context=UserContext("alice"))
    await graph.ainvoke(question, context=UserContext("alice"))
    assert told == [[CAT]] * 4
    told.clear()
    graph.invoke(question, context=UserContext("bob"))
    assert told == [[], []]


def test_a_config_and_a_context_naming_two_users_are_refused(memory: AgentMemory) -> None:
    graph = build(
        memory, RecordingChatModel.replying(), InMemorySaver(), context_schema=UserContext
    )
    config: RunnableConfig = cfg("alice", "t1")
    with pytest.raises(InvalidInputError, match=r"two users.*'alice'.*'bob'"):
        graph.invoke({"messages": [HumanMessage("secret")]}, config, context=UserContext("bob"))
    node = policy_node(memory)
    builder = StateGraph(RecallState, context_schema=UserContextDict)
    builder.add_node("remember", node)
    builder.add_edge(START, "remember")
    with pytest.raises(InvalidInputError, match="two users"):
        builder.compile().invoke(
            {"messages": [HumanMessage("secret")]}, config, context={"user_id": "bob"}
        )
    assert memory.namespaces() == []
    # The same user in both is one user.
    graph.invoke({"messages": [HumanMessage("Hi.")]}, config, context=UserContext("alice"))
    assert [r.text for r in memory.records("alice")] == ["Hi."]


async def test_no_user_in_config_or_context_is_an_error_that_names_both(
    memory: AgentMemory,
) -> None:
    graph = build(
        memory, RecordingChatModel.replying(), InMemorySaver(), context_schema=UserContextDict
    )
    with pytest.raises(InvalidInputError, match=r"no user id.*configurable.*context=") as info:
        graph.invoke({"messages": [HumanMessage("secret")]}, thread("x"), context={})
    with pytest.raises(InvalidInputError, match=r"no user id.*context="):
        await graph.ainvoke({"messages": [HumanMessage("secret")]}, thread("x"))
    assert "user_id" in str(info.value)
    assert memory.namespaces() == []


# -- the graph state keeps record ids, never memory text -------------------------------------
CAT = "My cat is called Miso."
HOME = "I live in Lyon."


def saved_thread(saver: BaseCheckpointSaver[Any], thread: str) -> str:
    """All a checkpointer holds for ``thread``: every checkpoint, its metadata and pending
    writes, read back; for a SQLite saver the raw rows too."""
    parts = []
    for saved in saver.list({"configurable": {"thread_id": thread}}):
        parts += [repr(saved.checkpoint), repr(saved.metadata), repr(saved.pending_writes)]
    if isinstance(saver, SqliteSaver):
        rows = saver.conn.execute(
            "SELECT checkpoint, metadata FROM checkpoints WHERE thread_id = ? "
            "UNION ALL SELECT value, NULL FROM writes WHERE thread_id = ?",
            (thread, thread),
        ).fetchall()
        assert rows
        blobs = [v for row in rows for v in row if v is not None]
        parts += [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in blobs]
    return "\n".join(parts)


def test_checkpoints_hold_no_memory_text(
    memory: AgentMemory, saver: BaseCheckpointSaver[Any]
) -> None:
    llm = RecordingChatModel.replying("Noted.", "I remember.")
    graph = build(memory, llm, saver)
    graph.invoke({"messages": [HumanMessage(CAT)]}, cfg("alice", "t1"))
    out = graph.invoke({"messages": [HumanMessage("What is my cat's name?")]}, cfg("alice", "t2"))
    assert CAT in llm.prompt_text(-1)  # recalled and told to the model
    (ref,) = out["memories"]
    assert set(ref) == {"id", "score"}
    saved = saved_thread(saver, "t2")
    assert ref["id"] in saved  # the scan reads the state's memories...
    assert "Miso" not in saved  # ...which hold no text
    assert "Miso" in saved_thread(saver, "t1")  # the scan finds text that is there


@pytest.mark.parametrize("forget", ["delete", "delete_namespace"])
def test_a_forgotten_memory_is_not_told_from_a_saved_state(
    memory: AgentMemory, tmp_path: Path, forget: str
) -> None:
    memory.add(CAT, namespace="alice", thread="t1", metadata={"role": "human"})
    memory.add(HOME, namespace="alice", thread="t1", metadata={"role": "human"})
    (cat,) = [r for r in memory.records("alice") if r.text == CAT]
    llm = RecordingChatModel.replying("Noted.")
    question = "What is my cat called, and where do I live?"
    for saver in sqlite_saver(tmp_path):
        graph = build(memory, llm, saver, interrupt_before=["chat"])
        graph.invoke({"messages": [HumanMessage(question)]}, cfg("alice", "t2"))
        saved = graph.get_state(cfg("alice", "t2"))
        assert saved.next == ("chat",)  # stopped, the recall checkpointed
        refs = saved.values["memories"]
        assert cat.id in [r["id"] for r in refs]
        before = memories_message(refs, memory, config=cfg("alice", "t2"))
        assert before is not None and CAT in before.text and HOME in before.text
        if forget == "delete":
            memory.delete(cat.id, namespace="alice")
        else:
            memory.delete_namespace("alice")
        graph.invoke(None, cfg("alice", "t2"))  # the prompt step runs from the saved state
        prompt = llm.prompt_text(-1)
        assert question in prompt
        assert "Miso" not in prompt
        after = memories_message(refs, memory, config=cfg("alice", "t2"))
        if forget == "delete":
            assert after is not None and "Miso" not in after.text and HOME in after.text
            assert '] user: "I live in Lyon."' in prompt  # the kept one is still told
        else:
            assert after is None
            assert "<recalled_memories>" not in prompt


async def test_async_reads_skip_forgotten_memories(memory: AgentMemory) -> None:
    memory.add(CAT, namespace="alice", metadata={"role": "human"})
    refs = (
        await recall_node(memory).ainvoke(
            {"messages": [HumanMessage("my cat?")]}, cfg("alice", "t")
        )
    )["memories"]
    message = await amemories_message(refs, memory, config=cfg("alice", "t"))
    assert message is not None and CAT in message.text
    (record,) = await arecalled_memories(refs, memory, namespace="alice")
    assert record.text == CAT and record.score == refs[0]["score"]
    await memory.adelete(record.id, namespace="alice")
    assert await amemories_message(refs, memory, config=cfg("alice", "t")) is None
    assert await arecalled_memories(refs, memory, namespace="alice") == []


def test_references_are_read_in_the_runs_namespace(memory: AgentMemory) -> None:
    memory.add("Bob's locker code is 9131.", namespace="bob", metadata={"role": "human"})
    (record,) = memory.records("bob")
    refs = [{"id": record.id, "score": 1.0}]  # say, written into alice's state by hand
    assert memories_message(refs, memory, config=cfg("alice", "t")) is None
    told = memories_message(refs, memory, config=cfg("bob", "t"))
    assert told is not None and "9131" in told.text


def test_records_and_texts_are_still_told(memory: AgentMemory) -> None:
    memory.add(CAT, namespace="alice", metadata={"role": "human"})
    (record,) = memory.records("alice")
    assert record.created_at is not None
    day = record.created_at.date().isoformat()
    # A state written by an earlier version: dicts with the text.
    old = {"id": record.id, "text": CAT, "score": 0.9, "created_at": day, "role": "human"}
    line = f'- [{written(record.created_at)}] user: "{CAT}"'
    for given in ([old], [record]):
        told = memories_message(given)  # without the memory: told as given
        assert told is not None and line in told.text.split("\n")
        told = memories_message(given, memory, namespace="alice")  # with it: read by id
        assert told is not None and line in told.text.split("\n")
    # A text without an id is the caller's own: told as it is, with the memory or not.
    note = memories_message([{"text": "A note."}], memory, namespace="alice")
    assert note is not None and '] unattributed: "A note."' in note.text
    memory.delete(record.id, namespace="alice")
    assert memories_message([old], memory, namespace="alice") is None
    assert memories_message([record], memory, namespace="alice") is None


def test_memories_message_bad_input(memory: AgentMemory) -> None:
    refs = [{"id": "r1", "score": 0.5}]
    with pytest.raises(InvalidInputError, match=r"pass the memory.*memories_message\("):
        memories_message(refs)
    with pytest.raises(InvalidInputError, match="inside a graph node"):
        memories_message(refs, memory)
    with pytest.raises(InvalidInputError, match="user_id"):
        memories_message(refs, memory, config={"configurable": {"thread_id": "t"}})
    with pytest.raises(InvalidInputError, match="pass one"):
        memories_message(refs, memory, config=cfg("alice", "t"), namespace="alice")
    with pytest.raises(InvalidTypeError, match="got str"):
        memories_message(CAT, memory)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match=r"memories\[1\] .* got int"):
        memories_message([refs[0], 3], memory, namespace="alice")  # type: ignore[list-item]
    with pytest.raises(InvalidTypeError, match=r"memories\[0\]\['id'\].* got int"):
        memories_message([{"id": 7}], memory, namespace="alice")
    with pytest.raises(InvalidInputError, match="neither an 'id' nor a 'text'"):
        memories_message([{"score": 1.0}], memory, namespace="alice")
    with pytest.raises(InvalidTypeError, match="AgentMemory"):
        memories_message(refs, "sqlite:///x.db")  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="AgentMemory"):
        recalled_memories(refs, None)  # type: ignore[arg-type]
    # Nothing recalled: nothing to read, no user needed.
    assert memories_message([], memory) is None
    assert memories_message(None, memory) is None
    assert recalled_memories([], memory) == []


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
    # The reply is stored with the question it answers, past the tool traffic; the user's
    # question follows a greeting, which asks nothing, so nothing is kept for it.
    assert {r.text: r.metadata.get("reply_to") for r in memory.records("alice")} == {
        "Weather in Lyon?": None,
        "It is sunny in Lyon.": "Weather in Lyon?",
    }
    assert update["remembered"] == ["h2", "a2", "t2", "a3"]
    assert {m.id for m in update["messages"]} == {"h1", "a1"}
    # Offered once: the same turn again (as when a graph loops) adds nothing.
    node.invoke(
        {"messages": tool_thread()[:7], "remembered": update["remembered"]}, cfg("alice", "tools")
    )
    assert len(memory.records("alice")) == 2


def test_policy_node_remembers_a_streamed_chunk_as_the_assistants(memory: AgentMemory) -> None:
    # A state key without langgraph's reducer keeps a streamed reply as a chunk.
    messages = [
        AIMessageChunk("Which city do you live in now?", id="a1"),
        HumanMessage("I live in Lyon.", id="h1"),
        AIMessageChunk("Lyon is lovely.", id="a2"),
    ]
    node = policy_node(memory, remember_roles=("human", "ai"))
    node.invoke({"messages": messages}, cfg("alice", "t"))
    assert {r.text: r.metadata for r in memory.records("alice")} == {
        "I live in Lyon.": {
            "role": "human",
            "source": "graph",
            "message_id": "h1",
            "reply_to": "Which city do you live in now?",
        },
        "Lyon is lovely.": {"role": "ai", "source": "graph", "message_id": "a2"},
    }


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
    config = {"configurable": {"tenant": "acme"}}
    recalled = recalled_memories(found["memories"], memory, config=config, user_key="tenant")
    assert [r.text for r in recalled] == ["Tenant fact."]


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
    # Refused when the node is built, not at the first turn.
    with pytest.raises(InvalidTypeError, match="min_score must be a number or None, got str"):
        recall_node(memory, min_score="high")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="min_score must be finite"):
        recall_node(memory, min_score=float("nan"))
    with pytest.raises(InvalidInputError, match="unknown search mode 'semantic'"):
        recall_node(memory, mode="semantic")


def test_messages_state_works_too(memory: AgentMemory) -> None:
    """A plain MessagesState graph: memories are not kept in state, recall still works."""
    llm = RecordingChatModel.replying()
    recall = recall_node(memory)

    def chat(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        system = memories_message(recall.invoke(state, config)["memories"], memory)
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
