"""Where ``agentmem chat`` keeps its conversations, and how it holds, rewinds and erases them.

Each store has its own file of LangGraph checkpoints (:func:`chat_checkpoints`); a session
holds its thread with a lock file (:func:`hold_thread`); :class:`ChatSaver` takes a turn
back; :func:`count_chat_threads` and :func:`forget_chat_threads` serve ``agentmem demo``
and ``agentmem forget``.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import sqlite3
import sys
import threading
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from langchain_agentmem.backends.url import (
    default_store_url,
    in_memory_url,
    redact_url,
    sqlite_file,
)
from langchain_agentmem.errors import StoreError
from langchain_agentmem.files import agentmem_home, private_folders
from langchain_agentmem.integrations.runs import user_threads_prefix

CHAT_CHECKPOINTS = "chat-checkpoints.db"
"""The file in ``$AGENTMEM_HOME`` where ``agentmem chat`` keeps the default store's
LangGraph checkpoints."""

CHAT_CHECKPOINTS_DIR = "chat-checkpoints"
"""The folder in ``$AGENTMEM_HOME`` with one checkpoint file per other store."""


def chat_checkpoints(store: str | None) -> Path | None:
    """The file where ``agentmem chat`` keeps the conversations of ``store``.

    The default store's are in ``$AGENTMEM_HOME/chat-checkpoints.db``; any other store's in
    ``$AGENTMEM_HOME/chat-checkpoints/<digest>.db``, the digest of its absolute file (SQLite)
    or of its connection (PostgreSQL: host, port, database, user and schema, however the URL
    is spelled), so another store never shares a conversation.

    Returns:
        The file, or ``None`` for an in-memory store (its conversations end with the process).
    """
    url = default_store_url() if store is None else store
    if in_memory_url(url):
        return None
    home = agentmem_home()
    path = sqlite_file(url)
    default = sqlite_file(default_store_url())
    if path is not None and default is not None and path.resolve() == default.resolve():
        return home / CHAT_CHECKPOINTS
    identity = f"sqlite:{path.resolve()}" if path is not None else _identity(url)
    digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:32]
    return home / CHAT_CHECKPOINTS_DIR / f"{digest}.db"


def _identity(url: str) -> str:
    """A PostgreSQL store by its connection (host, port, database, user, schema), however
    its URL is spelled; any other URL as written, its passwords masked."""
    if url.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        try:
            from langchain_agentmem.backends.postgres import store_identity

            return store_identity(url)
        except (ImportError, ValueError):  # no psycopg, or a URL no store opens
            pass
    return redact_url(url)


class ThreadInUseError(Exception):
    """Another ``agentmem chat`` process holds the thread (see :func:`hold_thread`)."""


def thread_lock(path: Path, thread_id: str) -> Path:
    """The lock file of one thread of the checkpoint file ``path``: in the folder
    ``<path>.locks``, named by a digest of the file and the thread id (never a user's name)."""
    identity = f"{path.resolve()}\0{thread_id}"
    digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:32]
    return path.with_name(f"{path.name}.locks") / f"{digest}.lock"


def _try_lock(lock: Path) -> int | None:
    """An open descriptor of ``lock`` holding its exclusive lock, or ``None`` if another
    process holds it."""
    import fcntl

    while True:
        try:
            fd = os.open(lock, os.O_CREAT | os.O_RDWR | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            raise StoreError(
                f"lock file {str(lock)!r} is a symbolic link; remove it (lock files are "
                "created private, never through a link)"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        # The holder before removes the file when it ends: lock the file that is there now.
        try:
            mine, there = os.fstat(fd), os.stat(lock)
        except FileNotFoundError:
            os.close(fd)
            continue
        if (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino):
            return fd
        os.close(fd)


@contextlib.contextmanager
def hold_thread(path: Path | None, thread_id: str) -> Iterator[None]:
    """Hold ``thread_id`` of the checkpoint file ``path`` for this process while the block runs.

    The lock is an exclusive ``flock`` of a private file (:func:`thread_lock`), so the
    system releases it when the process ends, however it ends; the file is removed when the
    block ends. An in-memory store's conversation (``path`` is ``None``) is this process's
    alone: nothing is locked; nor where ``flock`` does not exist (Windows).

    Raises:
        ThreadInUseError: Another process holds the thread.
    """
    if path is None or sys.platform == "win32":
        yield
        return
    lock = thread_lock(path, thread_id)
    private_folders(lock.parent, own=True)
    fd = _try_lock(lock)
    if fd is None:
        raise ThreadInUseError(thread_id)
    try:
        yield
    finally:
        # Removed while held: a process that opened it meanwhile sees it gone and retries.
        lock.unlink(missing_ok=True)
        os.close(fd)


def _sweep_locks(path: Path) -> None:
    """Remove the lock files of ``path``'s threads that killed sessions left (held ones stay)."""
    folder = thread_lock(path, "").parent
    if sys.platform == "win32" or not folder.is_dir():
        return
    for lock in folder.glob("*.lock"):
        fd = _try_lock(lock)
        if fd is not None:
            lock.unlink(missing_ok=True)
            os.close(fd)


def _thread_ids(conn: sqlite3.Connection, prefix: str) -> tuple[set[str], list[str]]:
    """The checkpoint file's tables, and its thread ids that start with ``prefix``."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "checkpoints" not in tables:
        return tables, []
    ids = [
        r[0]
        for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")
        if str(r[0]).startswith(prefix)
    ]
    return tables, ids


def count_chat_threads(user: str, store: str | None = None) -> int:
    """How many ``agentmem chat`` threads ``user`` has with ``store`` (default: the default)."""
    path = chat_checkpoints(store)
    if path is None or not path.exists():
        return 0
    with closing(sqlite3.connect(path)) as conn:
        return len(_thread_ids(conn, user_threads_prefix(user))[1])


def forget_chat_threads(user: str, store: str | None = None) -> int:
    """Erase ``user``'s ``agentmem chat`` threads of ``store`` (default: the default store).

    Their ids start with :func:`user_threads_prefix` (the name percent-encoded, then ``/``);
    other stores' conversations are left as they are.

    Returns:
        How many threads were erased (0 when the file does not exist).
    """
    prefix = user_threads_prefix(user)
    path = chat_checkpoints(store)
    if path is None:
        return 0
    _sweep_locks(path)  # a killed session's lock file, even one that never checkpointed
    if not path.exists():
        return 0
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA secure_delete = ON")
        tables, ids = _thread_ids(conn, prefix)
        if not ids:
            return 0
        conn.execute("BEGIN IMMEDIATE")
        for thread_id in ids:
            for table in ("checkpoints", "writes") if "writes" in tables else ("checkpoints",):
                conn.execute(f"DELETE FROM {table} WHERE thread_id = ?", (thread_id,))
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return len(ids)


class ChatSaver(SqliteSaver):
    """LangGraph's SQLite checkpointer that can take a thread back to an earlier checkpoint
    and be sealed, refusing any later write (a turn left running after Ctrl-C)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn)
        self._seal = threading.Lock()
        self._sealed = False

    def _check(self) -> None:
        if self._sealed:
            raise RuntimeError("this chat turn was interrupted: its writes are refused")

    def put(self, *args: Any, **kwargs: Any) -> Any:
        """Store a checkpoint, unless sealed."""
        with self._seal:
            self._check()
            return super().put(*args, **kwargs)

    def put_writes(self, *args: Any, **kwargs: Any) -> None:
        """Store a task's writes, unless sealed."""
        with self._seal:
            self._check()
            super().put_writes(*args, **kwargs)

    def latest(self, thread_id: str) -> str | None:
        """The id of the thread's newest checkpoint (``None`` for a new thread)."""
        with self.cursor(transaction=False) as cur:
            cur.execute(
                "SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ?", (thread_id,)
            )
            row = cur.fetchone()
        return None if row is None else row[0]

    def rewind(self, thread_id: str, to: str | None, *, seal: bool = False) -> None:
        """Delete the thread's checkpoints and writes newer than checkpoint ``to`` (all of
        them when ``None``), in one transaction; with ``seal``, refuse every write after."""
        # Checkpoint ids grow with time (uuid6): the newest is the thread's state.
        where, args = "thread_id = ?", [thread_id]
        if to is not None:
            where, args = f"{where} AND checkpoint_id > ?", [thread_id, to]
        with self._seal:
            self._sealed = self._sealed or seal
            with self.cursor() as cur:
                cur.execute(f"DELETE FROM writes WHERE {where}", args)
                cur.execute(f"DELETE FROM checkpoints WHERE {where}", args)
            if seal:
                # The process ends without closing the file: leave no copy in its log.
                with self.cursor(transaction=False) as cur:
                    cur.execute("PRAGMA wal_checkpoint(TRUNCATE)")
