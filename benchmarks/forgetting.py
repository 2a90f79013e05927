"""What forgetting costs: audit redaction and secure_delete on each delete, side by side.

A namespace holds N records (and an audit log of N ADD entries); then records are deleted
one by one with ``memory.delete``. Each variant deletes the same records from a fresh copy
of the same store; variants alternate over several rounds (the machine is shared), and
each figure is the median over rounds of the per-delete median:

- ``baseline``: no audit redaction, ``secure_delete`` off (what a delete cost before);
- ``redact``: the audit entries naming the deleted record lose their text;
- ``redact + secure_delete``: the shipped behaviour.

PostgreSQL runs the same deletes (redaction off / on) on fresh schemas.

    python benchmarks/forgetting.py [--records 10000] [--deletes 100] [--rounds 3]
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
from langchain_agentmem.backends.sql_transaction import SQLTransaction
from tests.stores import HashEmbeddings, create_pg_schema_url, drop_pg_schema


@contextmanager
def _redaction(on: bool) -> Iterator[None]:
    real = SQLTransaction.redact_text
    if not on:
        SQLTransaction.redact_text = lambda self, **kw: 0  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        SQLTransaction.redact_text = real  # type: ignore[method-assign]


def _fill(url: str, n: int, emb: HashEmbeddings) -> list[str]:
    texts = [f"Record {i}: the user mentioned item {uuid.uuid4().hex[:8]}." for i in range(n)]
    with AgentMemory(url, embeddings=emb, persist_indexes=False) as mem:
        for start in range(0, n, 1000):
            mem.add_many(texts[start : start + 1000], namespace="u")
        return [r.id for r in mem.records("u")]


def _time_deletes(
    url: str, ids: list[str], emb: HashEmbeddings, tweak: Callable[[AgentMemory], None]
) -> float:
    with AgentMemory(url, embeddings=emb, persist_indexes=False) as mem:
        tweak(mem)
        mem.search("warm", namespace="u")
        times = []
        for rid in ids:
            start = time.perf_counter()
            mem.delete(rid, namespace="u")
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def _secure_off(mem: AgentMemory) -> None:
    mem.backend._conn.execute("PRAGMA secure_delete = OFF")  # type: ignore[attr-defined]


def _keep(mem: AgentMemory) -> None:
    pass


def _print(rows: dict[str, list[float]]) -> None:
    medians = {name: statistics.median(ts) for name, ts in rows.items()}
    base = next(iter(medians.values()))
    for name, t in medians.items():
        print(f"  {name:<52} {t * 1000:7.2f} ms   x{t / base:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--deletes", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    emb = HashEmbeddings()
    n = args.records
    print(
        f"{n} records, then {args.deletes} deletes one by one; median ms per delete, "
        f"median of {args.rounds} alternating rounds"
    )
    sqlite_variants = [
        ("sqlite baseline (no redaction, secure_delete off)", False, _secure_off),
        ("sqlite redact", True, _secure_off),
        ("sqlite redact + secure_delete (shipped)", True, _keep),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "template.db"
        ids = _fill(f"sqlite:///{template}", n, emb)[:: max(1, n // args.deletes)][: args.deletes]
        rows: dict[str, list[float]] = {name: [] for name, _, _ in sqlite_variants}
        for _ in range(args.rounds):
            for name, redact, tweak in sqlite_variants:
                path = Path(tmp) / f"{uuid.uuid4().hex}.db"
                path.write_bytes(template.read_bytes())
                with _redaction(redact):
                    rows[name].append(_time_deletes(f"sqlite:///{path}", ids, emb, tweak))
                path.unlink()
        _print(rows)
    pg_rows: dict[str, list[float]] = {
        "postgres baseline (no redaction)": [],
        "postgres redact (shipped)": [],
    }
    for _ in range(args.rounds):
        for name, redact in zip(pg_rows, (False, True), strict=True):
            url, schema = create_pg_schema_url()
            try:
                pg_ids = _fill(url, n, emb)[:: max(1, n // args.deletes)][: args.deletes]
                with _redaction(redact):
                    pg_rows[name].append(_time_deletes(url, pg_ids, emb, _keep))
            finally:
                drop_pg_schema(schema)
    _print(pg_rows)


if __name__ == "__main__":
    main()
