"""The package is a guest in its host's process: loading the bundled model reaches no
network and leaves the host's environment and library settings as they were."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_PROBE = r"""
import json, os, socket

tried = []

def refuse(*args, **kwargs):
    tried.append(repr(args[:2]))
    raise OSError("no network in this check")

socket.socket.connect = refuse
socket.getaddrinfo = refuse
# What the libraries set when imported (torch's KMP_* and inductor cache) is theirs.
import sentence_transformers
from transformers.utils import logging as hf_logging

before = dict(os.environ)

from langchain_agentmem import AgentMemory

with AgentMemory(":memory:") as memory:
    memory.add("I live in Lyon.", namespace="alice")
    found = memory.search("Where do I live?", namespace="alice", k=1)[0].text
changed = sorted(k for k in set(before) | set(os.environ) if before.get(k) != os.environ.get(k))
print(json.dumps({"found": found, "changed": changed, "tried": tried,
                  "bars": hf_logging.is_progress_bar_enabled()}))
"""


def test_the_bundled_model_loads_offline_without_touching_the_environment(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env["AGENTMEM_HOME"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", _PROBE],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["found"] == "I live in Lyon."
    assert seen["tried"] == []  # no connection, no name lookup
    assert seen["changed"] == []  # no HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE left behind
    assert seen["bars"] is True  # the host's own loads keep their progress bars
