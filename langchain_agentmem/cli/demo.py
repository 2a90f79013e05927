"""``agentmem demo``: memory that survives a restart, shown in two sessions."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from langchain_agentmem.backends.url import redact_url, sqlite_file
from langchain_agentmem.cli.args import add_command, positive_int
from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.files import agentmem_home
from langchain_agentmem.text import controls

if TYPE_CHECKING:  # langchain_core takes a second to import: not for `agentmem --help`
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from langchain_core.prompts import ChatPromptTemplate

    from langchain_agentmem.integrations.chat_history import BufferChatMessageHistory
    from langchain_agentmem.memory import AgentMemory
    from langchain_agentmem.types import MemoryRecord

SESSION_ONE = [
    "Hi! My name is Xiaoming (小明) and I live in Lyon.",
    "I'm vegetarian, and I love spicy Sichuan food.",
    "I've just started learning the cello.",
]
QUESTION = "What's my name, and what would you cook for me tonight?"


def _prompt() -> ChatPromptTemplate:
    """The demo's prompt: the memories block in the system message, then the thread."""
    from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

    return ChatPromptTemplate.from_messages(
        [
            (
                "system",
                "You are a helpful assistant with long-term memory.\n{memories}",
            ),
            MessagesPlaceholder("history"),
            ("human", "{input}"),
        ]
    )


def format_memories(records: list[MemoryRecord]) -> str:
    """Recalled records as the prompt's memories block (the surfaces' one formatter)."""
    from langchain_agentmem.integrations.prompt import render

    return render(records) or "(no memories of this user yet)"


def _show_prompt(out: TextIO, messages: list[BaseMessage]) -> None:
    out.write("  --- prompt the model receives ---\n")
    for message in messages:
        for i, line in enumerate(str(message.text).splitlines() or [""]):
            label = f"{message.type:>6}: " if i == 0 else " " * 8
            out.write(f"  {label}{line}\n")
    out.write("  --------------------------------\n")


def _turn(
    out: TextIO,
    memory: AgentMemory,
    history: BufferChatMessageHistory,
    model: BaseChatModel | None,
    text: str,
    k: int,
) -> None:
    from langchain_core.messages import AIMessage, HumanMessage

    from langchain_agentmem.integrations.recall import recall, shown_texts

    shown = shown_texts([text, *history.messages])
    recalled = recall(memory, text, namespace=history.namespace, k=k, shown=shown)
    messages = _prompt().format_messages(
        memories=format_memories(recalled), history=history.messages, input=text
    )
    out.write(f"\n  user: {text}\n")
    if model is None:
        _show_prompt(out, messages)
        reply = None
    else:
        reply = model.invoke(messages)
        out.write(f"  assistant: {controls.shown(reply.text)}\n")
    history.add_messages([HumanMessage(text)] + ([AIMessage(reply.text)] if reply else []))
    for op in history.last_ops:
        stored = f" {op.text!r}" if op.text else ""
        out.write(f"  memory: {op.kind.value} {','.join(op.record_ids)}{stored}  ({op.reason})\n")


def _demo_file() -> Path:
    """The demo's own store, started afresh on every run."""
    return agentmem_home() / "demo.db"


def _start(url: str, user: str) -> None:
    """Empty the demo's own file; in any other store, refuse to mix the demo into a user's data.

    Raises:
        InvalidInputError: ``user`` already has records, messages or ``agentmem chat``
            threads in that store.
    """
    path = sqlite_file(url)
    if path is not None and path.resolve() == _demo_file().resolve():
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
        return
    from langchain_agentmem.cli.chat.threads import count_chat_threads
    from langchain_agentmem.memory import AgentMemory

    with AgentMemory(url, persist_indexes=False) as memory:
        records, threads = len(memory.records(user)), memory.threads(user)
    chats = count_chat_threads(user, url)
    if records or threads or chats:
        raise InvalidInputError(
            f"user {user!r} already has {records} records, {len(threads)} chat threads and "
            f"{chats} `agentmem chat` threads in {redact_url(url)}; the demo keeps what is "
            "stored and writes a user of its own: "
            "pass --user with a name that store has nothing for, or leave --store out to use "
            f"the demo's own file ({_demo_file()})"
        )


def run_demo(out: TextIO, *, store: str | None = None, user: str = "demo-user", k: int = 3) -> int:
    """Run the scripted two-session demo; returns the exit code.

    Raises:
        InvalidInputError: ``store`` is another store in which ``user`` already has data.
    """
    from langchain_agentmem.integrations.chat_history import BufferChatMessageHistory
    from langchain_agentmem.memory import AgentMemory
    from langchain_agentmem.models import chat_model_from_env

    model = chat_model_from_env()
    url = store or "sqlite:///" + str(_demo_file())
    _start(url, user)
    out.write(f"store: {redact_url(url)}\n")
    if model is None:
        out.write(
            "no model configured (set OPENAI_API_KEY or OPENAI_BASE_URL, e.g. in .env): "
            "showing the recalled memories and the prompt instead of replies.\n"
        )
    else:
        out.write(f"model: {type(model).__name__} from the environment\n")

    out.write("\n=== session 1, thread A ===\n")
    memory = AgentMemory(url)
    history = BufferChatMessageHistory(
        memory, namespace=user, thread="thread-A", remember=True, remember_roles=("human",)
    )
    for text in SESSION_ONE:
        _turn(out, memory, history, model, text, k)
    out.write(f"\n  audit log of {user!r}:\n")
    for decision in memory.decisions(user):
        out.write(f"    #{decision.seq} {decision.kind.value} {decision.reason}\n")
    memory.close()

    out.write(
        "\n=== process state dropped: session 2 runs in a new Python process, "
        "opens the same store, thread B ===\n"
    )
    out.flush()
    done = subprocess.run(
        [sys.executable, "-m", "langchain_agentmem.cli.demo", url, user, str(k)], check=False
    )
    return done.returncode


def session_two(out: TextIO, url: str, user: str, k: int) -> int:
    """Session 2: a fresh AgentMemory on the same store recalls session 1 in a new thread."""
    from langchain_agentmem.integrations.chat_history import BufferChatMessageHistory
    from langchain_agentmem.integrations.recall import recall, shown_texts
    from langchain_agentmem.memory import AgentMemory
    from langchain_agentmem.models import chat_model_from_env, load_env

    load_env()
    model = chat_model_from_env()
    memory = AgentMemory(url)
    history = BufferChatMessageHistory(memory, namespace=user, thread="thread-B")
    recalled = recall(
        memory, QUESTION, namespace=user, k=k, shown=shown_texts([QUESTION, *history.messages])
    )
    out.write(f"\n  recalled for {QUESTION!r}:\n")
    for record in recalled:
        when = record.created_at.isoformat(timespec="seconds") if record.created_at else "?"
        out.write(f"    {record.score:.3f}  {record.text}  (thread {record.thread}, {when})\n")
    messages = _prompt().format_messages(
        memories=format_memories(recalled), history=history.messages, input=QUESTION
    )
    out.write(f"\n  user: {QUESTION}\n")
    if model is None:
        _show_prompt(out, messages)
        out.write("  (no model configured: this prompt is what a model would answer from)\n")
    else:
        out.write(f"  assistant: {model.invoke(messages).text}\n")
    found = any("Xiaoming" in r.text for r in recalled)
    out.write(f"\nrecalled across sessions: {'yes' if found else 'NO'}\n")
    memory.close()
    return 0 if found else 1


def _demo(args: argparse.Namespace) -> int:
    return run_demo(sys.stdout, store=args.store, user=args.user, k=args.k)


def add_parsers(sub: Any) -> None:
    """``agentmem demo``."""
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


if __name__ == "__main__":
    from langchain_agentmem.cli.pipes import to_stdout

    sys.exit(to_stdout(lambda: session_two(sys.stdout, sys.argv[1], sys.argv[2], int(sys.argv[3]))))
