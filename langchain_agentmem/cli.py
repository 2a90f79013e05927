"""The ``agentmem`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _demo(args: argparse.Namespace) -> int:
    from langchain_agentmem.demo import run_demo

    return run_demo(sys.stdout, store=args.store, user=args.user, k=args.k)


def _chat(args: argparse.Namespace) -> int:
    from langchain_agentmem.chat import main_chat

    return main_chat(store=args.store, user=args.user, thread=args.thread, k=args.k)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``agentmem``."""
    parser = argparse.ArgumentParser(
        prog="agentmem", description="Durable memory for LangChain and LangGraph agents."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser(
        "demo", help="two sessions on the embedded defaults: recall across a restart"
    )
    demo.add_argument("--store", default=None, help="store URL (default: $AGENTMEM_HOME/demo.db)")
    demo.add_argument("--user", default="demo-user", help="namespace of the demo user")
    demo.add_argument("--k", type=int, default=3, help="memories recalled per question")
    demo.set_defaults(func=_demo)

    chat = sub.add_parser(
        "chat", help="chat with memory through your OpenAI-compatible model (OPENAI_* / .env)"
    )
    chat.add_argument("--store", default=None, help="store URL (default: $AGENTMEM_HOME/memory.db)")
    chat.add_argument("--user", default="me", help="whose memory (namespace)")
    chat.add_argument("--thread", default="chat", help="conversation id (a new one starts fresh)")
    chat.add_argument("--k", type=int, default=4, help="memories recalled per turn")
    chat.set_defaults(func=_chat)

    from langchain_agentmem.bench.cli import add_bench_parser

    add_bench_parser(sub)

    from langchain_agentmem.rl.cli import add_train_parser

    add_train_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``agentmem``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
