"""A speaker's name in a query picks whose records to search; it is not a word to match.

Real model, real SQLite. Turns stored as "Name: text" with ``metadata["speaker"]``, as
``agentmem bench`` and many chat logs store them: a question naming Dmitri must find what
Dmitri said about it, not his shortest turns, which the name alone matches best.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from langchain_core.embeddings import Embeddings

from langchain_agentmem import AgentMemory, HybridConfig, MemoryRecord

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)

TURNS = [
    ("Tara", "How was your week?"),
    ("Dmitri", "Oh wow, tell me more."),
    ("Tara", "I went hiking with my sister on Sunday."),
    ("Dmitri", "That's great to hear!"),
    ("Dmitri", "I work as a nurse, long shifts but I like it."),
    ("Tara", "Nice, good for you."),
    ("Dmitri", "Really? I didn't see that coming."),
    ("Tara", "The bakery opens at five, so I am up early."),
    ("Dmitri", "Oh wow, tell me more."),
    ("Dmitri", "That's great to hear!"),
]
QUESTION = "What is Dmitri's job?"
ANSWER = "Dmitri: I work as a nurse, long shifts but I like it."


def _fill(memory: AgentMemory, namespace: str = "chat") -> None:
    for i, (speaker, text) in enumerate(TURNS):
        memory.add(
            f"{speaker}: {text}",
            namespace=namespace,
            thread=f"session-{i // 4}",
            metadata={"speaker": speaker},
            timestamp=T0 + timedelta(minutes=i),
        )


def test_the_named_speakers_answer_comes_first(embeddings: Embeddings, tmp_path: Path) -> None:
    with AgentMemory(f"sqlite:///{tmp_path / 'm.db'}", embeddings=embeddings) as memory:
        _fill(memory)
        top = memory.search(QUESTION, namespace="chat", k=3)
        assert top[0].text == ANSWER
        assert top[0].metadata["speaker"] == "Dmitri"


def test_names_searched_as_words_let_fillers_win(embeddings: Embeddings) -> None:
    """The same records with names matched as words: the fillers outrank the answer.

    Near words are off too: "job" brings "work", which finds the answer by itself.
    """
    config = HybridConfig(named_speaker=0, near_words=0)
    plain = AgentMemory(":memory:", embeddings=embeddings, hybrid=config)
    with plain:
        _fill(plain)
        top = [r.text for r in plain.search(QUESTION, namespace="chat", k=10)]
    assert top.index(ANSWER) > 0
    assert top[0].startswith("Dmitri: ") and top[0] != ANSWER


async def test_async_search_reads_names_alike(embeddings: Embeddings) -> None:
    with AgentMemory(":memory:", embeddings=embeddings) as memory:
        _fill(memory)
        sync = [r.id for r in memory.search(QUESTION, namespace="chat", k=5)]
        async_ = [r.id for r in await memory.asearch(QUESTION, namespace="chat", k=5)]
    assert sync == async_


def test_speakers_are_read_back_from_the_store(embeddings: Embeddings, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with AgentMemory(url, embeddings=embeddings) as memory:
        _fill(memory)
        before = [r.id for r in memory.search(QUESTION, namespace="chat", k=5)]
    with AgentMemory(url, embeddings=embeddings) as reopened:
        after = reopened.search(QUESTION, namespace="chat", k=5)
    assert [r.id for r in after] == before
    assert after[0].text == ANSWER


def _search_after_another_writer(
    embeddings: Embeddings, url: str, search: Callable[[AgentMemory], list[MemoryRecord]]
) -> tuple[list[MemoryRecord], list[MemoryRecord]]:
    """``search`` run by a memory whose cache of the namespace predates another writer's
    first records of Dmitri, and by a memory that opens the store after them."""
    with (
        AgentMemory(url, embeddings=embeddings) as reader,
        AgentMemory(url, embeddings=embeddings) as writer,
    ):
        reader.add("Tara: Hello!", namespace="chat", metadata={"speaker": "Tara"})
        reader.search("Hello?", namespace="chat")  # cached: Tara is the only speaker
        _fill(writer)
        seen = search(reader)
    with AgentMemory(url, embeddings=embeddings) as fresh:
        return seen, search(fresh)


def test_a_speaker_another_writer_added_is_a_name_at_once(
    embeddings: Embeddings, tmp_path: Path
) -> None:
    """Names are read from this process's cache, then checked where the search reads the
    store: a speaker another writer just added is a name in the very next search."""
    seen, fresh = _search_after_another_writer(
        embeddings,
        f"sqlite:///{tmp_path / 'm.db'}",
        lambda memory: memory.search(QUESTION, namespace="chat", k=5),
    )
    assert seen[0].text == ANSWER
    assert [(r.id, r.score) for r in seen] == [(r.id, r.score) for r in fresh]


def test_async_search_checks_names_alike(embeddings: Embeddings, tmp_path: Path) -> None:
    seen, fresh = _search_after_another_writer(
        embeddings,
        f"sqlite:///{tmp_path / 'm.db'}",
        lambda memory: asyncio.run(memory.asearch(QUESTION, namespace="chat", k=5)),
    )
    assert seen[0].text == ANSWER
    assert [(r.id, r.score) for r in seen] == [(r.id, r.score) for r in fresh]


def test_a_forgotten_speaker_is_no_longer_a_name(embeddings: Embeddings) -> None:
    """Once all of Dmitri's records are gone, "Dmitri" is a word again."""
    with AgentMemory(":memory:", embeddings=embeddings) as memory:
        _fill(memory)
        for record in memory.records("chat"):
            if record.metadata.get("speaker") == "Dmitri":
                memory.delete(record.id, namespace="chat")
        memory.add("Tara: Dmitri's new job is at the hospital.", namespace="chat")
        top = memory.search(QUESTION, namespace="chat", k=1)
    assert top[0].text == "Tara: Dmitri's new job is at the hospital."


def test_names_do_not_cross_namespaces(embeddings: Embeddings) -> None:
    """Another user's speakers are not names here: the query is searched as written."""
    with AgentMemory(":memory:", embeddings=embeddings) as memory:
        _fill(memory, namespace="alice")
        memory.add("Dmitri is the name of my cat.", namespace="bob")
        memory.add("I adopted Dmitri from the shelter.", namespace="bob")
        top = memory.search("Who is Dmitri?", namespace="bob", k=2)
    assert {r.text for r in top} == {
        "Dmitri is the name of my cat.",
        "I adopted Dmitri from the shelter.",
    }
    assert all(r.score < 1.0 for r in top)


@pytest.mark.parametrize("mode", ["dense", "lexical"])
def test_plain_modes_search_the_query_as_written(embeddings: Embeddings, mode: str) -> None:
    with AgentMemory(":memory:", embeddings=embeddings) as memory:
        _fill(memory)
        top = memory.search("Dmitri", namespace="chat", k=3, mode=mode)
    assert all(r.text.startswith("Dmitri: ") for r in top)


WORKOUT = [
    ("Maria", "I started volunteering at the shelter on Saturdays."),
    ("John", "That's wonderful, Maria! How is it going?"),
    ("Maria", "Tiring but worth it. What have you been up to?"),
    ("John", "We took the kids to the lake last weekend, they loved it."),
    ("Maria", "Sounds awesome, John! Working out together is a great way of bonding as a family."),
    ("John", "Thanks, Maria! Three times a week; it keeps us on track."),
    ("Maria", "I should find a routine like that myself."),
    ("John", "My family and I cooked dinner together on Sunday."),
    ("John", "Work has been busy, lots of meetings."),
    ("Maria", "Family time is the best, I miss mine."),
]


def _workout_ranks(embeddings: Embeddings, mention: float) -> list[str]:
    with AgentMemory(
        ":memory:", embeddings=embeddings, hybrid=HybridConfig(named_mention=mention)
    ) as memory:
        for i, (speaker, text) in enumerate(WORKOUT):
            memory.add(
                f"{speaker}: {text}",
                namespace="chat",
                thread="session-1",
                metadata={"speaker": speaker},
                timestamp=T0 + timedelta(minutes=i),
            )
        hits = memory.search(
            "How often does John work out with his family?", namespace="chat", k=10
        )
        return [hit.text for hit in hits]


def test_a_turn_naming_the_person_asked_about_still_counts(embeddings: Embeddings) -> None:
    """Maria's turn addressed to John lost its match on "John" when the name left the query;
    ``named_mention`` gives it back, and John's answer after it rises with it."""
    default = _workout_ranks(embeddings, HybridConfig().named_mention)
    off = _workout_ranks(embeddings, 0.0)
    naming = (
        "Maria: Sounds awesome, John! Working out together is a great way of bonding as a family."
    )
    answer = "John: Thanks, Maria! Three times a week; it keeps us on track."
    assert default[0] == naming
    assert off.index(naming) > 0
    assert default.index(answer) < off.index(answer)
    assert default.index(naming) < default.index("Maria: Family time is the best, I miss mine.")
