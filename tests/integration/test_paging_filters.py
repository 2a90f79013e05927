"""Paging through a user's records, and searches narrowed by metadata and score, on every
store and through every surface that searches."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from langchain_agentmem import (
    AgentMemory,
    AgentMemoryRetriever,
    AgentMemoryVectorStore,
    InvalidInputError,
    InvalidTypeError,
    SentenceTransformerEmbeddings,
)

START = datetime(2026, 1, 1, tzinfo=timezone.utc)

TEA = [f"I drink {kind} tea every morning." for kind in ("green", "black", "mint", "jasmine")]
FOOD = ["My favourite dish is a mushroom risotto.", "For lunch I usually eat a lentil soup."]


def _fill(memory: AgentMemory) -> dict[str, str]:
    """Six records of alice's, a day apart, food ones tagged; their ids by text."""
    ids: dict[str, str] = {}
    for day, text in enumerate(TEA[:2] + FOOD[:1] + TEA[2:] + FOOD[1:]):
        meta = {"topic": "food", "year": 2024 + day} if text in FOOD else {"topic": "drink"}
        (op,) = memory.add(
            text, namespace="alice", metadata=meta, timestamp=START + timedelta(days=day)
        )
        ids[text] = op.record_ids[0]
    return ids


def test_records_come_a_page_at_a_time(
    store_url: str, embeddings: SentenceTransformerEmbeddings
) -> None:
    with AgentMemory(store_url, embeddings=embeddings) as memory:
        _fill(memory)
        memory.add("Bob's own record.", namespace="bob")
        every = [r.id for r in memory.records("alice")]
        assert len(every) == 6
        pages = [memory.records("alice", limit=4, offset=at) for at in (0, 4, 8)]
        assert [len(p) for p in pages] == [4, 2, 0]
        assert [r.id for p in pages for r in p] == every  # each once, oldest first
        newest = memory.records("alice", limit=2, newest_first=True)
        assert [r.id for r in newest] == every[::-1][:2]
        assert [r.id for r in memory.records("alice", offset=5)] == every[5:]


async def test_async_records_page_alike(
    store_url: str, embeddings: SentenceTransformerEmbeddings
) -> None:
    with AgentMemory(store_url, embeddings=embeddings) as memory:
        _fill(memory)
        sync = [r.id for r in memory.records("alice", limit=3, offset=2, newest_first=True)]
        page = await memory.arecords("alice", limit=3, offset=2, newest_first=True)
        assert [r.id for r in page] == sync


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"limit": 0}, InvalidInputError, "limit must be from 1"),
        ({"offset": -1}, InvalidInputError, "offset must be from 0"),
        ({"limit": True}, InvalidTypeError, "limit must be an int"),
        ({"offset": "2"}, InvalidTypeError, "offset must be an int"),
    ],
)
def test_a_bad_page_is_refused_by_name(
    memory: AgentMemory, kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        memory.records("alice", **kwargs)  # type: ignore[arg-type]


def test_a_filtered_search_returns_k_matches_however_far_down_they_rank(
    store_url: str, embeddings: SentenceTransformerEmbeddings
) -> None:
    with AgentMemory(store_url, embeddings=embeddings) as memory:
        ids = _fill(memory)
        for mode in ("hybrid", "dense"):
            plain = memory.search("What tea do I drink?", namespace="alice", k=2, mode=mode)
            assert {r.id for r in plain} <= {ids[t] for t in TEA}  # the food ranks lower
            food = memory.search(
                "What tea do I drink?",
                namespace="alice",
                k=2,
                mode=mode,
                filter={"topic": "food"},
            )
            assert {r.id for r in food} == {ids[t] for t in FOOD}
        # The risotto was tagged 2026, the soup 2029 (2024 + the day each was added).
        later = memory.search("dish", namespace="alice", k=5, filter={"year": {"$gt": 2026}})
        assert [r.text for r in later] == [FOOD[1]]
        nothing = memory.search("tea", namespace="alice", k=3, filter={"topic": "travel"})
        assert nothing == []
        lexical = memory.search(
            "tea", namespace="alice", k=5, mode="lexical", filter={"topic": "drink"}
        )
        assert {r.id for r in lexical} == {ids[t] for t in TEA}


def test_min_score_leaves_out_what_scores_lower(
    store_url: str, embeddings: SentenceTransformerEmbeddings
) -> None:
    with AgentMemory(store_url, embeddings=embeddings) as memory:
        _fill(memory)
        every = memory.search("green tea in the morning", namespace="alice", k=6)
        line = (every[0].score + every[-1].score) / 2  # type: ignore[operator]
        kept = memory.search("green tea in the morning", namespace="alice", k=6, min_score=line)
        assert 0 < len(kept) < len(every)
        assert [r.id for r in kept] == [r.id for r in every if r.score >= line]  # type: ignore[operator]


async def test_async_search_narrows_alike(
    store_url: str, embeddings: SentenceTransformerEmbeddings
) -> None:
    with AgentMemory(store_url, embeddings=embeddings) as memory:
        _fill(memory)
        args = {"namespace": "alice", "k": 3, "filter": {"topic": "drink"}, "min_score": 0.05}
        sync = memory.search("morning tea", **args)  # type: ignore[arg-type]
        found = await memory.asearch("morning tea", **args)  # type: ignore[arg-type]
        assert [r.id for r in found] == [r.id for r in sync]
        assert all(r.metadata["topic"] == "drink" for r in found)


def test_a_bad_filter_is_refused_before_anything_is_read(memory: AgentMemory) -> None:
    with pytest.raises(InvalidInputError, match=r"unsupported filter operator '\$in'"):
        memory.search("tea", namespace="alice", filter={"topic": {"$in": ["food"]}})
    with pytest.raises(InvalidTypeError, match="filter must be a dict"):
        memory.search("tea", namespace="alice", filter=["topic"])  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="min_score must be a number"):
        memory.search("tea", namespace="alice", min_score="high")  # type: ignore[arg-type]


async def test_the_retriever_and_the_vector_store_take_filters(
    memory: AgentMemory,
) -> None:
    ids = _fill(memory)
    retriever = AgentMemoryRetriever(
        memory=memory, namespace="alice", k=2, filter={"topic": "food"}
    )
    docs = retriever.invoke("What tea do I drink?")
    assert {d.id for d in docs} == {ids[t] for t in FOOD}
    docs = await retriever.ainvoke("What tea do I drink?", filter={"topic": "drink"}, k=1)
    assert [d.metadata["topic"] for d in docs] == ["drink"]
    high = AgentMemoryRetriever(memory=memory, namespace="alice", k=6, min_score=2.0)
    assert high.invoke("tea") == []  # no hybrid score reaches 2

    store = AgentMemoryVectorStore(memory, namespace="alice")
    found = store.similarity_search("What tea do I drink?", k=2, filter={"topic": "food"})
    assert {d.id for d in found} == {ids[t] for t in FOOD}
    found = await store.asimilarity_search("What tea do I drink?", k=2, filter={"topic": "food"})
    assert {d.id for d in found} == {ids[t] for t in FOOD}
    mmr = store.max_marginal_relevance_search("tea", k=2, fetch_k=4, filter={"topic": "food"})
    assert {d.id for d in mmr} == {ids[t] for t in FOOD}
    by_vector = memory.search_by_vector(
        memory.embeddings.embed_query("tea"), namespace="alice", k=1, filter={"topic": "food"}
    )
    assert [r.metadata["topic"] for r in by_vector] == ["food"]
