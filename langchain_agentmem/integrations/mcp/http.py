"""The MCP server over Streamable HTTP, at ``/mcp``: bearer tokens name the users.

A tokens file (:mod:`langchain_agentmem.integrations.mcp.tokens`) maps each bearer token
to the user (namespace) it reaches; the server re-reads it when it changes. Every request
needs ``Authorization: Bearer <token>``: without a valid one it is answered 401 before the
MCP layer sees it, so it changes nothing. :func:`serve_http` serves with tokens only (a
port on loopback is open to every account of the machine), and on an address other
machines reach only when told that TLS ends in front of it.

Before the token is looked at, the server bounds what one client can hold: a request must
arrive whole (headers and body) within ``read_timeout`` seconds of the connection being
ready for it, else the connection is closed; at most ``max_connections`` are open (a new
one beyond closes the one that has waited longest for its request); a body over
``max_body_bytes`` is answered 413, by its ``Content-Length`` before it is read, or as it
streams.

The server is stateless (each POST stands alone, answered as JSON), so several server
processes on one PostgreSQL store can sit behind one reverse proxy.

Usage:
    .. code-block:: python

        from langchain_agentmem import AgentMemory
        from langchain_agentmem.integrations.mcp.http import TokenFile, serve_http

        tokens = TokenFile("tokens.json")  # {"<token>": "alice", ...}, chmod 600
        serve_http(AgentMemory("sqlite:///memory.db"), tokens=tokens, port=8000)
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import logging
import socket
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

from langchain_agentmem.errors import InvalidInputError, missing_extra
from langchain_agentmem.integrations.mcp.server import memory_server
from langchain_agentmem.integrations.mcp.tokens import (
    MAKE_FILE,
    MIN_TOKEN_CHARS,
    TokenFile,
    Tokens,
    check_tokens,
    read_tokens,
)
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.validation import check_namespace

try:
    import h11
    import uvicorn
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route
    from starlette.types import ASGIApp, Message, Receive, Scope, Send
    from uvicorn.protocols.http.h11_impl import H11Protocol
except ModuleNotFoundError as exc:  # the mcp extra
    raise missing_extra("mcp", "The MCP server over HTTP", exc) from None

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_CONNECTIONS",
    "MIN_TOKEN_CHARS",
    "PATH",
    "READ_TIMEOUT_S",
    "BearerAuth",
    "BodyLimit",
    "TokenFile",
    "Tokens",
    "check_http",
    "check_tokens",
    "http_app",
    "is_loopback",
    "read_tokens",
    "serve_http",
]

log = logging.getLogger(__name__)

PATH = "/mcp"
MAX_BODY_BYTES = 4 * 1024 * 1024
"""Largest request body served (4 MiB); a larger one is answered 413."""
READ_TIMEOUT_S = 10
"""Seconds a client has to send a whole request once its connection is ready for one."""
MAX_CONNECTIONS = 256
"""Most connections open at once: at most half the files the process may open."""
NOTE_EVERY_S = 60.0
"""At most one log line this often about closed connections (a flood writes no more)."""
_USER_SCOPE = "agentmem.user"
_ACCEPT_FAILED = "socket.accept() out of system resource"


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

    def __init__(self, app: ASGIApp, tokens: Tokens) -> None:
        self.app = app
        self.tokens = tokens

    def user(self, scope: Scope) -> str | None:
        """The user of the request's bearer token, or ``None``."""
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                scheme, _, token = value.decode("latin-1").partition(" ")
                if scheme.lower() == "bearer" and token.strip():
                    return self.tokens.user(token.strip())
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


def _too_large(max_bytes: int) -> JSONResponse:
    return JSONResponse(
        {
            "error": "request_too_large",
            "error_description": f"the request body is over {max_bytes:,} bytes; send less",
        },
        status_code=413,
        headers={"Connection": "close"},  # the rest of the body is not read
    )


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:  # pragma: no cover - the HTTP parser refuses it first
                return None
    return None


class BodyLimit:
    """ASGI middleware: a request body over ``max_bytes`` is answered 413.

    A ``Content-Length`` over the limit is answered before the body is read; a body
    without one (chunked) is counted as it arrives and answered where it crosses the
    limit. The app is called with the whole body once it is in (the MCP endpoint reads
    it whole anyway), so it never sees a body cut short.
    """

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await _too_large(self.max_bytes)(scope, receive, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away before its body was in: no one to answer
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await _too_large(self.max_bytes)(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        whole: Message | None = {"type": "http.request", "body": bytes(body), "more_body": False}

        async def replay() -> Message:
            nonlocal whole
            if whole is None:
                return await receive()  # what comes after the body: a disconnect
            message, whole = whole, None
            return message

        await self.app(scope, replay, send)


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
    tokens: Mapping[str, str] | Tokens | None = None,
    user: str | None = None,
    k: int = 4,
    max_body_bytes: int = MAX_BODY_BYTES,
) -> ASGIApp:
    """The ASGI app serving ``memory``'s tools at ``/mcp``.

    Args:
        memory: The store, shared by every request.
        tokens: Bearer tokens to users: a mapping, or a :class:`TokenFile` (re-read when
            the file changes).
        user: The one user served when there are no tokens: for an app in the same
            process only (a test's client); :func:`serve_http` does not serve it.
        k: Most memories ``search_memory`` returns.
        max_body_bytes: Largest request body served; a larger one is answered 413.
    """
    if (tokens is None) == (user is None):
        raise InvalidInputError(
            "pass tokens (bearer tokens to users) or one user (in process only), not "
            f"{'both' if user is not None else 'neither'}"
        )
    if tokens is not None:
        tokens = tokens if isinstance(tokens, Tokens) else Tokens(tokens)
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
    app: ASGIApp = BodyLimit(Starlette(routes=routes, lifespan=lifespan), max_body_bytes)
    return app if tokens is None else BearerAuth(app, tokens)


def check_http(
    host: str,
    *,
    tokens: object,
    user: str | None = None,
    behind_tls_proxy: bool = False,
) -> None:
    """Refuse to serve without tokens, or in clear text on an address others can reach.

    Args:
        host: The address to listen on.
        tokens: The tokens, or the tokens file (``None``: none given).
        user: The one user asked for (``--user``), refused beside tokens.
        behind_tls_proxy: TLS ends in front of ``host``.

    Raises:
        InvalidInputError: no tokens (a port on loopback is open to every account of the
            machine); tokens and a user; a host other machines reach, unless
            ``behind_tls_proxy`` says TLS ends in front of it.
    """
    if tokens is not None and user is not None:
        raise InvalidInputError(
            f"--user {user!r} and --tokens both given; the tokens file names the users, drop --user"
        )
    if tokens is None:
        raise InvalidInputError(
            "--http needs --tokens FILE: without tokens any account on this machine could "
            "read and erase the memory through the port, on 127.0.0.1 too; make a tokens "
            f"file with: {MAKE_FILE}"
        )
    if not is_loopback(host) and not behind_tls_proxy:
        raise InvalidInputError(
            f"--host {host!r} is reachable from other machines and the server speaks plain "
            "HTTP, so bearer tokens would cross the network in clear text; serve on "
            "127.0.0.1 behind a proxy that terminates TLS, or pass --behind-tls-proxy when "
            "TLS already ends in front of this address"
        )


class _Guard:
    """What the connections of one server share: the read deadline, the connection cap,
    the connections waiting for a request (oldest first), and the rate of log lines."""

    def __init__(self, read_timeout: float, max_connections: int) -> None:
        self.read_timeout = read_timeout
        self.max_connections = max_connections
        self.waiting: dict[GuardedH11Protocol, None] = {}
        self.slow = self.over_cap = 0
        self._noted = self._accept_noted = -NOTE_EVERY_S

    def closed(self, *, slow: bool) -> None:
        """Count a connection closed; log the counts at most once a minute."""
        if slow:
            self.slow += 1
        else:
            self.over_cap += 1
        now = time.monotonic()
        if now - self._noted >= NOTE_EVERY_S:
            self._noted = now
            log.warning(
                "closed %d connections that sent no whole request within %gs and %d beyond "
                "the cap of %d open connections (one such line a minute at most)",
                self.slow,
                self.read_timeout,
                self.over_cap,
                self.max_connections,
            )
            self.slow = self.over_cap = 0

    def loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """The event loop's error handler: out of files while accepting is one line a
        minute (the loop retries each second, with a traceback each time otherwise)."""
        if context.get("message") != _ACCEPT_FAILED:
            loop.default_exception_handler(context)
            return
        now = time.monotonic()
        if now - self._accept_noted >= NOTE_EVERY_S:
            self._accept_noted = now
            log.warning(
                "no file left to accept a connection (%s); lower --max-connections or raise "
                "the limit on open files (ulimit -n); one such line a minute at most",
                context.get("exception"),
            )


def _is_open(connection: object) -> bool:
    transport = getattr(connection, "transport", None)
    return transport is not None and not transport.is_closing()


class GuardedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, bounded: a request must arrive whole within the
    guard's read timeout, and a connection beyond its cap closes the one that has waited
    longest for a request (or itself, when every other one is being answered)."""

    guard: _Guard
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()
        cap = self.guard.max_connections
        # Those being dropped stay in the set until the loop's next turn: not counted.
        if len(self.connections) > cap and sum(_is_open(c) for c in self.connections) > cap:
            waiting = (c for c in self.guard.waiting if c is not self and _is_open(c))
            self.guard.closed(slow=False)
            next(waiting, self)._drop()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._deadline is not None and not self._waiting():
            self._disarm()  # the request is in: the app answers it

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self._waiting():
            self._arm()  # the next request, or the rest of this one's body
        else:
            self._disarm()  # closing, or a request sent ahead is in already

    def _unsupported_upgrade_warning(self) -> None:
        """No websockets here: an upgrade header is ignored without two log lines a
        request (the request is answered as plain HTTP)."""

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _waiting(self) -> bool:
        return self.conn.their_state in (h11.IDLE, h11.SEND_BODY)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.guard.read_timeout, self._expire)
        self.guard.waiting[self] = None

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self.guard.waiting.pop(self, None)

    def _expire(self) -> None:
        self._deadline = None
        if self._waiting() and not self.transport.is_closing():  # never a request in hand
            self.guard.closed(slow=True)
            self._drop()

    def _drop(self) -> None:
        # abort, not close: a client that reads nothing must not keep the socket open.
        self._disarm()
        self.transport.abort()


def connection_cap(requested: int = MAX_CONNECTIONS) -> int:
    """``requested``, lowered to half the files this process may open (``ulimit -n``).

    The other half is for the store, the model and the log, and for the connections a
    flood brings in at once before the cap closes them: the event loop accepts all it
    can in one go, and, out of files, accepts nothing for a second.
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Windows
        return requested
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft // 2 >= requested:
        return requested
    cap = max(soft // 2, 4)
    log.warning(
        "serving at most %d connections, not %d: this process may open %d files "
        "(ulimit -n); raise that limit to serve more",
        cap,
        requested,
        soft,
    )
    return cap


class _Server(uvicorn.Server):
    """uvicorn's server, with the guard's handler of the event loop's errors, telling
    ``on_listen`` once it listens."""

    def __init__(
        self, config: uvicorn.Config, guard: _Guard, on_listen: Callable[[], None] | None
    ) -> None:
        super().__init__(config)
        self.guard = guard
        self.on_listen = on_listen

    async def startup(self, sockets: Any = None) -> None:
        asyncio.get_running_loop().set_exception_handler(self.guard.loop_exception)
        await super().startup(sockets=sockets)
        if self.started and self.on_listen is not None:
            self.on_listen()


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port``, for the server to listen on.

    Raises:
        InvalidInputError: the address is not this machine's, or the port is taken (one
            line, before anything is served).
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise InvalidInputError(
            f"--host {host!r} is no address of this machine ({exc.strerror}); pass an "
            "address to listen on, such as 127.0.0.1"
        ) from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        taken = exc.errno == errno.EADDRINUSE
        raise InvalidInputError(
            f"cannot listen on {host}:{port}: "
            + (
                "the port is in use (another server?); pass another --port"
                if taken
                else f"{exc.strerror}; pass another --host or --port"
            )
        ) from None
    sock.set_inheritable(True)
    return sock


def serve_http(
    memory: AgentMemory,
    *,
    tokens: Mapping[str, str] | Tokens,
    host: str = "127.0.0.1",
    port: int = 8000,
    k: int = 4,
    behind_tls_proxy: bool = False,
    read_timeout: float = READ_TIMEOUT_S,
    max_connections: int = MAX_CONNECTIONS,
    max_body_bytes: int = MAX_BODY_BYTES,
    on_listen: Callable[[], None] | None = None,
) -> None:
    """Serve ``memory``'s tools at ``http://HOST:PORT/mcp`` until interrupted.

    Args:
        memory: The store, shared by every request.
        tokens: Bearer tokens to users: a mapping, or a :class:`TokenFile` (re-read when
            the file changes).
        host: The address to listen on; one other machines reach needs
            ``behind_tls_proxy``.
        port: The port to listen on.
        k: Most memories ``search_memory`` returns.
        behind_tls_proxy: TLS ends in front of ``host`` (a proxy): serve plain HTTP on an
            address other machines reach.
        read_timeout: Seconds a client has to send a whole request (headers and body)
            once its connection is ready for one; a slower one is closed.
        max_connections: Most connections open at once (lowered to fit ``ulimit -n``).
        max_body_bytes: Largest request body served; a larger one is answered 413.
        on_listen: Called once the server listens (to say where it serves).

    Raises:
        InvalidInputError: no tokens, a host others can reach without
            ``behind_tls_proxy``, or an address that cannot be listened on (a port in use).
    """
    check_http(host, tokens=tokens, behind_tls_proxy=behind_tls_proxy)
    sock = listening_socket(host, port)
    app = http_app(memory, tokens=tokens, k=k, max_body_bytes=max_body_bytes)
    bound = _Guard(read_timeout, connection_cap(max_connections))

    class Protocol(GuardedH11Protocol):
        guard = bound

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=Protocol,  # h11 with the guard, whatever else is installed (httptools)
        ws="none",  # no websockets to upgrade to
        lifespan="on",
        log_config=None,  # the caller's logging (stderr) carries uvicorn's lines too
    )
    try:
        _Server(config, bound, on_listen).run(sockets=[sock])
    finally:
        sock.close()
