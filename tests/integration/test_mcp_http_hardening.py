"""``agentmem mcp --http`` under pressure, as a real server process: requests that never
end, a flood of connections past the process's file limit, bodies over the limit, a tokens
file edited while serving; and what a client is told when the store fails."""

from __future__ import annotations

import inspect
import json
import logging
import select
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.testclient import TestClient

from langchain_agentmem import AgentMemory
from langchain_agentmem.errors import StoreError
from langchain_agentmem.integrations.mcp import http as mcp_http
from langchain_agentmem.integrations.mcp.http import MAX_BODY_BYTES, http_app
from tests.mcp_servers import HttpServer, jsonrpc

ALICE = "alice-Hx7Lm2Vp9Rs4Wz8Yb5Nc1Jd6"
CAROL = "carol-Qt3Fk8Zw1Xm6Bv9Ns4Lp2Rd7"
DAVE = "dave-Jc5Gy0Tn7Wq2Ks9Mh4Vb8Px3"
READ_TIMEOUT_S = 3
FILE_LIMIT = 256
"""The server's limit on open files (``ulimit -n``), as in the review that found the flood."""
CAP = FILE_LIMIT // 2
GUARD_S = 60.0
"""A guard against a hang on a busy machine, not a measure."""
LIMITED = f"""
import resource, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min({FILE_LIMIT}, soft), hard))
from langchain_agentmem.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """``agentmem mcp --http --read-timeout 3`` with at most 256 files open."""
    home = tmp_path_factory.mktemp("hardening")
    made = HttpServer(
        f"sqlite:///{home / 'memory.db'}", tokens={ALICE: "alice", CAROL: "carol"}, home=home
    )
    # python -m langchain_agentmem.cli mcp ...  ->  python -c LIMITED mcp ...
    made.args = [sys.executable, "-c", LIMITED, *made.args[3:]]
    made.args += ["--read-timeout", str(READ_TIMEOUT_S)]
    with made:
        yield made
    assert "Traceback" not in made.stderr()


def tokens_path(server: HttpServer) -> Path:
    return Path(server.args[server.args.index("--tokens") + 1])


def status(server: HttpServer, token: str) -> int:
    return jsonrpc(server.url, "tools/list", token=token).status_code


def connect(server: HttpServer, first: bytes = b"") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=GUARD_S)
    if first:
        sock.sendall(first)
    return sock


def closed_by_peer(sock: socket.socket) -> bool:
    """Whether the server closed ``sock`` (an end of file or a reset) by now."""
    if not select.select([sock], [], [], 0)[0]:
        return False
    try:
        return sock.recv(65536) == b""
    except ConnectionResetError:
        return True


def answer(sock: socket.socket) -> bytes:
    """What the server wrote before it closed ``sock`` (its answer)."""
    got = b""
    try:
        while chunk := sock.recv(65536):
            got += chunk
    except ConnectionResetError:
        pass
    return got


PARTIAL = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"


def request_head(server: HttpServer, token: str | None, *headers: str) -> bytes:
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{server.port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        *([f"Authorization: Bearer {token}"] if token else []),
        *headers,
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


# -- requests that never end ----------------------------------------------------------------
def test_requests_whose_headers_never_end_are_closed_after_the_read_timeout(
    server: HttpServer,
) -> None:
    silent = connect(server)  # sends nothing at all
    partial = connect(server, PARTIAL)  # headers that never end
    trickle = connect(server, b"POST /mcp HTTP/1.1\r\n")  # a header byte now and then
    socks = [silent, partial, trickle]
    start = time.monotonic()
    open_ = set(socks)
    while open_ and time.monotonic() - start < GUARD_S:
        for sock in list(open_):
            if closed_by_peer(sock):
                open_.discard(sock)
        if trickle in open_:
            try:
                trickle.sendall(b"X")
            except OSError:  # closed between the look and the send
                open_.discard(trickle)
        time.sleep(0.25)
    elapsed = time.monotonic() - start
    for sock in socks:
        sock.close()
    assert not open_, f"{len(open_)} connections still open after {elapsed:.0f}s"
    # Stated timing: closed after the read timeout, with room for a busy machine.
    assert elapsed < READ_TIMEOUT_S + 10
    assert status(server, ALICE) == 200


def test_a_request_body_that_never_ends_is_closed_too(server: HttpServer) -> None:
    sock = connect(server, request_head(server, ALICE, "Content-Length: 1000") + b'{"json')
    start = time.monotonic()
    while not closed_by_peer(sock) and time.monotonic() - start < GUARD_S:
        time.sleep(0.25)
    elapsed = time.monotonic() - start
    sock.close()
    assert elapsed < READ_TIMEOUT_S + 10


def test_an_upgrade_header_is_answered_as_plain_http_without_log_lines(
    server: HttpServer,
) -> None:
    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    upgrade = ("Connection: Upgrade, close", "Upgrade: websocket", f"Content-Length: {len(ping)}")
    for token, said in [(None, b"HTTP/1.1 401 "), (ALICE, b"HTTP/1.1 200 ")]:
        with connect(server, request_head(server, token, *upgrade) + ping) as sock:
            assert answer(sock).startswith(said)
    assert "upgrade" not in server.stderr().lower()


# -- bodies over the limit -------------------------------------------------------------------
def test_a_body_over_the_limit_is_refused_by_its_length_before_it_is_sent(
    server: HttpServer,
) -> None:
    too_long = f"Content-Length: {MAX_BODY_BYTES + 1}"
    with connect(server, request_head(server, ALICE, too_long)) as sock:
        got = answer(sock)  # no body sent: the server answers without waiting for it
    head, _, body = got.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 ") and b"connection: close" in head.lower()
    assert json.loads(body)["error"] == "request_too_large"
    with connect(server, request_head(server, None, too_long)) as sock:
        assert answer(sock).startswith(b"HTTP/1.1 401 ")  # the token is looked at first
    assert status(server, ALICE) == 200


def test_a_chunked_body_is_cut_where_it_crosses_the_limit(server: HttpServer) -> None:
    chunk = b"x" * 65536
    framed = b"%x\r\n%s\r\n" % (len(chunk), chunk)
    with connect(server, request_head(server, ALICE, "Transfer-Encoding: chunked")) as sock:
        sent = 0
        while sent <= MAX_BODY_BYTES:  # one chunk past the limit, and no last chunk
            sock.sendall(framed)
            sent += len(chunk)
        got = answer(sock)
    head, _, body = got.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 "), got[:200]
    assert json.loads(body)["error"] == "request_too_large"
    assert status(server, ALICE) == 200


class UnlimitedManager(StreamableHTTPSessionManager):
    """The SDK's session manager without its own body limit, as before mcp 1.29."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "max_request_body_size" in inspect.signature(super().__init__).parameters:
            kwargs["max_request_body_size"] = 1 << 40
        super().__init__(*args, **kwargs)


def test_the_body_limit_holds_whatever_the_sdks_own(
    memory: AgentMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp_http, "StreamableHTTPSessionManager", UnlimitedManager)
    headers = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {ALICE}"}
    big = b"x" * (MAX_BODY_BYTES + 1)

    def chunks() -> Iterator[bytes]:
        for at in range(0, len(big), 65536):
            yield big[at : at + 65536]

    with TestClient(http_app(memory, tokens={ALICE: "alice"})) as client:
        by_length = client.post("/mcp", content=big, headers=headers)
        streamed = client.post("/mcp", content=chunks(), headers=headers)
        small = client.post("/mcp", content=b"x" * 1000, headers=headers)
    assert by_length.status_code == streamed.status_code == 413
    assert streamed.json()["error"] == "request_too_large"
    assert small.status_code == 400  # not JSON: the SDK's own answer, the body read whole


# -- the tokens file, edited while the server runs ----------------------------------------
def replace_tokens(path: Path, data: object) -> None:
    new = path.with_suffix(".new")
    new.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    new.chmod(0o600)
    new.replace(path)


def until(check: Any, what: str) -> None:
    deadline = time.monotonic() + GUARD_S
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def test_tokens_are_read_again_when_the_file_changes(server: HttpServer) -> None:
    path = tokens_path(server)
    assert (status(server, CAROL), status(server, DAVE)) == (200, 401)
    replace_tokens(path, {ALICE: "alice", DAVE: "carol"})  # carol's token replaced
    until(lambda: status(server, CAROL) == 401, "the removed token still served")
    assert status(server, DAVE) == 200 and status(server, ALICE) == 200

    replace_tokens(path, "{not json")
    until(
        lambda: status(server, DAVE) == 200 and "was not loaded" in server.stderr(),
        "the broken file not noticed",
    )
    for _ in range(3):  # past the once-a-second look: still one line
        time.sleep(0.5)
        assert status(server, DAVE) == 200 and status(server, CAROL) == 401
    lines = [line for line in server.stderr().splitlines() if "was not loaded" in line]
    assert len(lines) == 1 and "is not JSON" in lines[0]
    assert "the 2 tokens read before stay in use" in lines[0]

    replace_tokens(path, {ALICE: "alice", CAROL: "carol"})
    until(lambda: status(server, CAROL) == 200, "the restored token not served")
    assert status(server, DAVE) == 401
    assert DAVE not in server.stderr() and CAROL not in server.stderr()


# -- a flood of connections -------------------------------------------------------------------
@pytest.mark.parametrize("flood", [200, 300], ids=["over-the-cap", "past-the-file-limit"])
def test_a_flood_of_slow_connections_leaves_a_token_holder_served(
    server: HttpServer, flood: int
) -> None:
    assert f"serving at most {CAP} connections, not 256" in server.stderr()
    before = len(server.stderr().splitlines())
    socks = [connect(server, PARTIAL) for _ in range(flood)]
    try:
        start = time.monotonic()
        assert status(server, ALICE) == 200  # while the flood's connections are open
        # Stated timing: answered before the flood's connections time out, so the cap,
        # not the timeout, made room (past the file limit the event loop accepts nothing
        # for a second).
        assert time.monotonic() - start < READ_TIMEOUT_S
        closed = sum(closed_by_peer(sock) for sock in socks)
        assert closed >= flood - CAP  # the oldest made room
    finally:
        for sock in socks:
            sock.close()
    lines = server.stderr().splitlines()[before:]
    assert not [line for line in lines if "out of system resource" in line]
    assert len([line for line in lines if "no file left" in line]) <= 1
    assert len(lines) < 10, lines


# -- what a client is told when the store fails ----------------------------------------------
def test_a_failing_store_is_a_short_answer_and_a_logged_detail(
    memory: AgentMemory, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    detail = (
        "store 'postgresql://postgres:***@127.0.0.1:5432/memdb' failed: "
        'relation "records" does not exist; INSERT INTO records (id, text) VALUES ($1, $2)'
    )

    async def failing(*args: Any, **kwargs: Any) -> Any:
        raise StoreError(detail)

    monkeypatch.setattr(memory, "aadd", failing)
    monkeypatch.setattr(memory, "asearch", failing)
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {ALICE}",
    }
    answers = []
    with (
        caplog.at_level(logging.ERROR, logger="langchain_agentmem.integrations.mcp.server"),
        TestClient(http_app(memory, tokens={ALICE: "alice"})) as client,
    ):
        for name, args in [
            ("save_memory", {"text": "I like tea."}),
            ("search_memory", {"query": "tea"}),
        ]:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
            body["params"] = {"name": name, "arguments": args}
            response: httpx.Response = client.post("/mcp", json=body, headers=headers)
            answers.append(response.json()["result"])
    for name, result in zip(["save_memory", "search_memory"], answers, strict=True):
        assert result["isError"] is True
        assert result["content"][0]["text"] == f"{name} failed in the server; try again later"
    said = json.dumps(answers)
    for secret in ("postgresql", "127.0.0.1", "5432", "memdb", "INSERT", "StoreError"):
        assert secret not in said
    logged = "\n".join(r.getMessage() + str(r.exc_info and r.exc_info[1]) for r in caplog.records)
    assert "save_memory failed" in logged and detail in logged
