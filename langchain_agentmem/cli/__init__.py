"""The ``agentmem`` command line."""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Sequence
from typing import Any

from langchain_agentmem.cli.args import (
    STORE_HELP,
    add_command,
    existing_store,
    parse_args,
    port_number,
    positive_int,
)


def _demo(args: argparse.Namespace) -> int:
    from langchain_agentmem.cli.demo import run_demo

    return run_demo(sys.stdout, store=args.store, user=args.user, k=args.k)


def _chat(args: argparse.Namespace) -> int:
    from langchain_agentmem.cli.chat.session import HISTORY_TOKENS, MAX_REPLY_TOKENS, main_chat

    if args.max_reply_tokens is None:
        args.max_reply_tokens = _env_tokens("AGENTMEM_MAX_REPLY_TOKENS", MAX_REPLY_TOKENS)
    if args.history_tokens is None:
        args.history_tokens = _env_tokens("AGENTMEM_HISTORY_TOKENS", HISTORY_TOKENS)

    return main_chat(
        store=args.store,
        user=args.user,
        thread=args.thread,
        k=args.k,
        remember_replies=args.remember_replies,
        max_reply_tokens=args.max_reply_tokens,
        history_tokens=args.history_tokens,
        annotate=args.annotate,
    )


def _env_tokens(name: str, default: int) -> int:
    """``default``, or the environment's ``name`` when set (checked as the flag is)."""
    import os

    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return positive_int(raw)
    except argparse.ArgumentTypeError as exc:
        raise SystemExit(f"agentmem chat: {name} {exc}") from None


def _export(args: argparse.Namespace) -> int:
    from langchain_agentmem.memory import AgentMemory

    problem = existing_store(args.store, "export")
    if problem:
        print(problem, file=sys.stderr)
        return 1
    with AgentMemory(args.store, persist_indexes=False) as memory:
        if args.user not in memory.namespaces():  # before a file is written
            print(
                f"agentmem export: {args.user!r} has no records or messages in "
                f"{memory.url}; nothing was exported",
                file=sys.stderr,
            )
            return 1
        out = sys.stdout if args.out == "-" else args.out
        summary = memory.export_namespace(
            args.user, out, embeddings=args.embeddings, progress=sys.stderr.isatty()
        )
    print(
        f"exported {summary.records} records and {summary.messages} messages of "
        f"{summary.namespace!r} to {args.out}",
        file=sys.stderr,
    )
    return 0


def _import(args: argparse.Namespace) -> int:
    from langchain_agentmem.backends.url import default_store_url, redact_url
    from langchain_agentmem.export_format import read_export
    from langchain_agentmem.memory import AgentMemory

    # Check the whole file (and the namespace) first: a bad one opens, and creates, no store.
    export = read_export(sys.stdin if args.input == "-" else args.input)
    if args.user is None:  # a file can name anyone: its header never picks the target
        print(
            f"agentmem import: pass --user NAME, the user to import into; {export.name} "
            f"{export.holder()}; nothing was imported",
            file=sys.stderr,
        )
        return 2
    target = export.target(args.user)
    shown = redact_url(default_store_url() if args.store is None else args.store)
    print(
        f"agentmem import: {len(export.records)} records and {len(export.messages)} messages "
        f"of {export.name} (which {export.holder()}) go into {target!r} in {shown}",
        file=sys.stderr,
    )
    with AgentMemory(args.store) as memory:
        summary = memory.import_namespace(export, namespace=target, progress=sys.stderr.isatty())
    expired = f"{summary.expired} expired since the export, " if summary.expired else ""
    print(
        f"imported {summary.records} records ({summary.skipped} already there, {expired}"
        f"{summary.reembedded} re-embedded) and {summary.messages} messages into "
        f"{summary.namespace!r}",
        file=sys.stderr,
    )
    return 0


def _forget(args: argparse.Namespace) -> int:
    from langchain_agentmem.backends.url import default_store_url, redact_url
    from langchain_agentmem.memory import AgentMemory

    shown = redact_url(default_store_url() if args.store is None else args.store)
    problem = existing_store(args.store, "forget")  # before asking: a typo is told at once
    if problem:
        print(problem, file=sys.stderr)
        return 1
    from langchain_agentmem.cli.chat.threads import count_chat_threads, forget_chat_threads

    with AgentMemory(args.store, persist_indexes=False) as memory:
        known = args.user in memory.namespaces()
    if not known and not count_chat_threads(args.user, args.store):  # a typo, as for export
        forget_chat_threads(args.user, args.store)  # lock files killed sessions left: swept
        print(
            f"agentmem forget: {args.user!r} has no records, messages or `agentmem chat` "
            f"threads in {shown}; nothing was erased",
            file=sys.stderr,
        )
        return 1
    if not args.yes:
        if not sys.stdin.isatty():
            print(
                f"agentmem forget: refusing to erase {args.user!r} from {shown} without "
                "--yes (no terminal to confirm on); nothing was erased",
                file=sys.stderr,
            )
            return 2
        try:
            answer = input(
                f"Erase everything stored for {args.user!r} in {shown} (records, messages, "
                "audit log, saved indexes, `agentmem chat` threads)? This cannot be undone. "
                "[y/N] "
            )
        except (EOFError, KeyboardInterrupt):  # Ctrl-D / Ctrl-C: no
            print(file=sys.stderr)  # end the prompt's line
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print("agentmem forget: nothing was erased", file=sys.stderr)
            return 1
    with AgentMemory(args.store) as memory:
        erased = memory.delete_namespace(args.user)
    chats = forget_chat_threads(erased.namespace, args.store)
    print(
        f"erased {erased.namespace!r} from {shown}: {erased.records} records, "
        f"{erased.messages} messages, {erased.decisions} audit entries, "
        f"{erased.index_files} index files; {chats} `agentmem chat` threads"
    )
    return 0


def annotating_model(wanted: bool) -> Any:
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
    from langchain_agentmem.integrations import mcp, mcp_http  # without the extra: one line
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
    with AgentMemory(args.store, model=annotating_model(args.annotate)) as memory:
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


def _add_mcp_parser(sub: Any) -> None:
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


def _add_privacy_parsers(sub: Any) -> None:
    export = add_command(
        sub,
        "export",
        help="write a user's records and chat-history messages to a JSON Lines file (not "
        "`agentmem chat` conversations)",
        description="Write a user's records and chat-history messages to a JSON Lines file. "
        "`agentmem chat` conversations (LangGraph checkpoints in a file of their own under "
        "$AGENTMEM_HOME) are not exported; what chat remembered of them is, as records. "
        "A user with nothing stored is an error (exit status 1), no file written.",
        examples=[
            "agentmem export --user alice --out alice.jsonl",
            "agentmem export --store sqlite:////srv/memory.db --user alice --out - --embeddings",
        ],
    )
    export.add_argument("--store", default=None, help=STORE_HELP)
    export.add_argument("--user", required=True, help="whose memory (namespace)")
    export.add_argument("--out", required=True, help="file to write ('-': standard output)")
    export.add_argument(
        "--embeddings", action="store_true", help="include embeddings (else import re-embeds)"
    )
    export.set_defaults(func=_export)

    imp = add_command(
        sub,
        "import",
        help="read an export back into --user (one transaction; twice adds nothing)",
        description="Read an export back into the user --user names, in one transaction. "
        "--user is required: the user the file names is never taken for the target (a file "
        "can name anyone). A record or message dated in the future, or a message other than "
        "a human, AI or tool message (a system message, say), is refused, and a refused "
        "file imports nothing.",
        examples=[
            "agentmem import --in alice.jsonl --user alice",
            "agentmem import --store postgresql://app@db/agents --in alice.jsonl --user bob",
        ],
    )
    imp.add_argument("--store", default=None, help=STORE_HELP)
    imp.add_argument("--in", dest="input", required=True, help="export file ('-': standard input)")
    imp.add_argument(
        "--user",
        default=None,
        help="user (namespace) to import into; required, the file's own is never taken",
    )
    imp.set_defaults(func=_import)

    forget = add_command(
        sub,
        "forget",
        help="erase a user: records, messages, audit entries, saved indexes",
        examples=[
            "agentmem forget --user alice",
            "agentmem forget --store sqlite:////srv/memory.db --user alice --yes",
        ],
    )
    forget.add_argument("--store", default=None, help=STORE_HELP)
    forget.add_argument("--user", required=True, help="whose memory (namespace)")
    forget.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    forget.set_defaults(func=_forget)


def _add_session_parsers(sub: Any) -> None:
    demo = add_command(
        sub,
        "demo",
        help="two sessions on the embedded defaults: recall across a restart",
        examples=["agentmem demo", "agentmem demo --k 5"],
    )
    demo.add_argument("--store", default=None, help="store URL (default: $AGENTMEM_HOME/demo.db)")
    demo.add_argument("--user", default="demo-user", help="namespace of the demo user")
    demo.add_argument("--k", type=positive_int, default=3, help="memories recalled per question")
    demo.set_defaults(func=_demo)

    chat = add_command(
        sub,
        "chat",
        help="chat with memory through your OpenAI-compatible model (OPENAI_* / .env)",
        examples=[
            "agentmem chat --user alice --thread t1",
            "OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_MODEL=llama3.2 "
            "agentmem chat --remember-replies",
        ],
    )
    chat.add_argument("--store", default=None, help=STORE_HELP)
    chat.add_argument("--user", default="me", help="whose memory (namespace)")
    chat.add_argument("--thread", default="chat", help="conversation id (a new one starts fresh)")
    chat.add_argument("--k", type=positive_int, default=4, help="memories recalled per turn")
    chat.add_argument(
        "--remember-replies",
        action="store_true",
        help="remember the model's replies too (as the assistant's; default: your words only)",
    )
    chat.add_argument(
        "--max-reply-tokens",
        type=positive_int,
        default=None,
        help="most tokens of one reply (default: $AGENTMEM_MAX_REPLY_TOKENS, else 1024)",
    )
    chat.add_argument(
        "--history-tokens",
        type=positive_int,
        default=None,
        help="most tokens of the thread sent with each turn, newest whole turns first "
        "(default: $AGENTMEM_HISTORY_TOKENS, else 2000)",
    )
    chat.add_argument(
        "--no-annotate",
        dest="annotate",
        action="store_false",
        help="do not have the model note what each remembered statement is about and what "
        "it replaces (by default each is sent to it once, off the turn)",
    )
    chat.set_defaults(func=_chat)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``agentmem``: one ``add_*`` call per group of commands."""
    from langchain_agentmem import __version__

    parser = argparse.ArgumentParser(
        prog="agentmem",
        description="Durable memory for LangChain and LangGraph agents.",
        epilog="Run `agentmem COMMAND --help` for a command's options, defaults and examples.",
    )
    parser.add_argument("--version", action="version", version=f"agentmem {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_session_parsers(sub)
    _add_privacy_parsers(sub)
    _add_mcp_parser(sub)

    from langchain_agentmem.cli.records import add_record_parsers

    add_record_parsers(sub)

    from langchain_agentmem.cli.bench import add_bench_parser

    add_bench_parser(sub)

    from langchain_agentmem.cli.train import add_train_parser

    add_train_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``agentmem``: every command reads ``.env`` (``AGENTMEM_HOME`` and the
    model's settings) alike; a problem it can name ends it with one line on stderr
    (``agentmem COMMAND: ...``) and exit code 1, not a traceback; a reader of its output
    that went away (``| head``) ends it quietly with exit code 141."""
    from langchain_agentmem.cli.pipes import to_stdout
    from langchain_agentmem.errors import AgentMemoryError
    from langchain_agentmem.models import load_env

    parser = build_parser()
    args = parse_args(parser, argv)

    def run() -> int:
        load_env()  # so export / import / forget find the store chat and demo wrote to
        code: int = args.func(args)
        return code

    try:
        # A reader that went away (`agentmem export --out - | head -1`) ends it quietly, 141.
        return to_stdout(run)
    except (AgentMemoryError, OSError, sqlite3.Error) as exc:
        print(f"agentmem {args.command}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
