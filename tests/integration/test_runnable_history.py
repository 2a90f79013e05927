"""Our histories inside ``RunnableWithMessageHistory`` (a prompt + chat model chain).

The chat model is a recording fake; the SQLite store and the embedding model are real.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory

from langchain_agentmem import (
    AgentMemory,
    BufferChatMessageHistory,
    SentenceTransformerEmbeddings,
    TokenBufferChatMessageHistory,
    WindowChatMessageHistory,
)
from tests.fakes import RecordingChatModel

pytestmark = pytest.mark.filterwarnings(
    "ignore:RunnableWithMessageHistory is deprecated:DeprecationWarning"
)

PROMPT = ChatPromptTemplate.from_messages(
    [
        ("system", "You are a helpful assistant."),
        MessagesPlaceholder("history"),
        ("human", "{question}"),
    ]
)
XIAOMING = ["你好，我叫小明，以后请记住我的名字。", "我刚才说我叫什么名字？"]
ALICE_QUESTIONS = [
    "Hi, my name is Alice.",
    "I love playing Stardew Valley.",
    "I really hate mosquitoes.",
    "What do I hate?",
    "What is my name?",
]


def with_history(
    llm: RecordingChatModel, get_history: Callable[[str], BaseChatMessageHistory]
) -> RunnableWithMessageHistory:
    return RunnableWithMessageHistory(
        PROMPT | llm,
        get_history,
        input_messages_key="question",
        history_messages_key="history",
    )


def session(session_id: str) -> dict[str, dict[str, str]]:
    return {"configurable": {"session_id": session_id}}


def test_buffer_remembers_the_name(memory: AgentMemory) -> None:
    llm = RecordingChatModel.replying("你好小明！", "你叫小明。")
    chain = with_history(
        llm, lambda sid: BufferChatMessageHistory(memory, namespace="xiaoming", thread=sid)
    )
    chain.invoke({"question": XIAOMING[0]}, config=session("s1"))
    reply = chain.invoke({"question": XIAOMING[1]}, config=session("s1"))
    assert reply.content == "你叫小明。"
    second = llm.prompts[1]
    assert isinstance(second[0], SystemMessage)
    assert second[1:] == [
        HumanMessage(XIAOMING[0]),
        AIMessage("你好小明！", id=second[2].id),
        HumanMessage(XIAOMING[1]),
    ]
    assert "小明" in llm.prompt_text(1)
    stored = memory.messages(namespace="xiaoming", thread="s1")
    assert [m.text for m in stored] == [XIAOMING[0], "你好小明！", XIAOMING[1], "你叫小明。"]


def test_window_of_three(memory: AgentMemory) -> None:
    llm = RecordingChatModel.replying("Noted.")
    chain = with_history(
        llm, lambda sid: WindowChatMessageHistory(memory, namespace="alice", thread=sid, k=3)
    )
    for question in ALICE_QUESTIONS:
        chain.invoke({"question": question}, config=session("s1"))
    assert "mosquitoes" in llm.prompt_text(3) and "Alice" in llm.prompt_text(3)
    assert "Alice" not in llm.prompt_text(4)
    assert len(memory.messages(namespace="alice", thread="s1")) == 10


async def test_window_of_three_async(memory: AgentMemory) -> None:
    llm = RecordingChatModel.replying("Noted.")
    chain = with_history(
        llm, lambda sid: WindowChatMessageHistory(memory, namespace="alice", thread=sid, k=3)
    )
    for question in ALICE_QUESTIONS:
        await chain.ainvoke({"question": question}, config=session("s1"))
    assert "mosquitoes" in llm.prompt_text(3) and "Alice" in llm.prompt_text(3)
    assert "Alice" not in llm.prompt_text(4)
    assert len(await memory.amessages(namespace="alice", thread="s1")) == 10


def test_streaming_saves_the_whole_reply(memory: AgentMemory) -> None:
    llm = RecordingChatModel.replying("Nice to meet you, Alice.", "You are Alice.")
    chain = with_history(
        llm, lambda sid: TokenBufferChatMessageHistory(memory, namespace="alice", thread=sid)
    )
    chunks = list(chain.stream({"question": ALICE_QUESTIONS[0]}, config=session("s1")))
    assert len(chunks) > 1
    assert "".join(str(c.content) for c in chunks) == "Nice to meet you, Alice."
    chain.invoke({"question": ALICE_QUESTIONS[4]}, config=session("s1"))
    assert "Nice to meet you, Alice." in llm.prompt_text(1)
    stored = memory.messages(namespace="alice", thread="s1")
    assert [m.text for m in stored][:2] == [ALICE_QUESTIONS[0], "Nice to meet you, Alice."]


async def test_async_streaming(memory: AgentMemory) -> None:
    llm = RecordingChatModel.replying("Nice to meet you, Alice.")
    chain = with_history(
        llm, lambda sid: BufferChatMessageHistory(memory, namespace="alice", thread=sid)
    )
    chunks = [c async for c in chain.astream({"question": "Hi!"}, config=session("s1"))]
    assert "".join(str(c.content) for c in chunks) == "Nice to meet you, Alice."
    stored = await memory.amessages(namespace="alice", thread="s1")
    assert [m.text for m in stored] == ["Hi!", "Nice to meet you, Alice."]


def test_sessions_are_threads_and_survive_restart(
    db_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    first = AgentMemory(f"sqlite:///{db_path}", embeddings=embeddings)
    chain = with_history(
        RecordingChatModel.replying("Hello Alice."),
        lambda sid: BufferChatMessageHistory(first, namespace="alice", thread=sid, remember=True),
    )
    chain.invoke({"question": "Hi, my name is Alice and I keep two rabbits."}, config=session("a"))
    first.close()

    second = AgentMemory(f"sqlite:///{db_path}", embeddings=embeddings)
    try:
        llm = RecordingChatModel.replying("You are Alice.")
        chain = with_history(
            llm,
            lambda sid: BufferChatMessageHistory(second, namespace="alice", thread=sid),
        )
        chain.invoke({"question": "What is my name?"}, config=session("a"))
        chain.invoke({"question": "What is my name?"}, config=session("b"))
        assert "I keep two rabbits" in llm.prompt_text(0)  # same session, after restart
        assert "rabbits" not in llm.prompt_text(1)  # a new session starts empty
        # ... but with remember=True the first session reached long-term memory.
        hits = second.search("What pets do I have?", namespace="alice", k=1)
        assert "rabbits" in hits[0].text
    finally:
        second.close()


def remembering(memory: AgentMemory) -> Callable[[str], BaseChatMessageHistory]:
    return lambda sid: BufferChatMessageHistory(
        memory, namespace="alice", thread=sid, remember=True, remember_roles=("human", "ai")
    )


STREAMED = ["Hello!", "I live in Lyon."]
ASKED = "Which city do you live in now?"


def check_streamed_turns(memory: AgentMemory) -> None:
    stored = memory.messages(namespace="alice", thread="s1")
    assert [m.type for m in stored] == ["human", "ai", "human", "ai"]
    assert [type(m) for m in stored] == [HumanMessage, AIMessage, HumanMessage, AIMessage]
    records = {r.text: r.metadata for r in memory.records("alice")}
    assert records[ASKED]["role"] == "ai"  # remembered, as the assistant's
    assert records["Lyon is lovely."]["role"] == "ai"
    assert records["I live in Lyon."]["role"] == "human"
    assert records["I live in Lyon."]["reply_to"] == ASKED


def test_streamed_replies_are_stored_and_remembered_as_the_assistants(
    memory: AgentMemory,
) -> None:
    # .stream hands the history an AIMessageChunk; it must count as an "ai" message.
    chain = with_history(RecordingChatModel.replying(ASKED, "Lyon is lovely."), remembering(memory))
    for question in STREAMED:
        chunks = list(chain.stream({"question": question}, config=session("s1")))
        assert len(chunks) > 1
    check_streamed_turns(memory)


async def test_astreamed_replies_are_stored_and_remembered_as_the_assistants(
    memory: AgentMemory,
) -> None:
    chain = with_history(RecordingChatModel.replying(ASKED, "Lyon is lovely."), remembering(memory))
    for question in STREAMED:
        chunks = [c async for c in chain.astream({"question": question}, config=session("s1"))]
        assert len(chunks) > 1
    check_streamed_turns(memory)
