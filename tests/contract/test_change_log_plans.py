"""A namespace's change log is read through the ``(namespace, seq)`` index on every store: the
queries a cold load and a catch-up make never walk other namespaces' entries."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from langchain_agentmem.backends import open_backend
from langchain_agentmem.backends.sql import CHANGES_SINCE, LAST_SEQ, SQLBackend

QUERIES = {
    "last_seq": (LAST_SEQ, ("ana", "~erased:ana", "~erased-ana", "ERASE")),
    "changes_since": (
        CHANGES_SINCE,
        ("ana", 7, "ADD", "UPDATE", "DELETE", "~erased:ana", "~erased-ana", 7, "ERASE"),
    ),
}


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
        # PostgreSQL plans a scan for a small table whatever the indexes: ask for its
        # best plan that reads no whole table, as it makes for a large one.
        cur.execute("SET enable_seqscan = off")
        try:
            cur.execute(f"EXPLAIN (FORMAT JSON) {backend.q(sql)}", params)
            (raw,) = cur.fetchone()
        finally:
            cur.execute("RESET enable_seqscan")
    plan = raw if isinstance(raw, list) else json.loads(raw)
    return [
        f"{node['Node Type']} on {node['Relation Name']}: "
        f"{node.get('Index Cond') or node.get('Recheck Cond') or node.get('Filter')}"
        for node in _nodes(plan[0]["Plan"])
        if node.get("Relation Name") == "agentmem_decisions"
    ]


@pytest.mark.parametrize("query", sorted(QUERIES))
def test_the_change_log_is_read_by_namespace(shared_store_url: str, query: str) -> None:
    backend = open_backend(shared_store_url)
    try:
        assert isinstance(backend, SQLBackend)
        sql, params = QUERIES[query]
        lines = _plan_lines(backend, sql, params)
    finally:
        backend.close()
    assert len(lines) == 2, lines  # one read for the namespace's entries, one for erasures
    for line in lines:
        if backend.placeholder == "?":
            assert "USING" in line and "INDEX agentmem_decisions_ns (namespace" in line, line
        else:
            assert "namespace" in line.split(":", 1)[1], line  # the index bounds the namespace
