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
