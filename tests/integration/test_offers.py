"""Every adapter that offers a conversation to long-term memory keeps the conversation going
when the memory cannot keep one of its messages: that message is not remembered, one
warning says so, the rest of the exchange is remembered and nothing is written twice."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langchain_agentmem import (
    AgentMemory,
    AgentMemoryRecall,
    BufferChatMessageHistory,
    InvalidInputError,
    SentenceTransformerEmbeddings,
    policy_node,
)

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
