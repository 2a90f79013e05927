"""Files and folders another account plants beside what the package keeps are never adopted:
an index folder turned into a link, a store file made for the user to write into, a cache
folder of open mode, an ONNX model put where the package looks for its export."""

from __future__ import annotations

import os
import stat
import time
import warnings
from pathlib import Path

import pytest

from langchain_agentmem import AgentMemory, QuantizedEmbeddings
from langchain_agentmem.bench.answer_cache import AnswerCache
from langchain_agentmem.errors import StoreError
from tests.stores import HashEmbeddings

NOBODY = 65534


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)  # a shared project folder: anyone can put files here
    return folder


def test_an_index_folder_planted_as_a_link_is_never_followed(
    tmp_path: Path, shared: Path, hash_embeddings: HashEmbeddings
) -> None:
    target = tmp_path / "theirs"
    target.mkdir()
    target.chmod(0o755)
    old = target / "keep.tmp"
    old.write_text("someone's file")
    hour_ago = time.time() - 7200
    os.utime(old, (hour_ago, hour_ago))
    (shared / "m.db.indexes").symlink_to(target)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with AgentMemory(f"sqlite:///{shared / 'm.db'}", embeddings=hash_embeddings) as memory:
            memory.add("I live in Lyon.", namespace="ana")
            assert memory.search("Where do I live?", namespace="ana", k=1)
    # Not made private, not swept, nothing written there; the index is rebuilt next time.
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert sorted(p.name for p in target.iterdir()) == ["keep.tmp"]
    assert any("could not save the index" in str(w.message) for w in caught)
    with AgentMemory(f"sqlite:///{shared / 'm.db'}", embeddings=hash_embeddings) as memory:
        assert [r.text for r in memory.records("ana")] == ["I live in Lyon."]


def test_a_store_file_made_for_the_user_to_write_into_is_refused(
    shared: Path, hash_embeddings: HashEmbeddings
) -> None:
    planted = shared / "team.db"
    planted.write_bytes(b"")
    planted.chmod(0o666)  # made by another account for this one to fill
    with pytest.raises(StoreError, match="can be written by others"):
        AgentMemory(f"sqlite:///{planted}", embeddings=hash_embeddings)
    assert planted.read_bytes() == b""
    wal = shared / "own.db-wal"
    wal.write_bytes(b"")
    wal.chmod(0o666)  # SQLite would replay a log planted beside the store
    with pytest.raises(StoreError, match=r"own\.db-wal' in .* can be written by others"):
        AgentMemory(f"sqlite:///{shared / 'own.db'}", embeddings=hash_embeddings)


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file of another user takes root")
def test_another_accounts_store_file_is_refused(
    shared: Path, hash_embeddings: HashEmbeddings
) -> None:
    planted = shared / "team.db"
    planted.write_bytes(b"")
    planted.chmod(0o600)
    os.chown(planted, NOBODY, NOBODY)
    with pytest.raises(StoreError, match=r"belongs to another user \(uid 65534\)"):
        AgentMemory(f"sqlite:///{planted}", embeddings=hash_embeddings)


def test_the_answers_cache_is_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    cache = AnswerCache(home / "cache" / "answers.jsonl")
    cache.update("prompt", "model", [])  # no generations: a line all the same
    for folder in (home, home / "cache"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "cache" / "answers.jsonl").stat().st_mode) == 0o600
    loose = tmp_path / "loose.jsonl"
    loose.write_text("")
    loose.chmod(0o644)
    AnswerCache(loose).update("prompt", "model", [])
    assert stat.S_IMODE(loose.stat().st_mode) == 0o600  # the user's own file: made private
    link = tmp_path / "link.jsonl"
    link.symlink_to(tmp_path / "elsewhere.jsonl")
    with pytest.raises(StoreError, match="is a symbolic link"):
        AnswerCache(link).update("prompt", "model", [])
    assert not (tmp_path / "elsewhere.jsonl").exists()


def test_a_model_folder_planted_in_a_shared_cache_is_not_loaded(shared: Path) -> None:
    pytest.importorskip("onnxruntime")
    planted = shared / "onnx"
    planted.mkdir()
    planted.chmod(0o777)  # where a planted model_int8.onnx would be looked for
    with pytest.raises(StoreError, match="writable by others"):
        QuantizedEmbeddings(cache_dir=shared).load()
    assert list(planted.iterdir()) == []
