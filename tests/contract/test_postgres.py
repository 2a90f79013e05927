"""What only PostgreSQL needs: URL forms, schema migration, in-order change visibility."""

from __future__ import annotations

import threading
import time

import numpy as np
import psycopg
import pytest

from langchain_agentmem import AgentMemory, InvalidInputError, StoreError, UnknownStoreError
from langchain_agentmem.backends import open_backend
from langchain_agentmem.backends.base import LogEntry
from langchain_agentmem.backends.postgres import (
    PoolSettings,
    PostgresBackend,
    parse_url,
    pool_settings,
    transaction_pooler,
)
from langchain_agentmem.backends.sql_schema import SCHEMA_VERSION
from langchain_agentmem.namespace.ops import apply_batch
from langchain_agentmem.types import MemoryOp, OpKind
from tests.stores import PG_URL, HashEmbeddings

pytestmark = pytest.mark.postgres


def _add(record_id: str) -> MemoryOp:
    return MemoryOp(
        OpKind.ADD,
        (record_id,),
        "test",
        text=record_id,
        embedding=np.ones(4, dtype=np.float32) / 2,
        policy="test",
    )


def test_url_forms_and_hidden_password() -> None:
    for scheme in ("postgresql://", "postgres://", "postgresql+psycopg://"):
        conninfo, schema, shown = parse_url(f"{scheme}me:s3cret@db.example:6543/app?schema=mem")
        assert "host=db.example" in conninfo and "port=6543" in conninfo
        assert "search_path=mem" in conninfo and schema == "mem"
        assert "s3cret" not in shown and shown.startswith(scheme)
    with pytest.raises(InvalidInputError, match="plain SQL name"):
        parse_url("postgresql://h/db?schema=x;drop")
    with pytest.raises(UnknownStoreError, match="nope"):
        parse_url("postgresql://h/db?nope=1")


def test_pool_settings_come_from_the_url() -> None:
    url = "postgresql://h/db?schema=mem&pool_min=0&pool_max=3&pool_timeout=2.5"
    assert pool_settings(url) == PoolSettings(0, 3, 2.5)
    assert pool_settings("postgresql://h/db") == PoolSettings(1, 8, 30.0)
    conninfo, schema, _ = parse_url(url)
    assert "pool" not in conninfo and schema == "mem"  # not passed on to libpq
    for bad, named in (
        ("pool_max=1", "pool_max=1"),
        ("pool_max=4&pool_min=5", "pool_min=5"),
        ("pool_timeout=0", "pool_timeout=0"),
        ("pool_timeout=inf", "pool_timeout=inf"),
        ("pool_max=lots", "lots"),
    ):
        with pytest.raises(InvalidInputError, match=named):
            pool_settings(f"postgresql://h/db?{bad}")


def test_a_process_holds_at_most_pool_max_connections(pg_url: str) -> None:
    app = f"agentmem-pool-{time.time_ns()}"
    memory = AgentMemory(f"{pg_url}&pool_max=3&application_name={app}", embeddings=HashEmbeddings())
    seen: list[int] = []
    done = threading.Event()

    def held() -> int:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (app,)
            ).fetchone()
        return int(row[0]) if row else 0

    def watch() -> None:
        while not done.is_set():
            seen.append(held())
            time.sleep(0.02)

    def work(i: int) -> None:
        for j in range(15):
            memory.add(f"note {j} of worker {i}", namespace=f"w{i}")
            memory.search(f"note {j}", namespace=f"w{(i + j) % 8}", k=3)

    watcher = threading.Thread(target=watch)
    watcher.start()
    workers = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    done.set()
    watcher.join()
    memory.close()
    assert 0 < max(seen) <= 3, seen
    assert held() == 0  # closed: nothing kept


def test_pooler_setting_comes_from_the_url() -> None:
    url = "postgresql://h/db?schema=mem&pooler=transaction"
    assert transaction_pooler(url)
    assert not transaction_pooler("postgresql://h/db?pooler=session")
    assert not transaction_pooler("postgresql://h/db")
    conninfo, schema, _ = parse_url(url)
    # No startup option (PgBouncer refuses `options`): each transaction sets the schema.
    assert "pooler" not in conninfo and "search_path" not in conninfo and schema == "mem"
    with pytest.raises(InvalidInputError, match="pooler='statement'"):
        transaction_pooler("postgresql://h/db?pooler=statement")


@pytest.mark.parametrize("pooler", ["none", "transaction"])
def test_no_session_state_outlives_a_request(pg_url: str, pooler: str) -> None:
    # What a transaction-mode pooler needs: between requests, the process's connections
    # hold no lock, no open transaction, and (behind a pooler) no prepared statement.
    app = f"agentmem-state-{time.time_ns()}"
    url = f"{pg_url}&pool_max=3&pooler={pooler}&application_name={app}"
    with AgentMemory(url, embeddings=HashEmbeddings()) as memory:
        for i in range(12):  # more than psycopg's prepare_threshold (5) of each query
            memory.add(f"note {i} about Lyon", namespace="u", record_id=f"n{i}")
            memory.search("Lyon", namespace="u", k=2)
            if i % 2:
                memory.delete(f"n{i}", namespace="u")
        with psycopg.connect(PG_URL, autocommit=True) as monitor:
            states, locks = monitor.execute(
                "SELECT array_agg(DISTINCT a.state), count(l.pid) FROM pg_stat_activity a "
                "LEFT JOIN pg_locks l ON l.pid = a.pid AND l.locktype = 'advisory' "
                "WHERE a.application_name = %s",
                (app,),
            ).fetchone() or (None, None)
        assert (states, locks) == (["idle"], 0)
        backend = memory.backend
        assert isinstance(backend, PostgresBackend)
        with backend._read() as cur:
            cur.execute("SELECT count(*) FROM pg_prepared_statements")
            prepared = cur.fetchone()[0]
        assert (prepared == 0) is (pooler == "transaction"), prepared


@pytest.mark.parametrize("scheme", ["postgres://", "postgresql+psycopg://"])
def test_every_scheme_opens_the_same_store(pg_url: str, scheme: str) -> None:
    with AgentMemory(pg_url, embeddings=HashEmbeddings()) as first:
        first.add("shared fact", namespace="u", record_id="f1")
    alias = scheme + pg_url.split("://", 1)[1]
    with AgentMemory(alias, embeddings=HashEmbeddings()) as second:
        assert isinstance(second.backend, PostgresBackend)
        assert [r.id for r in second.records("u")] == ["f1"]


def test_unreachable_server_is_a_clear_error() -> None:
    # Told at once, in one line: the pool would retry (and log each try) until its timeout.
    with pytest.raises(
        StoreError,
        match=r"^cannot connect to 'postgresql://postgres@127\.0\.0\.1:1/test': .*refused",
    ):
        PostgresBackend("postgresql://postgres@127.0.0.1:1/test", timeout=30.0)


def test_schema_is_versioned_and_private(pg_url: str) -> None:
    backend = open_backend(pg_url)
    assert isinstance(backend, PostgresBackend)
    try:
        assert backend.schema_version() == SCHEMA_VERSION
        apply_batch(backend, "u", [[_add("r1")]])
    finally:
        backend.close()
    # The tables live in the URL's schema, not in the database's default one.
    with psycopg.connect(PG_URL) as conn:
        rows = conn.execute(
            "SELECT table_schema FROM information_schema.tables "
            "WHERE table_name = 'agentmem_records' AND table_schema = %s",
            (backend.schema,),
        ).fetchall()
    assert rows == [(backend.schema,)]


def test_writers_of_one_namespace_commit_in_sequence_order(pg_url: str) -> None:
    """A change that took a sequence number is visible before any later one of its namespace.

    Without this, a reader catching up could see change n + 1 commit while n is still in
    flight, move past n, and never index it.
    """
    backend = open_backend(pg_url)
    other_done = threading.Event()
    other_ns_done = threading.Event()
    try:
        with backend.transaction() as tx:
            tx.insert_record(
                record_id="first",
                namespace="u",
                thread=None,
                text="first",
                metadata={},
                embedding=np.ones(4, dtype=np.float32) / 2,
                created_at=time.time(),
            )
            first_seq = tx.log_decisions(
                namespace="u",
                entries=[LogEntry(OpKind.ADD, ["first"], "r", "p", "first", time.time())],
            )
            later = threading.Thread(
                target=lambda: (apply_batch(backend, "u", [[_add("second")]]), other_done.set())
            )
            elsewhere = threading.Thread(
                target=lambda: (apply_batch(backend, "v", [[_add("v1")]]), other_ns_done.set())
            )
            later.start()
            elsewhere.start()
            # Another namespace is not held up ...
            assert other_ns_done.wait(10)
            # ... but a second writer of "u" waits for the open transaction.
            assert not other_done.wait(1.0)
            assert backend.changes_since("u", 0) == []
        later.join(10)
        elsewhere.join(10)
        assert other_done.is_set()
        changes = backend.changes_since("u", 0)
        assert [c.record_ids for c in changes] == [("first",), ("second",)]
        assert changes[0].seq == first_seq < changes[1].seq
    finally:
        backend.close()


def test_catch_up_reader_never_skips_a_change(pg_url: str) -> None:
    """Readers polling the change sequence during 4 concurrent writers miss nothing."""
    backend = open_backend(pg_url)
    writers, per_writer = 4, 40
    seen: list[int] = []
    stop = threading.Event()

    def write(w: int) -> None:
        for i in range(per_writer):
            apply_batch(backend, "u", [[_add(f"w{w}-{i}")]])

    def read() -> None:
        last = 0
        while True:
            finished = stop.is_set()
            for change in backend.changes_since("u", last):
                seen.append(change.seq)
                last = change.seq
            if finished:
                return

    try:
        reader = threading.Thread(target=read)
        reader.start()
        threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        stop.set()
        reader.join(60)
        logged = [d.seq for d in backend.decisions("u")]
        assert len(logged) == writers * per_writer
        assert seen == logged
    finally:
        backend.close()
