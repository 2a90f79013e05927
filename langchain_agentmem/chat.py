"""``agentmem chat``: an interactive chat with memory, on ``create_agent`` and the middleware.

The model is the user's OpenAI-compatible server (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``,
``OPENAI_MODEL``, read from the environment or ``.env``). Long-term memory lives in the
store (default ``$AGENTMEM_HOME/memory.db``); each thread's messages are checkpointed in
``$AGENTMEM_HOME/chat-checkpoints.db``, so a thread continues after a restart and a new
thread of the same user recalls what earlier threads were told.
"""

from __future__ import annotations

import sqlite3
import sys
from contextlib import closing
from typing import Any, TextIO

from langchain_core.messages import AIMessageChunk, HumanMessage

from langchain_agentmem.backends.sqlite import create_private
from langchain_agentmem.backends.url import agentmem_home
from langchain_agentmem.integrations.graph import user_thread_id
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.models import chat_model_from_env, load_env

SYSTEM_PROMPT = "You are a helpful assistant with long-term memory of this user."

NO_MODEL = """agentmem chat needs a chat model, and none is configured.

Set, in the environment or in a .env file in this folder:
  OPENAI_API_KEY=sk-...                   (OpenAI)
or, for any OpenAI-compatible server (llama.cpp, vLLM, Ollama, ...):
  OPENAI_BASE_URL=http://localhost:8000/v1
and optionally
  OPENAI_MODEL=gpt-4o-mini
"""

HELP = "Commands: /memories (what is remembered), /quit (or end of input)."


CHAT_CHECKPOINTS = "chat-checkpoints.db"
"""The file in ``$AGENTMEM_HOME`` where ``agentmem chat`` keeps its LangGraph checkpoints."""


def forget_chat_threads(user: str) -> int:
    """Erase ``user``'s ``agentmem chat`` threads (ids ``user/...``) from the checkpoint file.

    Returns:
        How many threads were erased (0 when the file does not exist).
    """
    path = agentmem_home() / CHAT_CHECKPOINTS
    if not path.exists():
        return 0
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA secure_delete = ON")
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "checkpoints" not in tables:
            return 0
        ids = [
            r[0]
            for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")
            if str(r[0]).startswith(user + "/")
        ]
        conn.execute("BEGIN IMMEDIATE")
        for thread_id in ids:
            for table in ("checkpoints", "writes") if "writes" in tables else ("checkpoints",):
                conn.execute(f"DELETE FROM {table} WHERE thread_id = ?", (thread_id,))
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return len(ids)


def run_chat(
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
    *,
    store: str | None,
    user: str,
    thread: str,
    k: int,
) -> int:
    """Chat until ``/quit`` or end of input; returns the exit status."""
    load_env()
    llm = chat_model_from_env()
    if llm is None:
        stderr.write(NO_MODEL)
        return 2
    from langchain.agents import create_agent
    from langgraph.checkpoint.sqlite import SqliteSaver

    from langchain_agentmem.integrations.middleware import AgentMemoryMiddleware

    home = agentmem_home()
    # The conversation itself is checkpointed there: private, like the store.
    create_private(home / CHAT_CHECKPOINTS)
    interactive = stdin.isatty()
    # Checkpoints are keyed by thread id alone: scope it by user so users never share one.
    config: Any = {"configurable": {"user_id": user, "thread_id": user_thread_id(user, thread)}}
    with (
        AgentMemory(store) as memory,
        sqlite3.connect(home / CHAT_CHECKPOINTS, check_same_thread=False) as conn,
    ):
        agent = create_agent(
            llm,
            system_prompt=SYSTEM_PROMPT,
            middleware=[AgentMemoryMiddleware(memory, k=k)],
            checkpointer=SqliteSaver(conn),
        )
        stdout.write(f"agentmem chat: user {user!r}, thread {thread!r}. {HELP}\n")
        while True:
            if interactive:
                stdout.write("you> ")
                stdout.flush()
            line = stdin.readline()
            if not line:
                break
            text = line.strip()
            if not text:
                continue
            if text in ("/quit", "/exit"):
                break
            if text == "/memories":
                records = memory.records(user)
                for record in records:
                    stdout.write(f"- {record.text}\n")
                stdout.write(f"({len(records)} memories)\n")
                continue
            stdout.write("assistant> ")
            for chunk, _ in agent.stream(
                {"messages": [HumanMessage(text)]}, config, stream_mode="messages"
            ):
                if isinstance(chunk, AIMessageChunk) and chunk.text:
                    stdout.write(chunk.text)
                    stdout.flush()
            stdout.write("\n")
            stdout.flush()
    return 0


def main_chat(store: str | None, user: str, thread: str, k: int) -> int:
    """``agentmem chat`` on the process's standard streams."""
    return run_chat(sys.stdin, sys.stdout, sys.stderr, store=store, user=user, thread=thread, k=k)
