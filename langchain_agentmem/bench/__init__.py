"""Benchmarks of recall: the LoCoMo loader (from ``langchain_agentmem.locomo``), its measures
and the bench runner.

The names load on first use (PEP 562): ``agentmem --help`` reads ``cli.bench`` without
importing the runner (and torch).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_agentmem.bench.metrics import hit_at_k, recall_at_k
    from langchain_agentmem.bench.runner import MemoryFactory, run_locomo
    from langchain_agentmem.locomo import (
        CATEGORIES,
        Conversation,
        LoadReport,
        Question,
        Turn,
        load_locomo,
        repair_evidence,
        turn_text,
    )

__all__ = [
    "CATEGORIES",
    "Conversation",
    "LoadReport",
    "MemoryFactory",
    "Question",
    "Turn",
    "hit_at_k",
    "load_locomo",
    "recall_at_k",
    "repair_evidence",
    "run_locomo",
    "turn_text",
]

_WHERE = {
    **dict.fromkeys(
        [
            "CATEGORIES",
            "Conversation",
            "LoadReport",
            "Question",
            "Turn",
            "load_locomo",
            "repair_evidence",
            "turn_text",
        ],
        "langchain_agentmem.locomo",
    ),
    **dict.fromkeys(["hit_at_k", "recall_at_k"], "langchain_agentmem.bench.metrics"),
    **dict.fromkeys(["MemoryFactory", "run_locomo"], "langchain_agentmem.bench.runner"),
}


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use."""
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value
