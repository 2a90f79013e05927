"""``agentmem mcp`` as a real subprocess, and the clients tests and benchmarks talk to it with.

Usage:
    .. code-block:: python

        from tests.mcp_servers import HttpServer, http_session

        token = secrets.token_urlsafe(32)
        with HttpServer(store_url, tokens={token: "alice"}, home=tmp_path) as server:
            async with http_session(server.url, token) as session:
                await session.call_tool("save_memory", {"text": "I like tea."})
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 180.0
"""Loading torch and the model on a busy machine; a guard against a hang, not a measure."""


def server_env(home: Path) -> dict[str, str]:
    """The environment a server process gets: this checkout first on the path, offline."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {
        **os.environ,
        "PYTHONPATH": path,
        "HF_HUB_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
        "AGENTMEM_HOME": str(home),
    }


def mcp_command(*args: str) -> list[str]:
    """``agentmem mcp ARGS`` as a command line of this interpreter."""
    return [sys.executable, "-m", "langchain_agentmem.cli", "mcp", *args]


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def write_tokens(path: Path, tokens: dict[str, str]) -> Path:
    """A tokens file only its owner can read."""
    path.write_text(json.dumps(tokens), encoding="utf-8")
    path.chmod(0o600)
    return path


class HttpServer:
    """``agentmem mcp --http`` on a free loopback port, until the ``with`` block ends."""

    def __init__(self, store: str, *, tokens: dict[str, str], home: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        tokens_file = write_tokens(home / f"tokens-{self.port}.json", tokens)
        self.args = mcp_command(
            "--http", "--port", str(self.port), "--store", store, "--tokens", str(tokens_file)
        )
        self.stdout_path = home / f"stdout-{self.port}.txt"
        self.stderr_path = home / f"stderr-{self.port}.txt"
        self.process: subprocess.Popen[bytes] | None = None
        self._files: list[IO[bytes]] = []

    def start(self) -> HttpServer:
        """Start the process; return once it answers HTTP."""
        self._files = [self.stdout_path.open("wb"), self.stderr_path.open("wb")]
        self.process = subprocess.Popen(
            self.args,
            env=server_env(self.home),
            stdin=subprocess.DEVNULL,
            stdout=self._files[0],
            stderr=self._files[1],
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited: {self.stderr()}")
            try:
                httpx.get(self.url, timeout=2)
                return self
            except httpx.TransportError:
                time.sleep(0.2)
        raise RuntimeError(f"the server did not answer in {START_TIMEOUT_S}s: {self.stderr()}")

    def stderr(self) -> str:
        """What the server wrote to stderr so far."""
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def stdout(self) -> str:
        """What the server wrote to stdout so far."""
        return self.stdout_path.read_text(encoding="utf-8", errors="replace")

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        """Interrupt the server (as Ctrl-C does) and wait for it."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.kill()
        for f in self._files:
            f.close()

    def __enter__(self) -> HttpServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


@asynccontextmanager
async def http_session(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    """The SDK's Streamable HTTP client, initialized, sending ``token`` as bearer."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with (
        httpx.AsyncClient(headers=headers, timeout=120) as http,
        streamable_http_client(url, http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def stdio_session(
    store: str, user: str, home: Path, errlog: IO[str], *extra: str
) -> AsyncIterator[ClientSession]:
    """The SDK's stdio client, spawning ``agentmem mcp --store STORE --user USER``."""
    params = StdioServerParameters(
        command=sys.executable,
        args=mcp_command("--store", store, "--user", user, *extra)[1:],
        env=server_env(home),
    )
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def jsonrpc(
    url: str, method: str, params: dict[str, Any] | None = None, *, token: str | None
) -> httpx.Response:
    """One raw JSON-RPC request, POSTed as any HTTP client would."""
    headers = {"Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    return httpx.post(url, json=body, headers=headers, timeout=120)
