"""Forgetting a record forgets the copies of its text other records keep as ``reply_to``."""

from __future__ import annotations

import io
import time

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langchain_agentmem import AgentMemory, BufferChatMessageHistory
from langchain_agentmem.backends.sql_transaction import STORED_CHUNK
from tests.stores import HashEmbeddings

NUMBER = "4111 1111 1111 1111"
"""The card number, whole: a timestamp's digits can hold "4111" ("20:04:17.141112")."""
CARD = f"Can you keep my card number {NUMBER} for later?"


def _thread(memory: AgentMemory) -> tuple[str, str]:
    history = BufferChatMessageHistory(
        memory, namespace="ana", thread="t1", remember=True, remember_roles=("human", "ai")
    )
    history.add_messages([HumanMessage(CARD), AIMessage("I would rather not keep card numbers.")])
    records = {r.metadata.get("role"): r for r in memory.records("ana")}
    assert records["ai"].metadata["reply_to"] == CARD  # the copy this is about
    return records["human"].id, records["ai"].id


def test_deleting_or_updating_a_record_drops_its_copies(store_url: str) -> None:
    with AgentMemory(store_url) as memory:
        said, answer = _thread(memory)
        memory.delete(said, namespace="ana")
        memory.clear_messages(namespace="ana", thread="t1")  # the short-term copy, as a user would
        kept = memory.get(answer, namespace="ana")
        assert "reply_to" not in kept.metadata and kept.text.startswith("I would rather")
        hits = memory.search("4111 card number", namespace="ana", k=5, mode="lexical")
        assert all(NUMBER not in str(h.metadata) for h in hits)
        out = io.StringIO()
        memory.export_namespace("ana", out)
        assert NUMBER not in out.getvalue()
        (last,) = [d for d in memory.decisions("ana") if d.record_ids == (answer,)][-1:]
        assert last.kind.value == "UPDATE" and "replied to" in last.reason

        # An update of the record quoted takes the copy of its old text too.
        said, answer = _thread(memory)
        memory.update(said, "I paid by card.", namespace="ana")
        assert "reply_to" not in memory.get(answer, namespace="ana").metadata


def test_a_restarted_process_sees_the_copy_gone(shared_store_url: str) -> None:
    with AgentMemory(shared_store_url) as first, AgentMemory(shared_store_url) as second:
        said, _ = _thread(first)
        assert second.search("4111", namespace="ana", k=5, mode="lexical")  # cached there
        first.delete(said, namespace="ana")
        hits = second.search("4111", namespace="ana", k=5, mode="lexical")
        assert all(NUMBER not in str(h.metadata) and NUMBER not in h.text for h in hits)


def test_a_sweep_of_many_threads_drops_every_copy(store_url: str) -> None:
    """Copies are looked for in the forgotten records' threads, also when a sweep forgets
    records of more threads than one query spells out."""
    threads = STORED_CHUNK + 20
    texts = [f"Is my code {n} safe?" for n in range(threads)]
    with AgentMemory(store_url, embeddings=HashEmbeddings(), policy="keep_all") as memory:
        for n, text in enumerate(texts):  # each question in a thread of its own
            memory.add(text, namespace="ana", thread=f"t{n}", record_id=f"q{n}")
        for n in (0, threads - 1):
            memory.add(
                "Yes, it is.",
                namespace="ana",
                thread=f"t{n}",
                record_id=f"a{n}",
                metadata={"reply_to": texts[n]},
            )
        ids = [f"q{n}" for n in range(threads)]
        assert len(memory.set_expiry(ids, namespace="ana", ttl=0.2)) == threads
        time.sleep(0.3)
        assert memory.sweep("ana") == threads
        for n in (0, threads - 1):
            assert "reply_to" not in memory.get(f"a{n}", namespace="ana").metadata


@pytest.mark.parametrize(
    "said",
    [
        f"I got a new card.\nCan you keep my card number {NUMBER} for later?",
        f"I got a new card.  Can you keep my card number {NUMBER} for later?",
        f'I asked "can you keep my card number {NUMBER}?" Can you keep it for later?',
        f"I got a new card. Can you keep my card number {NUMBER} for later?\u201d",
    ],
)
def test_a_copy_is_found_by_what_it_was_made_from(store_url: str, said: str) -> None:
    """Line breaks, two spaces, quotes: the copy is the message's question as the surfaces
    keep it (one space between sentences, closing quotes dropped), not a part of its text;
    it names its source, and goes with it."""
    with AgentMemory(store_url, embeddings=HashEmbeddings()) as memory:
        history = BufferChatMessageHistory(
            memory, namespace="ana", thread="t1", remember=True, remember_roles=("human", "ai")
        )
        history.add_messages([HumanMessage(said), AIMessage("I would rather not keep them.")])
        records = {r.metadata.get("role"): r for r in memory.records("ana")}
        copied = records["ai"].metadata["reply_to"]
        assert NUMBER in copied
        assert records["ai"].metadata["reply_to_id"] == records["human"].id
        memory.delete(records["human"].id, namespace="ana")
        memory.clear_messages(namespace="ana", thread="t1")  # the short-term copy, as a user would
        kept = memory.get(records["ai"].id, namespace="ana")
        assert "reply_to" not in kept.metadata and "reply_to_id" not in kept.metadata
        out = io.StringIO()
        memory.export_namespace("ana", out)
        assert NUMBER not in out.getvalue()


def test_a_given_source_is_not_taken_as_it_came(store_url: str) -> None:
    with AgentMemory(store_url, embeddings=HashEmbeddings()) as memory:
        memory.add("What is your name?", namespace="ana", thread="t1", record_id="q")
        memory.add(
            "Ana.",
            namespace="ana",
            thread="t1",
            record_id="a",
            metadata={"reply_to": "What is your name?", "reply_to_id": "someone-else"},
        )
        assert memory.get("a", namespace="ana").metadata["reply_to_id"] == "q"
