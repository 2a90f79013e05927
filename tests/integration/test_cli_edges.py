"""The command line's edges: reading memories without exporting them, numbers checked while
parsing, one exit-code scheme, and a failing store or port told in one line."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from langchain_agentmem import AgentMemory, InvalidInputError, SentenceTransformerEmbeddings
from langchain_agentmem.cli import main
from tests.stores import HashEmbeddings

START = 1_767_225_600  # 2026-01-01 UTC


def _store(tmp_path: Path, hash_embeddings: HashEmbeddings, n: int = 5) -> str:
    from datetime import datetime, timezone

    url = f"sqlite:///{tmp_path / 'memory.db'}"
    with AgentMemory(url, embeddings=hash_embeddings) as memory:
        for i in range(n):
            when = datetime.fromtimestamp(START + i * 86_400, tz=timezone.utc)
            memory.add(f"Note number {i} about \x9b2J tea.", namespace="alice", timestamp=when)
    return url


def test_list_pages_through_a_users_memories_newest_first(
    tmp_path: Path, hash_embeddings: HashEmbeddings, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _store(tmp_path, hash_embeddings)
    assert main(["list", "--store", url, "--user", "alice", "--limit", "2"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len(lines) == 2
    assert '"Note number 4 about \\u009b2J tea."' in lines[0]  # quoted, never raw
    assert "Note number 3" in lines[1]
    assert "\x9b" not in out
    assert err.strip() == "(memories 1-2, newest first; the next page: --offset 2)"
    assert main(["list", "--store", url, "--user", "alice", "--limit", "2", "--offset", "4"]) == 0
    out, err = capsys.readouterr()
    assert [line.split("  ")[1][:16] for line in out.splitlines()] == ["[1 January 2026]"]
    assert err.strip() == "(memories 5-5, newest first)"


def test_search_shows_the_best_matches_with_scores(
    tmp_path: Path,
    embeddings: SentenceTransformerEmbeddings,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    with AgentMemory(url, embeddings=embeddings) as memory:
        for text in ("I live in Lyon.", "My cat is called Miso.", "I play the cello."):
            memory.add(text, namespace="alice")
    assert main(["search", "--store", url, "--user", "alice", "--k", "2", "my pet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    first = lines[0].split("  ")
    assert 0.0 < float(first[1]) <= 1.0
    assert first[2].endswith('unattributed: "My cat is called Miso."')


@pytest.mark.parametrize("command", ["list", "search", "export", "forget"])
def test_an_unknown_user_is_an_error_for_every_command(
    command: str,
    tmp_path: Path,
    hash_embeddings: HashEmbeddings,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = _store(tmp_path, hash_embeddings, n=1)
    argv = [command, "--store", url, "--user", "nobody"]
    argv += {"search": ["tea"], "export": ["--out", str(tmp_path / "x.jsonl")]}.get(
        command, ["--yes"] if command == "forget" else []
    )
    assert main(argv) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"agentmem {command}: 'nobody' has no records")
    with AgentMemory(url, embeddings=hash_embeddings) as memory:
        assert len(memory.records("alice")) == 1  # nothing erased, nothing written
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["list", "--user", "a", "--limit", "0"], "--limit: expected a whole number >= 1"),
        (["list", "--user", "a", "--offset", "-1"], "--offset: expected a whole number >= 0"),
        (["search", "--user", "a", "--k", "0", "tea"], "--k: expected a whole number >= 1"),
        (["mcp", "--user", "a", "--k", "0"], "--k: expected a whole number >= 1"),
        (["mcp", "--http", "--port", "99999"], "--port: expected a port number"),
        (["mcp", "--http", "--read-timeout", "0"], "--read-timeout: expected a whole number"),
        (["bench", "locomo", "--data", "d", "--out", "o", "--k", "x"], "--k"),
    ],
)
def test_numbers_are_checked_while_parsing(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "locomo", "--data", "missing.json", "--out", "r.json"],
        ["train", "--data", "missing.json", "--out", "policy"],
    ],
)
def test_a_missing_data_file_is_one_line_and_status_1(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"agentmem {argv[0]}: ") and "missing.json" in line


def test_an_unreachable_postgresql_fails_at_once_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    started = time.monotonic()
    url = "postgresql://postgres:s3cret@127.0.0.1:1/test"
    assert main(["list", "--store", url, "--user", "a"]) == 1
    assert time.monotonic() - started < 20  # the pool waited 30 s, with a warning a try
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("agentmem list: cannot connect to 'postgresql://postgres:***@")
    assert "s3cret" not in line


def test_a_busy_port_is_one_line_and_nothing_is_said_to_serve(tmp_path: Path) -> None:
    from langchain_agentmem.integrations.mcp.http import listening_socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(InvalidInputError, match=f"cannot listen on 127.0.0.1:{port}: the "):
            listening_socket("127.0.0.1", port)
        tokens = tmp_path / "tokens.json"
        tokens.write_text(json.dumps({"Pz4Kc8Vn1Mw6Rt0Yq3Xs7Lb5Jd9Gh2F": "alice"}))
        tokens.chmod(0o600)
        done = subprocess.run(
            [sys.executable, "-m", "langchain_agentmem.cli", "mcp", "--http", "--port",
             str(port), "--tokens", str(tokens), "--store", f"sqlite:///{tmp_path / 'm.db'}"],
            capture_output=True, text=True, timeout=120, check=False,
            env={**os.environ, "AGENTMEM_HOME": str(tmp_path / "home")},
        )  # fmt: skip
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert lines == [f"agentmem mcp: cannot listen on 127.0.0.1:{port}: the port is in use "
                     "(another server?); pass another --port"]  # fmt: skip


def test_bench_on_data_without_a_category_writes_and_prints_its_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    turns = [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "I got a puppy called Rex!"},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely, what breed is he?"},
        {"speaker": "Ann", "dia_id": "D1:3", "text": "A beagle, he is three months old."},
    ]
    data = [
        {
            "sample_id": "conv-x",
            "conversation": {
                "speaker_a": "Ann",
                "speaker_b": "Ben",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": turns,
            },
            "qa": [  # single-hop only: no multi-hop, temporal or open-domain question
                {
                    "question": "What breed?",
                    "answer": "beagle",
                    "evidence": ["D1:3"],
                    "category": 4,
                },
            ],
        }
    ]
    path = tmp_path / "one.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "r.json"
    argv = ["bench", "locomo", "--data", str(path), "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert "n/a" in table and "agentmem-hybrid" in table
    assert json.loads(out.read_text())["retrieval"]["agentmem-hybrid"]["questions"] == 1


def test_mcp_annotate_without_a_model_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env here
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    store = f"sqlite:///{tmp_path / 'm.db'}"
    assert main(["mcp", "--user", "a", "--store", store, "--annotate"]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("agentmem mcp: --annotate needs a chat model: set OPENAI_BASE_URL")
