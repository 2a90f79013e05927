"""Every tuned value of search sits in one object and names the file it was chosen in."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import pytest

from langchain_agentmem import AgentMemory, HybridConfig
from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.ranking import sources

ROOT = Path(__file__).resolve().parents[2]


def test_every_field_names_a_results_file_of_the_repository() -> None:
    found = sources()
    assert set(found) == {f.name for f in dataclasses.fields(HybridConfig)}
    for name, source in found.items():
        path = ROOT / source
        assert source.startswith("benchmarks/"), (name, source)
        assert path.is_file() and path.stat().st_size > 0, (name, source)


@pytest.mark.parametrize(
    ("name", "value", "error", "says"),
    [
        ("dense_weight", 1.5, InvalidInputError, "HybridConfig.dense_weight must be in [0, 1]"),
        ("dense_weight", "0.2", InvalidTypeError, "a number in [0, 1]"),
        ("bm25_b", -0.1, InvalidInputError, "HybridConfig.bm25_b must be in [0, 1]"),
        ("bm25_k1", 0.0, InvalidInputError, "HybridConfig.bm25_k1 must be a finite number > 0"),
        ("bm25_k1", math.inf, InvalidInputError, "finite number > 0"),
        ("pair_margin", math.nan, InvalidInputError, "HybridConfig.pair_margin must be >= 0"),
        ("candidates", 0, InvalidInputError, "HybridConfig.candidates must be >= 1"),
        ("min_background", 2.0, InvalidTypeError, "HybridConfig.min_background must be an int"),
        ("newer_first", 1, InvalidTypeError, "HybridConfig.newer_first must be a bool"),
        ("question_weight", True, InvalidTypeError, "HybridConfig.question_weight must be"),
        ("hnsw_threshold", -1, InvalidInputError, "HybridConfig.hnsw_threshold must be >= 0"),
        ("hnsw_threshold", 2.5, InvalidTypeError, "an int >= 0 or None"),
    ],
)
def test_a_bad_value_is_refused_with_its_field(
    name: str, value: object, error: type[Exception], says: str
) -> None:
    with pytest.raises(error, match=re.escape(says)):
        HybridConfig(**{name: value})  # type: ignore[arg-type]


def test_off_is_math_inf_where_a_field_allows_it() -> None:
    assert HybridConfig(pair_margin=math.inf, unmarked_standing=math.inf).pair_margin == math.inf


def _scores(config: HybridConfig) -> list[float]:
    memory = AgentMemory(":memory:", hybrid=config)
    memory.add_many(
        [
            "Tea.",
            "I drink tea every single morning before work, with milk and a little honey.",
            "Coffee is fine too.",
        ],
        namespace="ana",
    )
    return [h.score for h in memory.search("tea", namespace="ana", k=2, mode="lexical")]


def test_bm25_parameters_reach_the_namespaces_index() -> None:
    # b weighs length: with b=0 the long and the short record score the same BM25.
    default = _scores(HybridConfig())
    flat = _scores(HybridConfig(bm25_b=0.0))
    assert default[0] > default[1]
    assert flat[0] == pytest.approx(flat[1])
    assert _scores(HybridConfig(bm25_k1=3.0)) != default


def _approximate(config: HybridConfig) -> bool:
    """Whether the dense index a search used went approximate, 9 records in."""
    texts = [f"Note {i} about {topic}." for i in range(3) for topic in ("tea", "rain", "maps")]
    with AgentMemory(":memory:", hybrid=config) as memory:
        memory.add_many(texts, namespace="ana")
        assert memory.search("tea", namespace="ana", k=1)[0].text.endswith("about tea.")
        view = memory._access.cache.peek("ana")  # what the search used
        assert view is not None
        return view.dense.approximate


def test_the_hnsw_threshold_reaches_the_dense_index(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _approximate(HybridConfig(hnsw_threshold=4))
    assert not _approximate(HybridConfig())
    monkeypatch.setenv("AGENTMEM_HNSW_THRESHOLD", "4")  # None: the environment decides
    assert _approximate(HybridConfig())
    assert not _approximate(HybridConfig(hnsw_threshold=100))
