"""Forgetting that forgets: a deleted record, or a whole user, is unreadable afterwards.

The SQLite tests read the store's files after close (database, WAL, shared memory, the
saved index folder) for the deleted text and for the raw bytes of its embedding.
"""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langchain_agentmem import AgentMemory, OpKind
from langchain_agentmem.backends.sql_transaction import SQLTransaction
from langchain_agentmem.index import persist
from langchain_agentmem.policies.features import TEXTS
from tests.stores import PG_URL, HashEmbeddings, save_chat_threads

SECRET = "My bank PIN is 4921 and my locker code is ZEBRA-7731."
NEW_TEXT = "The user asked to change the locker note to: no code any more."
OTHERS = [
    "Alice adopted a grey cat called Pixel.",
    "Bob is training for the Berlin marathon.",
    "The team offsite is in Lisbon in October.",
]


def _store_files(db_path: Path) -> list[Path]:
    """Every file the store keeps: database, WAL, shared memory, saved indexes."""
    files = [p for p in db_path.parent.glob(db_path.name + "*") if p.is_file()]
    index_dir = db_path.with_name(db_path.name + ".indexes")
    if index_dir.is_dir():
        files += [p for p in index_dir.rglob("*") if p.is_file()]
    return files


def _found_in_files(db_path: Path, needle: bytes) -> list[str]:
    return [p.name for p in _store_files(db_path) if needle in p.read_bytes()]


def _pin_in_files(db_path: Path) -> list[str]:
    """Files holding the secret's PIN as a token of its own. Inside a longer run of hex
    digits "4921" is part of a random id or a timestamp (about one run in a hundred)."""
    pin = re.compile(rb"(?<![0-9A-Fa-f])4921(?![0-9A-Fa-f])")
    return [p.name for p in _store_files(db_path) if pin.search(p.read_bytes())]


def _vector_bytes(memory: AgentMemory, record_id: str, namespace: str = "u") -> bytes:
    embedding = memory.get(record_id, namespace=namespace).embedding
    assert embedding is not None
    return np.asarray(embedding, dtype="<f4").tobytes()


@pytest.fixture(params=["exact", "hnsw"])
def index_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Exact (flat) dense indexes, or HNSW graphs (which cannot delete in place)."""
    if request.param == "hnsw":
        monkeypatch.setenv("AGENTMEM_HNSW_THRESHOLD", "2")
    return str(request.param)


def test_deleted_record_leaves_no_text_or_vector_in_the_files(
    db_path: Path, hash_embeddings: HashEmbeddings, index_kind: str
) -> None:
    url = f"sqlite:///{db_path}"
    with AgentMemory(url, embeddings=hash_embeddings) as mem:
        mem.add_many(OTHERS, namespace="u")
        (op,) = mem.add(SECRET, namespace="u", thread="t1")
        secret_id = op.record_ids[0]
        secret_vector = _vector_bytes(mem, secret_id)
        mem.search("PIN", namespace="u")  # the view is cached, so close() saves an index
    # The test can see what it looks for: before the delete, text and vector are on disk.
    assert _found_in_files(db_path, SECRET.encode())
    assert _pin_in_files(db_path)
    assert any(p.suffix == ".faiss" for p in _store_files(db_path))
    assert _found_in_files(db_path, secret_vector)

    with AgentMemory(url, embeddings=hash_embeddings) as mem:
        mem.search("PIN", namespace="u")  # loads the saved index
        mem.delete(secret_id, namespace="u")
        log = mem.decisions("u")
        assert [(d.kind, d.record_ids) for d in log if secret_id in d.record_ids] == [
            (OpKind.ADD, (secret_id,)),
            (OpKind.DELETE, (secret_id,)),
        ]
        assert all(d.text is None for d in log if secret_id in d.record_ids)
        assert all(d.reason and d.policy for d in log)
        assert {d.text for d in log if d.text} == set(OTHERS)

    assert not _found_in_files(db_path, SECRET.encode())
    assert not _pin_in_files(db_path)
    assert not _found_in_files(db_path, secret_vector)
    # What was not deleted is still there, and the index was written again.
    assert _found_in_files(db_path, OTHERS[0].encode())
    assert any(p.suffix == ".faiss" for p in _store_files(db_path))
    with AgentMemory(url, embeddings=hash_embeddings) as mem:
        assert {r.text for r in mem.records("u")} == set(OTHERS)
        assert SECRET not in {h.text for h in mem.search("PIN locker", namespace="u", k=10)}


def test_an_id_taken_from_an_expired_record_takes_its_vector_off_disk_at_once(
    db_path: Path, hash_embeddings: HashEmbeddings, index_kind: str
) -> None:
    import time
    from datetime import datetime, timedelta, timezone

    url = f"sqlite:///{db_path}"
    soon = datetime.now(timezone.utc) + timedelta(seconds=0.5)
    with AgentMemory(url, embeddings=hash_embeddings) as mem:
        mem.add_many(OTHERS, namespace="u")
        mem.put("pin", SECRET, namespace="u", expires_at=soon)
        old_vector = _vector_bytes(mem, "pin")
        mem.search("PIN", namespace="u")  # cached, so close() saves an index
    assert _found_in_files(db_path, old_vector)  # the test sees what it looks for
    time.sleep(max(0.0, (soon - datetime.now(timezone.utc)).total_seconds()) + 0.1)
    with AgentMemory(url, embeddings=hash_embeddings) as mem:
        # Not read first (a read sweeps it): the add takes the id of the expired record
        # in its own transaction, and loads the saved index that holds its vector.
        ops = mem.add(NEW_TEXT, namespace="u", record_id="pin")
        # Before close(), as a process that dies would leave it: no saved index holds it.
        found = _found_in_files(db_path, old_vector)
        assert not [name for name in found if not name.startswith(db_path.name)], found
        assert [h.text for h in mem.search("locker", namespace="u", k=1)] == [NEW_TEXT]
        assert (ops[0].kind, ops[0].reason) == (OpKind.DELETE, "expired")
    assert not _found_in_files(db_path, old_vector)


def test_close_empties_the_wal_while_another_connection_stays_open(
    db_path: Path, hash_embeddings: HashEmbeddings
) -> None:
    url = f"sqlite:///{db_path}"
    with AgentMemory(url, embeddings=hash_embeddings) as other:
        other.add(OTHERS[0], namespace="v")
        with AgentMemory(url, embeddings=hash_embeddings) as mem:
            (op,) = mem.add(SECRET, namespace="u")
            mem.delete(op.record_ids[0], namespace="u")
        # ``other`` still holds the file open, so SQLite keeps the WAL: close emptied it.
        wal = db_path.with_name(db_path.name + "-wal")
        assert wal.exists()
        assert not _found_in_files(db_path, SECRET.encode())
        assert other.records("v")[0].text == OTHERS[0]


def test_update_leaves_no_old_text_or_vector_behind(
    db_path: Path, hash_embeddings: HashEmbeddings, index_kind: str
) -> None:
    url = f"sqlite:///{db_path}"
    with AgentMemory(url, embeddings=hash_embeddings) as mem:
        mem.add_many(OTHERS, namespace="u")
        (op,) = mem.add(SECRET, namespace="u")
        rid = op.record_ids[0]
        old_vector = _vector_bytes(mem, rid)
        mem.search("PIN", namespace="u")
    with AgentMemory(url, embeddings=hash_embeddings) as mem:
        mem.search("PIN", namespace="u")
        mem.update(rid, NEW_TEXT, namespace="u")
        entries = [d for d in mem.decisions("u") if rid in d.record_ids]
        assert [(d.kind, d.text) for d in entries] == [
            (OpKind.ADD, None),
            (OpKind.UPDATE, NEW_TEXT),
        ]
    assert not _found_in_files(db_path, SECRET.encode())
    assert not _found_in_files(db_path, old_vector)
    assert _found_in_files(db_path, NEW_TEXT.encode())


def test_redaction_matches_record_ids_exactly(
    store_url: str, hash_embeddings: HashEmbeddings
) -> None:
    # Ids with LIKE wildcards, quotes, backslashes and case variants: only the named one goes.
    ids = ["a_%!b", "aX%!b", "A_%!B", 'q"\\', "q", "a_%!b2"]
    with AgentMemory(store_url, embeddings=hash_embeddings) as mem:
        for i, rid in enumerate(ids):
            mem.add(f"note {i} {OTHERS[i % 3]}", namespace="u", record_id=rid)
        mem.delete("a_%!b", namespace="u")
        mem.delete('q"\\', namespace="u")
        kept = {d.record_ids[0]: d.text for d in mem.decisions("u") if d.kind is OpKind.ADD}
        assert [rid for rid, text in kept.items() if text is None] == ["a_%!b", 'q"\\']


def test_noop_entries_keep_no_text(tmp_path: Path, hash_embeddings: HashEmbeddings) -> None:
    with AgentMemory(
        f"sqlite:///{tmp_path / 'n.db'}", embeddings=hash_embeddings, policy="novelty", capacity=5
    ) as mem:
        (added,) = mem.add(SECRET, namespace="u")
        ops = mem.add(SECRET, namespace="u")  # a copy: skipped
        assert [op.kind for op in ops] == [OpKind.NOOP] and ops[0].text == SECRET
        assert [(d.kind, d.text) for d in mem.decisions("u")] == [
            (OpKind.ADD, SECRET),
            (OpKind.NOOP, None),
        ]
        mem.delete(added.record_ids[0], namespace="u")
        assert all(d.text is None for d in mem.decisions("u"))


def test_policy_evictions_redact_the_audit_log(hash_embeddings: HashEmbeddings) -> None:
    with AgentMemory(":memory:", embeddings=hash_embeddings, policy="fifo", capacity=2) as mem:
        texts = [f"Fact number {i}: {t}" for i, t in enumerate(OTHERS)]
        for text in texts:
            mem.add(text, namespace="u")
        kept = {r.text for r in mem.records("u")}
        assert kept == set(texts[1:])
        assert {d.text for d in mem.decisions("u") if d.text} == kept


# -- one transaction: a record and its audit entry ----------------------------------------


class _Boom(RuntimeError):
    pass


def test_record_and_audit_entry_commit_or_roll_back_together(
    store_url: str, hash_embeddings: HashEmbeddings, monkeypatch: pytest.MonkeyPatch
) -> None:
    with AgentMemory(store_url, embeddings=hash_embeddings) as mem:
        (kept,) = mem.add(OTHERS[0], namespace="u")
        real_log = SQLTransaction.log_decisions

        def failing_log(self: SQLTransaction, **kwargs: object) -> int:
            raise _Boom("the audit entry could not be written")

        monkeypatch.setattr(SQLTransaction, "log_decisions", failing_log)
        with pytest.raises(_Boom):
            mem.add(SECRET, namespace="u")
        with pytest.raises(_Boom):
            mem.delete(kept.record_ids[0], namespace="u")
        with pytest.raises(_Boom):
            mem.update(kept.record_ids[0], NEW_TEXT, namespace="u")
        monkeypatch.setattr(SQLTransaction, "log_decisions", real_log)

        # Nothing of the failed writes landed: no record, no entry, no redaction.
        assert [r.text for r in mem.records("u")] == [OTHERS[0]]
        assert [(d.kind, d.text) for d in mem.decisions("u")] == [(OpKind.ADD, OTHERS[0])]
        assert [h.text for h in mem.search("PIN", namespace="u", k=5)] == [OTHERS[0]]

        # And a write that succeeds lands with its entry.
        (op,) = mem.add(SECRET, namespace="u")
        assert mem.get(op.record_ids[0], namespace="u").text == SECRET
        assert mem.decisions("u")[-1].record_ids == op.record_ids


# -- erasing a user -------------------------------------------------------------------------


def _fill(mem: AgentMemory, namespace: str, texts: list[str]) -> list[str]:
    ids = [mem.add(t, namespace=namespace, thread="t1")[0].record_ids[0] for t in texts]
    mem.add_messages(
        [HumanMessage(texts[0]), AIMessage("Noted.")], namespace=namespace, thread="t1"
    )
    mem.add_messages([HumanMessage(texts[-1])], namespace=namespace, thread="t2")
    return ids


def test_delete_namespace_erases_one_user_only(
    store_url: str, hash_embeddings: HashEmbeddings
) -> None:
    with AgentMemory(store_url, embeddings=hash_embeddings) as mem:
        alice = _fill(mem, "alice", [SECRET, *OTHERS[:2]])
        bob = _fill(mem, "bob", OTHERS)
        mem.delete(bob[0], namespace="bob")
        bob_log = mem.decisions("bob")
        bob_messages = {t: mem.messages(namespace="bob", thread=t) for t in ("t1", "t2")}
        mem.search("PIN", namespace="alice")

        erased = mem.delete_namespace("alice")
        assert (erased.namespace, erased.records, erased.messages, erased.decisions) == (
            "alice",
            3,
            3,
            3,
        )
        assert mem.records("alice") == [] and mem.decisions("alice") == []
        assert mem.threads("alice") == [] and mem.messages(namespace="alice", thread="t1") == []
        assert mem.search("PIN", namespace="alice") == []
        assert "alice" not in mem.namespaces() and "bob" in mem.namespaces()
        for rid in alice:
            assert rid not in {r.id for r in mem.records("bob")}

        assert [r.id for r in mem.records("bob")] == bob[1:]
        assert mem.decisions("bob") == bob_log
        assert {t: mem.messages(namespace="bob", thread=t) for t in ("t1", "t2")} == bob_messages
        assert mem.search("marathon", namespace="bob", k=1)[0].text == OTHERS[1]

        # Gone is gone: again, or a namespace that never existed, removes nothing.
        again = mem.delete_namespace("alice")
        assert (again.records, again.messages, again.decisions, again.index_files) == (0, 0, 0, 0)
        never = mem.delete_namespace("nobody")
        assert (never.records, never.messages, never.decisions, never.index_files) == (0, 0, 0, 0)

        # The namespace can be used afresh.
        (op,) = mem.add("A new beginning.", namespace="alice")
        assert [r.id for r in mem.records("alice")] == list(op.record_ids)
        assert [d.kind for d in mem.decisions("alice")] == [OpKind.ADD]


def test_delete_namespace_is_one_transaction(
    store_url: str, hash_embeddings: HashEmbeddings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langchain_agentmem.backends import sql as sql_module

    with AgentMemory(store_url, embeddings=hash_embeddings) as mem:
        ids = _fill(mem, "alice", [SECRET, OTHERS[0]])
        before = (mem.records("alice"), mem.decisions("alice"), mem.threads("alice"))

        def failing_marker(namespace: str) -> str:
            raise _Boom("the erasure marker could not be written")

        # The marker is written last, after every DELETE: failing there must undo them all.
        real_marker = sql_module.erase_marker
        monkeypatch.setattr(sql_module, "erase_marker", failing_marker)
        with pytest.raises(_Boom):
            mem.delete_namespace("alice")
        monkeypatch.setattr(sql_module, "erase_marker", real_marker)
        assert (mem.records("alice"), mem.decisions("alice"), mem.threads("alice")) == before
        assert [h.id for h in mem.search("PIN", namespace="alice", k=1)] == ids[:1]


async def test_adelete_namespace(hash_embeddings: HashEmbeddings) -> None:
    with AgentMemory(":memory:", embeddings=hash_embeddings) as mem:
        await mem.aadd(SECRET, namespace="alice")
        erased = await mem.adelete_namespace("alice")
        assert (erased.records, erased.decisions) == (1, 1)
        assert await mem.arecords("alice") == []


def test_other_processes_caches_drop_an_erased_namespace(
    shared_store_url: str, hash_embeddings: HashEmbeddings
) -> None:
    with (
        AgentMemory(shared_store_url, embeddings=hash_embeddings) as reader,
        AgentMemory(shared_store_url, embeddings=hash_embeddings) as eraser,
    ):
        eraser.add_many([SECRET, *OTHERS], namespace="alice")
        eraser.add(OTHERS[0], namespace="bob")
        assert SECRET in {h.text for h in reader.search("PIN", namespace="alice", k=5)}
        reader.search("cat", namespace="bob")
        eraser.delete_namespace("alice")
        assert reader.search("PIN", namespace="alice", k=5) == []
        (op,) = eraser.add("Alice starts over.", namespace="alice")
        hits = reader.search("Alice starts over", namespace="alice", k=5)
        assert [h.id for h in hits] == list(op.record_ids)
        assert [h.text for h in reader.search("cat", namespace="bob", k=5)] == [OTHERS[0]]


def test_no_namespace_can_take_or_drop_another_ones_erasure_marker(
    shared_store_url: str, hash_embeddings: HashEmbeddings
) -> None:
    import hashlib

    from langchain_agentmem.backends.sql_schema import erase_marker
    from langchain_agentmem.errors import InvalidInputError

    with (
        AgentMemory(shared_store_url, embeddings=hash_embeddings) as reader,
        AgentMemory(shared_store_url, embeddings=hash_embeddings) as eraser,
    ):
        eraser.add(SECRET, namespace="alice")
        assert [h.text for h in reader.search("PIN", namespace="alice", k=5)] == [SECRET]
        eraser.delete_namespace("alice")
        # A user whose name is how earlier releases named alice's marker, then erased:
        look_alike = "erased:" + hashlib.sha256(b"alice").hexdigest()
        eraser.add(OTHERS[0], namespace=look_alike)
        assert eraser.delete_namespace(look_alike).records == 1
        assert reader.search("PIN", namespace="alice", k=5) == []  # still told of alice's
        with pytest.raises(InvalidInputError, match="reserved"):
            eraser.add(OTHERS[1], namespace=erase_marker("alice"))


def test_delete_namespace_leaves_nothing_in_the_files(
    db_path: Path, hash_embeddings: HashEmbeddings, index_kind: str
) -> None:
    url = f"sqlite:///{db_path}"
    with AgentMemory(url, embeddings=hash_embeddings) as mem:
        ids = _fill(mem, "alice", [SECRET, *OTHERS[:2]])
        vectors = [_vector_bytes(mem, rid, "alice") for rid in ids]
        _fill(mem, "bob", [OTHERS[2]])
        mem.search("PIN", namespace="alice")
        mem.search("Lisbon", namespace="bob")
    assert _found_in_files(db_path, SECRET.encode())
    index_dir = db_path.with_name(db_path.name + ".indexes")
    files_before = {p.name for p in index_dir.iterdir()}
    with AgentMemory(url, embeddings=hash_embeddings) as mem:
        erased = mem.delete_namespace("alice")
        assert erased.index_files == 2
        assert mem.search("Lisbon", namespace="bob", k=1)[0].text == OTHERS[2]
    for needle in [SECRET.encode(), OTHERS[0].encode(), OTHERS[1].encode(), *vectors]:
        assert not _found_in_files(db_path, needle)
    assert _found_in_files(db_path, OTHERS[2].encode())
    assert len(files_before - {p.name for p in index_dir.iterdir()}) == 2


CRASHING_SAVE = """
import os, signal, sys
from langchain_agentmem import AgentMemory
from langchain_agentmem.index import persist
from tests.stores import HashEmbeddings

memory = AgentMemory(sys.argv[1], embeddings=HashEmbeddings())
memory.add(sys.argv[2], namespace="alice")
# The process dies between writing a temp file and renaming it into place.
persist.os.replace = lambda src, dst: os.kill(os.getpid(), signal.SIGKILL)
memory.close()
"""


def test_erasure_removes_what_a_crashed_save_left(
    db_path: Path, hash_embeddings: HashEmbeddings
) -> None:
    url = f"sqlite:///{db_path}"
    done = subprocess.run(
        [sys.executable, "-c", CRASHING_SAVE, url, SECRET],
        cwd=Path(__file__).parents[2],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
        check=False,
    )
    assert done.returncode == -signal.SIGKILL
    vector = np.asarray(hash_embeddings.embed_documents([SECRET])[0], dtype="<f4").tobytes()
    index_dir = db_path.with_name(db_path.name + ".indexes")
    assert [p.suffix for p in index_dir.iterdir() if p.name != "names.key"] == [".tmp"]
    assert _found_in_files(db_path, vector)
    with AgentMemory(url, embeddings=hash_embeddings) as mem:
        mem.add(OTHERS[0], namespace="bob")
        assert mem.delete_namespace("alice").index_files == 1  # the leftover
    assert not _found_in_files(db_path, vector)
    assert not _found_in_files(db_path, SECRET.encode())
    assert not list(index_dir.glob("*.tmp"))


def test_old_temp_files_are_removed_on_open(db_path: Path, hash_embeddings: HashEmbeddings) -> None:
    url = f"sqlite:///{db_path}"
    with AgentMemory(url, embeddings=hash_embeddings) as mem:
        mem.add(OTHERS[0], namespace="bob")
    index_dir = db_path.with_name(db_path.name + ".indexes")
    old, new = index_dir / "x.faiss.tmp", index_dir / "y.json.tmp"
    old.write_bytes(b"left by a crash")
    new.write_bytes(b"a save under way")
    hour_ago = time.time() - persist.STALE_TEMP_S - 60
    os.utime(old, (hour_ago, hour_ago))
    with AgentMemory(url, embeddings=hash_embeddings) as mem:
        assert mem.search("cat", namespace="bob", k=1)[0].text == OTHERS[0]
    assert not old.exists() and new.exists()


@pytest.mark.parametrize("erased_by", ["this process", "another process"])
def test_an_erased_users_texts_leave_the_processes_memos(
    db_path: Path, hash_embeddings: HashEmbeddings, erased_by: str
) -> None:
    url = f"sqlite:///{db_path}"
    with AgentMemory(url, embeddings=hash_embeddings, capacity=10) as mem:  # learned
        _fill(mem, "alice", [SECRET, OTHERS[1]])  # the second add counts the first's words
        _fill(mem, "bob", [OTHERS[0]])
        assert SECRET in TEXTS and "locker" in mem.policy.words.of("alice").counts  # type: ignore[attr-defined]
        if erased_by == "this process":
            mem.delete_namespace("alice")
        else:
            with AgentMemory(url, embeddings=hash_embeddings) as other:
                other.delete_namespace("alice")
            assert mem.search("PIN", namespace="alice") == []  # finds alice erased
        assert SECRET not in TEXTS
        assert mem.policy.words.of("alice").counts == {}  # type: ignore[attr-defined]
        assert mem.policy.priorities.of("alice") == {}  # type: ignore[attr-defined]
        mem.add(OTHERS[2], namespace="bob")  # the others' go on as before
        assert len(mem.records("bob")) == 2


@pytest.mark.postgres
def test_postgres_keeps_no_row_with_forgotten_text(
    pg_url: str, hash_embeddings: HashEmbeddings
) -> None:
    schema = pg_url.rsplit("schema=", 1)[1]

    def rows_holding(text: str) -> int:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            tables = [
                r[0]
                for r in conn.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                    (schema,),
                )
            ]
            assert {"agentmem_records", "agentmem_decisions", "agentmem_messages"} <= set(tables)
            return sum(
                conn.execute(
                    psycopg.sql.SQL("SELECT count(*) FROM {}.{} t WHERE t::text LIKE %s").format(
                        psycopg.sql.Identifier(schema), psycopg.sql.Identifier(table)
                    ),
                    (f"%{text}%",),
                ).fetchone()[0]  # type: ignore[index]
                for table in tables
            )

    with AgentMemory(pg_url, embeddings=hash_embeddings) as mem:
        (op,) = mem.add(SECRET, namespace="u")
        mem.add(OTHERS[0], namespace="u")
        assert rows_holding("ZEBRA-7731") == 2  # the record and its ADD entry
        mem.delete(op.record_ids[0], namespace="u")
        assert rows_holding("ZEBRA-7731") == 0
        assert rows_holding("grey cat") == 2

        _fill(mem, "alice", [SECRET, OTHERS[1]])
        assert rows_holding("ZEBRA-7731") > 0 and rows_holding("marathon") > 0
        mem.delete_namespace("alice")
        assert rows_holding("ZEBRA-7731") == 0 and rows_holding("marathon") == 0
        assert rows_holding("grey cat") == 2


# -- data at rest -----------------------------------------------------------------------------


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_store_files_are_private_and_index_names_anonymous(
    tmp_path: Path, hash_embeddings: HashEmbeddings
) -> None:
    folder = tmp_path / "new" / "stores"
    db_path = folder / "memory.db"
    namespace = "alice.smith@example.com"
    mem = AgentMemory(f"sqlite:///{db_path}", embeddings=hash_embeddings)
    try:
        mem.add(SECRET, namespace=namespace)
        mem.search("PIN", namespace=namespace)
        for path in _store_files(db_path):  # WAL and shared memory exist while open
            assert _mode(path) == 0o600, path
        assert {p.name for p in _store_files(db_path)} >= {"memory.db-wal", "memory.db-shm"}
    finally:
        mem.close()
    assert _mode(folder) == 0o700 and _mode(folder.parent) == 0o700
    index_dir = db_path.with_name("memory.db.indexes")
    assert _mode(index_dir) == 0o700
    files = list(index_dir.iterdir())
    assert len(files) == 3  # index, sidecar, naming key
    for path in files:
        assert _mode(path) == 0o600, path
        assert "alice" not in path.name and "example" not in path.name
        assert b"alice" not in path.read_bytes()


def test_old_index_names_that_reveal_namespaces_are_removed(
    db_path: Path, hash_embeddings: HashEmbeddings
) -> None:
    index_dir = db_path.with_name(db_path.name + ".indexes")
    index_dir.mkdir(parents=True)
    old = [index_dir / "alice-0123456789abcdef.faiss", index_dir / "alice-0123456789abcdef.json"]
    for path in old:
        path.write_bytes(b"old")
    with AgentMemory(f"sqlite:///{db_path}", embeddings=hash_embeddings) as mem:
        mem.add(OTHERS[0], namespace="alice")
        mem.search("cat", namespace="alice")
    assert not any(path.exists() for path in old)
    assert not any("alice" in p.name for p in index_dir.iterdir())


@pytest.fixture
def pg_password_url(pg_url: str) -> Iterator[str]:
    """The test database with a password in the user part and as a parameter (trust auth)."""
    yield pg_url.replace("postgres@", "postgres:hunter2-user@", 1) + "&password=hunter2-param"


@pytest.mark.postgres
def test_passwords_are_masked_in_repr_and_errors(
    pg_password_url: str, hash_embeddings: HashEmbeddings, caplog: pytest.LogCaptureFixture
) -> None:
    from langchain_agentmem.backends.postgres import PostgresBackend
    from langchain_agentmem.errors import AgentMemoryError

    with AgentMemory(pg_password_url, embeddings=hash_embeddings) as mem:
        mem.add(OTHERS[0], namespace="u")
        shown = repr(mem) + mem.url + repr(mem.backend)
        assert "hunter2" not in shown and "***" in shown
    messages = []
    bad_urls = [
        pg_password_url + "&no_such_option=1",  # refused while parsing
        "mysql://root:hunter2-mysql@db/app",  # an unknown scheme
    ]
    for url in bad_urls:
        with pytest.raises(AgentMemoryError) as info:
            AgentMemory(url, embeddings=hash_embeddings)
        messages.append(str(info.value))
    unreachable = pg_password_url.replace("5432", "1", 1) + "&connect_timeout=1"
    with pytest.raises(AgentMemoryError) as info:
        PostgresBackend(unreachable, timeout=1.5)
    messages.append(str(info.value))
    messages += [record.getMessage() for record in caplog.records]
    assert all("hunter2" not in message for message in messages), messages
    assert all("***" in message for message in messages[:3]), messages


@pytest.mark.parametrize(
    "query",
    [
        "pass%77ord=hunter2%2Denc",
        "%70assword=hunter2%2Denc",
        "PASSWORD=hunter2-enc",
        "ssl%70assword=hunter2-enc",
        "password=hunter2%2Denc",
        "password=hunter2+enc",
    ],
)
def test_secret_parameters_are_masked_by_their_decoded_name(query: str) -> None:
    from langchain_agentmem.backends.url import hide_secrets, redact_url

    url = f"postgresql://postgres@127.0.0.1:5432/test?sslmode=disable&{query}&x=1"
    shown = redact_url(url) + hide_secrets(f"could not connect with {url}", url)
    assert "hunter2" not in shown and "***" in shown and "x=1" in shown


@pytest.mark.postgres
def test_a_percent_encoded_password_parameter_is_masked(
    pg_url: str, hash_embeddings: HashEmbeddings
) -> None:
    from langchain_agentmem.errors import AgentMemoryError

    url = pg_url + "&pass%77ord=hunter2%2Dencoded"  # libpq reads it as password
    with AgentMemory(url, embeddings=hash_embeddings) as mem:
        shown = repr(mem) + mem.url + repr(mem.backend)
        assert "hunter2" not in shown and "***" in shown
    with pytest.raises(AgentMemoryError) as info:
        AgentMemory(url + "&no_such_option=1", embeddings=hash_embeddings)
    assert "hunter2" not in str(info.value)


@pytest.mark.postgres
def test_cli_forget_finds_chat_threads_however_the_postgres_url_is_spelled(
    pg_url: str, hash_embeddings: HashEmbeddings, capsys: pytest.CaptureFixture[str]
) -> None:
    from langchain_agentmem.cli import main
    from langchain_agentmem.cli.chat.threads import chat_checkpoints
    from langchain_agentmem.integrations.runs import user_thread_id

    user = "spelled"
    chatted = pg_url.replace("postgres@", "postgres:hunter2@", 1).replace(
        "postgresql://", "postgres://", 1
    )
    with AgentMemory(chatted, embeddings=hash_embeddings) as mem:
        mem.add(SECRET, namespace=user)
    path = save_chat_threads(chatted, [(user_thread_id(user, "t1"), SECRET)])
    assert chat_checkpoints(pg_url) == path  # one store, one file of its conversations
    other = chat_checkpoints(pg_url.replace("/test", "/other", 1))
    assert other != path and chat_checkpoints(pg_url + "&schema=s1") != path
    assert main(["forget", "--store", pg_url, "--user", user, "--yes"]) == 0
    assert "1 `agentmem chat` thread" in capsys.readouterr().out
    assert SECRET.encode() not in path.read_bytes()


@pytest.mark.parametrize(
    ("user", "neighbour"),
    [
        ("alice", "alicex"),
        ("alice@example.com", "alice"),  # thread ids hold the name percent-encoded
        ("a%2Fb", "a/b"),  # the encoded form of another user's name is not that user
    ],
)
def test_cli_forget_erases_the_users_chat_checkpoints(
    user: str,
    neighbour: str,
    tmp_path: Path,
    hash_embeddings: HashEmbeddings,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import sqlite3

    from langchain_agentmem.cli import main
    from langchain_agentmem.files import agentmem_home
    from langchain_agentmem.integrations.runs import user_thread_id

    url = f"sqlite:///{tmp_path / 'm.db'}"
    with AgentMemory(url, embeddings=hash_embeddings) as mem:
        mem.add(SECRET, namespace=user)
    home = agentmem_home()
    threads = [
        (user_thread_id(user, "t1"), SECRET),
        (user_thread_id(user, "t2"), "Again: ZEBRA-7731"),
        (user_thread_id(neighbour, "t1"), "Another user, ZEBRA-7731 too."),
        (user_thread_id("bob", "t1"), OTHERS[1]),
    ]
    path = save_chat_threads(url, threads)  # as `agentmem chat` keys them
    before = [p for p in home.rglob("*") if p.is_file()]
    assert any(SECRET.encode() in p.read_bytes() for p in before)  # the test sees it

    assert main(["forget", "--store", url, "--user", user, "--yes"]) == 0
    assert "2 `agentmem chat` threads" in capsys.readouterr().out
    files = [p for p in home.rglob("*") if p.is_file()]
    assert not any(SECRET.encode() in p.read_bytes() for p in files)
    with sqlite3.connect(path) as conn:
        left = {r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    assert left == {threads[2][0], threads[3][0]}


# -- files are never created through links planted by others -----------------------------------
def test_a_store_through_a_link_planted_in_a_shared_folder_is_refused(
    tmp_path: Path, hash_embeddings: HashEmbeddings
) -> None:
    from langchain_agentmem.errors import StoreError

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # anyone can put files here
    victim = tmp_path / "victim.db"
    (shared / "m.db").symlink_to(victim)
    with pytest.raises(StoreError, match=r"m\.db' is a symbolic link in .*others can write"):
        AgentMemory(f"sqlite:///{shared / 'm.db'}", embeddings=hash_embeddings)
    assert not victim.exists()
    (shared / "m.db").unlink()
    (shared / "n.db-wal").symlink_to(victim)  # SQLite would create its log through it
    with pytest.raises(StoreError, match=r"n\.db-wal' is a symbolic link"):
        AgentMemory(f"sqlite:///{shared / 'n.db'}", embeddings=hash_embeddings)
    assert not victim.exists()
    own = tmp_path / "own"
    own.mkdir(mode=0o700)
    (own / "m.db").symlink_to(tmp_path / "real.db")  # the user's own link: followed
    with AgentMemory(f"sqlite:///{own / 'm.db'}", embeddings=hash_embeddings) as mem:
        mem.add(OTHERS[0], namespace="u")
    assert (tmp_path / "real.db").exists()


def test_chat_lock_files_and_exports_refuse_links_and_foreign_folders(
    tmp_path: Path, hash_embeddings: HashEmbeddings
) -> None:
    from langchain_agentmem import InvalidInputError
    from langchain_agentmem.cli.chat.threads import hold_thread, thread_lock
    from langchain_agentmem.errors import StoreError

    checkpoints = tmp_path / "chat.db"
    lock = thread_lock(checkpoints, "alice\x1ft1")
    lock.parent.mkdir(mode=0o700)
    target = tmp_path / "elsewhere"
    lock.symlink_to(target)
    with (
        pytest.raises(StoreError, match="is a symbolic link"),
        hold_thread(checkpoints, "alice\x1ft1"),
    ):
        pass
    assert not target.exists()
    lock.unlink()
    lock.parent.chmod(0o777)
    with (
        pytest.raises(StoreError, match="writable by others"),
        hold_thread(checkpoints, "alice\x1ft1"),
    ):
        pass
    lock.parent.chmod(0o700)
    with hold_thread(checkpoints, "alice\x1ft1"):
        assert lock.exists()

    out = tmp_path / "export.jsonl"
    out.symlink_to(target)
    with AgentMemory(":memory:", embeddings=hash_embeddings) as mem:
        mem.add(OTHERS[0], namespace="u")
        with pytest.raises(InvalidInputError, match="is a symbolic link"):
            mem.export_namespace("u", out)
    assert not target.exists()


def test_deleted_text_leaves_the_wal_while_the_memory_stays_open(
    db_path: Path, hash_embeddings: HashEmbeddings
) -> None:
    wal = db_path.with_name(db_path.name + "-wal")
    with AgentMemory(f"sqlite:///{db_path}", embeddings=hash_embeddings) as mem:
        mem.add("My card is 4111-1111-1111-1111.", namespace="alice", record_id="card")
        mem.add_messages([HumanMessage("My PIN is 9731.")], namespace="alice", thread="t")
        mem.add("My locker code is 5512.", namespace="bob")
        assert b"4111-1111" in wal.read_bytes()  # the test sees what it looks for
        mem.delete("card", namespace="alice")
        assert b"4111-1111" not in wal.read_bytes() + db_path.read_bytes()
        mem.clear_messages(namespace="alice", thread="t")
        assert b"9731" not in wal.read_bytes() + db_path.read_bytes()
        mem.delete_namespace("bob")
        assert b"5512" not in wal.read_bytes() + db_path.read_bytes()
        assert mem.backend.truncate_log()
