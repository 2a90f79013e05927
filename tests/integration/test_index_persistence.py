"""Saved indexes are caches: reused when they match the store, rebuilt when they do not."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from langchain_agentmem import AgentMemory, HybridConfig, SentenceTransformerEmbeddings
from langchain_agentmem.index.persist import IndexFiles

TEXTS = [
    "Alice adopted a grey cat called Pixel.",
    "Bob is training for the Berlin marathon.",
    "The team offsite is in Lisbon in October.",
    "Carol collects vintage fountain pens.",
    "Dan's favourite dish is mushroom risotto.",
    "Erin plays the drums in a jazz band.",
]


@pytest.fixture
def store(db_path: Path, embeddings: SentenceTransformerEmbeddings) -> Iterator[str]:
    url = f"sqlite:///{db_path}"
    with AgentMemory(url, embeddings=embeddings) as mem:
        mem.add_many(TEXTS, namespace="u")
        mem.add("Only in the other namespace: Pixel the cat.", namespace="v")
        mem.search("warm", namespace="u")  # opens the views, so close() saves them
        mem.search("warm", namespace="v")
    yield url


def _answers(mem: AgentMemory) -> list[list[str]]:
    return [[h.text for h in mem.search(text, namespace="u", k=3, mode="dense")] for text in TEXTS]


def _fresh_answers(url: str, embeddings: SentenceTransformerEmbeddings) -> list[list[str]]:
    with AgentMemory(url, embeddings=embeddings, persist_indexes=False) as mem:
        return _answers(mem)


def _files(db_path: Path, namespace: str = "u") -> tuple[Path, Path]:
    paths = IndexFiles.beside(db_path).paths(namespace)
    assert paths is not None, "no index folder"
    return paths


def test_saved_index_is_reused_without_warning(
    store: str, db_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    index_file, sidecar = _files(db_path)
    assert index_file.exists() and sidecar.exists()
    meta = json.loads(sidecar.read_text())
    assert meta["name"] == index_file.stem and meta["dimensions"] == 384 and meta["seq"] > 0
    expected = _fresh_answers(store, embeddings)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with AgentMemory(store, embeddings=embeddings) as mem:
            assert _answers(mem) == expected
            hits = mem.search("Pixel the cat", namespace="u", k=10)
            assert all(h.namespace == "u" for h in hits)


@pytest.mark.parametrize("damage", ["delete", "corrupt", "truncate", "stale", "swap"])
def test_damaged_index_is_rebuilt_with_a_warning(
    store: str, db_path: Path, embeddings: SentenceTransformerEmbeddings, damage: str
) -> None:
    expected = _fresh_answers(store, embeddings)
    index_file, sidecar = _files(db_path)
    if damage == "delete":
        index_file.unlink()
    elif damage == "corrupt":
        index_file.write_bytes(b"not a faiss index at all" * 10)
    elif damage == "truncate":
        index_file.write_bytes(index_file.read_bytes()[:200])
    elif damage == "stale":
        meta = json.loads(sidecar.read_text())
        meta["seq"] = 10**9  # a state the store never reached
        sidecar.write_text(json.dumps(meta))
    else:  # namespace v's files in place of u's
        other_index, other_sidecar = _files(db_path, "v")
        index_file.write_bytes(other_index.read_bytes())
        sidecar.write_text(other_sidecar.read_text())
    with pytest.warns(RuntimeWarning, match="index of namespace 'u' rebuilt from the store"):
        mem = AgentMemory(store, embeddings=embeddings)
        got = _answers(mem)
    assert got == expected
    mem.close()  # saves a good index again
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with AgentMemory(store, embeddings=embeddings) as again:
            assert _answers(again) == expected


def test_index_behind_the_store_catches_up(
    store: str, embeddings: SentenceTransformerEmbeddings
) -> None:
    # Another writer changes the store without saving indexes.
    with AgentMemory(store, embeddings=embeddings, persist_indexes=False) as writer:
        writer.add("Frank learned to juggle five balls.", namespace="u")
        gone = next(r for r in writer.records("u") if "risotto" in r.text)
        writer.delete(gone.id, namespace="u")
        moved = next(r for r in writer.records("u") if "marathon" in r.text)
        writer.update(moved.id, "Bob switched from running to rowing.", namespace="u")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with AgentMemory(store, embeddings=embeddings) as mem:
            assert mem.search("juggling", namespace="u", k=1, mode="dense")[0].text.startswith(
                "Frank"
            )
            hits = mem.search("mushroom risotto", namespace="u", k=10, mode="dense")
            assert gone.id not in {h.id for h in hits}
            top = mem.search("rowing", namespace="u", k=1, mode="dense")[0]
            assert top.id == moved.id and top.text == "Bob switched from running to rowing."


def test_approximate_index_round_trip(
    db_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    approximate = HybridConfig(hnsw_threshold=8)
    texts = [f"Note {i}: {t}" for i in range(3) for t in TEXTS]  # 18 > 8: HNSW
    url = f"sqlite:///{db_path}"
    with AgentMemory(url, embeddings=embeddings, hybrid=approximate) as mem:
        ids = [ops[0].record_ids[0] for ops in mem.add_many(texts, namespace="u")]
        mem.update(ids[0], "A completely new note about sailing to Corsica.", namespace="u")
        mem.delete(ids[1], namespace="u")
        top = mem.search("sailing to Corsica", namespace="u", k=1, mode="dense")[0]
        assert top.id == ids[0]
    meta = json.loads(_files(db_path)[1].read_text())
    assert meta["approximate"] is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with AgentMemory(url, embeddings=embeddings, hybrid=approximate) as mem:
            hits = mem.search("sailing to Corsica", namespace="u", k=20, mode="dense")
            assert hits[0].id == ids[0]
            assert ids[1] not in {h.id for h in hits}
            assert len(hits) == len(texts) - 1
            assert len({h.id for h in hits}) == len(hits)


def test_memory_store_has_no_index_files(
    tmp_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    with AgentMemory(":memory:", embeddings=embeddings) as mem:
        mem.add("hello", namespace="u")
        mem.search("hello", namespace="u")
    assert not list(tmp_path.glob("**/*.faiss"))


def test_a_delete_by_another_process_during_a_save_leaves_no_file_with_its_vector(
    store: str, db_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    """The other process removes the saved file after its delete; a save that was writing it
    meanwhile puts it back: it looks again once written, and removes it."""
    with (
        AgentMemory(store, embeddings=embeddings) as saver,
        AgentMemory(store, embeddings=embeddings) as other,
    ):
        saver.add("My locker code is 4417.", namespace="u", record_id="code")
        saver.search("warm", namespace="u")
        files = saver._access.cache.index_files
        assert files is not None
        write = files.save

        def raced(namespace: str, index: object, seq: int) -> None:
            other.delete("code", namespace="u")  # commits, then removes the saved file
            write(namespace, index, seq)  # type: ignore[arg-type]

        files.save = raced  # type: ignore[method-assign]
        saver.save_indexes()
        files.save = write  # type: ignore[method-assign]
        index_path, meta_path = _files(db_path)
        assert not index_path.exists() and not meta_path.exists()
    with AgentMemory(store, embeddings=embeddings) as mem:
        assert "code" not in {r.id for r in mem.records("u")}
        assert mem.search("locker code", namespace="u", k=3)
