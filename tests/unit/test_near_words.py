"""Near words: the shipped table, a query's near words, and how BM25 counts them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_agentmem import InvalidInputError, InvalidTypeError
from langchain_agentmem.index import LexicalIndex
from langchain_agentmem.index.lexical import tokenize
from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.ranking.near_words import FLOOR, PER_WORD, TABLE, load_table, near_words


def test_the_shipped_table_is_plain_text_with_a_few_near_words_a_word() -> None:
    lines = TABLE.read_text(encoding="utf-8").splitlines()
    assert len(lines) > 10_000
    for line in lines[:: max(1, len(lines) // 500)]:
        word, near = line.split("\t")
        nears = near.split(" ")
        assert 1 <= len(nears) <= PER_WORD
        # Another form of the word itself is never its near word.
        assert all(not set(tokenize(word)) & set(tokenize(n)) for n in nears)
    table = load_table()
    assert {"relationship", "spouse"} <= set(table["partner"])
    assert "husband" in table["spouse"]
    assert 0 < FLOOR < 1


def test_a_query_brings_the_near_words_of_its_content_words_only() -> None:
    near = near_words("Who is Dmitri's partner?").split()
    assert "relationship" in near
    assert len(near) == len(set(near)) <= PER_WORD
    # Names and stop words bring nothing.
    assert near_words("Who is Dmitri?") == ""
    assert near_words("") == ""


def test_another_table_can_be_passed(tmp_path: Path) -> None:
    path = tmp_path / "near.tsv"
    path.write_text("kitten\tcat pup\nlake\tpond\n", encoding="utf-8")
    table = load_table(str(path))
    assert near_words("Where is the kitten by the lake?", table) == "cat pup pond"


def test_near_words_count_less_than_the_query_own() -> None:
    index = LexicalIndex()
    index.add([1, 2, 3], ["Her husband cooks.", "Her spouse cooks.", "I like tea."])
    rids, plain = index.normalised("spouse")
    _, widened = index.normalised("spouse", "husband wife", 0.3)
    score = dict(zip(rids.tolist(), widened.tolist(), strict=True))
    before = dict(zip(rids.tolist(), plain.tolist(), strict=True))
    assert before[1] == 0.0 < score[1] < score[2]  # found by a near word, below the word
    assert score[2] == pytest.approx(before[2])  # the query's own match is unchanged
    assert score[3] == 0.0


WORDS = st.sampled_from(["kitten", "dog", "lake", "paint", "sunrise", "alice", "orange"])


@given(
    docs=st.lists(st.lists(WORDS, min_size=0, max_size=12), min_size=1, max_size=8),
    query=st.lists(WORDS, min_size=1, max_size=4),
    near=st.lists(WORDS, min_size=0, max_size=6),
    weight=st.floats(0.0, 1.0),
)
def test_widened_bm25_stays_in_0_1_and_never_lowers_a_score(
    docs: list[list[str]], query: list[str], near: list[str], weight: float
) -> None:
    index = LexicalIndex()
    index.add(list(range(len(docs))), [" ".join(d) for d in docs])
    _, plain = index.normalised(" ".join(query))
    _, widened = index.normalised(" ".join(query), " ".join(near), weight)
    assert ((widened >= 0) & (widened <= 1)).all()
    assert (widened >= plain - 1e-6).all()
    if weight == 0 or not near:
        assert np.allclose(widened, plain)


@pytest.mark.parametrize("value", [-0.1, 1.5])
def test_near_words_weight_out_of_range_is_a_clear_error(value: float) -> None:
    with pytest.raises(InvalidInputError, match="near_words"):
        HybridConfig(near_words=value)


def test_near_words_weight_of_another_type_is_a_clear_error() -> None:
    with pytest.raises(InvalidTypeError, match="near_words"):
        HybridConfig(near_words="0.3")  # type: ignore[arg-type]
