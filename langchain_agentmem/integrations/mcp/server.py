"""An MCP server over the memory tools: what ``agentmem mcp`` serves.

The server gives an MCP client the three tools :func:`memory_tools` gives a LangChain
agent (``search_memory``, ``save_memory``, ``forget_memory``): the same names,
arguments, descriptions and answers, because each MCP call runs the LangChain tool
itself, as a tool call of the user the connection belongs to. A bad argument (too long,
NUL, empty, an id that is not there) comes back as a tool error result (``isError``)
with the memory's own message; the server goes on. A failure of the store comes back as
``<tool> failed in the server; try again later``: its detail goes to the server's log only.

The user is never an argument: over stdio the process serves one user
(``--user``); over HTTP the bearer token names the user
(:mod:`langchain_agentmem.integrations.mcp.http`).

Needs the ``mcp`` extra: ``pip install "langchain-agentmem[mcp]"``.

Usage:
    .. code-block:: python

        from langchain_agentmem import AgentMemory
        from langchain_agentmem.integrations.mcp.server import serve_stdio

        serve_stdio(AgentMemory("sqlite:///memory.db"), "alice")  # until stdin closes
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from io import TextIOWrapper
from typing import Any

import anyio
from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from pydantic import ValidationError

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError, missing_extra
from langchain_agentmem.integrations.tools import memory_tools
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.validation import check_namespace

try:
    from mcp import types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
except ModuleNotFoundError as exc:  # the mcp extra
    raise missing_extra("mcp", "The MCP server", exc) from None

log = logging.getLogger(__name__)

SERVER_NAME = "agentmem"
INSTRUCTIONS = (
    "Long-term memory of the user. search_memory before answering what you may have been "
    "told before; save_memory for a fact worth keeping; forget_memory with the id "
    "search_memory shows to delete one."
)
_USER_KEY = "user_id"

UserOf = Callable[[Any], str]
"""The user a request belongs to, from the HTTP request (``None`` over stdio)."""


def _version() -> str:
    try:
        return version("langchain-agentmem")
    except PackageNotFoundError:  # run from a source tree
        return "0"


def mcp_tool(tool: BaseTool) -> types.Tool:
    """``tool`` as MCP lists it: its name, description and the arguments a model passes."""
    schema = tool.tool_call_schema
    input_schema = (
        schema if isinstance(schema, dict) else schema.model_json_schema()  # type: ignore[union-attr]
    )
    return types.Tool(name=tool.name, description=tool.description, inputSchema=input_schema)


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=True)


def _bad_arguments(name: str, exc: ValidationError) -> str:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
    )
    return f"bad arguments for {name}: {problems}; nothing was changed"


def _runtime(user: str) -> ToolRuntime[Any, Any]:
    return ToolRuntime(
        state={},
        context=None,
        config={"configurable": {_USER_KEY: user}},
        stream_writer=lambda _chunk: None,
        tool_call_id="mcp",
        store=None,
    )


async def call_memory_tool(
    tool: BaseTool, arguments: dict[str, Any], user: str
) -> types.CallToolResult:
    """Run ``tool`` as the agent does, for ``user``: its answer, or its error as ``isError``."""
    call = {
        "type": "tool_call",
        "id": "mcp",
        "name": tool.name,
        # The runtime last: a client cannot pass its own (nor name another user).
        "args": {**arguments, "runtime": _runtime(user)},
    }
    try:
        message = await tool.ainvoke(call)
    except ValidationError as exc:
        return _error(_bad_arguments(tool.name, exc))
    except (InvalidInputError, InvalidTypeError) as exc:
        return _error(f"{exc}; nothing was changed")
    if not isinstance(message, ToolMessage):  # pragma: no cover - a tool call answers so
        return _error(f"{tool.name} answered {type(message).__name__}, not a tool message")
    text = message.content if isinstance(message.content, str) else str(message.content)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], isError=message.status == "error"
    )


def memory_server(memory: AgentMemory, user: str | UserOf, *, k: int = 4) -> Server[Any, Any]:
    """An MCP server (the SDK's low-level ``Server``) giving ``memory``'s tools.

    Args:
        memory: The store, shared by every connection.
        user: The one user served, or a function of the request naming its user.
        k: Most memories ``search_memory`` returns.
    """
    if isinstance(user, str):
        served = check_namespace(user, what="user")

        def one_user(_request: Any) -> str:
            return served

    user_of: UserOf = one_user if isinstance(user, str) else user
    tools = {t.name: t for t in memory_tools(memory, user_key=_USER_KEY, k=k)}
    listed = [mcp_tool(t) for t in tools.values()]
    server: Server[Any, Any] = Server(SERVER_NAME, version=_version(), instructions=INSTRUCTIONS)

    async def list_tools() -> list[types.Tool]:
        return listed

    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        tool = tools.get(name)
        if tool is None:
            return _error(f"unknown tool {name!r}; the tools are {', '.join(tools)}")
        try:
            return await call_memory_tool(tool, arguments, user_of(server.request_context.request))
        except Exception:  # the store failed, not the caller: keep serving
            # The detail (the store's address, the driver's SQL) is the operator's: the
            # log has it, the client gets a short answer.
            log.exception("%s failed", name)
            return _error(f"{name} failed in the server; try again later")

    server.list_tools()(list_tools)  # type: ignore[no-untyped-call]
    server.call_tool()(call_tool)
    return server


def _protocol_stdout() -> anyio.AsyncFile[str]:
    """The process's stdout for the protocol alone: whatever else writes there (a print,
    a library's progress bar, a C library) lands on stderr instead."""
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return anyio.wrap_file(TextIOWrapper(out, encoding="utf-8", write_through=True))


def serve_stdio(memory: AgentMemory, user: str, *, k: int = 4) -> None:
    """Serve ``user``'s memory over stdin/stdout until the client closes stdin.

    Only the protocol is written to stdout; logs and anything else go to stderr.
    """
    server = memory_server(memory, user, k=k)
    stdout = _protocol_stdout()

    async def run() -> None:
        async with stdio_server(stdout=stdout) as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)
