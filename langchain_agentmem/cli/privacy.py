"""``agentmem export``, ``import`` and ``forget``: a user's data carried out, back, or erased."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from langchain_agentmem.cli.args import STORE_HELP, add_command, existing_store


def _export(args: argparse.Namespace) -> int:
    from langchain_agentmem.memory import AgentMemory

    if args.out == "-" and sys.stdout.isatty():  # bulk JSON is for a pipe or a file
        print(
            "agentmem export: not writing an export to a terminal; pipe --out - into a "
            "command or name a file (--out FILE); nothing was exported",
            file=sys.stderr,
        )
        return 2
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
    from langchain_agentmem.memory import AgentMemory
    from langchain_agentmem.memory.export_format import read_export

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


def add_parsers(sub: Any) -> None:
    """``agentmem export``, ``agentmem import`` and ``agentmem forget``."""
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
