"""The live records of a store's namespaces with their field vectors, decoded once and
cached between searches, and how the field vectors are packed into a record's metadata."""

from __future__ import annotations

import base64
import collections
import dataclasses
import math
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from langchain_agentmem.types import MemoryRecord, Vector

if TYPE_CHECKING:
    from langchain_agentmem.memory import AgentMemory


def pack_vector(vector: Vector) -> str:
    """``vector`` as base64 of little-endian float32s (a field vector in metadata)."""
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def _unpack(text: str) -> Vector:
    """The vector :func:`pack_vector` packed into ``text``."""
    return np.frombuffer(base64.b64decode(text), dtype="<f4").astype(np.float32)


SCAN_RECORDS = 50_000
"""Most records whose decoded field vectors a store keeps between searches (whole
namespaces, least recently searched dropped first; the namespace searched last is always
kept)."""


@dataclass(frozen=True)
class _Entry:
    """One live record of a scanned namespace, its order and its decoded field vectors."""

    order: tuple[float, str]
    """``(created_at, id)``: oldest first, as the store lists records."""
    record: MemoryRecord
    vectors: tuple[Vector, ...]


@dataclass(frozen=True)
class Scan:
    """One namespace's live records and their field vectors, as of change ``seq``."""

    seq: int
    entries: dict[str, _Entry]
    records: list[MemoryRecord]
    vectors: np.ndarray
    """Every indexed field's vector, stacked (rows, dims); zero rows when none."""
    owner: np.ndarray
    """For each row of ``vectors``, the index of its record in ``records``."""
    expiry: float
    """The earliest expiry among ``records`` (``inf``: none expires)."""


def _entry(record: MemoryRecord) -> _Entry:
    """A stored record with its field vectors decoded (none when missing or malformed)."""
    vectors: tuple[Vector, ...] = ()
    packed = record.metadata.get("lg_vectors")
    if isinstance(packed, list) and packed:
        try:
            decoded = tuple(_unpack(p) for p in packed)
        except (ValueError, TypeError):
            decoded = ()
        if decoded and len({v.shape for v in decoded}) == 1:
            vectors = decoded
    # The record's own embedding is not needed to rank fields; leaving it out halves the cache.
    record = dataclasses.replace(record, embedding=None)
    created = record.created_at.timestamp() if record.created_at is not None else 0.0
    return _Entry((created, record.id), record, vectors)


def _scan_of(seq: int, entries: dict[str, _Entry]) -> Scan:
    """Stack the entries' vectors, records in the store's order."""
    ordered = sorted(entries.values(), key=lambda e: e.order)
    dims = next((e.vectors[0].shape for e in ordered if e.vectors), None)
    rows: list[Vector] = []
    owner: list[int] = []
    for i, e in enumerate(ordered):
        if e.vectors and e.vectors[0].shape == dims:
            rows.extend(e.vectors)
            owner.extend([i] * len(e.vectors))
    expiries = [e.record.expires_at.timestamp() for e in ordered if e.record.expires_at]
    return Scan(
        seq=seq,
        entries=entries,
        records=[e.record for e in ordered],
        vectors=np.stack(rows) if rows else np.zeros((0, 0), dtype=np.float32),
        owner=np.asarray(owner, dtype=np.int64),
        expiry=min(expiries, default=math.inf),
    )


class ScanCache:
    """Scans of namespaces, least recently searched dropped first past
    :data:`SCAN_RECORDS` records; safe to share between threads."""

    def __init__(self) -> None:
        self._scans: collections.OrderedDict[str, Scan] = collections.OrderedDict()
        self._lock = threading.Lock()

    def scan(self, memory: AgentMemory, name: str) -> Scan:
        """The live records of ``name`` with their field vectors, decoded once per record.

        Reused while the namespace's change log has not moved and none of its records has
        reached its expiry (a TTL refresh only moves expiries later); caught up from the
        change log otherwise, reading only the records it names; read whole after an erase,
        an expiry, or the first time.
        """
        seq = memory.version(name)
        now = time.time()  # the clock expiries are read from everywhere
        with self._lock:
            cached = self._scans.get(name)
        entries: dict[str, _Entry] | None = None
        if cached is not None and cached.expiry > now:
            if cached.seq == seq:
                with self._lock:
                    self._scans[name] = cached
                    self._scans.move_to_end(name)
                return cached
            changed = memory.changes(name, cached.seq)
            if changed is not None:
                entries = dict(cached.entries)
                for record_id in changed.touched:
                    entries.pop(record_id, None)
                entries.update((i, _entry(record)) for i, record in changed.records.items())
                seq = max(seq, changed.version)
        if entries is None:
            entries = {record.id: _entry(record) for record in memory.records(name)}
        scan = _scan_of(seq, entries)
        with self._lock:
            self._scans[name] = scan
            self._scans.move_to_end(name)
            held = sum(len(x.records) for x in self._scans.values())
            while held > SCAN_RECORDS and len(self._scans) > 1:
                _, dropped = self._scans.popitem(last=False)
                held -= len(dropped.records)
        return scan


def scores(scan: Scan, query: Vector) -> list[float | None]:
    """Each record's best field similarity to ``query`` (``None``: nothing indexed)."""
    best: list[float | None] = [None] * len(scan.records)
    if not scan.owner.size or scan.vectors.shape[1] != query.shape[0]:
        return best
    sims = scan.vectors @ np.asarray(query, dtype=np.float32)
    top = np.full(len(scan.records), -np.inf)
    np.maximum.at(top, scan.owner, sims)
    for i in np.flatnonzero(np.isfinite(top)).tolist():
        best[i] = float(top[i])
    return best
