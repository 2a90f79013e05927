"""A LangChain cache of a chat model's answers in one JSON file, keyed by the request.

Reruns of a benchmark that asks a real model the same things then cost nothing; the file
is a cache, never a result (kept out of the repository by ``.gitignore``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.caches import RETURN_VAL_TYPE, BaseCache
from langchain_core.load import dumps, loads


class JsonFileCache(BaseCache):
    """Answers by ``(prompt, model settings)``, written through to ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._data: dict[str, str] = (
            json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        )

    @staticmethod
    def _key(prompt: str, llm_string: str) -> str:
        return json.dumps([prompt, llm_string])

    def lookup(self, prompt: str, llm_string: str) -> RETURN_VAL_TYPE | None:
        with self._lock:
            found = self._data.get(self._key(prompt, llm_string))
            if found is None:
                self.misses += 1
                return None
            self.hits += 1
        value: Sequence[Any] = loads(found)
        return list(value)

    def update(self, prompt: str, llm_string: str, return_val: RETURN_VAL_TYPE) -> None:
        with self._lock:
            self._data[self._key(prompt, llm_string)] = dumps(list(return_val))
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self._data), encoding="utf-8")
            tmp.replace(self.path)

    def answers(self) -> list[str]:
        """Every cached answer, serialised as LangChain dumps it."""
        with self._lock:
            return list(self._data.values())

    def clear(self, **kwargs: Any) -> None:
        with self._lock:
            self._data.clear()
