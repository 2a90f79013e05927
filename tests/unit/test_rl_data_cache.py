"""Embedding cache files: named by digests, owner-only, always inside the cache folder."""

from __future__ import annotations

import re
import stat

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from langchain_agentmem.rl.data import (
    Conversation,
    Question,
    Turn,
    cache_dir,
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


@pytest.mark.parametrize("sample_id", ["../../etc/x", "x/../../../escaped", "", "/../"])
def test_a_crafted_id_writes_inside_the_cache_folder(
    sample_id: str, embeddings: Embeddings
) -> None:
    above = cache_dir().parent.parent  # the test's own folder, holding $AGENTMEM_HOME
    [conv] = embed_conversations([_conv(sample_id)], embeddings)
    files = _cached()
    assert len(files) == 1 and re.fullmatch(r"emb-[0-9a-f]{16}-[0-9a-f]{16}\.npz", files[0])
    assert [p for p in above.rglob("*") if p.is_file() and cache_dir() not in p.parents] == []
    # Read back from the cache: the same vectors, no new file.
    [again] = embed_conversations([_conv(sample_id)], embeddings)
    assert np.array_equal(again.turn_vectors, conv.turn_vectors) and _cached() == files


def test_cache_files_are_private_and_never_named_after_the_conversation(
    embeddings: Embeddings,
) -> None:
    assert not cache_dir().parent.exists()  # $AGENTMEM_HOME is made here too
    embed_conversations([_conv("alice@example.com"), _conv("a/b"), _conv("a?b")], embeddings)
    files = _cached()
    assert len(files) == 3  # ids that would slug alike still get a file each
    assert not [f for f in files if "alice" in f or "example" in f or "a_b" in f]
    for folder in (cache_dir(), cache_dir().parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert {stat.S_IMODE((cache_dir() / f).stat().st_mode) for f in files} == {0o600}


def test_files_named_by_earlier_versions_are_removed(embeddings: Embeddings) -> None:
    cache_dir().mkdir(parents=True)
    old = cache_dir() / "emb-alice_example.com-c97afd14-040851b0154a60e7.npz"
    old.write_bytes(b"vectors of alice's conversation")
    mine = cache_dir() / "notes.txt"
    mine.write_text("not the cache's")
    embed_conversations([_conv("bob")], embeddings)
    assert not old.exists() and mine.exists() and len(_cached()) == 2
