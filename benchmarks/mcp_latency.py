"""Tool-call latency of ``agentmem mcp`` over stdio and HTTP against the same call in process.

Three stores seeded alike (``--records`` memories of one user, the bundled MiniLM model,
SQLite); one in this process, one behind ``agentmem mcp`` over stdio, one behind
``agentmem mcp --http`` with a bearer token, both spawned here. Each round calls
``search_memory`` then ``save_memory`` once on each of the three, side by side, so a busy
machine slows all three alike. In process means the server's own call
(``call_memory_tool``: the LangChain tool run as a tool call, what an agent's tool node
does) without the transport; the ratios are what the protocol costs on top.

Usage:
    PYTHONPATH=. python benchmarks/mcp_latency.py [--rounds 100] [--records 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from mcp import ClientSession, types

from langchain_agentmem import AgentMemory, memory_tools
from langchain_agentmem.integrations.mcp.server import call_memory_tool
from tests.mcp_servers import HttpServer, http_session, stdio_session

USER = "bench"
TOKEN = "bench-token-" + "z" * 24
TOPICS = ["coffee", "mountains", "the violin", "trains", "gardening", "chess", "sushi", "rain"]
QUERIES = ["what do I drink", "my hobbies", "music I play", "food I like", "the weather"]

Call = Callable[[str, dict[str, str]], Awaitable[None]]


def seed(url: str, n: int) -> None:
    texts = [
        f"Fact {i}: I like {TOPICS[i % len(TOPICS)]} more than {TOPICS[(i * 3 + 1) % len(TOPICS)]}."
        for i in range(n)
    ]
    with AgentMemory(url) as memory:
        memory.add_many(texts, namespace=USER)


def over_mcp(session: ClientSession) -> Call:
    async def call(name: str, args: dict[str, str]) -> None:
        result = await session.call_tool(name, args)
        if result.isError:
            raise RuntimeError(f"{name} failed: {result.content}")

    return call


def in_process(memory: AgentMemory) -> Call:
    tools = {t.name: t for t in memory_tools(memory)}

    async def call(name: str, args: dict[str, str]) -> None:
        result: types.CallToolResult = await call_memory_tool(tools[name], args, USER)
        if result.isError:
            raise RuntimeError(f"{name} failed: {result.content}")

    return call


async def measure(calls: dict[str, Call], rounds: int) -> dict[tuple[str, str], list[float]]:
    times: dict[tuple[str, str], list[float]] = {}
    for r in range(-5, rounds):  # five warm-up rounds, not counted
        for tool, args in (
            ("search_memory", {"query": QUERIES[r % len(QUERIES)]}),
            ("save_memory", {"text": f"Benchmark round {r}: I tried {TOPICS[r % len(TOPICS)]}."}),
        ):
            for mode, call in calls.items():
                start = time.perf_counter()
                await call(tool, args)
                if r >= 0:
                    times.setdefault((tool, mode), []).append(time.perf_counter() - start)
    return times


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] * 1000


def report(times: dict[tuple[str, str], list[float]], args: argparse.Namespace) -> str:
    lines = [
        f"$ PYTHONPATH=. python benchmarks/mcp_latency.py --rounds {args.rounds} "
        f"--records {args.records}",
        f"agentmem mcp tool-call latency, {args.rounds} rounds side by side, {args.records} "
        f"memories, bundled MiniLM (1 torch thread), SQLite; Python {platform.python_version()}, "
        f"{os.cpu_count()} cores",
        "",
        f"{'tool':<14} {'transport':<11} {'p50 ms':>8} {'p95 ms':>8} {'p50 x':>7} {'p95 x':>7}",
    ]
    for tool in ("search_memory", "save_memory"):
        base = times[(tool, "in process")]
        for mode in ("in process", "stdio", "http"):
            t = times[(tool, mode)]
            lines.append(
                f"{tool:<14} {mode:<11} {p(t, 50):8.1f} {p(t, 95):8.1f} "
                f"{p(t, 50) / p(base, 50):7.2f} {p(t, 95) / p(base, 95):7.2f}"
            )
    lines += [
        "",
        "x: the latency over that transport divided by the same call in process.",
    ]
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        urls = {mode: f"sqlite:///{home / f'{mode}.db'}" for mode in ("inproc", "stdio", "http")}
        for url in urls.values():
            seed(url, args.records)
        with (
            AgentMemory(urls["inproc"]) as memory,
            HttpServer(urls["http"], tokens={TOKEN: USER}, home=home / "http") as server,
            (home / "stdio-stderr.txt").open("w") as errlog,
        ):
            async with (
                stdio_session(urls["stdio"], USER, home, errlog) as stdio,
                http_session(server.url, TOKEN) as http,
            ):
                calls = {
                    "in process": in_process(memory),
                    "stdio": over_mcp(stdio),
                    "http": over_mcp(http),
                }
                times = await measure(calls, args.rounds)
    return report(times, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--records", type=int, default=200)
    args = parser.parse_args()
    print(asyncio.run(main_async(args)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
