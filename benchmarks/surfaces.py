"""What each memory surface costs per turn, side by side in one run.

The model is the real ``ChatOpenAI`` talking HTTP to the local scripted OpenAI-protocol
server (answers are instant, so the figures are the memory's own cost plus the HTTP
round trip); embeddings, faiss, BM25 and SQLite are real. Each surface plays the same
turns for one user over a store pre-filled with earlier memories; the baselines are the
same paths without memory.

    python benchmarks/surfaces.py [--turns 30] [--prefill 500] [--out results/surfaces.txt]
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch
from langchain.agents import create_agent
from langchain_classic.chains import ConversationChain
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph

from langchain_agentmem import (
    AgentMemory,
    AgentMemoryMiddleware,
    AgentMemoryRecall,
    AgentMemoryStore,
    RecallState,
    memories_message,
    policy_node,
    recall_node,
)
from tests.openai_server import ScriptedOpenAIServer

TOPICS = ["cooking", "cycling", "music", "travel", "work", "family", "books", "health"]


def turn_text(i: int) -> str:
    return f"Turn {i}: I want to talk about {TOPICS[i % len(TOPICS)]} and item number {i}."


class MemoryClock:
    """Time spent inside ``AgentMemory``'s public methods (outermost call only, this thread).

    The difference of two medians that each hold an HTTP round trip is noisy; this reads the
    memory's own share of a turn directly.
    """

    def __init__(self) -> None:
        self.seconds = 0.0
        self._local = threading.local()
        names = [n for n in dir(AgentMemory) if not n.startswith("_")]
        for name in names:
            method = getattr(AgentMemory, name)
            if callable(method) and not isinstance(method, type):
                setattr(AgentMemory, name, self._wrap(method))

    def _wrap(self, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def timed_call(*args: Any, **kwargs: Any) -> Any:
            if getattr(self._local, "inside", False):
                return method(*args, **kwargs)
            self._local.inside = True
            t0 = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - t0
                self._local.inside = False

        return timed_call


CLOCK: MemoryClock | None = None
MEMORY_MS: dict[int, list[float]] = {}
"""Per ``timed`` call (in order), the memory's milliseconds of each turn."""


def timed(turns: int, step: Callable[[int], Any]) -> list[float]:
    step(-1)  # warm-up (first HTTP connection, first index build)
    out, inside = [], []
    for i in range(turns):
        before = CLOCK.seconds if CLOCK else 0.0
        t0 = time.perf_counter()
        step(i)
        out.append((time.perf_counter() - t0) * 1000)
        inside.append(((CLOCK.seconds if CLOCK else 0.0) - before) * 1000)
    MEMORY_MS[len(MEMORY_MS)] = inside
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--prefill", type=int, default=500)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "surfaces.txt"))
    args = parser.parse_args()
    torch.set_num_threads(1)  # steadier on a shared 2-core machine (see the design notes)
    global CLOCK
    CLOCK = MemoryClock()
    warnings.filterwarnings("ignore")

    tmp = Path(tempfile.mkdtemp(prefix="agentmem-surfaces-"))
    memory = AgentMemory(f"sqlite:///{tmp / 'bench.db'}")
    prefill = [f"Earlier fact {i} about {TOPICS[i % len(TOPICS)]}." for i in range(args.prefill)]
    results: dict[str, list[float]] = {}
    with ScriptedOpenAIServer(default="Sure, noted.") as server:
        llm = ChatOpenAI(model="scripted", base_url=server.url, api_key="x", max_retries=0)

        def user(name: str) -> str:
            memory.add_many(prefill, namespace=name)
            return name

        def cfg(name: str, i: int) -> Any:
            return {"configurable": {"user_id": name, "thread_id": f"{name}-{i}"}}

        results["ChatOpenAI alone (HTTP baseline)"] = timed(
            args.turns, lambda i: llm.invoke([HumanMessage(turn_text(i))])
        )

        ns = user("chain")
        results["ConversationChain + AgentMemoryRecall"] = timed(
            args.turns,
            lambda i: ConversationChain(
                llm=llm, memory=AgentMemoryRecall(memory, namespace=ns, thread=str(i))
            ).invoke({"input": turn_text(i)}),
        )

        ns = user("graph")

        def chat(state: RecallState) -> dict[str, Any]:
            system = memories_message(state.get("memories"), memory)
            return {"messages": [llm.invoke([*([system] if system else []), *state["messages"]])]}

        builder = StateGraph(RecallState)
        builder.add_node("recall", recall_node(memory))
        builder.add_node("chat", chat)
        builder.add_node("remember", policy_node(memory, window=10))
        builder.add_edge(START, "recall")
        builder.add_edge("recall", "chat")
        builder.add_edge("chat", "remember")
        graph = builder.compile(checkpointer=InMemorySaver())
        plain = StateGraph(RecallState)
        plain.add_node("chat", chat)
        plain.add_edge(START, "chat")
        plain_graph = plain.compile(checkpointer=InMemorySaver())
        results["LangGraph graph, no memory nodes (baseline)"] = timed(
            args.turns,
            lambda i: plain_graph.invoke({"messages": [HumanMessage(turn_text(i))]}, cfg(ns, i)),
        )
        results["LangGraph graph + recall_node + policy_node"] = timed(
            args.turns,
            lambda i: graph.invoke({"messages": [HumanMessage(turn_text(i))]}, cfg(ns, i)),
        )

        ns = user("agent")
        bare = create_agent(llm, checkpointer=InMemorySaver())
        agent = create_agent(
            llm, middleware=[AgentMemoryMiddleware(memory)], checkpointer=InMemorySaver()
        )
        results["create_agent, no middleware (baseline)"] = timed(
            args.turns,
            lambda i: bare.invoke({"messages": [HumanMessage(turn_text(i))]}, cfg(ns, i)),
        )
        results["create_agent + AgentMemoryMiddleware"] = timed(
            args.turns,
            lambda i: agent.invoke({"messages": [HumanMessage(turn_text(i))]}, cfg(ns, i)),
        )

        store = AgentMemoryStore(memory)
        store_ns = ("memories", "store-user")
        for i, text in enumerate(prefill):
            if i >= 100:
                break
            store.put(store_ns, f"p{i}", {"text": text})

        def store_turn(i: int) -> None:
            store.search(store_ns, query=turn_text(i), limit=4)
            store.put(store_ns, f"t{i}", {"text": turn_text(i)})

        results["AgentMemoryStore search + put (no model)"] = timed(args.turns, store_turn)

    memory.close()
    baseline = {
        "ConversationChain + AgentMemoryRecall": "ChatOpenAI alone (HTTP baseline)",
        "LangGraph graph + recall_node + policy_node": (
            "LangGraph graph, no memory nodes (baseline)"
        ),
        "create_agent + AgentMemoryMiddleware": "create_agent, no middleware (baseline)",
    }
    lines = [
        f"Per-turn cost of each surface: {args.turns} turns, {args.prefill} earlier memories per "
        "user, real ChatOpenAI over HTTP to the local scripted server, real MiniLM (1 torch "
        "thread), faiss, BM25 and SQLite. Memory cost = median minus its baseline's median "
        "(noisy: both hold an HTTP round trip); inside memory = median time per turn spent in "
        "AgentMemory's own methods, timed directly (the store calls the memory's internals, so "
        "its row's median is its cost).",
        f"Load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.",
        "",
        f"{'surface':<46}{'median ms':>10}{'p95 ms':>9}{'memory ms':>11}{'inside memory':>15}",
    ]
    for (name, times), inside in zip(results.items(), MEMORY_MS.values(), strict=True):
        med = statistics.median(times)
        p95 = sorted(times)[max(0, int(len(times) * 0.95) - 1)]
        extra = ""
        if name in baseline:
            extra = f"{med - statistics.median(results[baseline[name]]):.1f}"
        lines.append(
            f"{name:<46}{med:>10.1f}{p95:>9.1f}{extra:>11}{statistics.median(inside):>15.1f}"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
