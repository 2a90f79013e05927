"""``agentmem chat``: the interactive chat with memory.

The session loop lives in :mod:`~langchain_agentmem.cli.chat.session`; this module only
reads the command line, so ``agentmem --help`` loads no model.
"""

from __future__ import annotations

import argparse
from typing import Any

from langchain_agentmem.cli.args import STORE_HELP, add_command, positive_int


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


def add_parsers(sub: Any) -> None:
    """``agentmem chat``."""
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
