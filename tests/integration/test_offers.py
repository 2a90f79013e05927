"""Every adapter that offers a conversation to long-term memory keeps the conversation going
when the memory cannot keep one of its messages: that message is not remembered, one
warning says so, the rest of the exchange is remembered and nothing is written twice.
The surfaces that recall with the user's message (the middleware, ``recall_node``,
``AgentMemoryRecall``) recall with what search can read of it, so the turn goes on."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_classic.chains import ConversationChain
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.graph import START, StateGraph

from langchain_agentmem import (
    AgentMemory,
    AgentMemoryMiddleware,
    AgentMemoryRecall,
    AgentMemoryRetriever,
    BufferChatMessageHistory,
    InvalidInputError,
    RecallState,
    SentenceTransformerEmbeddings,
    amemories_message,
    memories_message,
    policy_node,
    recall_node,
)
from langchain_agentmem.integrations.offers import recall_query
from langchain_agentmem.validation import MAX_QUERY_CHARS
from tests.fakes import RecordingChatModel

TOO_LONG = ("I like tea. " * 10).strip()  # 119 characters, over the limit of 100
WITH_NUL = "My pin is 12\x0034."


@pytest.fixture
def small(db_path: Path, embeddings: SentenceTransformerEmbeddings) -> Iterator[AgentMemory]:
    with AgentMemory(f"sqlite:///{db_path}", embeddings=embeddings, max_text_chars=100) as mem:
        yield mem


def warned(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "langchain_agentmem.integrations.offers" and r.levelno == logging.WARNING
    ]


def remembered(memory: AgentMemory) -> set[tuple[str, str]]:
    return {(r.text, r.metadata["role"]) for r in memory.records("alice")}


def history_turn(memory: AgentMemory, said: str, reply: str) -> None:
    history = BufferChatMessageHistory(
        memory, namespace="alice", thread="t", remember=True, remember_roles=("human", "ai")
    )
    history.add_messages([HumanMessage(said), AIMessage(reply)])


async def async_history_turn(memory: AgentMemory, said: str, reply: str) -> None:
    history = BufferChatMessageHistory(
        memory, namespace="alice", thread="t", remember=True, remember_roles=("human", "ai")
    )
    await history.aadd_messages([HumanMessage(said), AIMessage(reply)])


def chain_turn(memory: AgentMemory, said: str, reply: str) -> None:
    recall = AgentMemoryRecall(memory=memory, namespace="alice", remember_roles=("human", "ai"))
    recall.save_context({"input": said}, {"response": reply})


def node_turn(memory: AgentMemory, said: str, reply: str) -> None:
    messages: list[BaseMessage] = [HumanMessage(said, id="h"), AIMessage(reply, id="a")]
    node = policy_node(memory, remember_roles=("human", "ai"))
    node.invoke({"messages": messages}, {"configurable": {"user_id": "alice", "thread_id": "t"}})


Turn = Callable[[AgentMemory, str, str], object]
TURNS: dict[str, Turn] = {"history": history_turn, "chain": chain_turn, "node": node_turn}


async def run(turn: Turn, memory: AgentMemory, said: str, reply: str) -> None:
    out = turn(memory, said, reply)
    if hasattr(out, "__await__"):
        await out  # type: ignore[misc]


@pytest.mark.parametrize("surface", [*TURNS, "async history"])
async def test_a_message_the_memory_cannot_keep_leaves_the_exchange_remembered(
    surface: str, small: AgentMemory, caplog: pytest.LogCaptureFixture
) -> None:
    turn: Turn = async_history_turn if surface == "async history" else TURNS[surface]
    with caplog.at_level(logging.WARNING):
        await run(turn, small, TOO_LONG, "Noted.")
    assert warned(caplog) == [
        "the user's message (119 characters) is not remembered: this memory keeps at most "
        "100 characters per text (max_text_chars); it stays in the conversation"
    ]
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        await run(turn, small, "I live in Lyon.", WITH_NUL)
    (line,) = warned(caplog)
    assert line.startswith("the assistant's reply is not remembered: text contains a NUL")
    assert remembered(small) == {("Noted.", "ai"), ("I live in Lyon.", "human")}
    if surface.endswith("history"):  # the conversation itself keeps every message once
        texts = [m.text for m in small.messages(namespace="alice", thread="t")]
        assert texts == [TOO_LONG, "Noted.", "I live in Lyon.", WITH_NUL]


def test_adding_the_same_text_directly_is_still_an_error(small: AgentMemory) -> None:
    with pytest.raises(InvalidInputError, match="max_text_chars"):
        small.add(TOO_LONG, namespace="alice")
    assert small.records("alice") == []


# -- recall with a message search would refuse --------------------------------------------------
CFG: RunnableConfig = {"configurable": {"user_id": "alice", "thread_id": "t"}}
TEA = "I drink green tea every morning."
OTHERS = ["My sister lives in Oslo.", "I am allergic to peanuts.", "We adopted a cat in May."]
BROKEN = {
    "nul": (
        "Do I still drink green\x00 tea?",
        "text contains a NUL character at position 22; remove it",
    ),
    "surrogate": (
        "Do I still drink green tea, caf\udce9?",
        "text is not valid Unicode (surrogates not allowed at position 31); remove lone "
        "surrogates before storing it",
    ),
}
BOTH = ("human", "ai")


async def agent_turn(memory: AgentMemory, said: str, asynchronous: bool) -> tuple[str, list[str]]:
    llm = RecordingChatModel.replying("Noted.")
    agent = create_agent(llm, middleware=[AgentMemoryMiddleware(memory, k=1, remember_roles=BOTH)])
    state = {"messages": [HumanMessage(said)]}
    out = await agent.ainvoke(state, CFG) if asynchronous else agent.invoke(state, CFG)
    return llm.prompt_text(0), [m.text for m in out["messages"]]


async def graph_turn(memory: AgentMemory, said: str, asynchronous: bool) -> tuple[str, list[str]]:
    llm = RecordingChatModel.replying("Noted.")

    def chat(state: RecallState) -> dict[str, Any]:
        system = memories_message(state.get("memories"), memory)
        return {"messages": [llm.invoke([*([system] if system else []), *state["messages"]])]}

    async def achat(state: RecallState) -> dict[str, Any]:
        system = await amemories_message(state.get("memories"), memory)
        prompt = [*([system] if system else []), *state["messages"]]
        return {"messages": [await llm.ainvoke(prompt)]}

    builder = StateGraph(RecallState)
    builder.add_node("recall", recall_node(memory, k=1))
    builder.add_node("chat", RunnableLambda(chat, afunc=achat))
    builder.add_node("remember", policy_node(memory, remember_roles=BOTH))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "chat")
    builder.add_edge("chat", "remember")
    graph = builder.compile()
    state = {"messages": [HumanMessage(said)]}
    out = await graph.ainvoke(state, CFG) if asynchronous else graph.invoke(state, CFG)
    return llm.prompt_text(0), [m.text for m in out["messages"]]


async def chain_turn_recalling(
    memory: AgentMemory, said: str, asynchronous: bool
) -> tuple[str, list[str]]:
    llm = RecordingChatModel.replying("Noted.")
    recall = AgentMemoryRecall(memory, namespace="alice", thread="t", k=1, remember_roles=BOTH)
    chain = ConversationChain(llm=llm, memory=recall)
    out = await chain.ainvoke({"input": said}) if asynchronous else chain.invoke({"input": said})
    return llm.prompt_text(0), [out["input"], out["response"]]


RECALLING = {"middleware": agent_turn, "graph": graph_turn, "chain": chain_turn_recalling}


@pytest.fixture
def recalling(memory: AgentMemory) -> AgentMemory:
    for text in [TEA, *OTHERS]:
        memory.add(text, namespace="alice", thread="before")
    memory.add("I drink green tea too.", namespace="bob")
    return memory


@pytest.mark.filterwarnings("ignore:The class `ConversationChain`:DeprecationWarning")
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("broken", BROKEN)
@pytest.mark.parametrize("surface", RECALLING)
async def test_a_message_search_would_refuse_still_recalls_by_its_other_words(
    surface: str,
    broken: str,
    asynchronous: bool,
    recalling: AgentMemory,
    caplog: pytest.LogCaptureFixture,
) -> None:
    said, why = BROKEN[broken]
    with caplog.at_level(logging.WARNING):
        prompt, conversation = await RECALLING[surface](recalling, said, asynchronous)
    assert conversation == [said, "Noted."]  # the turn went on, the message as the user sent it
    assert TEA in prompt  # the best of four memories for "green tea", found by those words
    assert not any(other in prompt for other in OTHERS) and "too." not in prompt
    assert warned(caplog) == [
        f"the user's message is not remembered: {why}; it stays in the conversation"
    ]
    assert {r.text for r in recalling.records("alice")} == {TEA, *OTHERS, "Noted."}
    assert [r.text for r in recalling.records("bob")] == ["I drink green tea too."]
    # Asked directly, search still refuses the query by name.
    with pytest.raises(InvalidInputError, match=r"^query "):
        recalling.search(said, namespace="alice")
    with pytest.raises(InvalidInputError, match=r"^query "):
        await AgentMemoryRetriever(memory=recalling, namespace="alice").ainvoke(said)


@pytest.mark.filterwarnings("ignore:The class `ConversationChain`:DeprecationWarning")
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("surface", RECALLING)
async def test_a_message_of_nul_characters_only_recalls_nothing(
    surface: str, asynchronous: bool, recalling: AgentMemory, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        prompt, conversation = await RECALLING[surface](recalling, "\x00\x00", asynchronous)
    assert conversation == ["\x00\x00", "Noted."]
    assert "recalled_memories" not in prompt
    (line,) = warned(caplog)
    assert line.startswith("the user's message is not remembered: text contains a NUL")
    assert {r.text for r in recalling.records("alice")} == {TEA, *OTHERS, "Noted."}


def test_recall_query_cleans_only_what_search_refuses() -> None:
    assert recall_query("green\x00tea") == "green tea"
    assert recall_query("caf\udce9 \ud83d\ude00 \ud800") == "caf\ufffd \U0001f600 \ufffd"
    assert recall_query("\x00 \x00") is None
    long = "tea " * 300_000  # longer than a search takes: its first part is searched
    assert recall_query(long) == long[:MAX_QUERY_CHARS]


@pytest.mark.filterwarnings("ignore:The class `ConversationChain`:DeprecationWarning")
@pytest.mark.parametrize("surface", RECALLING)
async def test_a_message_longer_than_a_query_recalls_by_its_first_part(
    surface: str, recalling: AgentMemory
) -> None:
    said = "Do I still drink green tea? " + "zqx " * 500_000  # 2,000,028 characters
    prompt, conversation = await RECALLING[surface](recalling, said, False)
    assert conversation == [said, "Noted."]
    assert TEA in prompt and not any(other in prompt for other in OTHERS)
    with pytest.raises(InvalidInputError, match=r"^query is 2,000,028 characters.*MAX_QUERY"):
        recalling.search(said, namespace="alice")
    assert recalling.search(said[:MAX_QUERY_CHARS], namespace="alice", k=1)[0].text == TEA


LONG_QUESTION = "Do I like tea? " * 8  # 120 characters, over the limit of 100


@pytest.mark.parametrize(
    "question",
    [LONG_QUESTION, "Do I like green\x00 tea?", "Do I like green tea, caf\udce9?"],
    ids=["too-long", "nul", "surrogate"],
)
@pytest.mark.parametrize("surface", [*TURNS, "async history"])
async def test_a_question_not_remembered_is_not_kept_as_the_answers_reply_to(
    surface: str, question: str, small: AgentMemory, caplog: pytest.LogCaptureFixture
) -> None:
    turn: Turn = async_history_turn if surface == "async history" else TURNS[surface]
    with caplog.at_level(logging.WARNING):
        await run(turn, small, question, "Noted.")
    assert len(warned(caplog)) == 1  # the question's own
    (record,) = small.records("alice")
    assert (record.text, record.metadata["role"]) == ("Noted.", "ai")
    assert "reply_to" not in record.metadata
    # A question the memory keeps is kept with its answer, as before.
    await run(turn, small, "Do I like tea?", "You do.")
    assert {r.text: r.metadata.get("reply_to") for r in small.records("alice")} == {
        "Noted.": None,
        "Do I like tea?": None,
        "You do.": "Do I like tea?",
    }
