"""Checks of ``AgentMemoryStore``'s settings and of a batch's ops, run before anything is
read or written: field paths, TTL minutes, namespaces, keys, values and filters."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from langgraph.store.base import GetOp, ListNamespacesOp, Op, PutOp, SearchOp, TTLConfig
from langgraph.store.base import validate_op_namespace as _validate_labels

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.integrations.store.filters import check_filter
from langchain_agentmem.integrations.store.items import checked_namespace, key_record_id

_TTL_KEYS = ("default_ttl", "refresh_on_read", "sweep_interval_minutes", "omit_expired")
_NAME = r"[^.\[\]{},]+"
_SEGMENT = rf"(?:{_NAME}|\{{{_NAME}(?:,{_NAME})*\}})(?:\[(?:\*|-?\d+)\])*"
_PATH = re.compile(rf"^(?:\$|{_SEGMENT}(?:\.{_SEGMENT})*)$")


def check_fields(fields: object, *, what: str = "fields") -> list[str]:
    """A list of LangGraph field paths, each checked; a clear error naming a bad one."""
    if isinstance(fields, str) or not isinstance(fields, Sequence):
        raise InvalidTypeError(
            f"{what} must be a list of str paths such as ['$'] or ['content'], got {fields!r:.60}"
        )
    out = []
    for path in fields:
        if not isinstance(path, str):
            raise InvalidTypeError(f"{what} holds {path!r:.40}, not a str path")
        if not _PATH.match(path):
            raise InvalidInputError(
                f"field path {path!r} does not parse; use '$' (the whole value), 'a', 'a.b', "
                "'a[0]', 'a[*].b' or 'a.{b,c}'"
            )
        out.append(path)
    return out


def check_ttl_config(ttl: object) -> TTLConfig | None:
    """LangGraph's ``TTLConfig``, checked: known keys, positive minutes."""
    if ttl is None:
        return None
    if not isinstance(ttl, Mapping):
        raise InvalidTypeError(f"ttl must be a TTLConfig dict or None, got {type(ttl).__name__}")
    unknown = sorted(str(k) for k in ttl if k not in _TTL_KEYS)
    if unknown:
        raise InvalidInputError(f"unknown ttl config keys {unknown}; use {list(_TTL_KEYS)}")
    for key in ("default_ttl", "sweep_interval_minutes"):
        if ttl.get(key) is not None:
            check_minutes(ttl[key], what=f"ttl[{key!r}]")
    for key in ("refresh_on_read", "omit_expired"):
        flag = ttl.get(key, True)
        if not isinstance(flag, bool):
            raise InvalidTypeError(f"ttl[{key!r}] must be a bool, got {flag!r}")
    return TTLConfig(**ttl)  # type: ignore[typeddict-item]


def check_minutes(value: object, *, what: str = "ttl") -> float:
    """A positive, finite number of minutes."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidTypeError(f"{what} must be minutes (a number), got {value!r:.40}")
    if not (value > 0 and math.isfinite(value)):
        raise InvalidInputError(
            f"{what} must be a positive number of minutes, got {value!r}; pass ttl=None for "
            "an item that never expires"
        )
    return float(value)


def put_minutes(op: PutOp) -> float | None:
    """The TTL of put ``op`` in minutes, checked (``None``: it never expires)."""
    if op.ttl is None:
        return None
    return check_minutes(op.ttl)


def check_put(op: PutOp, prefix: str) -> None:
    """Refuse a bad put (or delete) to a store with ``prefix``."""
    if not op.namespace:
        raise InvalidInputError("namespace is empty; pass a tuple such as ('memories', 'u1')")
    checked_namespace(prefix, tuple(op.namespace))
    key_record_id(op.key)
    if op.value is None:
        return
    if not isinstance(op.value, Mapping):
        raise InvalidTypeError(
            f"a store value must be a dict, got {type(op.value).__name__}; wrap it as "
            "{'value': ...}"
        )
    if op.index not in (None, False):
        check_fields(op.index, what="index")
    put_minutes(op)


def check_ops(ops: list[Op], prefix: str) -> None:
    """Refuse a batch holding any bad op, before anything is read or written."""
    for op in ops:
        if not isinstance(op, (GetOp, PutOp, SearchOp, ListNamespacesOp)):
            raise InvalidTypeError(
                f"unknown store op {type(op).__name__}; use GetOp, PutOp, SearchOp or "
                "ListNamespacesOp"
            )
        _validate_labels(op)
        if isinstance(op, PutOp):
            check_put(op, prefix)
        elif isinstance(op, GetOp):
            checked_namespace(prefix, tuple(op.namespace))
            key_record_id(op.key)
        elif isinstance(op, SearchOp):
            checked_namespace(prefix, tuple(op.namespace_prefix), what="namespace_prefix")
            if op.limit < 1 or op.offset < 0:
                raise InvalidInputError(
                    f"limit must be >= 1 and offset >= 0, got limit={op.limit}, offset={op.offset}"
                )
            for key, wanted in (op.filter or {}).items():
                check_filter(wanted, f"filter[{key!r}]")
        else:
            for condition in op.match_conditions or ():
                if condition.match_type not in ("prefix", "suffix"):
                    raise InvalidInputError(
                        f"match_type must be 'prefix' or 'suffix', got {condition.match_type!r}"
                    )
