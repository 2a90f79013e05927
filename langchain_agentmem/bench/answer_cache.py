"""A chat model's answers on disk, keyed by the request: a rerun asks only what is new.

One JSON object a line, appended as each answer arrives, so an interrupted run keeps every
answer it got and the next run resumes where it stopped. The file (0600, in folders made
0700, never opened through a link nor when another account owns it) holds each request's
digest and its answer, never the prompt; delete it to ask everything again.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.caches import RETURN_VAL_TYPE, BaseCache
from langchain_core.load import dumps, loads
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration

from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.files import open_private

LATENCY_KEY = "agentmem_latency_s"
"""Where an answer's ``response_metadata`` keeps how long the server took to give it (the
first time it was asked; a cached answer keeps that figure)."""


class AnswerCache(BaseCache):
    """Answers by ``(scope, messages, model settings)``, appended to ``path`` (JSON lines).

    Pass it as a chat model's ``cache=``. ``scope`` names what the settings leave out
    (the server's address), so two servers' answers never mix.
    """

    def __init__(self, path: str | Path, *, scope: str = "") -> None:
        self.path = Path(path)
        self.scope = scope
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._asked: dict[str, float] = {}
        self._data: dict[str, str] = {}
        if os.path.lexists(self.path):
            self._read()

    def _read(self) -> None:
        fd = open_private(self.path, os.O_RDONLY)  # never through a link, never another's
        with os.fdopen(fd, encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                    self._data[str(entry["key"])] = str(entry["value"])
                except (json.JSONDecodeError, KeyError, TypeError):
                    if line.endswith("\n"):  # a whole line that is not ours: not a cache
                        raise InvalidInputError(
                            f"{str(self.path)!r} line {number} is not an answer cache entry; "
                            "pass another --cache file or delete this one"
                        ) from None
                    # the last line of a run killed mid-write: ask that request again

    def _key(self, prompt: str, llm_string: str) -> str:
        raw = json.dumps([self.scope, prompt, llm_string], ensure_ascii=False)
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()

    def lookup(self, prompt: str, llm_string: str) -> RETURN_VAL_TYPE | None:
        """The cached answer to this request, or ``None`` (then the model is asked)."""
        key = self._key(prompt, llm_string)
        with self._lock:
            found = self._data.get(key)
            if found is None:
                self.misses += 1
                self._asked[key] = time.perf_counter()
                return None
            self.hits += 1
        # Only an answer's classes are rebuilt from the file (no code runs from it).
        value: Sequence[Any] = loads(found, allowed_objects=[ChatGeneration, AIMessage])
        return list(value)

    def update(self, prompt: str, llm_string: str, return_val: RETURN_VAL_TYPE) -> None:
        """Keep an answer, with how long it took (:data:`LATENCY_KEY`), on disk at once."""
        key = self._key(prompt, llm_string)
        with self._lock:
            asked = self._asked.pop(key, None)
            if asked is not None:
                took = round(time.perf_counter() - asked, 4)
                for generation in return_val:
                    if isinstance(generation, ChatGeneration):
                        generation.message.response_metadata[LATENCY_KEY] = took
            value = dumps(list(return_val))
            self._data[key] = value
            # owner-only, as the store's files: the answers may quote the conversations
            fd = open_private(self.path, os.O_WRONLY | os.O_APPEND)
            with os.fdopen(fd, "a", encoding="utf-8") as out:
                out.write(json.dumps({"key": key, "value": value}) + "\n")

    def __len__(self) -> int:
        return len(self._data)

    def clear(self, **kwargs: Any) -> None:
        """Forget every answer, on disk too."""
        with self._lock:
            self._data.clear()
            self.path.unlink(missing_ok=True)


__all__ = ["LATENCY_KEY", "AnswerCache"]
