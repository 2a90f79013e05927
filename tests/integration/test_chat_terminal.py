"""``agentmem chat`` in a real terminal (tmux), typed into as a person does.

The model is the local scripted OpenAI-protocol server, misbehaving as a small local model
does: a run-on first reply, then an empty stream when the context overflows.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from langchain_agentmem import AgentMemory
from tests.integration.test_chat_cli import environment
from tests.openai_server import ScriptedOpenAIServer, empty_stream

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]

RUN_ON = " ".join(["Porto is lovely and you moved there and"] * 2000) + " What next?"
"""About 16,000 words: far past any reply cap."""


class Terminal:
    """One ``agentmem chat`` in a detached tmux session of its own server."""

    def __init__(self, cwd: Path, env: dict[str, str], *args: str) -> None:
        self.socket = f"agentmem-test-{uuid.uuid4().hex[:8]}"
        command = " ".join(
            shlex.quote(a) for a in (sys.executable, "-m", "langchain_agentmem.cli", "chat", *args)
        )
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in environment(cwd, env).items())
        self._tmux(
            "new-session", "-d", "-x", "200", "-y", "50", "-c", str(cwd),
            f"env -i {exports} {command}; echo EXIT=$?; sleep 600",
        )  # fmt: skip

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True
        )
        return done.stdout

    def screen(self) -> str:
        """Everything the terminal shows, its scrollback included."""
        return self._tmux("capture-pane", "-p", "-J", "-S", "-5000")

    def wait_for(self, text: str, *, count: int = 1, timeout: float = 120.0) -> str:
        """The screen once ``text`` shows ``count`` times."""
        deadline = time.monotonic() + timeout
        while True:
            shown = self.screen()
            if shown.count(text) >= count:
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} x{count} never showed:\n{shown[-3000:]}")
            time.sleep(0.2)

    def type(self, line: str) -> None:
        """Type ``line`` and press Enter."""
        self._tmux("send-keys", "-l", line)
        self._tmux("send-keys", "Enter")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def session(tmp_path: Path, env: dict[str, str], thread: str, lines: list[str]) -> str:
    """Type ``lines`` into a chat on ``thread``, one reply at a time; the screen at exit."""
    term = Terminal(tmp_path, env, "--user", "priya", "--thread", thread)
    try:
        term.wait_for("you> ")
        for n, line in enumerate(lines, start=1):
            term.type(line)
            term.wait_for("you> ", count=n + 1)
        term.type("/quit")
        return term.wait_for("EXIT=")
    finally:
        term.close()


def test_a_person_at_a_terminal_meets_a_small_local_model(tmp_path: Path) -> None:
    replies = [RUN_ON, empty_stream(), "You live in Porto."]
    replies += ["I don't know."] * 8 + ["You moved to Porto last month."]
    with ScriptedOpenAIServer(*replies) as server:
        env = {"OPENAI_BASE_URL": server.url, "OPENAI_MODEL": "small-local"}
        first = session(
            tmp_path, env, "t0", ["I moved to Porto last month.", "Hello?", "Where do I live?"]
        )
        # The run-on is cut at the reply cap, the empty stream is one line, and the turn
        # after them gets its reply; no traceback reaches the person.
        assert "Traceback" not in first
        assert "cut at its length cap" in first
        assert "empty reply" in first
        assert "assistant> You live in Porto." in first
        assert "EXIT=1" in first  # a turn failed; the chat went on to the end

        for n in range(4):
            screen = session(
                tmp_path, env, f"t{n + 1}", ["Which city am I in now?", "where do i live"]
            )
            assert "Traceback" not in screen
        last = session(tmp_path, env, "t5", ["Where do I live?"])
        assert "assistant> You moved to Porto last month." in last
        # The memories the model is shown for the question hold the fact.
        assert '"I moved to Porto last month."' in server.requests[-1]["messages"][0]["content"]

    with AgentMemory(f"sqlite:///{tmp_path / 'home' / 'memory.db'}") as memory:
        records = memory.records("priya")
    # Each question is kept once: "where do i live" is the first thread's "Where do I live?"
    # asked again.
    assert [r.text for r in records] == [
        "I moved to Porto last month.",
        "Hello?",
        "Where do I live?",
        "Which city am I in now?",
    ]
    for record in records:  # the model's words ride along only as a short question
        assert len(str(record.metadata.get("reply_to", ""))) <= 1000
