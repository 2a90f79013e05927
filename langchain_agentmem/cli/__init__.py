"""The ``agentmem`` command line: the entry point and the one place every command is added.

Each group of commands is a module of this package with an ``add_parsers(sub)`` function:
:mod:`~langchain_agentmem.cli.demo`, :mod:`~langchain_agentmem.cli.chat`,
:mod:`~langchain_agentmem.cli.privacy` (export, import, forget),
:mod:`~langchain_agentmem.cli.mcp`, :mod:`~langchain_agentmem.cli.records` (list, search),
:mod:`~langchain_agentmem.cli.bench` and :mod:`~langchain_agentmem.cli.train`. Nothing
outside this package imports it.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Sequence

from langchain_agentmem.cli.args import parse_args


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``agentmem``: every group of commands, in the order of its help."""
    from langchain_agentmem import __version__
    from langchain_agentmem.cli import bench, chat, demo, mcp, privacy, records, train

    parser = argparse.ArgumentParser(
        prog="agentmem",
        description="Durable memory for LangChain and LangGraph agents.",
        epilog="Run `agentmem COMMAND --help` for a command's options, defaults and examples.",
    )
    parser.add_argument("--version", action="version", version=f"agentmem {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for group in (demo, chat, privacy, mcp, records, bench, train):
        group.add_parsers(sub)
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
