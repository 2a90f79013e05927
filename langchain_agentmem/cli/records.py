"""``agentmem list`` and ``agentmem search``: a user's memories, read without exporting them."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from langchain_agentmem.cli.args import (
    STORE_HELP,
    add_command,
    existing_store,
    positive_int,
    whole_number,
)

if TYPE_CHECKING:
    from langchain_agentmem.memory import AgentMemory


def _known(memory: Any, user: str, command: str) -> bool:
    """Whether ``user`` has anything in ``memory``; says so on stderr when not."""
    if user in memory.namespaces():
        return True
    print(
        f"agentmem {command}: {user!r} has no records or messages in {memory.url}",
        file=sys.stderr,
    )
    return False


def _open(args: argparse.Namespace, command: str) -> AgentMemory | None:
    """The store of ``args`` opened for ``args.user``, or ``None`` (said on stderr) when the
    store or the user does not exist."""
    from langchain_agentmem.memory import AgentMemory

    problem = existing_store(args.store, command)
    if problem:
        print(problem, file=sys.stderr)
        return None
    memory = AgentMemory(args.store, persist_indexes=False)
    if not _known(memory, args.user, command):
        memory.close()
        return None
    return memory


def _list(args: argparse.Namespace) -> int:
    from langchain_agentmem.integrations.prompt import listing

    memory = _open(args, "list")
    if memory is None:
        return 1
    with memory:
        # One more than the page: whether another page follows, without counting them all.
        page = memory.records(
            args.user, limit=args.limit + 1, offset=args.offset, newest_first=True
        )
    more = len(page) > args.limit
    page = page[: args.limit]
    for line in listing(page):
        print(line)
    first = args.offset + 1 if page else args.offset
    shown = f"memories {first}-{args.offset + len(page)}, newest first"
    if more:
        shown += f"; the next page: --offset {args.offset + args.limit}"
    print(f"({shown})", file=sys.stderr)
    return 0


def _search(args: argparse.Namespace) -> int:
    from langchain_agentmem.integrations.prompt import listing

    memory = _open(args, "search")
    if memory is None:
        return 1
    with memory:
        found = memory.search(args.query, namespace=args.user, k=args.k, mode=args.mode)
    for line in listing(found, scores=True):
        print(line)
    print(f"({len(found)} found, best first; score after the id)", file=sys.stderr)
    return 0


def add_parsers(sub: Any) -> None:
    """``agentmem list`` and ``agentmem search``."""
    listed = add_command(
        sub,
        "list",
        help="show a user's memories, newest first, a page at a time",
        description="Show a user's memories, newest first: id, date, who said it and their "
        "words as a JSON string, one a line (the page's range and the next --offset on "
        "stderr).",
        examples=[
            "agentmem list --user alice",
            "agentmem list --user alice --limit 50 --offset 50",
        ],
    )
    listed.add_argument("--store", default=None, help=STORE_HELP)
    listed.add_argument("--user", required=True, help="whose memory (namespace)")
    listed.add_argument("--limit", type=positive_int, default=20, help="memories a page")
    listed.add_argument("--offset", type=whole_number, default=0, help="memories to skip")
    listed.set_defaults(func=_list)

    search = add_command(
        sub,
        "search",
        help="search a user's memories as an agent's recall does",
        description="Search a user's memories: the best matches, one a line, with the "
        "search's score after the id.",
        examples=[
            'agentmem search --user alice "where do I live?"',
            'agentmem search --user alice --k 10 --mode lexical "Lyon"',
        ],
    )
    search.add_argument("query", help="what to look for")
    search.add_argument("--store", default=None, help=STORE_HELP)
    search.add_argument("--user", required=True, help="whose memory (namespace)")
    search.add_argument("--k", type=positive_int, default=5, help="most memories shown")
    search.add_argument(
        "--mode", choices=("hybrid", "dense", "lexical"), default="hybrid", help="how to search"
    )
    search.set_defaults(func=_search)
