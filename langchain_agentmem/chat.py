"""``agentmem chat``: an interactive chat with memory, on ``create_agent`` and the middleware.

The model is the user's OpenAI-compatible server (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``,
``OPENAI_MODEL``, read from the environment or ``.env``). Long-term memory lives in the
store (default ``$AGENTMEM_HOME/memory.db``) and keeps the user's words (the model's
replies too with ``--remember-replies``, as the assistant's); each thread's messages are
checkpointed in a file of that store's (:func:`chat_checkpoints`), so a thread continues
after a restart, a new thread of the same user recalls what earlier threads were told, and
another store is another memory: neither its recall nor its conversations are shared.

Lines starting with a command (``/help``, ``/memories``, ``/forget ID``, ``/quit``) are
handled here: never sent to the model, never stored. A model error ends the chat with
one line saying what to do and a non-zero exit; Ctrl-C and end of input end it quietly. A
failed or interrupted turn is removed from the thread, so it is never replayed.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import sqlite3
import sys
import threading
import uuid
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any, TextIO

from langchain_core.messages import AIMessageChunk, HumanMessage, RemoveMessage

from langchain_agentmem.backends.sqlite import create_private
from langchain_agentmem.backends.url import (
    agentmem_home,
    default_store_url,
    in_memory_url,
    redact_url,
    sqlite_file,
)
from langchain_agentmem.errors import RecordNotFoundError
from langchain_agentmem.integrations.graph import user_thread_id, user_threads_prefix
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.models import chat_model_from_env

SYSTEM_PROMPT = "You are a helpful assistant with long-term memory of this user."

NO_MODEL = """agentmem chat needs a chat model, and none is configured.

Set, in the environment or in a .env file in this folder:
  OPENAI_API_KEY=sk-...                   (OpenAI)
or, for any OpenAI-compatible server (llama.cpp, vLLM, Ollama, ...):
  OPENAI_BASE_URL=http://localhost:8000/v1
and optionally
  OPENAI_MODEL=gpt-4o-mini
"""

HELP = """Commands (handled here, never sent to the model or remembered):
  /help         this list
  /memories     what is remembered about you, with ids
  /forget ID    forget one memory (ids from /memories)
  /quit         leave (so do Ctrl-D and Ctrl-C)"""

CHAT_CHECKPOINTS = "chat-checkpoints.db"
"""The file in ``$AGENTMEM_HOME`` where ``agentmem chat`` keeps the default store's
LangGraph checkpoints."""

CHAT_CHECKPOINTS_DIR = "chat-checkpoints"
"""The folder in ``$AGENTMEM_HOME`` with one checkpoint file per other store."""


def chat_checkpoints(store: str | None) -> Path | None:
    """The file where ``agentmem chat`` keeps the conversations of ``store``.

    The default store's are in ``$AGENTMEM_HOME/chat-checkpoints.db``; any other store's in
    ``$AGENTMEM_HOME/chat-checkpoints/<digest>.db``, the digest of its absolute file (SQLite)
    or of its URL with the passwords masked, so another store never shares a conversation.

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
    identity = f"sqlite:{path.resolve()}" if path is not None else redact_url(url)
    digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:32]
    return home / CHAT_CHECKPOINTS_DIR / f"{digest}.db"


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
    if path is None or not path.exists():
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


_COMMAND = re.compile(r"/([A-Za-z]+)(?:\s+(.*))?")

MODEL_TIMEOUT = 120.0
"""Seconds chat waits for the model server to connect or send more of its reply."""

EXIT_MODEL_ERROR = 1
EXIT_INTERRUPTED = 130


class ModelError(Exception):
    """A model call failed; the message says what to do."""


def explain(exc: BaseException, *, base_url: str | None, model: str) -> str | None:
    """One line for a failed model call, or ``None`` when ``exc`` is not the model's."""
    import openai

    where = base_url or "api.openai.com"
    if isinstance(exc, openai.APITimeoutError):
        return f"the model server at {where} did not answer in time; try again or check it"
    if isinstance(exc, openai.APIConnectionError):
        return (
            f"cannot reach the model server at {where}: is it running? "
            "(set OPENAI_BASE_URL to its /v1 address)"
        )
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return (
            f"the model server at {where} refused the API key ({exc.status_code}): "
            "set OPENAI_API_KEY to a valid key"
        )
    if isinstance(exc, openai.NotFoundError):
        return (
            f"the model server at {where} has no model {model!r} (404): "
            "set OPENAI_MODEL to a model it serves"
        )
    if isinstance(exc, openai.RateLimitError):
        return f"the model server at {where} is rate-limiting this key (429); wait and retry"
    if isinstance(exc, openai.APIStatusError):
        detail = " ".join(str(exc.message).split())[:200]
        return f"the model server at {where} answered {exc.status_code}: {detail}"
    if isinstance(exc, openai.OpenAIError):
        return f"the model call failed: {' '.join(str(exc).split())[:200]}"
    return None


def _reader(stdin: TextIO, stdout: TextIO) -> Callable[[str], str | None]:
    """A function reading one line (``None`` at end of input), with line editing on a tty."""
    if stdin is sys.stdin and stdin.isatty() and stdout is sys.stdout:
        # readline gives input() line editing and history; not on every platform.
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401

        def read_tty(prompt: str) -> str | None:
            try:
                return input(prompt)
            except EOFError:
                stdout.write("\n")
                return None

        return read_tty

    def read_stream(prompt: str) -> str | None:
        line = stdin.readline()
        return line if line else None

    return read_stream


def _memories(memory: AgentMemory, user: str, stdout: TextIO) -> None:
    from langchain_agentmem.integrations.prompt import memory_line, stamps

    records = memory.records(user)
    for record, when in zip(records, stamps(records), strict=True):
        # As the model is told it, without the list's dash: date, who, what it replied to.
        stdout.write(f"{record.id}  {memory_line(record, when).removeprefix('- ')}\n")
    stdout.write(f"({len(records)} memories)\n")


def _command(text: str, memory: AgentMemory, user: str, stdout: TextIO) -> bool | None:
    """Handle a local command; ``True``: quit, ``False``: handled, ``None``: not a command."""
    found = _COMMAND.fullmatch(text)
    if found is None:
        return None
    name, arg = found.group(1).lower(), (found.group(2) or "").strip()
    if name in ("quit", "exit", "q"):
        return True
    if name in ("help", "h"):
        stdout.write(HELP + "\n")
    elif name == "memories":
        _memories(memory, user, stdout)
    elif name == "forget":
        if not arg:
            stdout.write("usage: /forget ID (ids from /memories)\n")
        else:
            try:
                memory.get(arg, namespace=user)  # only the user's own ids
            except (RecordNotFoundError, ValueError):
                stdout.write(f"no memory {arg!r} of yours; /memories lists their ids\n")
            else:
                memory.delete(arg, namespace=user)
                stdout.write(f"forgot {arg}\n")
    else:
        stdout.write(f"unknown command /{name}; /help lists the commands\n")
    return False


def _drop_turn(agent: Any, config: Any, started: str) -> None:
    """Remove from the thread the messages a failed turn added: the one with id ``started``
    (the user's, which opened the turn) and every later one."""
    messages = agent.get_state(config).values.get("messages") or []
    ids = [m.id for m in messages]
    if started in ids:
        added = [i for i in ids[ids.index(started) :] if i is not None]
        agent.update_state(config, {"messages": [RemoveMessage(id=i) for i in added]})


def _converse(
    agent: Any,
    memory: AgentMemory,
    config: Any,
    *,
    user: str,
    thread: str,
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
    base_url: str | None,
    model_name: str,
) -> int:
    """The read-answer loop; returns the exit status."""
    read = _reader(stdin, stdout)
    interactive = stdin.isatty()
    stdout.write(f"agentmem chat: user {user!r}, thread {thread!r}. /help for commands.\n")
    stdout.flush()
    while True:
        line = read("you> " if interactive else "")
        if line is None:
            break
        text = line.strip()
        if not text:
            continue
        handled = _command(text, memory, user, stdout)
        if handled is True:
            break
        if handled is False:
            stdout.flush()
            continue
        limit = memory.limits.max_text_chars
        if len(text) > limit:
            # The memory would refuse it after the model answered: refuse it before.
            stdout.write(
                f"that line is {len(text):,} characters long; this memory keeps at most "
                f"{limit:,} per message: send it in smaller parts (nothing was sent)\n"
            )
            stdout.flush()
            continue
        started = False
        said = HumanMessage(text, id=str(uuid.uuid4()))  # the turn's first message
        try:
            for chunk, _ in agent.stream({"messages": [said]}, config, stream_mode="messages"):
                if isinstance(chunk, AIMessageChunk) and chunk.text:
                    if not started:
                        stdout.write("assistant> ")
                        started = True
                    stdout.write(chunk.text)
                    stdout.flush()
        except BaseException as exc:
            # A turn reported as failed (or interrupted) must not be replayed next time.
            _drop_turn(agent, config, str(said.id))
            why = explain(exc, base_url=base_url, model=model_name)
            if why is None:
                raise
            if started:
                stdout.write("\n")
                stdout.flush()
            stderr.write(f"agentmem chat: {why}\n")
            return EXIT_MODEL_ERROR
        stdout.write("\n" if started else "assistant> (no text in the reply)\n")
        stdout.flush()
    return 0


def run_chat(
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
    *,
    store: str | None,
    user: str,
    thread: str,
    k: int,
    remember_replies: bool = False,
) -> int:
    """Chat until ``/quit`` or end of input; returns the exit status."""
    llm = chat_model_from_env(max_retries=1, timeout=MODEL_TIMEOUT)
    if llm is None:
        stderr.write(NO_MODEL)
        return 2
    from langchain.agents import create_agent
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.sqlite import SqliteSaver

    from langchain_agentmem.integrations.middleware import AgentMemoryMiddleware

    base_url = getattr(llm, "openai_api_base", None)
    model_name = str(getattr(llm, "model_name", "?"))
    roles = ("human", "ai") if remember_replies else ("human",)
    # Checkpoints are keyed by thread id alone: scope it by user so users never share one.
    config: Any = {"configurable": {"user_id": user, "thread_id": user_thread_id(user, thread)}}
    with contextlib.ExitStack() as stack:
        memory = stack.enter_context(AgentMemory(store))
        # Each store has its own file of conversations: private, like the store.
        path = chat_checkpoints(store)
        checkpointer: BaseCheckpointSaver[Any]
        if path is None:
            checkpointer = InMemorySaver()
        else:
            create_private(path)
            conn = stack.enter_context(closing(sqlite3.connect(path, check_same_thread=False)))
            checkpointer = SqliteSaver(conn)
        # The embedding model loads (seconds) while the user types the first line.
        warm = threading.Thread(
            target=memory.embeddings.embed_query, args=("warm up",), daemon=True
        )
        warm.start()
        agent = create_agent(
            llm,
            system_prompt=SYSTEM_PROMPT,
            middleware=[AgentMemoryMiddleware(memory, k=k, remember_roles=roles)],
            checkpointer=checkpointer,
        )
        try:
            return _converse(
                agent,
                memory,
                config,
                user=user,
                thread=thread,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                base_url=base_url,
                model_name=model_name,
            )
        finally:
            # Leaving while torch still loads the model in that thread aborts the process.
            warm.join()


def main_chat(
    store: str | None, user: str, thread: str, k: int, remember_replies: bool = False
) -> int:
    """``agentmem chat`` on the process's standard streams (Ctrl-C ends it quietly)."""
    try:
        return run_chat(
            sys.stdin,
            sys.stdout,
            sys.stderr,
            store=store,
            user=user,
            thread=thread,
            k=k,
            remember_replies=remember_replies,
        )
    except KeyboardInterrupt:
        sys.stdout.write("\n")
        sys.stdout.flush()
        return EXIT_INTERRUPTED
