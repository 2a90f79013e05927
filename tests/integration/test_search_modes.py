"""Dense, lexical and hybrid search against the real model and a real SQLite file."""

from __future__ import annotations

import asyncio

import pytest

from langchain_agentmem import AgentMemory, InvalidInputError, InvalidTypeError

FACTS = [
    "My dog Biscuit is a golden retriever who loves the beach.",
    "I started learning the cello in March.",
    "Our flight to Reykjavik leaves on Friday at 7 am.",
    "The quarterly report is due to Margaret next Tuesday.",
    "I am allergic to peanuts and shellfish.",
    "My sister Ines got married in Porto last summer.",
]


@pytest.fixture
def filled(memory: AgentMemory) -> AgentMemory:
    for fact in FACTS:
        memory.add(fact, namespace="u")
    memory.add("Reykjavik cello Biscuit peanuts Margaret Porto", namespace="other")
    return memory


@pytest.mark.parametrize("mode", ["dense", "lexical", "hybrid"])
def test_each_mode_finds_the_obvious_record(filled: AgentMemory, mode: str) -> None:
    hits = filled.search("When does the flight to Reykjavik leave?", namespace="u", mode=mode)
    assert hits and hits[0].text == FACTS[2]
    assert all(h.namespace == "u" for h in hits)
    scores = [h.score for h in hits]
    assert all(s is not None for s in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]


def test_lexical_needs_a_shared_word(filled: AgentMemory) -> None:
    # No word in common: BM25 has nothing to say, dense still finds the meaning.
    assert filled.search("food intolerance", namespace="u", mode="lexical") == []
    dense = filled.search("food intolerance", namespace="u", k=1, mode="dense")
    assert dense[0].text == FACTS[4]
    hybrid = filled.search("food intolerance", namespace="u", k=1)
    assert hybrid[0].text == FACTS[4]


def test_modes_follow_update_and_delete(filled: AgentMemory) -> None:
    rid = next(r.id for r in filled.records("u") if "cello" in r.text)
    filled.update(rid, "I gave up the cello and took up the bassoon.")
    for mode in ("dense", "lexical", "hybrid"):
        top = filled.search("bassoon", namespace="u", k=1, mode=mode)
        assert top[0].id == rid, mode
    filled.delete(rid)
    for mode in ("dense", "lexical", "hybrid"):
        assert rid not in {h.id for h in filled.search("bassoon cello", namespace="u", mode=mode)}


def test_namespaces_never_mix(filled: AgentMemory) -> None:
    for mode in ("dense", "lexical", "hybrid"):
        hits = filled.search("Reykjavik cello Biscuit", namespace="other", k=10, mode=mode)
        assert [h.namespace for h in hits] == ["other"], mode
        assert filled.search("anything", namespace="nobody", mode=mode) == []


def test_k_bounds_every_mode(filled: AgentMemory) -> None:
    for mode in ("dense", "hybrid"):
        assert len(filled.search("my family", namespace="u", k=3, mode=mode)) == 3
        assert len(filled.search("my family", namespace="u", k=50, mode=mode)) == len(FACTS)
    assert len(filled.search("Reykjavik Porto cello", namespace="u", k=2, mode="lexical")) == 2


def test_bad_mode_and_query(filled: AgentMemory) -> None:
    with pytest.raises(InvalidInputError, match=r"'semantic'.*hybrid, dense, lexical"):
        filled.search("x", namespace="u", mode="semantic")
    with pytest.raises(InvalidTypeError, match="mode must be a str"):
        filled.search("x", namespace="u", mode=None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="query is empty"):
        filled.search("  ", namespace="u", mode="lexical")
    with pytest.raises(InvalidInputError, match="k must be >= 1"):
        filled.search("x", namespace="u", k=0, mode="hybrid")
    assert len(filled.records("u")) == len(FACTS)


def test_asearch_matches_search(filled: AgentMemory) -> None:
    for mode in ("dense", "lexical", "hybrid"):
        sync = filled.search("allergies", namespace="u", k=3, mode=mode)
        got = asyncio.run(filled.asearch("allergies", namespace="u", k=3, mode=mode))
        assert [h.id for h in got] == [h.id for h in sync], mode
    with pytest.raises(InvalidInputError, match="unknown search mode"):
        asyncio.run(filled.asearch("x", namespace="u", mode="bm25"))
