"""A namespace's change log is read through the ``(namespace, seq)`` index on every store: the
queries a cold load and a catch-up make never walk other namespaces' entries, whatever the
planner's statistics (a log of many namespaces, the asked one written first)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from langchain_agentmem.backends import open_backend
from langchain_agentmem.backends.sql import CHANGES_SINCE, LAST_SEQ, SQLBackend

QUERIES = {
    "last_seq": (LAST_SEQ, ("ana", "~erased:ana", "~erased-ana", "ERASE")),
    "changes_since": (
        CHANGES_SINCE,
        ("ana", 7, "ADD", "UPDATE", "DELETE", "~erased:ana", "~erased-ana", 7, "ERASE"),
    ),
}
OTHERS = 20_000
"""Entries of other namespaces written after ana's: enough for a planner to walk them."""


def _log(backend: SQLBackend) -> None:
    """Ana's 2,000 entries, then the other namespaces' (the planner's statistics taken)."""
    entries = [(f"u{i % 400}" if i >= 2_000 else "ana",) for i in range(2_000 + OTHERS)]
    with backend._write() as cur:  # type: ignore[attr-defined]
        cur.executemany(
            backend.q(
                "INSERT INTO agentmem_decisions (namespace, kind, record_ids, reason, policy, at) "
                "VALUES (?, 'ADD', '[]', 'test', 'test', 0)"
            ),
            entries,
        )
    with backend._write() as cur:  # type: ignore[attr-defined]
        cur.execute("ANALYZE")


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", ()):
        yield from _nodes(child)


def _plan_lines(backend: SQLBackend, sql: str, params: tuple[Any, ...]) -> list[str]:
    """What reads ``agentmem_decisions`` in the plan, and how (the store's own words)."""
    with backend._read() as cur:  # type: ignore[attr-defined]
        if backend.placeholder == "?":
            cur.execute(f"EXPLAIN QUERY PLAN {sql}", params)
            return [str(row[-1]) for row in cur.fetchall() if "agentmem_decisions" in row[-1]]
        cur.execute(f"EXPLAIN (FORMAT JSON) {backend.q(sql)}", params)
        (raw,) = cur.fetchone()
    plan = raw if isinstance(raw, list) else json.loads(raw)
    return [
        f"{node['Node Type']} on {node['Relation Name']}: "
        f"{node.get('Index Cond') or node.get('Recheck Cond') or node.get('Filter')}"
        for node in _nodes(plan[0]["Plan"])
        if node.get("Relation Name") == "agentmem_decisions"
    ]


def test_the_change_log_is_read_by_namespace(shared_store_url: str) -> None:
    backend = open_backend(shared_store_url)
    try:
        assert isinstance(backend, SQLBackend)
        _log(backend)
        plans = {name: _plan_lines(backend, *QUERIES[name]) for name in QUERIES}
        assert backend.last_seq("ana") == 2_000
    finally:
        backend.close()
    for name, lines in plans.items():
        assert len(lines) == 2, (name, lines)  # the namespace's entries, then erasures
        for line in lines:
            if backend.placeholder == "?":
                assert "INDEX agentmem_decisions_ns (namespace" in line, (name, line)
            else:  # the index bounds the namespace (no walk of the log with a filter)
                assert "namespace" in line.split(":", 1)[1], (name, line)
