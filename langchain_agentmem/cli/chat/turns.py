"""One turn of ``agentmem chat``: its reply streamed as it comes, and the turn taken back
out of the thread when it fails or is left running."""

from __future__ import annotations

import queue
import threading
from typing import Any, TextIO

from langchain_core.messages import AIMessageChunk, HumanMessage, RemoveMessage

from langchain_agentmem.cli.chat.threads import ChatSaver
from langchain_agentmem.text.controls import shown


def _drop_turn(agent: Any, config: Any, started: str) -> None:
    """Remove from the thread the messages a failed turn added: the one with id ``started``
    (the user's, which opened the turn) and every later one."""
    messages = agent.get_state(config).values.get("messages") or []
    ids = [m.id for m in messages]
    if started in ids:
        added = [i for i in ids[ids.index(started) :] if i is not None]
        agent.update_state(config, {"messages": [RemoveMessage(id=i) for i in added]})


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


class Reply:
    """Writes a reply as it streams in, each part as a terminal may show it
    (:func:`~langchain_agentmem.text.controls.shown`: controls, bidi and invisible characters as
    visible escapes), so a reply cannot clear the screen, set the clipboard or hide text."""

    def __init__(self, stdout: TextIO) -> None:
        self.stdout = stdout
        self.started = False
        self.cut = False
        """Whether the server cut the reply at its length cap."""

    def write(self, text: str) -> None:
        if not self.started:
            self.stdout.write("assistant> ")
            self.started = True
        self.stdout.write(shown(text))
        self.stdout.flush()

    def end(self) -> None:
        self.stdout.write("\n" if self.started else "assistant> (no text in the reply)\n")
        self.stdout.flush()


def answer(agent: Any, said: HumanMessage, config: Any, reply: Reply) -> BaseException | None:
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


class ChatThread:
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
