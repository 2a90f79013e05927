"""Metadata filters: LangGraph's store filter semantics, for every search of the package.

A filter is a mapping of keys to wanted values: every key must match. A value matches by
equality (a nested mapping matches a nested mapping key by key), or by operators
``{"$eq": v}``, ``{"$ne": v}``, ``{"$gt": v}``, ``{"$gte": v}``, ``{"$lt": v}``,
``{"$lte": v}`` (all of them, when several are given). A dotted key (``"user.level"``)
reaches into nested mappings. A comparison between values of types that do not compare
(``"a" > 1``) is no match.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
"""The ``$`` operators a filter may use."""

Filter = Mapping[str, Any]
"""A metadata filter (see the module docstring)."""


def check_filter(wanted: Any, path: str = "filter") -> None:
    """Refuse an unknown ``$`` operator anywhere in a filter, before anything is read."""
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


def checked_filter(wanted: object) -> Filter | None:
    """``wanted`` as a search's ``filter`` argument: ``None`` or a mapping of str keys."""
    if wanted is None:
        return None
    if not isinstance(wanted, Mapping) or not all(isinstance(k, str) for k in wanted):
        raise InvalidTypeError(
            f"filter must be a dict of metadata keys to wanted values, got "
            f"{type(wanted).__name__}; e.g. filter={{'topic': 'food'}}"
        )
    check_filter(wanted)
    return wanted


def _operator(value: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(value == arg)
    if op == "$ne":
        return bool(value != arg)
    try:
        if op == "$gt":
            return bool(value > arg)
        if op == "$gte":
            return bool(value >= arg)
        if op == "$lt":
            return bool(value < arg)
        if op == "$lte":
            return bool(value <= arg)
    except TypeError:
        return False
    raise InvalidInputError(
        f"unsupported filter operator {op!r}; use {', '.join(OPERATORS[:-1])} or {OPERATORS[-1]}"
    )


def compare(value: Any, wanted: Any) -> bool:
    """Whether ``value`` matches ``wanted``: equal, nested match or ``$`` operators."""
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            return all(_operator(value, op, arg) for op, arg in wanted.items())
        return isinstance(value, Mapping) and all(
            compare(value.get(k), v) for k, v in wanted.items()
        )
    return bool(value == wanted)


def field(value: Mapping[str, Any], key: str) -> Any:
    """``value[key]``; a dotted key (``"user.level"``) reaches into nested mappings."""
    if key in value or "." not in key:
        return value.get(key)
    found: Any = value
    for part in key.split("."):
        if not isinstance(found, Mapping):
            return None
        found = found.get(part)
    return found


def passes(value: Mapping[str, Any], wanted: Filter | None) -> bool:
    """Whether ``value`` (metadata, or a store item's value) passes every key of ``wanted``."""
    if not wanted:
        return True
    return all(compare(field(value, k), v) for k, v in wanted.items())
