"""Times are checked at every door, and one stored time out of range never breaks a read.

A time that lies past year 9999 once told in UTC (``9999-12-31T23:59:59-14:00``) or before
year 1 (``0001-01-01T00:00:00+14:00``) is refused by name wherever a time comes in: an
add's timestamp or expiry, a TTL, an import line, the memory's clock. A row already stored
with such a time (by an older version, or by hand) reads as the nearest end.
"""

from __future__ import annotations

import io
import json
import sqlite3
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from langchain_agentmem import AgentMemory, InvalidInputError
from langchain_agentmem.types import LATEST
from tests.stores import HashEmbeddings

EAST = timezone(timedelta(hours=14))
WEST = timezone(-timedelta(hours=14))
TOO_LATE = datetime(9999, 12, 31, 23, 59, 59, tzinfo=WEST)
TOO_EARLY = datetime(1, 1, 1, 0, 0, tzinfo=EAST)


@pytest.fixture
def memory(tmp_path: Path, hash_embeddings: HashEmbeddings) -> Iterator[AgentMemory]:
    mem = AgentMemory(f"sqlite:///{tmp_path / 'm.db'}", embeddings=hash_embeddings)
    mem.add("I live in Lyon.", namespace="ana")
    yield mem
    mem.close()


@pytest.mark.parametrize(
    "arguments",
    [
        {"expires_at": TOO_LATE},
        {"timestamp": TOO_LATE},
        {"timestamp": TOO_EARLY},
        {"ttl": (LATEST - datetime.now(timezone.utc)).total_seconds() + 86400},
        {"ttl": 1e300},
    ],
)
def test_a_time_out_of_range_is_refused_at_the_door(
    memory: AgentMemory, arguments: dict[str, object]
) -> None:
    refused = "outside the times a record can carry|ends past"
    with pytest.raises(InvalidInputError, match=refused):
        memory.add("I moved to Porto.", namespace="ana", **arguments)  # type: ignore[arg-type]
    if "timestamp" not in arguments:  # add_many and put take expiries, not times
        with pytest.raises(InvalidInputError, match=refused):
            memory.add_many(["I moved to Porto."], namespace="ana", **arguments)  # type: ignore[arg-type]
        with pytest.raises(InvalidInputError, match=refused):
            memory.put("home", "I moved to Porto.", namespace="ana", **arguments)  # type: ignore[arg-type]
    assert [r.text for r in memory.records("ana")] == ["I live in Lyon."]
    assert memory.search("Where do I live?", namespace="ana", k=1)


@pytest.mark.parametrize(
    ("field", "value"),
    [("expires_at", "9999-12-31T23:59:59-14:00"), ("created_at", "0001-01-01T00:00:00+14:00")],
)
def test_an_import_line_out_of_range_is_refused_by_line(
    memory: AgentMemory, field: str, value: str
) -> None:
    out = io.StringIO()
    memory.export_namespace("ana", out)
    lines = out.getvalue().splitlines()
    record = json.loads(lines[1])
    record[field] = value
    record["id"] = "planted"
    source = io.StringIO("\n".join([lines[0], json.dumps(record)]) + "\n")
    with pytest.raises(InvalidInputError, match=rf"line 2: {field} .* outside the times"):
        memory.import_namespace(source, namespace="bob")
    assert memory.records("bob") == []


def test_a_stored_time_out_of_range_reads_as_the_nearest_end(
    tmp_path: Path, hash_embeddings: HashEmbeddings
) -> None:
    path = tmp_path / "m.db"
    with AgentMemory(f"sqlite:///{path}", embeddings=hash_embeddings) as mem:
        mem.add("I live in Lyon.", namespace="ana", ttl=3600)
        mem.add("I have a cat.", namespace="ana")
    with sqlite3.connect(path) as conn:  # as an older version let in
        conn.execute("UPDATE agentmem_records SET expires_at = 253402300800.0 + 86400")
        conn.execute("UPDATE agentmem_records SET created_at = -1e20 WHERE text LIKE '%cat%'")
    with AgentMemory(f"sqlite:///{path}", embeddings=hash_embeddings) as mem:
        records = {r.text: r for r in mem.records("ana")}
        assert set(records) == {"I live in Lyon.", "I have a cat."}
        assert records["I live in Lyon."].expires_at == LATEST
        assert records["I have a cat."].created_at is not None
        assert records["I have a cat."].created_at.year == 1
        assert mem.search("Where do I live?", namespace="ana", k=2)
        out = io.StringIO()
        mem.export_namespace("ana", out)
        assert len(out.getvalue().splitlines()) >= 3
