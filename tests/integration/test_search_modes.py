"""Dense, lexical and hybrid search against the real model and a real SQLite file."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from langchain_agentmem import AgentMemory, InvalidInputError, InvalidTypeError
from langchain_agentmem.ranking import HybridConfig
from tests.stores import HashEmbeddings

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
    filled.update(rid, "I gave up the cello and took up the bassoon.", namespace="u")
    for mode in ("dense", "lexical", "hybrid"):
        top = filled.search("bassoon", namespace="u", k=1, mode=mode)
        assert top[0].id == rid, mode
    filled.delete(rid, namespace="u")
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


ALICE = {
    "What is Alice's job?": "Alice works as a nurse at the city hospital.",
    "What pet does Alice have?": "Alice has a grey cat called Miso.",
    "What is Alice allergic to?": "Alice is allergic to peanuts.",
    "Where does Alice live?": "Alice lives in Lisbon, near the river.",
    "What does Alice do for fun?": "Alice's hobby is rock climbing on weekends.",
}


def test_hybrid_puts_the_right_fact_first_in_a_tiny_namespace(memory: AgentMemory) -> None:
    # Every fact shares the name; BM25 on it alone must not outvote the meaning.
    for fact in ALICE.values():
        memory.add(fact, namespace="alice")
    for question, fact in ALICE.items():
        for mode in ("hybrid", "dense"):
            hits = memory.search(question, namespace="alice", k=5, mode=mode)
            assert hits[0].text == fact, (mode, question, [h.text for h in hits])


def test_hybrid_scores_are_absolute(memory: AgentMemory) -> None:
    for fact in ALICE.values():
        memory.add(fact, namespace="alice")
    memory.add("Alice is allergic to peanuts.", namespace="lone")
    unrelated = memory.search("quarterly tax filing deadline", namespace="alice", k=5)
    related = memory.search("What is Alice allergic to?", namespace="alice", k=5)
    lone = memory.search("quarterly tax filing deadline", namespace="lone", k=1)
    assert all(0.0 <= (h.score or 0.0) <= 1.0 for h in unrelated + related + lone)
    # An unrelated query scores low wherever it is asked, a lone record included ...
    assert max(h.score or 0.0 for h in unrelated) < 0.1
    assert (lone[0].score or 0.0) < 0.1
    # ... while a real match clears the same bar whatever else the namespace holds.
    same = memory.search("What is Alice allergic to?", namespace="lone", k=1)
    assert related[0].text == same[0].text
    assert (related[0].score or 0.0) > 0.25
    assert (same[0].score or 0.0) > 0.25
    # A per-search (min-max) scale would give the top hit 1.0 whatever it was.
    assert (lone[0].score or 0.0) < 0.5 * (same[0].score or 0.0)


def test_dates_go_to_the_lexical_index_only(tmp_path: Path, embeddings: Embeddings) -> None:
    when = datetime(2023, 6, 8, 13, 56, tzinfo=timezone.utc)
    text = "We adopted a kitten from the shelter."
    vectors = {}
    for dates in (True, False):
        mem = AgentMemory(
            f"sqlite:///{tmp_path / f'd{dates}.db'}",
            embeddings=embeddings,
            hybrid=HybridConfig(dates=dates),
        )
        with mem:
            mem.add(text, namespace="u", timestamp=when)
            mem.add("The weather was mild all week.", namespace="u")
            dated = mem.search("kitten June 2023", namespace="u", k=1, mode="lexical")
            assert dated[0].text == text  # .text never carries the date
            month_only = mem.search("June 2023", namespace="u", k=2, mode="lexical")
            assert [h.text for h in month_only] == ([text] if dates else [])
            vectors[dates] = mem.get(dated[0].id, namespace="u").embedding
    assert np.array_equal(vectors[True], vectors[False])  # the embedding never does


def test_a_stored_question_does_not_lift_the_turn_before_it(memory: AgentMemory) -> None:
    # A user's own question, stored in their thread, matches the same question asked again;
    # what they said just before it is about something else and must not ride on it.
    thread = [
        "I adopted a kitten called Miso.",
        "What happened to my daughter?",
        "Sorry, I don't know yet.",
    ]
    for text in thread:
        memory.add(text, namespace="u", thread="chat-1")
    answer = "My daughter broke her arm at school on Monday."
    memory.add(answer, namespace="u", thread="chat-0")
    query = "What happened to my daughter?"
    hits = memory.search(query, namespace="u", k=4)
    rank = {h.text: i for i, h in enumerate(hits)}
    assert rank[answer] < rank.get(thread[0], len(hits))
    plain = AgentMemory(
        memory.url, embeddings=memory.embeddings, hybrid=HybridConfig(neighbour_lift=0)
    )
    with plain:
        flat = {h.text: h.score for h in plain.search(query, namespace="u", k=4)}
    # The kitten keeps its own score: nothing lifted it.
    lifted = {h.text: h.score for h in hits}
    assert lifted.get(thread[0], 0.0) == pytest.approx(flat.get(thread[0], 0.0), abs=1e-6)


def test_thread_neighbours_lift_an_answer_to_a_matching_turn(memory: AgentMemory) -> None:
    turns = [
        "Ann: What did you paint last weekend?",
        "Ben: A sunrise over the lake, all in orange.",
        "Ann: Lovely. Did you see the football match?",
        "Ben: I missed it, I was at my cousin's wedding.",
    ]
    for turn in turns:
        memory.add(turn, namespace="chat", thread="s1")
    for fact in ("Ben owns a blue bicycle.", "Ben's favourite colour is green."):
        memory.add(fact, namespace="chat")
    lifted = memory.search("What did Ben paint?", namespace="chat", k=6)
    # The lift alone: without it the stored question comes first, and statement first
    # would move a statement's score in its place (a stage of its own, tested apart).
    plain = AgentMemory(
        memory.url,
        embeddings=memory.embeddings,
        hybrid=HybridConfig(neighbour_lift=0, statement_first=False),
    )
    with plain:
        flat = plain.search("What did Ben paint?", namespace="chat", k=6)
    rank = {h.text: i for i, h in enumerate(lifted)}
    flat_rank = {h.text: i for i, h in enumerate(flat)}
    assert rank[turns[1]] <= 1
    assert rank[turns[1]] < flat_rank[turns[1]] or flat_rank[turns[1]] <= 1
    # Records without a thread are never lifted.
    for fact in ("Ben owns a blue bicycle.", "Ben's favourite colour is green."):
        by_id = {h.text: h.score for h in flat}
        assert {h.text: h.score for h in lifted}[fact] == pytest.approx(by_id[fact])


def test_bad_hybrid_config_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="dense_weight must be in"):
        HybridConfig(dense_weight=1.5)
    with pytest.raises(InvalidTypeError, match="neighbour_lift must be a number"):
        HybridConfig(neighbour_lift="a lot")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="candidates must be >= 1"):
        HybridConfig(candidates=0)
    with pytest.raises(InvalidInputError, match="restatement_margin must be in"):
        HybridConfig(restatement_margin=2.0)
    with pytest.raises(InvalidTypeError, match="restatement_relevance must be a number"):
        HybridConfig(restatement_relevance=None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=r"unmarked_standing must be >= 0 \(math.inf"):
        HybridConfig(unmarked_standing=float("nan"))
    with pytest.raises(InvalidInputError, match="unmarked_standing must be >= 0"):
        HybridConfig(unmarked_standing=-1.0)
    with pytest.raises(InvalidTypeError, match="unmarked_standing must be a number"):
        HybridConfig(unmarked_standing=True)
    assert HybridConfig(unmarked_standing=float("inf")).unmarked_standing == float("inf")
    with pytest.raises(InvalidInputError, match=r"pair_margin must be >= 0 \(math.inf"):
        HybridConfig(pair_margin=-0.1)
    with pytest.raises(InvalidTypeError, match="pair_margin must be a number"):
        HybridConfig(pair_margin="0.2")  # type: ignore[arg-type]
    assert HybridConfig(pair_margin=float("inf")).pair_margin == float("inf")
    with pytest.raises(InvalidInputError, match="pair_words must be >= 1"):
        HybridConfig(pair_words=0)
    with pytest.raises(InvalidTypeError, match="pair_words must be an int"):
        HybridConfig(pair_words=16.5)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="newer_first must be a bool"):
        HybridConfig(newer_first="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="hybrid must be a HybridConfig"):
        AgentMemory("sqlite:///:memory:", hybrid={"dense_weight": 0.2})  # type: ignore[arg-type]


def test_a_rare_word_finds_a_record_beyond_the_dense_candidates(
    db_path: Path, embeddings: Embeddings
) -> None:
    # 300 records about trips; the one that answers shares only a rare word with the query.
    names = ["Ana", "Ben", "Chloe", "Dev", "Eli", "Fatima", "Goran", "Hana", "Ivo", "Jun"]
    places = ["Lisbon", "Kyoto", "Oslo", "Lima", "Cairo", "Quebec"]
    trips = ["hiking the coastal trail", "the old market", "museums", "a food tour", "cycling"]
    when = ["last spring", "in August", "over the long weekend", "for a birthday", "with friends"]
    texts = [
        f"{n} planned a trip to {p} for {t} {w}."
        for n in names
        for p in places
        for t in trips
        for w in when
    ][::5]
    target = "The plumber said the boiler part is a Quaxley valve."
    config = HybridConfig(candidates=20)
    mem = AgentMemory(f"sqlite:///{db_path}", embeddings=embeddings, hybrid=config)
    with mem:
        mem.add_many([*texts[:150], target, *texts[150:]], namespace="u")
        assert len(mem.records("u")) == 301
        query = "Which trip did we plan around the Quaxley?"
        dense = mem.search(query, namespace="u", k=config.candidates, mode="dense")
        assert target not in [h.text for h in dense]  # beyond the dense candidates ...
        hits = mem.search(query, namespace="u", k=5)
        assert hits[0].text == target  # ... yet BM25's own candidates bring it in


def test_a_query_embedded_by_another_model_is_refused(tmp_path: Path) -> None:
    """faiss would read past a shorter query vector: every mode that embeds refuses it."""
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with AgentMemory(url, embeddings=HashEmbeddings()) as mem:  # 384 dims
        mem.add("Alice keeps bees in her garden.", namespace="alice")
    with AgentMemory(url, embeddings=HashEmbeddings(64)) as other:
        for mode in ("hybrid", "dense"):
            with pytest.raises(InvalidInputError, match=r"64 dimensions .* 'alice' holds 384"):
                other.search("bees", namespace="alice", mode=mode)
            with pytest.raises(InvalidInputError, match="64 dimensions"):
                asyncio.run(other.asearch("bees", namespace="alice", mode=mode))
        with pytest.raises(InvalidInputError, match="64 dimensions"):
            other.search_by_vector([0.1] * 64, namespace="alice")
        assert [r.text for r in other.search("bees", namespace="alice", mode="lexical")] == [
            "Alice keeps bees in her garden."
        ]
        assert other.search("bees", namespace="bob") == []  # an empty namespace: nothing


def test_a_term_repeated_in_the_query_scores_once(hash_embeddings: HashEmbeddings) -> None:
    with AgentMemory(":memory:", embeddings=hash_embeddings) as mem:
        mem.add("I drink green tea.", namespace="u")
        mem.add("Coffee keeps me awake.", namespace="u")
        once = mem.search("tea coffee", namespace="u", k=2, mode="lexical")
        again = mem.search("tea tea tea tea coffee", namespace="u", k=2, mode="lexical")
        assert [(r.id, r.score) for r in again] == [(r.id, r.score) for r in once]
