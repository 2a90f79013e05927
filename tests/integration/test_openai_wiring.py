"""The real ``ChatOpenAI`` over HTTP to a local OpenAI-protocol server, on every surface.

What one thread of a user was told must reach the HTTP request body the model receives
in a later thread of the same user (and not another user's). The same path runs against
any OpenAI-compatible server through ``base_url`` / ``OPENAI_BASE_URL``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_classic.chains import ConversationChain
from langchain_core.messages import AIMessageChunk, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph

from langchain_agentmem import (
    AgentMemory,
    AgentMemoryMiddleware,
    AgentMemoryRecall,
    RecallState,
    memories_message,
    policy_node,
    recall_node,
)
from tests.openai_server import ScriptedOpenAIServer, message_text

FACT = "My daughter Zoe was born on 3 March 2019."
QUESTION = "When is Zoe's birthday?"


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(default="Noted.") as srv:
        yield srv


def chat_openai(server: ScriptedOpenAIServer, **kw: Any) -> ChatOpenAI:
    return ChatOpenAI(model="scripted", base_url=server.url, api_key="test", max_retries=0, **kw)


def cfg(user: str, thread: str) -> RunnableConfig:
    return {"configurable": {"user_id": user, "thread_id": thread}}


def system_text(body: dict[str, Any]) -> str:
    return "\n".join(message_text(m) for m in body["messages"] if m["role"] == "system")


def check_bodies(server: ScriptedOpenAIServer, *, later: int, other: int, stream: bool) -> None:
    """Request ``later`` (alice, a new thread) carries the fact; ``other`` (bob) does not."""
    body = server.requests[later]
    assert FACT in server.prompt_text(later)
    assert QUESTION in server.prompt_text(later)
    assert bool(body.get("stream")) is stream
    assert body["model"] == "scripted"
    assert FACT not in server.prompt_text(other)


# -- classic ConversationChain ---------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:The class `ConversationChain` was deprecated")
@pytest.mark.parametrize("stream", [False, True])
def test_conversation_chain(
    memory: AgentMemory, server: ScriptedOpenAIServer, stream: bool
) -> None:
    llm = chat_openai(server, streaming=stream)

    def chain(user: str, thread: str) -> ConversationChain:
        return ConversationChain(
            llm=llm, memory=AgentMemoryRecall(memory, namespace=user, thread=thread, k=3)
        )

    chain("alice", "c1").invoke({"input": FACT})
    server.add("On 3 March.")
    out = chain("alice", "c2").invoke({"input": QUESTION})
    assert out["response"] == "On 3 March."
    chain("bob", "c3").invoke({"input": QUESTION})
    check_bodies(server, later=1, other=2, stream=stream)
    assert "recalled_memories" not in server.prompt_text(0)  # nothing to recall yet


# -- a LangGraph graph with the nodes --------------------------------------------------------
def memory_graph(memory: AgentMemory, llm: ChatOpenAI, roles: tuple[str, ...] = ("human",)) -> Any:
    def chat(state: RecallState) -> dict[str, Any]:
        system = memories_message(state.get("memories"), memory)
        return {"messages": [llm.invoke([*([system] if system else []), *state["messages"]])]}

    builder = StateGraph(RecallState)
    builder.add_node("recall", recall_node(memory, k=3))
    builder.add_node("chat", chat)
    builder.add_node("remember", policy_node(memory, window=4, remember_roles=roles))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "chat")
    builder.add_edge("chat", "remember")
    return builder.compile(checkpointer=InMemorySaver())


def test_graph_nodes(memory: AgentMemory, server: ScriptedOpenAIServer) -> None:
    graph = memory_graph(memory, chat_openai(server))
    graph.invoke({"messages": [HumanMessage(FACT)]}, cfg("alice", "g1"))
    server.add("On 3 March.")
    out = graph.invoke({"messages": [HumanMessage(QUESTION)]}, cfg("alice", "g2"))
    assert out["messages"][-1].text == "On 3 March."
    graph.invoke({"messages": [HumanMessage(QUESTION)]}, cfg("bob", "g3"))
    check_bodies(server, later=1, other=2, stream=False)
    assert "<recalled_memories>" in system_text(server.requests[1])


def test_graph_nodes_streaming_tokens(memory: AgentMemory, server: ScriptedOpenAIServer) -> None:
    graph = memory_graph(memory, chat_openai(server, streaming=True), roles=("human", "ai"))
    graph.invoke({"messages": [HumanMessage(FACT)]}, cfg("alice", "g1"))
    server.add("Zoe was born on 3 March.")
    tokens = [
        chunk.content
        for chunk, meta in graph.stream(
            {"messages": [HumanMessage(QUESTION)]}, cfg("alice", "g2"), stream_mode="messages"
        )
        if isinstance(chunk, AIMessageChunk) and meta["langgraph_node"] == "chat"
    ]
    assert len([t for t in tokens if t]) > 1  # arrived in pieces
    assert "".join(str(t) for t in tokens) == "Zoe was born on 3 March."
    graph.invoke({"messages": [HumanMessage(QUESTION)]}, cfg("bob", "g3"))
    check_bodies(server, later=1, other=2, stream=True)
    # The streamed answer was remembered whole, as the assistant's.
    assert ("Zoe was born on 3 March.", "ai") in {
        (r.text, r.metadata["role"]) for r in memory.records("alice")
    }


# -- create_agent with the middleware --------------------------------------------------------
def test_create_agent_middleware(memory: AgentMemory, server: ScriptedOpenAIServer) -> None:
    agent = create_agent(
        chat_openai(server),
        system_prompt="You are a family assistant.",
        middleware=[AgentMemoryMiddleware(memory, k=3)],
        checkpointer=InMemorySaver(),
    )
    agent.invoke({"messages": [HumanMessage(FACT)]}, cfg("alice", "m1"))
    agent.invoke({"messages": [HumanMessage(QUESTION)]}, cfg("alice", "m2"))
    agent.invoke({"messages": [HumanMessage(QUESTION)]}, cfg("bob", "m3"))
    check_bodies(server, later=1, other=2, stream=False)
    system = system_text(server.requests[1])
    assert system.startswith("You are a family assistant.")
    assert FACT in system  # in the system prompt, not as a conversation turn
    assert [m["role"] for m in server.requests[1]["messages"]] == ["system", "user"]


async def test_create_agent_middleware_async_streaming(
    memory: AgentMemory, server: ScriptedOpenAIServer
) -> None:
    agent = create_agent(
        chat_openai(server, streaming=True),
        middleware=[AgentMemoryMiddleware(memory, k=3)],
        checkpointer=InMemorySaver(),
    )
    await agent.ainvoke({"messages": [HumanMessage(FACT)]}, cfg("alice", "m1"))
    server.add("On the third of March.")
    pieces = [
        chunk.content
        async for chunk, _ in agent.astream(
            {"messages": [HumanMessage(QUESTION)]}, cfg("alice", "m2"), stream_mode="messages"
        )
        if isinstance(chunk, AIMessageChunk)
    ]
    assert "".join(str(p) for p in pieces) == "On the third of March."
    await agent.ainvoke({"messages": [HumanMessage(QUESTION)]}, cfg("bob", "m3"))
    check_bodies(server, later=1, other=2, stream=True)
