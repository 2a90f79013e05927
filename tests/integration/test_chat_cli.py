"""``agentmem chat`` in a subprocess, talking to the local OpenAI-protocol server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.openai_server import ScriptedOpenAIServer

pytestmark = pytest.mark.slow


def chat(
    cwd: Path, env: dict[str, str], stdin: str, *args: str
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENTMEM_"))}
    base.update({"AGENTMEM_HOME": str(cwd / "home"), "HF_HUB_OFFLINE": "1"}, **env)
    return subprocess.run(
        [sys.executable, "-m", "langchain_agentmem.cli", "chat", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=base,
        timeout=180,
    )


def test_chat_remembers_across_threads(tmp_path: Path) -> None:
    with ScriptedOpenAIServer("Nice, Miso is a lovely name.", "Your cat is Miso.") as server:
        env = {"OPENAI_BASE_URL": server.url, "OPENAI_MODEL": "scripted-model"}
        first = chat(tmp_path, env, "My cat is called Miso.\n/memories\n", "--user", "alice")
        assert first.returncode == 0, first.stderr
        assert "assistant> Nice, Miso is a lovely name." in first.stdout
        assert "- My cat is called Miso." in first.stdout
        assert "(2 memories)" in first.stdout

        second = chat(
            tmp_path, env, "What is my cat's name?\n/quit\n", "--user", "alice", "--thread", "t2"
        )
        assert second.returncode == 0, second.stderr
        assert "assistant> Your cat is Miso." in second.stdout
        body = server.requests[-1]
        assert body["model"] == "scripted-model"
        assert body["stream"] is True
        assert "My cat is called Miso." in body["messages"][0]["content"]
        assert [m["role"] for m in body["messages"]] == ["system", "user"]

        # Another user recalls nothing of alice's.
        third = chat(tmp_path, env, "What is my cat's name?\n", "--user", "bob")
        assert third.returncode == 0, third.stderr
        assert "Miso" not in server.prompt_text(-1)


def test_chat_reads_dotenv(tmp_path: Path) -> None:
    with ScriptedOpenAIServer("Hello from the server.") as server:
        (tmp_path / ".env").write_text(f"OPENAI_BASE_URL={server.url}\nOPENAI_MODEL=from-dotenv\n")
        done = chat(tmp_path, {}, "Hi!\n")
        assert done.returncode == 0, done.stderr
        assert "assistant> Hello from the server." in done.stdout
        assert server.requests[-1]["model"] == "from-dotenv"


def test_chat_without_a_model_says_how_to_configure_one(tmp_path: Path) -> None:
    done = chat(tmp_path, {}, "Hi!\n")
    assert done.returncode == 2
    assert (
        "no" in done.stderr and "OPENAI_BASE_URL" in done.stderr and "OPENAI_API_KEY" in done.stderr
    )
    assert done.stdout == ""
