"""LangGraph's search filters and namespace match conditions, as ``AgentMemoryStore``
checks and applies them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.store.base import MatchCondition, SearchOp

from langchain_agentmem.errors import InvalidInputError


def _compare(value: Any, wanted: Any) -> bool:
    """LangGraph's filter semantics: exact (nested) match or ``$eq`` / ``$gt`` / ... ops."""
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            return all(_operator(value, op, arg) for op, arg in wanted.items())
        return isinstance(value, Mapping) and all(
            _compare(value.get(k), v) for k, v in wanted.items()
        )
    return bool(value == wanted)


OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
"""The ``$`` operators a search filter may use."""


def check_filter(wanted: Any, path: str) -> None:
    """Refuse an unknown ``$`` operator anywhere in a search filter, before any item is read."""
    if not isinstance(wanted, Mapping):
        return
    if any(str(k).startswith("$") for k in wanted):
        for op in wanted:
            if op not in OPERATORS:
                raise InvalidInputError(
                    f"unsupported filter operator {op!r} in {path}; use "
                    f"{', '.join(OPERATORS[:-1])} or {OPERATORS[-1]}"
                )
        return
    for key, value in wanted.items():
        check_filter(value, f"{path}[{key!r}]")


def _operator(value: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(value == arg)
    if op == "$ne":
        return bool(value != arg)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        try:
            if op == "$gt":
                return bool(value > arg)
            if op == "$gte":
                return bool(value >= arg)
            if op == "$lt":
                return bool(value < arg)
            return bool(value <= arg)
        except TypeError:
            return False
    raise InvalidInputError(
        f"unsupported filter operator {op!r}; use $eq, $ne, $gt, $gte, $lt or $lte"
    )


def _field(value: Mapping[str, Any], key: str) -> Any:
    """``value[key]``; a dotted key (``"user.level"``) reaches into nested dicts."""
    if key in value or "." not in key:
        return value.get(key)
    found: Any = value
    for part in key.split("."):
        if not isinstance(found, Mapping):
            return None
        found = found.get(part)
    return found


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
    if not op.filter:
        return True
    return all(_compare(_field(value, k), v) for k, v in op.filter.items())
