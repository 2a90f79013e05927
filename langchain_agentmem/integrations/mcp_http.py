"""The MCP server over Streamable HTTP, at ``/mcp``: bearer tokens name the users.

A tokens file is a JSON object mapping each bearer token to the user (namespace) it
reaches, and must be readable by its owner alone (``chmod 600``). Every request needs
``Authorization: Bearer <token>``: without a valid one it is answered 401 before the
MCP layer sees it, so it changes nothing. Without tokens the server serves one user
and listens on a loopback address only.

The server is stateless (each POST stands alone, answered as JSON), so several server
processes on one PostgreSQL store can sit behind one reverse proxy.

Usage:
    .. code-block:: python

        from langchain_agentmem import AgentMemory
        from langchain_agentmem.integrations.mcp_http import read_tokens, serve_http

        tokens = read_tokens("tokens.json")  # {"<token>": "alice", ...}
        serve_http(AgentMemory("sqlite:///memory.db"), tokens=tokens, port=8000)
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import stat
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.integrations.mcp import memory_server
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.validation import check_namespace

PATH = "/mcp"
MIN_TOKEN_CHARS = 16
_USER_SCOPE = "agentmem.user"


def _digest(token: str) -> bytes:
    # Looked up by digest: the time a lookup takes says nothing about the tokens.
    return hashlib.sha256(token.encode("utf-8")).digest()


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for number, (key, value) in enumerate(pairs, 1):
        if key in seen:
            raise InvalidInputError(f"token number {number} appears twice; give each token once")
        seen[key] = value
    return seen


def check_tokens(tokens: object, *, source: str = "tokens") -> dict[str, str]:
    """``tokens`` checked: a mapping of bearer tokens (16+ characters) to user names."""
    if not isinstance(tokens, Mapping) or not tokens:
        raise InvalidInputError(
            f'{source} must be a non-empty JSON object {{"<token>": "<user>", ...}}, '
            f"got {type(tokens).__name__}"
        )
    checked: dict[str, str] = {}
    for number, (token, user) in enumerate(tokens.items(), 1):
        # Never the token itself in a message: it is a secret.
        if not isinstance(token, str) or len(token.strip()) < MIN_TOKEN_CHARS:
            raise InvalidInputError(
                f"token number {number} in {source} is shorter than {MIN_TOKEN_CHARS} "
                'characters; use a long random one (python -c "import secrets; '
                'print(secrets.token_urlsafe(32))")'
            )
        if token != token.strip():
            raise InvalidInputError(
                f"token number {number} in {source} starts or ends with whitespace; remove it"
            )
        checked[token] = check_namespace(user, what=f"the user of token number {number}")
    return checked


def read_tokens(path: str | os.PathLike[str]) -> dict[str, str]:
    """The bearer tokens of a tokens file, refused if others may read it.

    Raises:
        InvalidInputError: the file is readable (or writable) by group or others, is not
            a JSON object of tokens to users, or names a token too short.
    """
    file = Path(path)
    mode = stat.S_IMODE(file.stat().st_mode)
    if os.name == "posix" and mode & 0o077:
        raise InvalidInputError(
            f"tokens file {str(file)!r} is open to group or others (mode {mode:04o}); "
            f"make it private with: chmod 600 {file}"
        )
    try:
        data = json.loads(file.read_text(encoding="utf-8"), object_pairs_hook=_unique)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"tokens file {str(file)!r} is not JSON ({exc.msg}, line {exc.lineno}); "
            'write a JSON object {"<token>": "<user>", ...}'
        ) from None
    return check_tokens(data, source=f"tokens file {str(file)!r}")


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost``, ``127.0.0.1``, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class BearerAuth:
    """ASGI middleware: a request with a valid bearer token goes on, tagged with its user;
    any other is answered 401 (lifespan events pass)."""

    def __init__(self, app: ASGIApp, tokens: Mapping[str, str]) -> None:
        self.app = app
        self._users = {_digest(t): u for t, u in tokens.items()}

    def user(self, scope: Scope) -> str | None:
        """The user of the request's bearer token, or ``None``."""
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                scheme, _, token = value.decode("latin-1").partition(" ")
                if scheme.lower() == "bearer" and token.strip():
                    return self._users.get(_digest(token.strip()))
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websockets here
            await send({"type": "websocket.close", "code": 1008})
            return
        user = self.user(scope)
        if user is None:
            response = JSONResponse(
                {
                    "error": "invalid_token",
                    "error_description": "missing or unknown bearer token; send "
                    "'Authorization: Bearer <token>' with a token of the server's tokens file",
                },
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="agentmem"'},
            )
            await response(scope, receive, send)
            return
        scope[_USER_SCOPE] = user
        await self.app(scope, receive, send)


class _Endpoint:
    """The MCP endpoint as an ASGI app (so Starlette routes every method to it)."""

    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self.manager = manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.manager.handle_request(scope, receive, send)


def _request_user(request: Any) -> str:
    user = None if request is None else request.scope.get(_USER_SCOPE)
    if not isinstance(user, str):  # pragma: no cover - BearerAuth always sets it
        raise InvalidInputError("the request carries no user; send a bearer token")
    return user


def http_app(
    memory: AgentMemory,
    *,
    tokens: Mapping[str, str] | None = None,
    user: str | None = None,
    k: int = 4,
) -> ASGIApp:
    """The ASGI app serving ``memory``'s tools at ``/mcp``.

    Args:
        memory: The store, shared by every request.
        tokens: Bearer tokens to users (see :func:`read_tokens`).
        user: The one user served when there are no tokens (loopback only).
        k: Most memories ``search_memory`` returns.
    """
    if (tokens is None) == (user is None):
        raise InvalidInputError(
            "pass tokens (bearer tokens to users) or one user (loopback only), not "
            f"{'both' if user is not None else 'neither'}"
        )
    if tokens is not None:
        tokens = check_tokens(tokens)
        server = memory_server(memory, _request_user, k=k)
        # The token is what a browser on a rebinding DNS cannot send, so the Host header
        # is not checked: a reverse proxy may forward its own.
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    else:
        server = memory_server(memory, check_namespace(user, what="user"), k=k)
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
    manager = StreamableHTTPSessionManager(
        app=server, json_response=True, stateless=True, security_settings=security
    )

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    routes = [Route(PATH, endpoint=_Endpoint(manager))]
    app: ASGIApp = Starlette(routes=routes, lifespan=lifespan)
    return app if tokens is None else BearerAuth(app, tokens)


def check_http(host: str, *, tokens: Mapping[str, str] | None, user: str | None) -> None:
    """Refuse to serve a user without tokens on an address others can reach."""
    if tokens is None and not is_loopback(host):
        raise InvalidInputError(
            f"--host {host!r} is reachable from other machines and no --tokens file was "
            "given: anyone could read the memory; pass --tokens FILE, or serve on 127.0.0.1"
        )
    if tokens is not None and user is not None:
        raise InvalidInputError(
            f"--user {user!r} and --tokens both given; the tokens file names the users, drop --user"
        )
    if tokens is None and user is None:
        raise InvalidInputError("no user to serve; pass --user NAME (or --tokens FILE)")


def serve_http(
    memory: AgentMemory,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    tokens: Mapping[str, str] | None = None,
    user: str | None = None,
    k: int = 4,
) -> None:
    """Serve ``memory``'s tools at ``http://HOST:PORT/mcp`` until interrupted.

    Raises:
        InvalidInputError: a host others can reach without tokens, or tokens and a user.
    """
    import uvicorn

    check_http(host, tokens=tokens, user=user)
    app = http_app(memory, tokens=tokens, user=user, k=k)
    # log_config=None: the caller's logging (stderr) carries uvicorn's lines too.
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_config=None)).run()
