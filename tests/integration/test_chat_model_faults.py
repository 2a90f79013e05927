"""``agentmem chat`` against a server that misbehaves as small local models do."""

from __future__ import annotations

from pathlib import Path

import pytest

from langchain_agentmem import AgentMemory
from tests.integration.test_chat_cli import chat
from tests.openai_server import ScriptedOpenAIServer, dropped, empty_stream, stream_error

pytestmark = pytest.mark.slow

RUN_ON = " ".join(["I", "moved", "to", "Porto", "last", "month."] * 600) + " Where next?"


def test_a_runaway_reply_and_a_broken_stream_leave_the_thread_usable(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(
        RUN_ON, empty_stream(), stream_error("context exceeded"), dropped("Half a"), "Noted."
    ) as server:
        env = {"OPENAI_BASE_URL": server.url}
        lines = [
            "I moved to Porto last month.",
            "My new dentist is Dr. Lindqvist.",
            "I like trams.",
            "I am learning Portuguese.",
            "Where do I live?",
        ]
        done = chat(
            tmp_path,
            env,
            "\n".join(lines) + "\n",
            "--user",
            "ana",
            "--max-reply-tokens",
            "64",
            "--history-tokens",
            "200",
        )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1  # turns failed; the chat went on
    err = done.stderr.strip().splitlines()
    assert len(err) == 4, err  # the cut reply, then one line per failed turn
    assert "cut at its length cap" in err[0]
    assert "empty reply" in err[1] and "--history-tokens" in err[1]
    assert "context exceeded" in err[2]
    assert "dropped the connection" in err[3]
    assert "assistant> Noted." in done.stdout  # the turn after the failures got its reply
    for request in server.requests:
        assert request["max_completion_tokens"] == 64 and request["max_tokens"] == 64
    sent = [m.get("content") for m in server.requests[-1]["messages"]]
    # The 64-word run-on (about 360 characters, 90 tokens) and failed turns are not replayed
    # past the budget; the current turn always is.
    assert sent[-1] == "Where do I live?"
    assert sum(len(str(c or "")) for c in sent[1:]) <= 200 * 4 + 100
    with AgentMemory(f"sqlite:///{tmp_path / 'home' / 'memory.db'}") as memory:
        records = memory.records("ana")
    assert {r.text for r in records} >= set(lines)
    for record in records:  # the model's words ride along only as a short question
        assert len(str(record.metadata.get("reply_to", ""))) <= 300


def test_a_refused_key_still_ends_the_chat(tmp_path: Path) -> None:
    from tests.openai_server import error

    with ScriptedOpenAIServer(error(401, "Incorrect API key provided"), "Never.") as server:
        done = chat(tmp_path, {"OPENAI_BASE_URL": server.url}, "Hi!\nAgain?\n")
    assert done.returncode == 1 and "OPENAI_API_KEY" in done.stderr
    assert len(server.requests) == 1 and "Never." not in done.stdout
