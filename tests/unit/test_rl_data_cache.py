"""Embedding cache files: named from a conversation's id, always inside the cache folder."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.rl.data import (
    Conversation,
    Question,
    Turn,
    cache_dir,
    cache_name,
    embed_conversations,
)


def _conv(sample_id: str) -> Conversation:
    turns = [
        Turn("D1:1", "A", "A: I adopted a beagle.", 1, False),
        Turn("D1:2", "B", "B: Nice!", 1, False),
    ]
    return Conversation(sample_id, turns, [Question("What dog did A adopt?", 4, (0,))])


def _cached() -> list[str]:
    return sorted(str(p.relative_to(cache_dir())) for p in cache_dir().rglob("*") if p.is_file())


@pytest.mark.parametrize(
    ("sample_id", "slug"), [("../../etc/x", "etc_x"), ("x/../../../escaped", "x_.._.._.._escaped")]
)
def test_a_crafted_id_writes_inside_the_cache_folder(
    sample_id: str, slug: str, embeddings: Embeddings
) -> None:
    above = cache_dir().parent.parent  # the test's own folder, holding $AGENTMEM_HOME
    [conv] = embed_conversations([_conv(sample_id)], embeddings)
    files = _cached()
    assert len(files) == 1 and files[0].startswith(f"emb-{slug}-")
    assert [p for p in above.rglob("*") if p.is_file() and cache_dir() not in p.parents] == []
    # Read back from the cache: the same vectors, no new file.
    [again] = embed_conversations([_conv(sample_id)], embeddings)
    assert np.array_equal(again.turn_vectors, conv.turn_vectors) and _cached() == files


def test_ids_that_slug_alike_get_their_own_files(embeddings: Embeddings) -> None:
    assert cache_name("a/b", "k") != cache_name("a?b", "k")
    embed_conversations([_conv("a/b"), _conv("a?b"), _conv("a_b")], embeddings)
    files = _cached()
    assert len(files) == 3 and all(f.startswith("emb-a_b-") for f in files)


@pytest.mark.parametrize("sample_id", ["", "...", "/../"])
def test_an_id_with_nothing_to_name_a_file_is_a_clear_error(
    sample_id: str, embeddings: Embeddings
) -> None:
    with pytest.raises(InvalidInputError, match=r"sample_id .* no letter or digit.*cache=False"):
        embed_conversations([_conv("fine"), _conv(sample_id)], embeddings)
    assert not cache_dir().exists() or _cached() == []  # checked before anything is embedded
    [conv] = embed_conversations([_conv(sample_id)], embeddings, cache=False)
    assert conv.turn_vectors.shape[0] == 2
