"""PostgreSQL backend: one store shared by many processes and machines."""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool, PoolTimeout

from langchain_agentmem.backends.sql import Cursor, SQLBackend, migrate
from langchain_agentmem.backends.url import hide_secrets, redact_url
from langchain_agentmem.errors import InvalidInputError, StoreError, UnknownStoreError

CONNECT_TIMEOUT_S = 5
"""Seconds a connection attempt may take (unless the URL sets ``connect_timeout``)."""

_MIGRATIONS: dict[int, str] = {
    1: """
CREATE TABLE IF NOT EXISTS agentmem_records (
    rid BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    namespace TEXT NOT NULL,
    thread TEXT,
    text TEXT NOT NULL,
    metadata TEXT NOT NULL,
    embedding BYTEA NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    last_accessed_at DOUBLE PRECISION,
    access_count INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS agentmem_records_ns ON agentmem_records (namespace, created_at);
CREATE TABLE IF NOT EXISTS agentmem_decisions (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    namespace TEXT NOT NULL,
    kind TEXT NOT NULL,
    record_ids TEXT NOT NULL,
    reason TEXT NOT NULL,
    policy TEXT NOT NULL,
    text TEXT,
    at DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS agentmem_decisions_ns ON agentmem_decisions (namespace, seq);
CREATE TABLE IF NOT EXISTS agentmem_messages (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    namespace TEXT NOT NULL,
    thread TEXT NOT NULL,
    message TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS agentmem_messages_thread ON agentmem_messages (namespace, thread, seq);
""",
    2: """
ALTER TABLE agentmem_records DROP CONSTRAINT IF EXISTS agentmem_records_id_key;
ALTER TABLE agentmem_records ADD COLUMN IF NOT EXISTS expires_at DOUBLE PRECISION;
ALTER TABLE agentmem_records ADD CONSTRAINT agentmem_records_ns_id UNIQUE (namespace, id);
CREATE INDEX IF NOT EXISTS agentmem_records_expiry ON agentmem_records (namespace, expires_at)
    WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS agentmem_records_id ON agentmem_records (id);
""",
    3: """
CREATE TABLE IF NOT EXISTS agentmem_claims (
    namespace TEXT NOT NULL,
    record_id TEXT NOT NULL,
    holder TEXT NOT NULL,
    held_until DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (namespace, record_id)
);
""",
    4: """
CREATE INDEX IF NOT EXISTS agentmem_decisions_text ON agentmem_decisions (namespace)
    WHERE text IS NOT NULL;
""",
    5: """
ALTER TABLE agentmem_decisions ADD COLUMN IF NOT EXISTS text_of TEXT;
UPDATE agentmem_decisions SET text_of = (record_ids::json) ->> 0
    WHERE text IS NOT NULL AND json_array_length(record_ids::json) = 1;
DROP INDEX IF EXISTS agentmem_decisions_text;
CREATE INDEX IF NOT EXISTS agentmem_decisions_text_of ON agentmem_decisions (namespace, text_of)
    WHERE text IS NOT NULL;
CREATE INDEX IF NOT EXISTS agentmem_records_thread
    ON agentmem_records (namespace, thread, created_at);
""",
    6: """
ALTER TABLE agentmem_records ADD COLUMN IF NOT EXISTS terms TEXT;
""",
}
"""Schema steps: ``_MIGRATIONS[v]`` brings a store from version ``v - 1`` to ``v``."""

# Any fixed key: every process migrating the same database takes turns.
_MIGRATION_LOCK = 0x6167656E746D656D  # "agentmem"
_SCHEMA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_SCHEMES = ("postgresql+psycopg://", "postgresql://", "postgres://")


POOL_PARAMS = ("pool_min", "pool_max", "pool_timeout")
"""Store URL parameters that size this process's connection pool (not libpq's)."""


@dataclass(frozen=True)
class PoolSettings:
    """One process's connection pool: at most ``max_size`` connections to the server,
    ``min_size`` kept open, ``timeout`` seconds to wait for a free one before failing."""

    min_size: int = 1
    max_size: int = 8
    timeout: float = 30.0


def pool_settings(url: str) -> PoolSettings:
    """The pool a store URL asks for (``pool_min``, ``pool_max``, ``pool_timeout``), checked."""
    query = dict(parse_qsl(urlsplit(url).query, keep_blank_values=True))
    default = PoolSettings()
    try:
        low = int(query.get("pool_min", default.min_size))
        high = int(query.get("pool_max", default.max_size))
        timeout = float(query.get("pool_timeout", default.timeout))
    except ValueError:
        shown = {k: query[k] for k in POOL_PARAMS if k in query}
        raise InvalidInputError(
            f"pool settings in the store url must be numbers, got {shown}; e.g. "
            "?pool_max=8&pool_timeout=30"
        ) from None
    if not (0 <= low <= high and high >= 2 and 0 < timeout < float("inf")):
        raise InvalidInputError(
            f"pool_min={low}, pool_max={high}, pool_timeout={timeout} in the store url: "
            "pool_max must be at least 2 (one connection stays free for reads), pool_min "
            "between 0 and pool_max, pool_timeout a number of seconds above 0"
        )
    return PoolSettings(low, high, timeout)


POOLERS = ("none", "session", "transaction")
"""Values of the store URL's ``pooler`` parameter: what sits between this process and the
server. ``none`` (the default) and ``session`` change nothing; ``transaction`` (PgBouncer's
``pool_mode = transaction``, or any pooler that may hand each transaction another server
connection) makes the store keep nothing in a server session (:func:`transaction_pooler`)."""


def transaction_pooler(url: str) -> bool:
    """Whether a store URL says a transaction-mode pooler stands before the server
    (``pooler=transaction``), checked.

    Behind one, the pool's connections never prepare a statement (psycopg would after
    five executions of one query, and the pooler may run the next one on a server
    connection that lacks it, or that another client already prepared it on), and a
    ``schema`` is set inside each transaction instead of as a startup option (PgBouncer
    refuses ``options``).
    """
    query = dict(parse_qsl(urlsplit(url).query, keep_blank_values=True))
    mode = query.get("pooler", "none")
    if mode not in POOLERS:
        raise InvalidInputError(
            f"pooler={mode!r} in the store url: use one of {', '.join(POOLERS)} "
            "(transaction for PgBouncer's pool_mode = transaction)"
        )
    return mode == "transaction"


def parse_url(url: str) -> tuple[str, str | None, str]:
    """Split a store URL into a libpq conninfo, the schema, and a printable URL.

    ``postgresql+psycopg://`` and ``postgres://`` are accepted as ``postgresql://``. A
    ``schema=NAME`` query parameter (not a libpq one) selects the schema holding the tables:
    as the connection's ``search_path`` option, except behind a transaction-mode pooler
    (``pooler=transaction``), where each transaction sets it.
    The printable URL hides the password (in the user part or a ``password=`` parameter).
    """
    if not url.startswith(_SCHEMES):
        raise UnknownStoreError(f"{redact_url(url)!r} is not a postgresql:// URL")
    plain = "postgresql://" + url.split("://", 1)[1]
    parts = urlsplit(plain)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schemas = [v for k, v in query if k == "schema"]
    schema = schemas[-1] if schemas else None
    if schema is not None and not _SCHEMA_NAME.match(schema):
        raise InvalidInputError(
            f"schema {schema!r} in the store url is not a plain SQL name; use letters, digits "
            "and underscores (at most 63), starting with a letter or underscore"
        )
    own = ("schema", "pooler", *POOL_PARAMS)
    rest = urlunsplit(parts._replace(query=urlencode([(k, v) for k, v in query if k not in own])))
    try:
        params = conninfo_to_dict(rest)
    except psycopg.ProgrammingError as exc:
        raise UnknownStoreError(
            f"cannot read store url {redact_url(url)!r}: {hide_secrets(str(exc), url)}"
        ) from None
    if schema is not None and not transaction_pooler(url):
        options = str(params.get("options") or "")
        params["options"] = (options + f" -c search_path={schema}").strip()
    return make_conninfo("", **params), schema, redact_url(url)


class PostgresBackend(SQLBackend):
    """A PostgreSQL database holding records, the audit log and messages.

    Setup:
        A reachable PostgreSQL (13 or newer); ``psycopg`` and ``psycopg-pool`` come with
        the package. The tables are created (and migrated) on first use.

    Instantiate:
        .. code-block:: python

            from langchain_agentmem import AgentMemory

            memory = AgentMemory("postgresql://app@db.internal:5432/agents")
            # keep the tables in their own schema:
            memory = AgentMemory("postgresql://app@db.internal/agents?schema=memory")

    Every write transaction that touches a namespace's records holds a per-namespace
    advisory lock until it commits, so that namespace's change sequence becomes visible
    in order and no process catching up can skip a change.

    Args:
        url: ``postgresql://``, ``postgres://`` or ``postgresql+psycopg://`` URL; an extra
            ``schema=NAME`` query parameter puts the tables in that schema (created if
            missing); ``pool_min``, ``pool_max`` and ``pool_timeout`` size the pool
            (:class:`PoolSettings`; arguments given here win); ``pooler=transaction``
            says a transaction-mode pooler such as PgBouncer stands before the server
            (:func:`transaction_pooler`).
        min_size: Connections the pool keeps open.
        max_size: Most connections the pool opens (threads of one process share them).
        timeout: Seconds to wait for a connection before failing.
    """

    placeholder = "%s"

    def contains(self, column: str) -> str:
        # LIKE scans faster than strpos here (10k rows: 1.6 ms against 4.2 ms).
        return f"{column} LIKE ? ESCAPE '!'"

    def contains_param(self, needle: str) -> str:
        escaped = needle.replace("!", "!!").replace("%", "!%").replace("_", "!_")
        return f"%{escaped}%"

    def __init__(
        self,
        url: str,
        *,
        min_size: int | None = None,
        max_size: int | None = None,
        timeout: float | None = None,
    ) -> None:
        conninfo, self.schema, self.url = parse_url(url)
        asked = pool_settings(url)
        min_size = asked.min_size if min_size is None else min_size
        max_size = asked.max_size if max_size is None else max_size
        timeout = asked.timeout if timeout is None else timeout
        # A host that drops packets would hold libpq for minutes: give up after a while.
        params = conninfo_to_dict(conninfo)
        params.setdefault("connect_timeout", str(CONNECT_TIMEOUT_S))
        self._conninfo = make_conninfo("", **params)
        self._secret_source = url
        self._sizes = (min_size, max_size)
        self._timeout = timeout
        self._pooled = transaction_pooler(url)
        self._lock = threading.Lock()
        self._writers = threading.BoundedSemaphore(max(1, max_size - 1))
        self._closed = False
        self._reach()
        self._pool = self._open_pool()
        try:
            self._migrate()
        except BaseException:
            self.close()
            raise

    # -- connections -------------------------------------------------------------------------
    def _reach(self) -> None:
        """Connect once before the pool opens: a server that is down or a wrong URL fails
        at once, in one line (the pool would retry, and log each try, until its timeout)."""
        try:
            psycopg.connect(self._conninfo).close()
        except psycopg.OperationalError as exc:
            reason = hide_secrets(str(exc), self._secret_source).strip().splitlines()
            raise StoreError(
                f"cannot connect to {self.url!r}: {reason[0] if reason else 'no reason given'}"
                "; check that the server is running and the url is right"
            ) from None

    def _open_pool(self) -> ConnectionPool:
        self._pid = os.getpid()
        kwargs: dict[str, Any] = {"autocommit": True}
        if self._pooled:
            # A prepared statement lives on one server connection, which the pooler may
            # give the next transaction's client or not: prepare none.
            kwargs["prepare_threshold"] = None
        return ConnectionPool(
            self._conninfo,
            min_size=self._sizes[0],
            max_size=self._sizes[1],
            timeout=self._timeout,
            kwargs=kwargs,
            name="agentmem",
            open=True,
        )

    def _pool_here(self) -> ConnectionPool:
        if self._closed:
            raise StoreError(f"store {self.url!r} is closed; open a new AgentMemory")
        if os.getpid() != self._pid:
            # A forked child must not share the parent's sockets: open its own pool.
            with self._lock:
                if os.getpid() != self._pid:
                    self._pool = self._open_pool()
        return self._pool

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self._pool_here().connection() as conn:
                yield conn
        except PoolTimeout as exc:
            raise StoreError(
                f"no connection to {self.url!r} within {self._timeout:g} s ({exc}); check "
                "that the server is running and the url is right"
            ) from None
        except pg_errors.UniqueViolation as exc:
            raise InvalidInputError(
                f"a record with this id already exists ({exc.diag.message_detail}); "
                "pass a new id, or update the existing record"
            ) from None
        except psycopg.OperationalError as exc:
            raise StoreError(
                f"store {self.url!r} failed: {hide_secrets(str(exc), self._secret_source)}"
            ) from None

    def _local_schema(self, cur: Cursor) -> None:
        """Behind a transaction pooler, set the schema for this transaction only: the server
        session it runs on is another client's next."""
        cur.execute("SELECT set_config('search_path', %s, true)", (self.schema,))

    @contextmanager
    def _read(self) -> Iterator[Cursor]:
        # Results in binary: a namespace's load reads every record's embedding, which the
        # text format sends as hex and parses back (a 25,000-record load: 0.4 s -> 0.15 s).
        with self._connection() as conn:
            if self._pooled and self.schema is not None:
                with conn.transaction(), conn.cursor(binary=True) as cur:
                    self._local_schema(cur)
                    yield cur
            else:
                with conn.cursor(binary=True) as cur:
                    yield cur

    @contextmanager
    def _write(self) -> Iterator[Cursor]:
        # Writers read (catch-up, checks) on a second connection while they hold one: at
        # most max_size - 1 of them at a time, so a reader always finds a free connection.
        with self._writers, self._connection() as conn, conn.transaction(), conn.cursor() as cur:
            if self._pooled and self.schema is not None:
                self._local_schema(cur)
            yield cur

    def __repr__(self) -> str:
        return f"PostgresBackend({self.url!r})"

    given_rid = " OVERRIDING SYSTEM VALUE"

    def new_rids(self, cur: Cursor, count: int, *, after: int) -> list[int]:
        # Keys come from the column's own sequence: never handed out twice, whoever asks.
        cur.execute(
            "SELECT nextval(pg_get_serial_sequence('agentmem_records', 'rid')) "
            "FROM generate_series(1, %s)",
            (count,),
        )
        return sorted(int(row[0]) for row in cur.fetchall())

    def serialise_writers(self, cur: Cursor, key: str) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))

    # -- schema ------------------------------------------------------------------------------
    def schema_version(self) -> int:
        """The schema version the store is at."""
        row = self._fetchone("SELECT value FROM agentmem_meta WHERE key = 'schema_version'")
        return 0 if row is None else int(row[0])

    def _migrate(self) -> None:
        with self._write() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            if self.schema is not None:
                cur.execute(
                    sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema))
                )
            migrate(
                cur,
                self.url,
                _MIGRATIONS,
                "INSERT INTO agentmem_meta (key, value) VALUES ('schema_version', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                as_bytes=True,
            )

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                if os.getpid() == self._pid:
                    self._pool.close()


def store_identity(url: str) -> str:
    """What names the store ``url`` opens, however the URL is spelled (scheme, password,
    parameter order, defaults written out or not): its host, port, database, user and
    schema.

    Raises:
        UnknownStoreError: ``url`` is not a PostgreSQL URL libpq can read.
    """
    conninfo, schema, _ = parse_url(url)
    params = conninfo_to_dict(conninfo)
    user = str(params.get("user") or "")
    named = [
        str(params.get("host") or params.get("hostaddr") or ""),
        str(params.get("port") or "5432"),
        str(params.get("dbname") or user),
        user,
        schema or "public",
    ]
    return "postgresql:" + json.dumps(named)
