"""Benchmarks of recall: the LoCoMo loader, its measures and the bench runner."""

from langchain_agentmem.bench.locomo import (
    CATEGORIES,
    Conversation,
    LoadReport,
    Question,
    Turn,
    load_locomo,
    repair_evidence,
)
from langchain_agentmem.bench.metrics import hit_at_k, recall_at_k
from langchain_agentmem.bench.runner import MemoryFactory, run_locomo, turn_text

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
