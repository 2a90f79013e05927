"""What forgetting costs: redacting the audit log on delete, and secure_delete, side by side.

A namespace holds N records (and an audit log of N entries); a fifo policy at capacity
then evicts one record per add. Each variant runs the same adds on a fresh SQLite file:

- ``baseline``: no audit redaction, ``secure_delete`` off (what deleting cost before);
- ``redact``: the audit entries naming a deleted record lose their text;
- ``redact + secure_delete``: the shipped behaviour.

The same adds also run on PostgreSQL (redaction on / off) when it is reachable.
Figures are per-add medians and their ratio to the baseline.

    python benchmarks/forgetting.py [--records 10000] [--adds 200]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from langchain_agentmem import AgentMemory
from langchain_agentmem.backends.sql import SQLTransaction
from tests.stores import PG_URL, HashEmbeddings, create_pg_schema_url, drop_pg_schema


@contextmanager
def _redaction(on: bool) -> Iterator[None]:
    real = SQLTransaction.redact_text
    if not on:
        SQLTransaction.redact_text = lambda self, **kw: 0  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        SQLTransaction.redact_text = real  # type: ignore[method-assign]


def _secure_off(mem: AgentMemory) -> None:
    conn = mem.backend._conn  # type: ignore[attr-defined]
    conn.execute("PRAGMA secure_delete = OFF")


def _fill(url: str, n: int, emb: HashEmbeddings) -> None:
    texts = [f"Record {i}: the user mentioned item {uuid.uuid4().hex[:8]}." for i in range(n)]
    with AgentMemory(url, embeddings=emb, persist_indexes=False) as mem:
        for start in range(0, n, 1000):
            mem.add_many(texts[start : start + 1000], namespace="u")


def _time_adds(
    url: str, n: int, adds: int, emb: HashEmbeddings, tweak: Callable[[AgentMemory], None]
) -> float:
    texts = [f"New fact {i}: {uuid.uuid4().hex}" for i in range(adds)]
    with AgentMemory(url, embeddings=emb, policy="fifo", capacity=n, persist_indexes=False) as mem:
        tweak(mem)
        mem.search("warm", namespace="u")
        times = []
        for text in texts:
            start = time.perf_counter()
            mem.add(text, namespace="u")
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--adds", type=int, default=200)
    args = parser.parse_args()
    emb = HashEmbeddings()
    n = args.records
    print(f"fifo at capacity {n}: one eviction per add; median ms per add ({args.adds} adds)")
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "template.db"
        _fill(f"sqlite:///{template}", n, emb)
        rows: list[tuple[str, float]] = []
        for name, redact, secure in [
            ("sqlite baseline (no redaction, secure_delete off)", False, False),
            ("sqlite redact", True, False),
            ("sqlite redact + secure_delete (shipped)", True, True),
        ]:
            path = Path(tmp) / f"{uuid.uuid4().hex}.db"
            path.write_bytes(template.read_bytes())
            with _redaction(redact):
                tweak = (lambda m: None) if secure else _secure_off
                rows.append((name, _time_adds(f"sqlite:///{path}", n, args.adds, emb, tweak)))
        base = rows[0][1]
        for name, t in rows:
            print(f"  {name:<52} {t * 1000:7.2f} ms   x{t / base:.2f}")
    try:
        pg_rows = []
        for name, redact in [
            ("postgres baseline (no redaction)", False),
            ("postgres redact (shipped)", True),
        ]:
            url, schema = create_pg_schema_url()
            try:
                _fill(url, n, emb)
                with _redaction(redact):
                    pg_rows.append((name, _time_adds(url, n, args.adds, emb, lambda m: None)))
            finally:
                drop_pg_schema(schema)
        base = pg_rows[0][1]
        for name, t in pg_rows:
            print(f"  {name:<52} {t * 1000:7.2f} ms   x{t / base:.2f}")
    except Exception as exc:
        print(f"  postgres skipped ({PG_URL}: {exc})")


if __name__ == "__main__":
    main()
