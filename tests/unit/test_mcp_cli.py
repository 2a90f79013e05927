"""``agentmem mcp`` refuses what it cannot serve safely, before it opens a store."""

from __future__ import annotations

import json
import logging
import os
import shlex
import sys
from pathlib import Path

import pytest

from langchain_agentmem.cli import main
from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.integrations.mcp.http import (
    check_http,
    check_tokens,
    is_loopback,
    read_tokens,
)
from langchain_agentmem.integrations.mcp.tokens import MAKE_FILE, MAKE_TOKEN, TokenFile

TOKEN = "t0k3n-Qx7Lm2Vp9Rs4Wz8Yb5Nc1Jd6Hg"
OTHER = "0th3r-Fk2Jw9Tq4Zc7Xm1Bv8Ns5Lp3Rd"
NOBODY = 65534


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


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
def test_http_needs_tokens_and_says_how_to_make_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, host: str
) -> None:
    for args in (("--user", "alice"), ()):
        err = refused(capsys, tmp_path, "--http", "--host", host, *args)
        assert "--http needs --tokens FILE" in err and "on 127.0.0.1 too" in err
        assert err.endswith(f"make a tokens file with: {MAKE_FILE}\n")
        assert err.count("\n") == 1


def test_the_made_tokens_file_is_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the command writes tokens.json where it runs
    assert os.system(MAKE_FILE.replace("python", shlex.quote(sys.executable), 1)) == 0
    assert list(read_tokens(tmp_path / "tokens.json").values()) == ["alice"]


def test_plain_http_on_a_host_others_reach_needs_the_proxy_flag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = str(tokens_file(tmp_path, {TOKEN: "alice"}))
    err = refused(capsys, tmp_path, "--http", "--host", "0.0.0.0", "--tokens", path)
    assert "'0.0.0.0' is reachable from other machines" in err and "clear text" in err
    assert "--behind-tls-proxy" in err and TOKEN not in err
    check_http("0.0.0.0", tokens={TOKEN: "alice"}, behind_tls_proxy=True)  # told: served
    check_http("127.0.0.1", tokens={TOKEN: "alice"})


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
        ({"A" * 20: "alice"}, "has only 1 different characters (at least 8)"),
        ({OTHER: "alice", "passwordpassword": "bob"}, "token number 2 in tokens file"),
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
        (("--http",), "--http needs --tokens FILE"),
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
    sixteen = "abcdefgh" * 2  # 16 characters, 8 different: the least accepted
    path = tokens_file(tmp_path, {TOKEN: "alice", sixteen: "alice", OTHER: "bob"})
    assert read_tokens(path) == {TOKEN: "alice", sixteen: "alice", OTHER: "bob"}
    with pytest.raises(InvalidInputError, match="whitespace"):
        check_tokens({f" {TOKEN}": "alice"})
    with pytest.raises(InvalidInputError, match="only 7 different") as raised:
        check_tokens({"abcdefg" * 3: "alice"})
    assert MAKE_TOKEN in str(raised.value)


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


# -- the tokens file: where it lies, who owns it, what it holds ----------------------------
def test_a_link_in_a_folder_others_write_in_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    real = tokens_file(tmp_path, {TOKEN: "alice"})
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o770)
    (shared / "tokens.json").symlink_to(real)
    err = refused(capsys, tmp_path, "--http", "--tokens", str(shared / "tokens.json"))
    assert "is a symbolic link in a folder others can write in" in err
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "tokens.json").symlink_to(real)  # a link of one's own is followed
    assert read_tokens(private / "tokens.json") == {TOKEN: "alice"}


def test_a_folder_everyone_writes_in_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "open"
    folder.mkdir()
    path = tokens_file(folder, {TOKEN: "alice"})
    folder.chmod(0o1777)
    err = refused(capsys, tmp_path, "--http", "--tokens", str(path))
    assert "a folder everyone can write in (mode 1777)" in err


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file of another user takes root")
def test_a_file_or_folder_of_another_user_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tokens_file(tmp_path, {TOKEN: "alice"})
    os.chown(path, NOBODY, NOBODY)
    err = refused(capsys, tmp_path, "--http", "--tokens", str(path))
    assert f"belongs to another user (uid {NOBODY})" in err
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o755)
    mine = tokens_file(folder, {TOKEN: "alice"})
    os.chown(folder, NOBODY, NOBODY)
    err = refused(capsys, tmp_path, "--http", "--tokens", str(mine))
    assert f"a folder of another user (uid {NOBODY})" in err


def test_a_fifo_or_a_folder_is_refused_without_waiting(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    assert "is not a regular file" in refused(capsys, tmp_path, "--http", "--tokens", str(fifo))
    folder = tmp_path / "folder"
    folder.mkdir(mode=0o700)
    assert "is not a regular file" in refused(capsys, tmp_path, "--http", "--tokens", str(folder))
    err = refused(capsys, tmp_path, "--http", "--tokens", str(tmp_path / "missing.json"))
    assert "cannot be read (No such file" in err


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (json.dumps({TOKEN: "zoë"}, ensure_ascii=False).encode("latin-1"), "is not UTF-8 text"),
        (json.dumps({TOKEN: "alice"}).encode("utf-16"), "is not UTF-8 text (byte 0xff at"),
        (b"[" * 100_000 + b"]" * 100_000, "is not a flat JSON object"),
        (b'{"a": ' + b"9" * 5_000 + b"}", "is not a flat JSON object"),
    ],
)
def test_a_tokens_file_in_another_encoding_or_too_deep_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, raw: bytes, said: str
) -> None:
    path = tmp_path / "tokens.json"
    path.write_bytes(raw)
    path.chmod(0o600)
    err = refused(capsys, tmp_path, "--http", "--tokens", str(path))
    assert said in err and err.count("\n") == 1 and TOKEN not in err


def test_a_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_bytes(json.dumps({TOKEN: "alice"}).encode("utf-8-sig"))
    path.chmod(0o600)
    assert read_tokens(path) == {TOKEN: "alice"}


@pytest.mark.parametrize("port", ["70000", "-5", "0", "http"])
def test_a_port_out_of_range_is_an_argument_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, port: str
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["mcp", "--store", f"sqlite:///{tmp_path / 'never.db'}", "--http", "--port", port])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --port: expected a port number from 1 to 65535, got {port!r}" in err
    assert "Traceback" not in err and not (tmp_path / "never.db").exists()


# -- the tokens file re-read when it changes ----------------------------------------------
class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def replace_tokens(path: Path, data: object, mode: int = 0o600) -> None:
    """Write a new file and rename it over ``path`` (a new inode: seen as a change)."""
    new = path.with_suffix(".new")
    new.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    new.chmod(mode)
    new.replace(path)


def test_a_changed_tokens_file_is_read_again_within_a_second(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tokens_file(tmp_path, {TOKEN: "alice"})
    clock = Clock()
    tokens = TokenFile(path, clock=clock)
    assert tokens.user(TOKEN) == "alice" and tokens.user(OTHER) is None
    replace_tokens(path, {OTHER: "bob"})
    assert tokens.user(TOKEN) == "alice"  # not looked at again within the second
    clock.now = 1.0
    assert tokens.user(TOKEN) is None and tokens.user(OTHER) == "bob"
    assert tokens.users == {"bob"}
    path.write_text(json.dumps({TOKEN: "carol", OTHER: "bob"}), encoding="utf-8")  # in place
    clock.now = 2.0
    assert tokens.user(TOKEN) == "carol"


@pytest.mark.parametrize(
    ("data", "mode", "said"),
    [
        ("{not json", 0o600, "is not JSON"),
        ({TOKEN: "alice"}, 0o644, "is open to group or others (mode 0644)"),
        ({"A" * 20: "alice"}, 0o600, "only 1 different characters"),
        (None, 0o600, "cannot be read (No such file"),
    ],
)
def test_a_changed_tokens_file_that_is_refused_keeps_the_tokens_before(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, data: object, mode: int, said: str
) -> None:
    path = tokens_file(tmp_path, {TOKEN: "alice"})
    clock = Clock()
    tokens = TokenFile(path, clock=clock)
    if data is None:
        path.unlink()
    else:
        replace_tokens(path, data, mode)
    with caplog.at_level(logging.INFO, logger="langchain_agentmem.integrations.mcp.tokens"):
        for second in range(1, 5):
            clock.now = float(second)
            assert tokens.user(TOKEN) == "alice"
    (line,) = caplog.messages  # one line, not one a request
    assert said in line and "the 1 tokens read before stay in use" in line
    assert "A" * 20 not in line and TOKEN not in line
    replace_tokens(path, {OTHER: "alice"})
    clock.now = 5.0
    assert tokens.user(OTHER) == "alice" and tokens.user(TOKEN) is None
