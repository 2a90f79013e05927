"""Parts of hybrid search: absolute BM25 normalisation, thread neighbours, background,
standing."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from langchain_agentmem.index import LexicalIndex, ThreadOrder, lexical_text
from langchain_agentmem.index.dense import DenseIndex
from langchain_agentmem.index.lexical import tokenize
from langchain_agentmem.index.text import lexical_counts
from langchain_agentmem.ranking.newer_first import background, standing

WORDS = st.sampled_from(["kitten", "dog", "lake", "paint", "sunrise", "alice", "orange"])


@given(
    docs=st.lists(st.lists(WORDS, min_size=0, max_size=12), min_size=1, max_size=8),
    query=st.lists(WORDS, min_size=1, max_size=4),
)
def test_normalised_bm25_stays_in_0_1_and_keeps_the_order(
    docs: list[list[str]], query: list[str]
) -> None:
    index = LexicalIndex()
    index.add(list(range(len(docs))), [" ".join(d) for d in docs])
    text = " ".join(query)
    _, raw = index.scores(text)
    _, norm = index.normalised(text)
    if not len(raw):
        return
    assert ((norm >= 0) & (norm <= 1)).all()
    # A monotone rescaling: a higher raw score never gets a lower normalised one.
    by_raw = norm[raw.argsort(kind="stable")]
    assert (by_raw[1:] >= by_raw[:-1] - 1e-6).all()


def test_unseen_query_words_count_in_the_ceiling() -> None:
    index = LexicalIndex()
    texts = ["Alice is a nurse.", "Alice has a cat.", "Alice likes climbing."]
    index.add([1, 2, 3], texts)
    # "alice" is in every record: on its own, it is the whole ceiling ...
    _, alone = index.normalised("alice")
    # ... but next to a word no record holds, matching it is worth little.
    _, diluted = index.normalised("alice job")
    assert alone.max() > 0.3
    assert diluted.max() < 0.05
    assert index.ceiling("alice job") > index.ceiling("alice")


def test_thread_order_neighbours() -> None:
    order = ThreadOrder()
    order.add(10, "s1", 3.0)
    order.add(11, "s1", 1.0)
    order.add(12, "s1", 2.0)
    order.add(13, "s2", 2.5)
    order.add(14, None, 2.0)
    assert order.neighbours(12) == [11, 10]
    assert order.neighbours(11) == [12]
    assert order.neighbours(13) == []
    assert order.neighbours(14) == []
    order.remove(12)
    assert order.neighbours(11) == [10]
    order.add(10, "s2", 3.0)  # moved to another thread
    assert order.neighbours(11) == []
    assert order.neighbours(13) == [10]
    order.remove(99)  # unknown: ignored


def test_a_question_lifts_only_the_record_after_it() -> None:
    order = ThreadOrder()
    order.add(1, "s", 1.0, speaker="Mel")  # "I adopted a kitten."
    order.add(2, "s", 2.0, asks=True, speaker="Mel")  # "What happened to my daughter?"
    order.add(3, "s", 3.0, speaker="Caroline")  # "She broke her arm."
    assert order.neighbours(1) == [2]
    assert order.lifters(1) == []  # the question is about its answer, not the kitten
    assert order.lifters(3) == [2]
    assert order.lifters(2) == [1, 3]
    order.add(2, "s", 2.0, speaker="Mel")  # re-put without the question: lifts both ways
    assert order.lifters(1) == [2]
    order.add(2, "s", 2.0, asks=True, speaker="Mel")
    order.remove(2)
    order.add(2, "s", 2.5, speaker="Mel")
    assert order.lifters(1) == [2]  # removing a record forgets that it asked


def test_a_question_does_not_lift_the_askers_own_next_words() -> None:
    order = ThreadOrder()
    order.add(1, "s", 1.0, asks=True, speaker="user")  # "Where do I live?"
    order.add(2, "s", 2.0, speaker="user")  # "thanks"
    order.add(3, "s", 3.0, speaker="user")  # "I moved to Porto."
    assert order.lifters(2) == [3]  # not the question: it is not answered by "thanks"
    assert order.lifters(3) == [2]  # a statement before still lifts
    order.add(2, "s", 2.0, speaker="assistant")  # the other side's reply is its answer
    assert order.lifters(2) == [1, 3]
    order.add(1, "s", 1.0, asks=True)  # who asked is unknown: it lifts what follows
    order.add(2, "s", 2.0)
    assert order.lifters(2) == [1, 3]


def test_lexical_text_puts_the_date_in_front() -> None:
    when = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc).timestamp()
    assert lexical_text("I got a puppy!", when, dates=True) == "[8 May 2023] I got a puppy!"
    assert lexical_text("I got a puppy!", when, dates=False) == "I got a puppy!"


@given(
    ops=st.lists(
        st.tuples(
            st.booleans(),
            st.integers(0, 12),
            st.sampled_from(["a", "b", None]),
            st.integers(0, 5),
            st.booleans(),
            st.sampled_from(["user", "assistant", None]),
        ),
        max_size=60,
    )
)
def test_thread_order_matches_a_sorted_list(
    ops: list[tuple[bool, int, str | None, int, bool, str | None]],
) -> None:
    order = ThreadOrder()
    model: dict[int, tuple[str | None, float, bool, str | None]] = {}
    for add, rid, thread, at, asks, speaker in ops:
        if add:
            order.add(rid, thread, float(at), asks=asks, speaker=speaker)
            model[rid] = (thread, float(at), asks, speaker)
        else:
            order.remove(rid)
            model.pop(rid, None)
    for rid, (thread, at, _, speaker) in model.items():
        if thread is None:
            assert order.neighbours(rid) == [] == order.lifters(rid)
            continue
        same = sorted((t_at, r) for r, (t, t_at, _, _) in model.items() if t == thread)
        i = same.index((at, rid))
        want = [same[j][1] for j in (i - 1, i + 1) if 0 <= j < len(same)]
        assert order.neighbours(rid) == want
        lifters = []
        if i > 0:
            _, _, before_asks, before_speaker = model[same[i - 1][1]]
            if not (before_asks and before_speaker is not None and before_speaker == speaker):
                lifters.append(same[i - 1][1])
        if i + 1 < len(same) and not model[same[i + 1][1]][2]:
            lifters.append(same[i + 1][1])
        assert order.lifters(rid) == lifters


@given(
    docs=st.lists(st.lists(WORDS, min_size=0, max_size=12), min_size=1, max_size=12),
    gone=st.sets(st.integers(0, 11), max_size=6),
    query=st.lists(WORDS, min_size=1, max_size=4),
)
def test_scores_match_bm25s_built_from_scratch_after_adds_and_removes(
    docs: list[list[str]], gone: set[int], query: list[str]
) -> None:
    import bm25s
    import numpy as np

    from langchain_agentmem.index.lexical import DEFAULT_B, DEFAULT_K1, tokenize

    index = LexicalIndex()
    index.add(list(range(len(docs))), [" ".join(d) for d in docs])
    index.add([0], [" ".join(reversed(docs[0]))])  # a replaced record
    index.remove(sorted(gone))
    live = [i for i in range(len(docs)) if i not in gone]
    rids, ours = index.scores(" ".join(query))
    tokens = [tokenize(" ".join(docs[i])) for i in live]
    if not live or not any(tokens):
        assert not ours.any()
        return
    reference = bm25s.BM25(k1=DEFAULT_K1, b=DEFAULT_B)
    reference.index(tokens, show_progress=False)
    # A term repeated in the query scores once (bm25s would score each repetition).
    terms = [t for t in dict.fromkeys(tokenize(" ".join(query))) if t in reference.vocab_dict]
    expected = reference.get_scores(terms) if terms else np.zeros(len(live))
    pos = index.positions()
    assert sorted(pos) == live and len(index) == len(live)
    got = np.array([ours[pos[i]] for i in live])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    assert not ours[rids == -1].any()  # emptied slots never score


def test_many_removals_renumber_the_slots() -> None:
    index = LexicalIndex()
    index.add(list(range(3000)), [f"word{i % 50} common" for i in range(3000)])
    index.remove(list(range(2990)))
    rids, scores = index.scores("word3 common")
    assert len(rids) == 10 and set(rids.tolist()) == set(range(2990, 3000))
    assert (scores > 0).all()  # "common" is in every live record
    assert [rid for rid, _ in index.search("word43", 5)] == [2993]


@given(
    n=st.integers(min_value=1, max_value=12),
    seed=st.integers(min_value=0, max_value=2**31 - 1),
)
def test_background_is_the_pair_left_out_mean_cosine(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, 8)).astype(np.float32)
    # Lengths vary: the algebra must not count on unit vectors for the self-similarity.
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) * rng.uniform(0.5, 2.0, (n, 1))
    rows = sorted(set(rng.integers(0, n, size=3).tolist()))
    sims = (vectors[rows] @ vectors.T).astype(np.float64)
    got = background(vectors, rows, sims)
    for r, i in enumerate(rows):
        for j in range(n):
            others = [m for m in range(n) if m not in (i, j)]
            if i == j or not others:
                continue
            mine = np.mean([float(vectors[i] @ vectors[m]) for m in others])
            theirs = np.mean([float(vectors[j] @ vectors[m]) for m in others])
            assert abs(got[r, j] - (mine + theirs) / 2) < 1e-5


@given(
    n=st.integers(min_value=1, max_value=12),
    seed=st.integers(min_value=0, max_value=2**31 - 1),
)
def test_standing_is_the_z_score_among_the_speakers_others(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    cosine = rng.uniform(-0.2, 0.9, size=n).astype(np.float32)
    speaker = rng.integers(0, 2, size=n)
    got = standing(cosine, speaker)
    assert got.shape == (n, n)
    for i in range(n):
        for j in range(n):
            rest = [m for m in range(n) if speaker[m] == speaker[i] and m != j]
            values = np.array([float(cosine[m]) for m in rest])
            if speaker[j] != speaker[i] or len(rest) < 3 or values.std() <= 1e-6:
                assert got[i, j] == -np.inf
                continue
            want = (float(cosine[i]) - values.mean()) / values.std()
            assert abs(got[i, j] - want) < 1e-4 * max(1.0, abs(want))


def test_dense_vectors_in_one_lookup_match_one_by_one() -> None:
    rng = np.random.default_rng(0)
    for threshold in (1000, 4):  # flat, then HNSW with generations (re-added keys)
        index = DenseIndex(8, hnsw_threshold=threshold)
        first = rng.standard_normal((10, 8)).astype(np.float32)
        index.add(list(range(10)), first)
        index.add([3, 7], rng.standard_normal((2, 8)).astype(np.float32))  # replaced
        index.remove([5])
        keys = [9, 3, 0, 7]
        batch = index.vectors(keys)
        assert batch.shape == (4, 8) and batch.dtype == np.float32
        assert np.array_equal(batch, np.stack([index.vector(k) for k in keys]))
        assert index.vectors([]).shape == (0, 8)


def test_a_records_terms_are_its_dated_texts() -> None:
    """The date's terms, read once a day, are those of the dated text BM25 reads."""
    texts = ["I got a puppy!", "May 2023 was busy", "", "[note] in May", "1999: we met"]
    for when in (0.0, 1683504000.0, 1683590399.9, -86400.5, 4102444800.0):
        for text in texts:
            dated = Counter(tokenize(lexical_text(text, when, dates=True)))
            assert lexical_counts(text, when, dates=True) == dated, (text, when)
            assert lexical_counts(text, when, dates=False) == Counter(tokenize(text))
