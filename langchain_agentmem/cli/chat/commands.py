"""The local commands of ``agentmem chat`` (``/help``, ``/memories``, ``/forget ID``,
``/quit``): handled in the chat, never sent to the model or remembered."""

from __future__ import annotations

import re
from typing import TextIO

from langchain_agentmem.memory import AgentMemory

HELP = """Commands (handled here, never sent to the model or remembered):
  /help         this list
  /memories     what is remembered about you, with ids
  /forget ID    forget one memory (ids from /memories)
  /quit         leave (so do Ctrl-D and Ctrl-C)"""

_COMMAND = re.compile(r"/([A-Za-z]+)(?:\s+(.*))?")


def _memories(memory: AgentMemory, user: str, stdout: TextIO) -> None:
    from langchain_agentmem.integrations.prompt import listing

    records = memory.records(user)
    for line in listing(records):
        stdout.write(line + "\n")
    stdout.write(f"({len(records)} memories)\n")


def command(text: str, memory: AgentMemory, user: str, stdout: TextIO) -> bool | None:
    """Handle a local command; ``True``: quit, ``False``: handled, ``None``: not a command."""
    found = _COMMAND.fullmatch(text)
    if found is None:
        return None
    name, arg = found.group(1).lower(), (found.group(2) or "").strip()
    if name in ("quit", "exit", "q"):
        return True
    if name in ("help", "h"):
        stdout.write(HELP + "\n")
    elif name == "memories":
        _memories(memory, user, stdout)
    elif name == "forget":
        if not arg:
            stdout.write("usage: /forget ID (ids from /memories)\n")
        else:
            import json

            record_id = arg
            if arg.startswith('"'):  # an id /memories showed as a JSON string
                try:
                    record_id = json.loads(arg)
                except ValueError:
                    record_id = None
            try:
                # Only the user's own ids; checked and deleted in one step.
                gone = isinstance(record_id, str) and (
                    memory.delete(record_id, namespace=user, missing_ok=True) is not None
                )
            except ValueError:  # not an id at all
                gone = False
            if gone:
                stdout.write(f"forgot {arg}\n")
            else:
                stdout.write(f"no memory {arg!r} of yours; /memories lists their ids\n")
    else:
        stdout.write(f"unknown command /{name}; /help lists the commands\n")
    return False
