"""Memory policies: pure objects that look at state and return ops."""

from langchain_agentmem.policies.base import MemoryPolicy
from langchain_agentmem.policies.heuristics import FifoPolicy, KeepAllPolicy
from langchain_agentmem.policies.registry import available_policies, make_policy

__all__ = ["FifoPolicy", "KeepAllPolicy", "MemoryPolicy", "available_policies", "make_policy"]
