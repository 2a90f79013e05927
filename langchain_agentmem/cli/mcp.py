"""``agentmem mcp``: the memory tools served over MCP."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from langchain_agentmem.cli.args import STORE_HELP, add_command, port_number, positive_int


def _annotating_model_if(wanted: bool) -> Any:
    """The environment's chat model when ``wanted`` (for ``AgentMemory(model=...)``).

    Raises:
        InvalidInputError: wanted, but the environment names no model.
    """
    if not wanted:
        return None
    from langchain_agentmem import models
    from langchain_agentmem.errors import InvalidInputError

    model = models.annotating_model()
    if model is None:
        raise InvalidInputError(
            "--annotate needs a chat model: set OPENAI_BASE_URL (a local server) or "
            "OPENAI_API_KEY, in the environment or .env"
        )
    return model


def _mcp(args: argparse.Namespace) -> int:
    import logging

    from langchain_agentmem.errors import InvalidInputError
    from langchain_agentmem.integrations.mcp import http as mcp_http  # without the extra: one line
    from langchain_agentmem.integrations.mcp import server as mcp
    from langchain_agentmem.validation import check_k

    # Everything is checked before the store and the model are opened (seconds).
    k = check_k(args.k)
    tokens = None
    if not args.http:
        if args.tokens is not None or args.user is None:
            raise InvalidInputError(
                "stdio serves one user: pass --user NAME (--tokens is for --http)"
            )
    else:
        mcp_http.check_http(
            args.host, tokens=args.tokens, user=args.user, behind_tls_proxy=args.behind_tls_proxy
        )
        tokens = mcp_http.TokenFile(args.tokens)
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("mcp").setLevel(logging.WARNING)  # a line per request otherwise
    from langchain_agentmem.backends.url import default_store_url, redact_url
    from langchain_agentmem.memory import AgentMemory

    shown = redact_url(default_store_url() if args.store is None else args.store)
    with AgentMemory(args.store, model=_annotating_model_if(args.annotate)) as memory:
        if tokens is None:
            print(f"agentmem mcp: serving {args.user!r} from {shown} over stdio", file=sys.stderr)
            mcp.serve_stdio(memory, args.user, k=k)
            return 0

        def listening() -> None:  # said once it listens: a port in use is one line instead
            print(
                f"agentmem mcp: serving {len(tokens.users)} users by token from {shown} at "
                f"http://{args.host}:{args.port}{mcp_http.PATH}",
                file=sys.stderr,
                flush=True,
            )

        mcp_http.serve_http(
            memory,
            tokens=tokens,
            host=args.host,
            port=args.port,
            k=k,
            behind_tls_proxy=args.behind_tls_proxy,
            read_timeout=args.read_timeout,
            max_connections=args.max_connections,
            on_listen=listening,
        )
    return 0


def add_parsers(sub: Any) -> None:
    """``agentmem mcp``."""
    mcp = add_command(
        sub,
        "mcp",
        help="serve the memory tools over MCP: stdio for one user, --http with tokens for many",
        description="Serve search_memory, save_memory and forget_memory to MCP clients. "
        "stdio (the default) serves --user; --http serves http://HOST:PORT/mcp, each bearer "
        "token of --tokens reaching its own user (the file is re-read when it changes).",
        examples=[
            "agentmem mcp --user alice",
            "agentmem mcp --http --port 8000 --tokens tokens.json",
        ],
    )
    mcp.add_argument("--store", default=None, help=STORE_HELP)
    mcp.add_argument("--user", default=None, help="whose memory (stdio)")
    mcp.add_argument(
        "--k", type=positive_int, default=4, help="most memories search_memory returns"
    )
    mcp.add_argument("--http", action="store_true", help="Streamable HTTP instead of stdio")
    mcp.add_argument(
        "--tokens",
        default=None,
        help='JSON file {"<bearer token>": "<user>", ...}, mode 600 (needed by --http)',
    )
    mcp.add_argument("--host", default="127.0.0.1", help="address to listen on (--http)")
    mcp.add_argument("--port", type=port_number, default=8000, help="port to listen on (--http)")
    mcp.add_argument(
        "--behind-tls-proxy",
        action="store_true",
        help="TLS ends in a proxy in front of --host: allow a host other machines reach",
    )
    mcp.add_argument(
        "--read-timeout",
        type=positive_int,
        default=10,
        help="seconds a client has to send a whole request; a slower connection is closed",
    )
    mcp.add_argument(
        "--max-connections",
        type=positive_int,
        default=256,
        help="most connections open at once (lowered to fit ulimit -n)",
    )
    mcp.add_argument(
        "--annotate",
        action="store_true",
        help="have the model OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL name note what "
        "each stored statement is about and what it replaces (each is sent to it once)",
    )
    mcp.set_defaults(func=_mcp)
