"""``agentmem mcp`` refuses what it cannot serve safely, before it opens a store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langchain_agentmem.cli import main
from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.integrations.mcp_http import check_tokens, is_loopback, read_tokens

TOKEN = "t" * 32


def tokens_file(tmp_path: Path, data: object, mode: int = 0o600) -> Path:
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    path.chmod(mode)
    return path


def refused(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> str:
    """Run ``agentmem mcp ARGS``: it must end with code 1, one line on stderr, no store."""
    store = tmp_path / "never.db"
    assert main(["mcp", "--store", f"sqlite:///{store}", *args]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("agentmem mcp: ")
    assert not store.exists()
    return err


def test_a_host_others_reach_needs_tokens(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    err = refused(capsys, tmp_path, "--http", "--host", "0.0.0.0", "--user", "alice")
    assert "'0.0.0.0' is reachable from other machines" in err and "--tokens" in err


def test_a_tokens_file_others_can_read_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tokens_file(tmp_path, {TOKEN: "alice"}, mode=0o644)
    err = refused(capsys, tmp_path, "--http", "--tokens", str(path))
    assert "mode 0644" in err and f"chmod 600 {path}" in err
    assert TOKEN not in err


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ("{not json", "is not JSON"),
        (["alice"], "non-empty JSON object"),
        ({}, "non-empty JSON object"),
        ({"short": "alice"}, "token number 1 in tokens file"),
        ({TOKEN: ""}, "the user of token number 1"),
        (f'{{"{TOKEN}": "alice", "{TOKEN}": "bob"}}', "token number 2 appears twice"),
    ],
)
def test_a_bad_tokens_file_is_refused_without_showing_tokens(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, data: object, said: str
) -> None:
    err = refused(capsys, tmp_path, "--http", "--tokens", str(tokens_file(tmp_path, data)))
    assert said in err and TOKEN not in err


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ((), "pass --user NAME"),
        (("--user", "alice", "--k", "0"), "k must be >= 1"),
        (("--http",), "no user to serve"),
    ],
)
def test_what_stdio_and_http_need(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    assert said in refused(capsys, tmp_path, *args)


def test_tokens_and_a_user_or_tokens_on_stdio_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = str(tokens_file(tmp_path, {TOKEN: "alice"}))
    assert "drop --user" in refused(capsys, tmp_path, "--http", "--tokens", path, "--user", "bob")
    assert "--tokens is for --http" in refused(capsys, tmp_path, "--tokens", path, "--user", "b")


def test_read_tokens(tmp_path: Path) -> None:
    path = tokens_file(tmp_path, {TOKEN: "alice", "u" * 16: "alice", "v" * 20: "bob"})
    assert read_tokens(path) == {TOKEN: "alice", "u" * 16: "alice", "v" * 20: "bob"}
    with pytest.raises(InvalidInputError, match="whitespace"):
        check_tokens({f" {TOKEN}": "alice"})


@pytest.mark.parametrize(
    ("host", "local"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("127.0.0.2", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.5", False),
        ("example.com", False),
    ],
)
def test_is_loopback(host: str, local: bool) -> None:
    assert is_loopback(host) is local
