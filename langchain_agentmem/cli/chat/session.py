"""``agentmem chat``: an interactive chat with memory, on ``create_agent`` and the middleware.

The model is the user's OpenAI-compatible server (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``,
``OPENAI_MODEL``, read from the environment or ``.env``). Long-term memory lives in the
store (default ``$AGENTMEM_HOME/memory.db``) and keeps the user's words (the model's
replies too with ``--remember-replies``, as the assistant's); each thread's messages are
checkpointed in a file of that store's (:func:`chat_checkpoints`), so a thread continues
after a restart, a new thread of the same user recalls what earlier threads were told, and
another store is another memory: neither its recall nor its conversations are shared.

Lines starting with a command (``/help``, ``/memories``, ``/forget ID``, ``/quit``) are
handled here: never sent to the model, never stored. Each model call is sent the newest
turns of the thread that fit in ``history_tokens`` and asks for at most
``max_reply_tokens``, so neither a long thread nor a runaway reply overflows a small
model's context. A failed model call (an empty or broken stream, an error answer, a
dropped connection) is one line and the chat goes on, the turn taken out of the thread
(exit status 1 at the end); one no later turn can pass (a refused key, an unknown model)
ends the chat with that line; Ctrl-C, SIGTERM, SIGHUP (at once, even
while a reply is awaited) and end of input end it quietly (:func:`exit_status`). A failed
or interrupted turn is removed from the thread, so it is never replayed; one a killed
session left unfinished is removed when the thread is next opened. One session at a time
holds a thread: a second one on the same thread is refused (:func:`hold_thread`).

The commands live in :mod:`~langchain_agentmem.cli.chat.commands`, a turn's reply and its
taking back in :mod:`~langchain_agentmem.cli.chat.turns`, the line a failed model call is told
as in :mod:`~langchain_agentmem.cli.chat.failures`, the conversations' files and locks in
:mod:`~langchain_agentmem.cli.chat.threads`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sqlite3
import sys
import threading
import traceback
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any, TextIO

from langchain_core.messages import HumanMessage

from langchain_agentmem.backends.sqlite import create_private
from langchain_agentmem.cli.chat.commands import command
from langchain_agentmem.cli.chat.failures import explain, fatal, model_calls
from langchain_agentmem.cli.chat.threads import (
    ChatSaver,
    ThreadInUseError,
    chat_checkpoints,
    hold_thread,
)
from langchain_agentmem.cli.chat.turns import ChatThread, Reply, answer
from langchain_agentmem.cli.pipes import READER_GONE, reader_gone
from langchain_agentmem.integrations import offers
from langchain_agentmem.integrations.runs import user_thread_id
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.models import annotating_model, chat_model_from_env

SYSTEM_PROMPT = "You are a helpful assistant with long-term memory of this user."

NO_MODEL = """agentmem chat needs a chat model, and none is configured.

Set, in the environment or in a .env file in this folder:
  OPENAI_API_KEY=sk-...                   (OpenAI)
or, for any OpenAI-compatible server (llama.cpp, vLLM, Ollama, ...):
  OPENAI_BASE_URL=http://localhost:8000/v1
and optionally
  OPENAI_MODEL=gpt-4o-mini
"""

MODEL_TIMEOUT = 120.0
"""Seconds chat waits for the model server to connect or send more of its reply."""

MAX_REPLY_TOKENS = 1024
"""Default cap of one reply (``--max-reply-tokens``, ``AGENTMEM_MAX_REPLY_TOKENS``)."""

HISTORY_TOKENS = 2000
"""Default budget of the thread sent with each model call (``--history-tokens``,
``AGENTMEM_HISTORY_TOKENS``): with the reply cap and the memories, a 4,096-token context."""

EXIT_MODEL_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


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


class Hangup(KeyboardInterrupt):
    """SIGTERM, or SIGHUP (its terminal closed): chat ends as on Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _hang_up(signum: int, frame: object) -> None:
    raise Hangup(signum)


class TurnAbandoned(Exception):
    """A turn left running (Ctrl-C or a signal during a reply, a reader of the reply that
    went away): it was taken out of the thread, but its model call may still run in a
    thread of this process, which the interpreter would wait for at exit
    (:func:`main_chat` ends the process at once instead)."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(cause)
        self.cause = cause


def exit_status(exc: BaseException) -> int:
    """The exit status of a chat ended by ``exc``: 128 + the signal's number for a signal
    (130 for Ctrl-C), 141 when the reader of its output went away, 1 otherwise."""
    if isinstance(exc, Hangup):
        return 128 + exc.signum
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    if isinstance(exc, BrokenPipeError):
        return READER_GONE
    return EXIT_MODEL_ERROR


_ENDING = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""The signals that end chat: Ctrl-C, ``kill``, a terminal that closed."""


@contextlib.contextmanager
def _no_interrupts() -> Iterator[None]:
    """Ignore Ctrl-C and the signals that end chat while the block runs (so taking a turn
    back is never cut short)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {n: signal.signal(n, signal.SIG_IGN) for n in _ENDING}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


class _Notes(logging.Handler):
    """Collects what the middleware warns of during a turn (a reply too long to remember),
    to be told after the reply rather than inside it."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def tell(self, stderr: TextIO) -> None:
        lines, self.lines = self.lines, []
        for line in lines:
            stderr.write(f"agentmem chat: {line}\n")
        stderr.flush()


def _converse(
    turns: ChatThread,
    memory: AgentMemory,
    notes: _Notes,
    *,
    user: str,
    thread: str,
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
    llm: Any,
    warming: threading.Thread | None = None,
) -> int:
    """The read-answer loop; returns the exit status (1 when a turn failed).

    Raises:
        TurnAbandoned: a turn left running (the turn is out of the thread).
    """
    read = _reader(stdin, stdout)
    interactive = stdin.isatty()
    status = 0
    stdout.write(f"agentmem chat: user {user!r}, thread {thread!r}. /help for commands.\n")
    stdout.flush()
    while True:
        line = read("you> " if interactive else "")
        if line is None:
            break
        text = line.strip()
        if not text:
            continue
        handled = command(text, memory, user, stdout)
        if handled is True:
            break
        if handled is False:
            stdout.flush()
            continue
        refused = _unsendable(text, memory.limits.max_text_chars)
        if refused:
            stdout.write(f"{refused} (nothing was sent)\n")
            stdout.flush()
            continue
        if interactive and warming is not None and warming.is_alive():
            # The user typed faster than the embedding model loads: say why it waits.
            stderr.write("agentmem chat: loading the memory's embedding model ...\n")
            stderr.flush()
        warming = None
        said = HumanMessage(text, id=str(uuid.uuid4()))  # the turn's first message
        reply = Reply(stdout)
        mark = turns.mark()
        failed = _answer(turns, memory, said, reply, mark, stdout)
        if failed is not None:
            # A turn reported as failed must not be replayed next time.
            turns.drop(mark, said)
            if _tell_failure(failed, reply, llm, stdout, stderr):
                return EXIT_MODEL_ERROR
            status = EXIT_MODEL_ERROR  # the chat goes on; its status says a turn failed
            continue
        reply.end()
        if reply.cut:
            stderr.write(
                "agentmem chat: the reply was cut at its length cap (--max-reply-tokens, "
                "AGENTMEM_MAX_REPLY_TOKENS)\n"
            )
        notes.tell(stderr)
    return status


def _answer(
    turns: ChatThread,
    memory: AgentMemory,
    said: HumanMessage,
    reply: Reply,
    mark: Any,
    stdout: TextIO,
) -> BaseException | None:
    """Answer ``said`` into ``reply`` (what failed, or ``None``), annotation paused.

    Raises:
        TurnAbandoned: Ctrl-C, a signal, a reader of the reply that went away: the turn,
            which may still be running, is taken out of the thread.
    """
    try:
        with memory.annotation_paused():  # a local server serves one request at a time
            return answer(turns.agent, said, turns.config, reply)
    except BaseException as exc:
        # The turn may still be running: it must not be replayed next time, nor written
        # after.
        with _no_interrupts():
            turns.abandon(mark)
            if isinstance(exc, KeyboardInterrupt):
                with contextlib.suppress(OSError, ValueError):
                    stdout.write("\n")  # after the reply so far, or the terminal's ^C
                    stdout.flush()
        raise TurnAbandoned(exc) from exc


def _tell_failure(
    failed: BaseException, reply: Reply, llm: Any, stdout: TextIO, stderr: TextIO
) -> bool:
    """Say in one line why a turn failed; whether the chat must end (:func:`fatal`).

    Raises:
        BaseException: ``failed`` itself, where no line explains it.
    """
    base_url = getattr(llm, "openai_api_base", None)
    model_name = str(getattr(llm, "model_name", "?"))
    why = explain(failed, base_url=base_url, model=model_name, started=reply.started)
    if why is None:
        raise failed
    if reply.started:
        stdout.write("\n")
        stdout.flush()
    stderr.write(f"agentmem chat: {why}\n")
    stderr.flush()
    return fatal(failed)


def _unsendable(text: str, limit: int) -> str | None:
    """Why the memory could not keep the line ``text`` (so it is not sent), or ``None``."""
    if len(text) > limit:
        return (
            f"that line is {len(text):,} characters long; this memory keeps at most "
            f"{limit:,} per message: send it in smaller parts"
        )
    if "\x00" in text:
        return f"that line holds a NUL character (at {text.index(chr(0)) + 1}): remove it"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (
            f"that line is not valid UTF-8 (at {exc.start + 1}): set the terminal's "
            "encoding to UTF-8 (LANG=C.UTF-8, say)"
        )
    return None


def _warm_up(memory: AgentMemory) -> threading.Thread:
    """Load the embedding model in a thread of its own (seconds) while the user types the
    first line."""
    warm = threading.Thread(target=memory.embeddings.embed_query, args=("warm up",), daemon=True)
    warm.start()
    return warm


def _left_loading(exc: KeyboardInterrupt, stdout: TextIO) -> TurnAbandoned:
    """Ctrl-C while the embedding model loads, as an abandoned turn (the prompt's line
    ended)."""
    with contextlib.suppress(OSError, ValueError):
        stdout.write("\n")  # after the prompt
        stdout.flush()
    return TurnAbandoned(exc)


def _hold(path: Path | None, thread_id: str) -> contextlib.ExitStack | None:
    """The lock on a thread's conversation, held until the stack closes; ``None`` while
    another ``agentmem chat`` holds it."""
    held = contextlib.ExitStack()
    try:
        held.enter_context(hold_thread(path, thread_id))
    except ThreadInUseError:
        return None
    return held


def _in_use(user: str, thread: str) -> str:
    return (
        f"agentmem chat: thread {thread!r} of user {user!r} is open in another agentmem chat "
        "(on this store, in this AGENTMEM_HOME); finish that one first, or pass --thread NAME "
        "to start another conversation\n"
    )


def _checkpointer(stack: contextlib.ExitStack, path: Path | None) -> Any:
    """Where a store's conversations are checkpointed: a private file of their own (kept
    open on ``stack``), or the process's memory for an in-memory store."""
    from langgraph.checkpoint.memory import InMemorySaver

    if path is None:
        return InMemorySaver()
    create_private(path)
    conn = stack.enter_context(closing(sqlite3.connect(path, check_same_thread=False)))
    conn.execute("PRAGMA secure_delete = ON")  # a turn taken back leaves no trace
    return ChatSaver(conn)


def _agent(
    llm: Any, memory: AgentMemory, checkpointer: Any, *, k: int, roles: Any, history_tokens: int
) -> Any:
    """The chat's agent: the model, memory's middleware, and the thread's checkpoints."""
    from langchain.agents import create_agent

    from langchain_agentmem.integrations import middleware

    return create_agent(
        llm,
        system_prompt=SYSTEM_PROMPT,
        middleware=[
            middleware.AgentMemoryMiddleware(
                memory, k=k, remember_roles=roles, history_tokens=history_tokens
            ),
            model_calls(),
        ],
        checkpointer=checkpointer,
    )


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
    max_reply_tokens: int = MAX_REPLY_TOKENS,
    history_tokens: int = HISTORY_TOKENS,
    annotate: bool = True,
) -> int:
    """Chat until ``/quit`` or end of input; returns the exit status (2: no model configured,
    or another session has the thread). ``annotate``: the model also annotates what is
    remembered (``AgentMemory(model=...)``).

    Raises:
        TurnAbandoned: a turn left running (Ctrl-C during a reply, say), or Ctrl-C while
            the embedding model loads: the turn is out of the thread, and this process
            should end now (:func:`main_chat` does).
    """
    llm = chat_model_from_env(max_retries=1, timeout=MODEL_TIMEOUT, max_tokens=max_reply_tokens)
    if llm is None:
        stderr.write(NO_MODEL)
        return EXIT_USAGE
    roles = ("human", "ai") if remember_replies else ("human",)
    # Checkpoints are keyed by thread id alone: scope it by user so users never share one.
    config: Any = {"configurable": {"user_id": user, "thread_id": user_thread_id(user, thread)}}
    path = chat_checkpoints(store)
    held = _hold(path, config["configurable"]["thread_id"])
    if held is None:
        stderr.write(_in_use(user, thread))
        return EXIT_USAGE
    interrupted = False
    with held, contextlib.ExitStack() as stack:
        memory = stack.enter_context(
            AgentMemory(store, model=annotating_model() if annotate else None)
        )
        checkpointer = _checkpointer(stack, path)
        warm = _warm_up(memory)
        agent = _agent(llm, memory, checkpointer, k=k, roles=roles, history_tokens=history_tokens)
        notes = _Notes()  # what the middleware warns of, told after each reply
        offers.logger.addHandler(notes)
        turns = ChatThread(agent, config, checkpointer)
        turns.repair()
        try:
            return _converse(
                turns,
                memory,
                notes,
                user=user,
                thread=thread,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                llm=llm,
                warming=warm,
            )
        except TurnAbandoned:
            # The turn may still be running in its thread, on the memory and the
            # checkpoints: leave them open for the process's end (the lock is let go).
            interrupted = True
            stack.pop_all()
            raise
        except KeyboardInterrupt as exc:
            if not warm.is_alive():
                raise
            # Waiting for torch to finish loading would take seconds: end now, as above.
            interrupted = True
            stack.pop_all()
            raise _left_loading(exc, stdout) from exc
        finally:
            offers.logger.removeHandler(notes)
            if not interrupted:
                # Leaving while torch still loads the model in that thread aborts the
                # process (an interrupted chat leaves by os._exit: nothing is torn down).
                warm.join()


def main_chat(
    store: str | None,
    user: str,
    thread: str,
    k: int,
    remember_replies: bool = False,
    max_reply_tokens: int = MAX_REPLY_TOKENS,
    history_tokens: int = HISTORY_TOKENS,
    annotate: bool = True,
) -> int:
    """``agentmem chat`` on the process's standard streams (Ctrl-C, SIGTERM and SIGHUP end it
    quietly, at once)."""
    previous = {n: signal.signal(n, _hang_up) for n in _ENDING if n != signal.SIGINT}
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
            max_reply_tokens=max_reply_tokens,
            history_tokens=history_tokens,
            annotate=annotate,
        )
    except TurnAbandoned as ended:
        code = exit_status(ended.cause)
        if code == READER_GONE:
            reader_gone()
        elif code == EXIT_MODEL_ERROR:  # not foreseen: say what it was
            traceback.print_exception(ended.cause, file=sys.stderr)
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
            sys.stderr.flush()
        # The interpreter's exit would wait for the turn's model call (up to MODEL_TIMEOUT):
        # end now. The turn is out of the thread; what the memory stored is committed.
        os._exit(code)
    except KeyboardInterrupt as exc:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.write("\n")
            sys.stdout.flush()
        return exit_status(exc)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
