"""The memory's clock: what a replayed conversation is dated at, and the day a prompt of
recalled memories calls today, on every surface that tells memories to a model."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langchain_agentmem import (
    AgentMemory,
    AgentMemoryMiddleware,
    BufferChatMessageHistory,
    InvalidInputError,
    InvalidTypeError,
    SentenceTransformerEmbeddings,
    memories_message,
)
from langchain_agentmem.integrations.prompt import format_memories, today_line
from tests.fakes import RecordingChatModel

MAY = datetime(2023, 5, 20, 9, 30, tzinfo=timezone.utc)
JUNE = datetime(2023, 6, 2, 18, 0, tzinfo=timezone.utc)


class Replay:
    """A clock set by hand."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


@pytest.fixture
def clock() -> Replay:
    return Replay(MAY)


@pytest.fixture
def replayed(embeddings: SentenceTransformerEmbeddings, clock: Replay) -> Iterator[AgentMemory]:
    memory = AgentMemory(":memory:", embeddings=embeddings, clock=clock)
    yield memory
    memory.close()


def test_writes_without_a_time_are_dated_by_the_clock(replayed: AgentMemory, clock: Replay) -> None:
    replayed.add("I live in Lyon.", namespace="ana")
    clock.at = JUNE
    replayed.add_many(["I moved to Paris.", "I adopted a cat."], namespace="ana")
    own = datetime(2020, 1, 1, tzinfo=timezone.utc)
    replayed.add("I was born in Porto.", namespace="ana", timestamp=own)  # its own time wins
    dated = {r.text: r.created_at for r in replayed.records("ana")}
    assert dated == {
        "I live in Lyon.": MAY,
        "I moved to Paris.": JUNE,
        "I adopted a cat.": JUNE,
        "I was born in Porto.": own,
    }
    assert replayed.now() == JUNE


def test_a_chat_history_replays_sessions_at_their_dates(
    replayed: AgentMemory, clock: Replay
) -> None:
    for at, said in ((MAY, "My car's first service was on Monday."), (JUNE, "The GPS broke.")):
        clock.at = at
        history = BufferChatMessageHistory(
            replayed, namespace="ana", thread=at.isoformat(), remember=True
        )
        history.add_messages([HumanMessage(said), AIMessage("Sorry to hear that.")])
    hits = replayed.search("What broke after the service?", namespace="ana", k=2)
    assert {h.created_at for h in hits} == {MAY, JUNE}
    block = format_memories(hits)
    assert "20 May 2023" in block and "2 June 2023" in block


def test_expiry_runs_on_the_wall_clock(replayed: AgentMemory, clock: Replay) -> None:
    clock.at = datetime(2001, 1, 1, tzinfo=timezone.utc)  # a replay of long ago
    replayed.add("Call me back tomorrow.", namespace="ana", ttl=3600)
    (record,) = replayed.records("ana")
    assert record.created_at == clock.at
    assert record.expires_at is not None
    left = record.expires_at - datetime.now(timezone.utc)
    assert timedelta(minutes=55) < left <= timedelta(hours=1)  # not expired at once


def test_a_bad_clock_is_refused_and_nothing_is_stored(
    embeddings: SentenceTransformerEmbeddings,
) -> None:
    with pytest.raises(InvalidTypeError, match="clock must be a function"):
        AgentMemory(":memory:", embeddings=embeddings, clock="2023-05-20")  # type: ignore[arg-type]
    memory = AgentMemory(":memory:", embeddings=embeddings, clock=lambda: "2023-05-20")  # type: ignore[arg-type,return-value]
    with pytest.raises(InvalidTypeError, match="returned str '2023-05-20', not a datetime"):
        memory.add("I live in Lyon.", namespace="ana")
    far = datetime(9999, 12, 31, 23, 0, tzinfo=timezone(-timedelta(hours=14)))
    late = AgentMemory(":memory:", embeddings=embeddings, clock=lambda: far)
    with pytest.raises(InvalidInputError, match="outside the times a record can carry"):
        late.add_many(["I live in Lyon."], namespace="ana")
    assert memory.records("ana") == [] and late.records("ana") == []
    memory.close()
    late.close()


def test_a_naive_clock_is_utc(embeddings: SentenceTransformerEmbeddings) -> None:
    memory = AgentMemory(":memory:", embeddings=embeddings, clock=lambda: datetime(2023, 5, 20))
    assert memory.now() == datetime(2023, 5, 20, tzinfo=timezone.utc)
    memory.close()


def test_the_default_clock_is_the_wall_clock(memory: AgentMemory) -> None:
    before = datetime.now(timezone.utc)
    memory.add("I live in Lyon.", namespace="ana")
    (record,) = memory.records("ana")
    assert record.created_at is not None
    assert before - timedelta(seconds=1) <= record.created_at <= datetime.now(timezone.utc)
    assert abs(memory.now() - datetime.now(timezone.utc)) < timedelta(seconds=5)


def test_the_block_tells_today_when_asked() -> None:
    assert today_line(JUNE) == "Today is Friday, 2 June 2023."
    east = JUNE.astimezone(timezone(timedelta(hours=9)))  # 3 June there: the day in UTC
    assert today_line(east) == "Today is Friday, 2 June 2023."
    assert "Today is" not in format_memories([{"text": "I live in Lyon."}])
    block = format_memories([{"text": "I live in Lyon."}], today=JUNE).splitlines()
    assert block[2] == "Today is Friday, 2 June 2023."  # after the header, before memories


def test_the_middleware_tells_the_clocks_day(replayed: AgentMemory, clock: Replay) -> None:
    replayed.add("I started yoga classes.", namespace="ana")
    clock.at = JUNE
    llm = RecordingChatModel.replying("Two weeks ago.")
    for options, told in (
        ({}, None),
        ({"show_today": True}, "Today is Friday, 2 June 2023."),
        (
            {"show_today": True, "clock": lambda: datetime(2024, 1, 1)},
            "Today is Monday, 1 January 2024.",
        ),
    ):
        agent = create_agent(
            llm,
            middleware=[AgentMemoryMiddleware(replayed, **options)],
            checkpointer=InMemorySaver(),
        )
        config = {"configurable": {"user_id": "ana", "thread_id": str(options)}}
        agent.invoke({"messages": [("user", "When did I start yoga?")]}, config)
        system = str(llm.prompts[-1][0].text)
        assert "I started yoga classes." in system
        if told is None:
            assert "Today is" not in system
        else:
            assert told in system


def test_the_node_helper_tells_the_clocks_day(replayed: AgentMemory, clock: Replay) -> None:
    replayed.add("I started yoga classes.", namespace="ana")
    clock.at = JUNE
    hits = replayed.search("yoga", namespace="ana", k=1)
    plain = memories_message(hits, replayed, namespace="ana")
    told = memories_message(hits, replayed, namespace="ana", show_today=True)
    assert plain is not None and told is not None
    assert "Today is" not in plain.text
    assert "Today is Friday, 2 June 2023." in told.text
    with pytest.raises(InvalidTypeError, match="show_today must be True or False"):
        memories_message(hits, replayed, namespace="ana", show_today="yes")  # type: ignore[arg-type]
