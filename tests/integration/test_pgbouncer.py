"""AgentMemory through a real PgBouncer in transaction mode (``pool_mode = transaction``).

Each test starts its own ``pgbouncer`` on a free port, in front of the test PostgreSQL
(``$AGENTMEM_TEST_PG_URL``), and works in a schema of its own, dropped afterwards. A
transaction-mode pooler hands each transaction whichever server connection is free, so
nothing may live in a server session: no prepared statement, no session lock, no ``SET``
outside a transaction, no ``LISTEN``, no temporary table. PgBouncer 1.18 (Debian 12's) also
refuses the ``options`` startup parameter that carries ``?schema=`` on a direct connection.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from langchain_agentmem import AgentMemory, StoreError
from tests.stores import PG_URL, HashEmbeddings, create_pg_schema_url, drop_pg_schema


def _pgbouncer() -> str | None:
    found = shutil.which("pgbouncer")
    if found is None and os.access("/usr/sbin/pgbouncer", os.X_OK):
        found = "/usr/sbin/pgbouncer"
    return found


PGBOUNCER = _pgbouncer()

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(
        PGBOUNCER is None,
        reason="pgbouncer is not installed (neither on PATH nor /usr/sbin/pgbouncer); "
        "apt-get install -y pgbouncer to run these tests",
    ),
]

ROUNDS = 24
"""Adds, searches and deletes per test: several times psycopg's ``prepare_threshold`` (5)."""


@dataclass
class Bouncer:
    """A running PgBouncer: clients connect to ``127.0.0.1:port``."""

    port: int
    user: str
    dbname: str

    def url(self, query: str, *, database: str | None = None) -> str:
        """A store URL through the pooler, to ``database`` (an entry of its ``[databases]``)."""
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database or self.dbname}?{query}"

    def connect(self) -> psycopg.Connection[tuple[object, ...]]:
        """A plain client connection through the pooler that prepares nothing."""
        return psycopg.connect(
            self.url("").rstrip("?"), autocommit=True, prepare_threshold=None, connect_timeout=3
        )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Bouncers:
    """Starts PgBouncers in front of the test PostgreSQL; :meth:`stop` ends them."""

    def __init__(self, tmp_path: Path) -> None:
        server = conninfo_to_dict(PG_URL)
        self.user = str(server.get("user") or "postgres")
        self.dbname = str(server.get("dbname") or self.user)
        self.target = f"host={server.get('host') or '127.0.0.1'} port={server.get('port') or 5432}"
        self.tmp_path = tmp_path
        self.procs: list[subprocess.Popen[bytes]] = []

    def settings(self, pool_size: int, *, wait_s: int = 20) -> str:
        """A ``[pgbouncer]`` section: transaction mode, ``pool_size`` server connections per
        database, ``wait_s`` seconds a client may wait for one."""
        return (
            "[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = 0\nunix_socket_dir =\n"
            "auth_type = trust\nauth_file = userlist.txt\npool_mode = transaction\n"
            f"default_pool_size = {pool_size}\nquery_wait_timeout = {wait_s}\n"
        )

    def start(self, settings: str, *, schema_entry: str | None = None) -> Bouncer:
        """A PgBouncer with ``settings`` (its ``[pgbouncer]`` section; the port and the
        user list are this test's) in front of the test database. ``schema_entry``: also a
        database ``agentmem_path`` whose server connections the pooler puts in that schema
        (``connect_query``)."""
        tmp_path, user, dbname, target = self.tmp_path, self.user, self.dbname, self.target
        databases = f"[databases]\n{dbname} = {target} dbname={dbname}\n"
        if schema_entry is not None:
            databases += (
                f"agentmem_path = {target} dbname={dbname} "
                f"connect_query='SET search_path TO {schema_entry}'\n"
            )
        port = _free_port()
        (tmp_path / "userlist.txt").write_text(f'"{user}" ""\n')
        settings = re.sub(r"^listen_port *=.*$", f"listen_port = {port}", settings, flags=re.M)
        settings = re.sub(
            r"^auth_file *=.*$", f"auth_file = {tmp_path / 'userlist.txt'}", settings, flags=re.M
        )
        ini = tmp_path / f"pgbouncer-{port}.ini"
        ini.write_text(databases + "\n" + settings)
        command = [str(PGBOUNCER), str(ini)]
        if os.geteuid() == 0:  # PgBouncer refuses to run as root
            command[1:1] = ["-u", _unprivileged_user()]
        log = tmp_path / f"pgbouncer-{port}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        bouncer = Bouncer(port, user, dbname)
        deadline = time.monotonic() + 10
        while True:
            try:
                with bouncer.connect() as conn:
                    conn.execute("SELECT 1")
                return bouncer
            except psycopg.OperationalError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"pgbouncer did not start: {log.read_text()[-2000:]}")
                time.sleep(0.05)

    def stop(self) -> None:
        """End every PgBouncer started."""
        for proc in self.procs:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def bouncers(tmp_path: Path) -> Iterator[Bouncers]:
    """PgBouncers of this test, stopped after it."""
    started = Bouncers(tmp_path)
    try:
        yield started
    finally:
        started.stop()


def _unprivileged_user() -> str:
    for name in ("nobody", "postgres", "daemon"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    pytest.skip("running as root and no unprivileged user (nobody) to run pgbouncer as")


def _page() -> tuple[str, str]:
    """The workers page's PgBouncer settings (its ini block's ``[pgbouncer]`` section) and
    the query of the store URL it gives the workers."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "operating" / "workers.md").read_text()
    blocks = re.findall(r"^```ini\n(.*?)^```", text, re.S | re.M)
    assert len(blocks) == 1, "docs/operating/workers.md: expected one ini block"
    settings = blocks[0][blocks[0].index("[pgbouncer]") :]
    url = re.search(r"postgresql://postgres@127\.0\.0\.1:6432/test\?([^`\s]+)", text)
    assert url is not None, "docs/operating/workers.md: no store URL through PgBouncer"
    return settings, url.group(1)


@pytest.fixture
def schema() -> Iterator[str]:
    """A fresh schema of the test database (created), dropped after the test."""
    _, name = create_pg_schema_url()
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
    try:
        yield name
    finally:
        drop_pg_schema(name)


def _churn(memory: AgentMemory, other: AgentMemory, namespace: str, tag: str) -> None:
    """Adds through ``memory``, each found by a search through ``other``; every third one
    deleted through ``other`` and gone from ``memory``'s next search."""
    for i in range(ROUNDS):
        rid = f"{tag}-{i}"
        memory.add(f"{tag} {i} went to depot {i} in city{i}", namespace=namespace, record_id=rid)
        found = other.search(f"depot {i} city{i}", namespace=namespace, k=3)
        assert rid in [r.id for r in found], f"round {i}: another instance missed an add"
        if i % 3 == 0:
            other.delete(rid, namespace=namespace)
            found = memory.search(f"depot {i} city{i}", namespace=namespace, k=3)
            assert rid not in [r.id for r in found], f"round {i}: a deleted record came back"


def test_two_memories_share_a_namespace_through_a_transaction_pooler(
    bouncers: Bouncers, schema: str
) -> None:
    # The workers page's PgBouncer and URL: two instances of pool_max=2 run at most one
    # write each, and a write holds its server connection while it reads on another.
    settings, query = _page()
    assert "pool_mode = transaction" in settings and "pooler=transaction" in query
    bouncer = bouncers.start(settings)
    url = bouncer.url(query.replace("schema=agents", f"schema={schema}"))
    assert schema in url
    emb = HashEmbeddings()
    with AgentMemory(url, embeddings=emb) as one, AgentMemory(url, embeddings=emb) as two:
        _churn(one, two, "alice", "parcel")
        _churn(two, one, "alice", "letter")

        # Writers of both instances at once, on the same namespace.
        def write(memory: AgentMemory, who: str) -> None:
            memory.add_many(
                [f"{who} shipment {n} left dock{n}" for n in range(12)],
                namespace="alice",
                record_ids=[f"{who}-{n}" for n in range(12)],
            )

        threads = [
            threading.Thread(target=write, args=(memory, f"w{n}"))
            for n, memory in enumerate((one, two, one, two))
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        for memory in (one, two):
            for n in range(4):
                assert memory.get(f"w{n}-11", namespace="alice").text.startswith(f"w{n} ")
            kept = memory.records("alice")
            assert len(kept) == 2 * ROUNDS - 2 * len(range(0, ROUNDS, 3)) + 4 * 12

    # What the pooler's server sessions carry afterwards: nothing of ours. As many clients
    # as it has server connections, each in a transaction, hold one each.
    sized = re.search(r"^default_pool_size = (\d+)", settings, re.M)
    assert sized is not None
    servers = int(sized.group(1))
    with psycopg.connect(PG_URL) as direct:
        default_path = direct.execute("SHOW search_path").fetchone()
    clients = [bouncer.connect() for _ in range(servers)]
    try:
        pids = set()
        for conn in clients:
            conn.execute("BEGIN")
            row = conn.execute(
                "SELECT pg_backend_pid(), current_setting('search_path'), "
                "(SELECT count(*) FROM pg_prepared_statements), "
                "(SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                " AND pid = pg_backend_pid()), "
                "(SELECT count(*) FROM pg_listening_channels()), "
                "pg_my_temp_schema() = 0"
            ).fetchone()
            assert row is not None
            pid, path, prepared, locks, listening, no_temp = row
            pids.add(pid)
            assert (path,) == default_path, "a search_path outlived its transaction"
            assert (prepared, locks, listening, no_temp) == (0, 0, 0, True)
        assert len(pids) == servers  # every server connection of the pooler was looked at
    finally:
        for conn in clients:
            conn.close()


def test_without_the_setting_the_pooler_breaks_the_store(bouncers: Bouncers, schema: str) -> None:
    # agentmem_path: the pooler puts its server connections in the schema, so the URL needs
    # no startup option and prepared statements alone are tried.
    bouncer = bouncers.start(bouncers.settings(2), schema_entry=schema)
    emb = HashEmbeddings()

    # ?schema= travels as the `options` startup parameter, which PgBouncer refuses.
    with pytest.raises(StoreError, match="unsupported startup parameter: options"):
        AgentMemory(bouncer.url(f"schema={schema}"), embeddings=emb)

    # psycopg prepares a query on its 6th run on a connection; the pooler then runs the
    # other client connection's statement of the same name on that same server connection.
    with (
        pytest.raises(psycopg.errors.ProgrammingError, match=r'prepared statement "_pg3_\d+"'),
        AgentMemory(bouncer.url("pool_max=2", database="agentmem_path"), embeddings=emb) as bare,
    ):
        _churn(bare, bare, "bob", "parcel")

    with AgentMemory(
        bouncer.url("pool_max=2&pooler=transaction", database="agentmem_path"), embeddings=emb
    ) as pooled:
        _churn(pooled, pooled, "carol", "parcel")


def test_writes_need_a_server_connection_more_than_they_hold(
    bouncers: Bouncers, schema: str
) -> None:
    # A write holds its server connection while it reads on a second one: with one server
    # connection in the pooler it waits until query_wait_timeout ends it (the page's sizing).
    bouncer = bouncers.start(bouncers.settings(1, wait_s=2))
    url = bouncer.url(f"schema={schema}&pooler=transaction&pool_max=2")
    with (
        pytest.raises(StoreError, match="query_wait_timeout"),
        AgentMemory(url, embeddings=HashEmbeddings()) as memory,
    ):
        memory.add("parcel 1 went to depot 1", namespace="dave")
