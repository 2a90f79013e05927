"""LangGraph's search filters and namespace match conditions, as ``AgentMemoryStore``
checks and applies them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.store.base import MatchCondition, SearchOp

from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.filters import OPERATORS, check_filter, passes

__all__ = ["OPERATORS", "check_filter", "keep", "matches"]


def matches(path: tuple[str, ...], condition: MatchCondition) -> bool:
    """Whether namespace ``path`` meets ``condition`` (``"*"`` matches any label)."""
    pattern = tuple(condition.path)
    if len(path) < len(pattern):
        return False
    if condition.match_type == "prefix":
        pairs = zip(path, pattern, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(path), reversed(pattern), strict=False)
    else:
        raise InvalidInputError(
            f"match_type must be 'prefix' or 'suffix', got {condition.match_type!r}"
        )
    return all(p == "*" or a == p for a, p in pairs)


def keep(value: Mapping[str, Any], op: SearchOp) -> bool:
    """Whether an item's ``value`` passes the filter of search ``op`` (all its keys)."""
    return passes(value, op.filter)
