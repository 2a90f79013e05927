"""Memory policies: pure objects that look at state and return ops."""

from langchain_agentmem.policies.base import MemoryPolicy
from langchain_agentmem.policies.heuristics import (
    FifoPolicy,
    ForgettingCurvePolicy,
    ImportancePolicy,
    KeepAllPolicy,
    LruPolicy,
    NoveltyPolicy,
    PriorityPolicy,
    RandomPolicy,
)
from langchain_agentmem.policies.registry import available_policies, make_policy

__all__ = [
    "FifoPolicy",
    "ForgettingCurvePolicy",
    "ImportancePolicy",
    "KeepAllPolicy",
    "LruPolicy",
    "MemoryPolicy",
    "NoveltyPolicy",
    "PriorityPolicy",
    "RandomPolicy",
    "available_policies",
    "make_policy",
]
