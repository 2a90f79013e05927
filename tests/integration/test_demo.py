"""`agentmem demo` runs offline and recalls across sessions."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_demo_recalls_across_processes(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["AGENTMEM_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-m", "langchain_agentmem.cli", "demo"],
        cwd=tmp_path,  # no .env here: no model configured
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "no model configured" in out
    assert "ADD" in out and "keep_all" in out
    session_one, session_two = out.split("session 2", 1)
    assert "Xiaoming" in session_two.split("user: What's my name", 1)[0]
    # Thread A's prompts show its own turns once, never again as memories.
    assert "<recalled_memories>" not in session_one
    # Thread B is told the user's words, dated and attributed, in one fenced block.
    assert session_two.count("<recalled_memories>") == 1
    assert '] user: "Hi! My name is Xiaoming (小明) and I live in Lyon."' in session_two
    assert "recalled across sessions: yes" in out
    assert (tmp_path / "home" / "demo.db").exists()


def test_demo_keeps_what_another_store_holds(
    tmp_path: Path, embeddings: object, capsys: pytest.CaptureFixture[str]
) -> None:
    from langchain_agentmem import AgentMemory
    from langchain_agentmem.cli import main

    url = f"sqlite:///{tmp_path / 'memory.db'}"
    with AgentMemory(url, embeddings=embeddings) as mem:  # type: ignore[arg-type]
        mem.add("I live in Oslo.", namespace="demo-user")
        mem.add("My sister is Kari.", namespace="alice")
    assert main(["demo", "--store", url]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("agentmem demo: user 'demo-user' already has 1 records")
    assert "--user" in line
    with AgentMemory(url, embeddings=embeddings) as mem:  # type: ignore[arg-type]
        assert [r.text for r in mem.records("demo-user")] == ["I live in Oslo."]
        assert [r.text for r in mem.records("alice")] == ["My sister is Kari."]


def test_a_problem_the_command_line_can_name_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from langchain_agentmem.cli import main

    home = tmp_path / "not-a-folder"
    home.write_text("")
    monkeypatch.setenv("AGENTMEM_HOME", str(home))
    assert main(["demo"]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("agentmem demo: ") and "Not a directory" in line


def test_demo_counts_the_users_agentmem_chat_threads(
    tmp_path: Path, embeddings: object, capsys: pytest.CaptureFixture[str]
) -> None:
    from langchain_agentmem import AgentMemory
    from langchain_agentmem.cli import main
    from langchain_agentmem.integrations.runs import user_thread_id
    from tests.stores import save_chat_threads

    url = f"sqlite:///{tmp_path / 'memory.db'}"
    with AgentMemory(url, embeddings=embeddings):  # type: ignore[arg-type]
        pass  # the store exists; alice has no records nor messages in it
    save_chat_threads(url, [(user_thread_id("alice", t), "hi") for t in ("t1", "t2")])
    assert main(["demo", "--store", url, "--user", "alice"]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "0 records, 0 chat threads and 2 `agentmem chat` threads" in line
