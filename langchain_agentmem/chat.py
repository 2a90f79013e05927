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
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import re
import signal
import sqlite3
import sys
import threading
import traceback
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing
from typing import Any, TextIO

from langchain_core.messages import AIMessageChunk, HumanMessage, RemoveMessage

from langchain_agentmem.backends.sqlite import create_private
from langchain_agentmem.chat_threads import (
    ChatSaver,
    ThreadInUseError,
    chat_checkpoints,
    hold_thread,
)
from langchain_agentmem.integrations.runs import user_thread_id
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.models import chat_model_from_env
from langchain_agentmem.pipes import READER_GONE, reader_gone

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

_COMMAND = re.compile(r"/([A-Za-z]+)(?:\s+(.*))?")

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


class ModelError(Exception):
    """A model call failed; the message says what to do."""


class ModelCallFailed(Exception):
    """Raised in place of any error of a model call (:class:`_ModelCalls`), so the chat
    tells a failed model call from its own faults."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(cause)
        self.cause = cause


def fatal(exc: BaseException) -> bool:
    """Whether every later turn would fail as ``exc`` did (a refused key, an unknown model),
    so the chat ends."""
    import openai

    cause = exc.cause if isinstance(exc, ModelCallFailed) else exc
    return isinstance(
        cause, (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError)
    )


def _found(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> BaseException | None:
    """The first error of ``kinds`` among ``exc`` and what caused it, or ``None``."""
    seen: set[int] = set()
    at: BaseException | None = exc
    while at is not None and id(at) not in seen:
        if isinstance(at, kinds):
            return at
        seen.add(id(at))
        at = at.__cause__ or at.__context__
    return None


def explain(
    exc: BaseException, *, base_url: str | None, model: str, started: bool = False
) -> str | None:
    """One line for a failed model call, or ``None`` when ``exc`` is not the model's
    (``started``: part of the reply had come)."""
    import httpx
    import openai

    where = base_url or "api.openai.com"
    if isinstance(exc, ModelCallFailed):
        why = explain(exc.cause, base_url=base_url, model=model, started=started)
        if why is not None:
            return why
        cause = exc.cause
        if isinstance(cause, ValueError) and "No generations" in str(cause):
            return (
                f"the model server at {where} sent an empty reply (a local server does when "
                "the conversation no longer fits its context: lower --history-tokens or "
                "--max-reply-tokens); try again"
            )
        detail = " ".join(str(cause).split())[:200]
        return f"the model call failed ({type(cause).__name__}: {detail}); try again"
    if isinstance(exc, openai.APIConnectionError):
        hung_up = _found(exc, (httpx.RemoteProtocolError, httpx.ReadError))
        exc = hung_up or exc  # it answered, then hung up
        if started and hung_up is None:
            return f"the model server at {where} dropped the connection mid-reply; try again"
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
        return (
            f"the model server at {where} dropped the connection mid-reply "
            f"({type(exc).__name__}); try again"
        )
    if isinstance(exc, openai.APITimeoutError):
        return f"the model server at {where} did not answer in time; try again or check it"
    if isinstance(exc, openai.APIConnectionError):
        return (
            f"cannot reach the model server at {where}: is it running? "
            "(set OPENAI_BASE_URL to its /v1 address)"
        )
    if isinstance(exc, httpx.TransportError):
        return f"the model call failed ({type(exc).__name__}: {exc}); try again"
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
    from langchain_agentmem.integrations.prompt import memory_line, quote, stamps

    records = memory.records(user)
    for record, when in zip(records, stamps(records), strict=True):
        # An id that could steer the terminal (control, bidi) or be misread (spaces, a
        # quote) is shown as a JSON string, which /forget takes as it is shown.
        rid = record.id
        plain = rid.isprintable() and not any(c.isspace() for c in rid) and rid[:1] != '"'
        shown = rid if plain else quote(rid)
        # As the model is told it, without the list's dash: date, who, what it replied to.
        stdout.write(f"{shown}  {memory_line(record, when).removeprefix('- ')}\n")
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
            import json

            record_id = arg
            if arg.startswith('"'):  # an id /memories showed as a JSON string
                try:
                    record_id = json.loads(arg)
                except ValueError:
                    record_id = None
            try:
                # Only the user's own ids; checked and deleted in one step.
                gone = isinstance(record_id, str) and (
                    memory.delete(record_id, namespace=user, missing_ok=True) is not None
                )
            except ValueError:  # not an id at all
                gone = False
            if gone:
                stdout.write(f"forgot {arg}\n")
            else:
                stdout.write(f"no memory {arg!r} of yours; /memories lists their ids\n")
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


_DONE = object()
"""Put on a turn's queue when the turn ended well."""

_CUT = object()
"""Put on a turn's queue when the server cut a reply at its length cap."""


def _stream_turn(agent: Any, said: HumanMessage, config: Any, out: queue.SimpleQueue[Any]) -> None:
    """Run one turn: each text chunk of the reply on ``out``, then the error or ``_DONE``."""
    try:
        for chunk, _ in agent.stream({"messages": [said]}, config, stream_mode="messages"):
            if isinstance(chunk, AIMessageChunk):
                if chunk.text:
                    out.put(chunk.text)
                if chunk.response_metadata.get("finish_reason") == "length":
                    out.put(_CUT)
    except BaseException as exc:
        out.put(exc)
    else:
        out.put(_DONE)


class _Reply:
    """Writes a reply as it streams in."""

    def __init__(self, stdout: TextIO) -> None:
        self.stdout = stdout
        self.started = False
        self.cut = False
        """Whether the server cut the reply at its length cap."""

    def write(self, text: str) -> None:
        if not self.started:
            self.stdout.write("assistant> ")
            self.started = True
        self.stdout.write(text)
        self.stdout.flush()

    def end(self) -> None:
        self.stdout.write("\n" if self.started else "assistant> (no text in the reply)\n")
        self.stdout.flush()


def _answer(agent: Any, said: HumanMessage, config: Any, reply: _Reply) -> BaseException | None:
    """Stream the reply to ``said``; returns the error that ended the turn, if any.

    LangGraph waits for a running model call before it lets a Ctrl-C out of ``stream``
    (its executor joins its threads), so the turn runs in a thread of its own and this
    one only waits on what it streams: Ctrl-C raises here at once.
    """
    out: queue.SimpleQueue[Any] = queue.SimpleQueue()
    worker = threading.Thread(
        target=_stream_turn, args=(agent, said, config, out), name="agentmem-chat-turn"
    )
    worker.daemon = True  # what it waits on (the model) must not hold up the exit
    worker.start()
    while True:
        try:
            item = out.get(timeout=0.5)  # a timeout: some platforms defer Ctrl-C while blocked
        except queue.Empty:
            continue
        if item is _DONE:
            return None
        if item is _CUT:
            reply.cut = True
            continue
        if isinstance(item, BaseException):
            return item
        reply.write(item)


class _ChatThread:
    """One thread of the chat: where a turn starts, and how a turn is taken back."""

    def __init__(self, agent: Any, config: Any, saver: Any) -> None:
        self.agent = agent
        self.config = config
        self.saver = saver if isinstance(saver, ChatSaver) else None
        self.thread_id: str = config["configurable"]["thread_id"]

    def mark(self) -> str | None:
        """Where the next turn starts (the newest checkpoint of a file-backed thread)."""
        return None if self.saver is None else self.saver.latest(self.thread_id)

    def drop(self, mark: str | None, said: HumanMessage) -> None:
        """Take back a turn that ended (a failed model call)."""
        if self.saver is not None:
            self.saver.rewind(self.thread_id, mark)
        else:
            _drop_turn(self.agent, self.config, str(said.id))

    def repair(self) -> None:
        """Take out the turn a killed session left unfinished (the thread's newest
        checkpoints, whose tasks never ran to the end), so it is never replayed."""
        if self.saver is None:
            return
        newest = self.saver.latest(self.thread_id)
        if newest is None:
            return
        done = None  # the newest checkpoint with nothing left to run: where a turn ended
        for snapshot in self.agent.get_state_history(self.config):
            if not snapshot.next:
                done = snapshot.config["configurable"]["checkpoint_id"]
                break
        if done != newest:
            self.saver.rewind(self.thread_id, done)

    def abandon(self, mark: str | None) -> None:
        """Take back a turn that may still be running, and refuse what it writes later. An
        in-memory thread ends with the chat: there is nothing to take back."""
        if self.saver is not None:
            self.saver.rewind(self.thread_id, mark, seal=True)


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
    turns: _ChatThread,
    memory: AgentMemory,
    notes: _Notes,
    *,
    user: str,
    thread: str,
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
    base_url: str | None,
    model_name: str,
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
        handled = _command(text, memory, user, stdout)
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
        reply = _Reply(stdout)
        mark = turns.mark()
        try:
            failed = _answer(turns.agent, said, turns.config, reply)
        except BaseException as exc:
            # Ctrl-C, a signal, a reader of the reply that went away: the turn may still be
            # running. It must not be replayed next time, nor written after.
            with _no_interrupts():
                turns.abandon(mark)
                if isinstance(exc, KeyboardInterrupt):
                    with contextlib.suppress(OSError, ValueError):
                        stdout.write("\n")  # after the reply so far, or the terminal's ^C
                        stdout.flush()
            raise TurnAbandoned(exc) from exc
        if failed is not None:
            # A turn reported as failed must not be replayed next time.
            turns.drop(mark, said)
            why = explain(failed, base_url=base_url, model=model_name, started=reply.started)
            if why is None:
                raise failed
            if reply.started:
                stdout.write("\n")
                stdout.flush()
            stderr.write(f"agentmem chat: {why}\n")
            stderr.flush()
            if fatal(failed):
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


def _in_use(user: str, thread: str) -> str:
    return (
        f"agentmem chat: thread {thread!r} of user {user!r} is open in another agentmem chat "
        "(on this store, in this AGENTMEM_HOME); finish that one first, or pass --thread NAME "
        "to start another conversation\n"
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
) -> int:
    """Chat until ``/quit`` or end of input; returns the exit status (2: no model configured,
    or another session has the thread).

    Raises:
        TurnAbandoned: a turn left running (Ctrl-C during a reply, say), or Ctrl-C while
            the embedding model loads: the turn is out of the thread, and this process
            should end now (:func:`main_chat` does).
    """
    llm = chat_model_from_env(max_retries=1, timeout=MODEL_TIMEOUT, max_tokens=max_reply_tokens)
    if llm is None:
        stderr.write(NO_MODEL)
        return EXIT_USAGE
    from langchain.agents import create_agent
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.checkpoint.memory import InMemorySaver

    from langchain_agentmem.integrations import middleware, offers

    base_url = getattr(llm, "openai_api_base", None)
    model_name = str(getattr(llm, "model_name", "?"))
    roles = ("human", "ai") if remember_replies else ("human",)
    # Checkpoints are keyed by thread id alone: scope it by user so users never share one.
    config: Any = {"configurable": {"user_id": user, "thread_id": user_thread_id(user, thread)}}
    path = chat_checkpoints(store)
    held = contextlib.ExitStack()
    try:
        held.enter_context(hold_thread(path, config["configurable"]["thread_id"]))
    except ThreadInUseError:
        stderr.write(_in_use(user, thread))
        return EXIT_USAGE
    interrupted = False
    with held, contextlib.ExitStack() as stack:
        memory = stack.enter_context(AgentMemory(store))
        # Each store has its own file of conversations: private, like the store.
        checkpointer: BaseCheckpointSaver[Any]
        if path is None:
            checkpointer = InMemorySaver()
        else:
            create_private(path)
            conn = stack.enter_context(closing(sqlite3.connect(path, check_same_thread=False)))
            conn.execute("PRAGMA secure_delete = ON")  # a turn taken back leaves no trace
            checkpointer = ChatSaver(conn)
        # The embedding model loads (seconds) while the user types the first line.
        warm = threading.Thread(
            target=memory.embeddings.embed_query, args=("warm up",), daemon=True
        )
        warm.start()
        agent = create_agent(
            llm,
            system_prompt=SYSTEM_PROMPT,
            middleware=[
                middleware.AgentMemoryMiddleware(
                    memory, k=k, remember_roles=roles, history_tokens=history_tokens
                ),
                _model_calls(),
            ],
            checkpointer=checkpointer,
        )
        notes = _Notes()  # what the middleware warns of, told after each reply
        offers.logger.addHandler(notes)
        turns = _ChatThread(agent, config, checkpointer)
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
                base_url=base_url,
                model_name=model_name,
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
            with contextlib.suppress(OSError, ValueError):
                stdout.write("\n")  # after the prompt
                stdout.flush()
            raise TurnAbandoned(exc) from exc
        finally:
            offers.logger.removeHandler(notes)
            if not interrupted:
                # Leaving while torch still loads the model in that thread aborts the
                # process (an interrupted chat leaves by os._exit: nothing is torn down).
                warm.join()


def _model_calls() -> Any:
    """A middleware raising :class:`ModelCallFailed` for any error of a model call."""
    from langchain.agents.middleware.types import AgentMiddleware

    class _ModelCalls(AgentMiddleware):  # type: ignore[type-arg]
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            try:
                return handler(request)
            except Exception as exc:
                raise ModelCallFailed(exc) from exc

    return _ModelCalls()


def main_chat(
    store: str | None,
    user: str,
    thread: str,
    k: int,
    remember_replies: bool = False,
    max_reply_tokens: int = MAX_REPLY_TOKENS,
    history_tokens: int = HISTORY_TOKENS,
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
