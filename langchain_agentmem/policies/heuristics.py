"""Hand-written policies."""

from __future__ import annotations

import math
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.policies.base import MemoryPolicy, require_capacity
from langchain_agentmem.policies.features import TEXTS, importance_score
from langchain_agentmem.types import (
    Candidate,
    MemoryOp,
    MemoryState,
    OpKind,
    RecordStat,
    to_epoch,
)

T = TypeVar("T")


class KeepAllPolicy(MemoryPolicy):
    """Keep every item; no capacity (a question asked before is not stored again: see
    :attr:`MemoryPolicy.repeated_question`)."""

    name = "keep_all"

    def __init__(self, capacity: int | None = None) -> None:
        if capacity is not None:
            raise InvalidInputError(
                f"policy 'keep_all' keeps everything and takes no capacity (got {capacity}); "
                "leave policy out (a capacity alone selects 'learned'), pick another policy "
                "that forgets, such as policy='fifo', or drop capacity"
            )
        super().__init__(None)

    def decide(self, candidate: Candidate, state: MemoryState) -> list[MemoryOp]:
        return [self.add_op(candidate, "keep_all: every item is kept")]


def _overflow(state: MemoryState, capacity: int) -> int:
    """How many records must go before one more fits."""
    return max(0, state.size + 1 - capacity)


class FifoPolicy(MemoryPolicy):
    """Keep the newest ``capacity`` items: the oldest are forgotten first."""

    name = "fifo"
    needs_records = True

    def __init__(self, capacity: int | None = None) -> None:
        super().__init__(require_capacity(self.name, capacity))

    def decide(self, candidate: Candidate, state: MemoryState) -> list[MemoryOp]:
        assert self.capacity is not None  # checked in __init__
        overflow = _overflow(state, self.capacity)
        ops: list[MemoryOp] = []
        if overflow > 0:
            oldest = tuple(r.id for r in state.records[:overflow])
            ops.append(
                self.delete_op(
                    oldest,
                    f"fifo: capacity {self.capacity} reached; forget the oldest "
                    f"{len(oldest)} record(s)",
                )
            )
        ops.append(self.add_op(candidate, f"fifo: keep the newest {self.capacity} items"))
        return ops


def _epoch(value: datetime | None) -> float:
    """UTC epoch seconds of ``value`` (``None``: now)."""
    return time.time() if value is None else to_epoch(value, 0.0)


def _weakest(
    records: tuple[RecordStat, ...], n: int, key: Callable[[RecordStat], float]
) -> list[RecordStat]:
    """The ``n`` records of lowest ``key`` (a linear scan when one must go)."""
    if n == 1:
        return [min(records, key=key)]
    return sorted(records, key=key)[:n]


class LruPolicy(MemoryPolicy):
    """Forget the least recently used record: the one longest neither added nor recalled."""

    name = "lru"
    needs_records = True
    tracks_recalls = True

    def __init__(self, capacity: int | None = None) -> None:
        super().__init__(require_capacity(self.name, capacity))

    def decide(self, candidate: Candidate, state: MemoryState) -> list[MemoryOp]:
        assert self.capacity is not None
        overflow = _overflow(state, self.capacity)
        ops: list[MemoryOp] = []
        if overflow > 0:

            def last_use(r: RecordStat) -> float:
                used = r.last_accessed_at or r.updated_at
                return max(_epoch(used), _epoch(r.created_at))

            victims = _weakest(state.records, overflow, last_use)
            ops.append(
                self.delete_op(
                    tuple(r.id for r in victims),
                    f"lru: capacity {self.capacity} reached; forget the least recently used",
                )
            )
        ops.append(self.add_op(candidate, "lru: new items are the most recently used"))
        return ops


class RandomPolicy(MemoryPolicy):
    """Forget a record chosen at random (seeded) when full: a baseline."""

    name = "random"
    needs_records = True

    def __init__(self, capacity: int | None = None, *, seed: int = 0) -> None:
        super().__init__(require_capacity(self.name, capacity))
        self.seed = seed
        self._rng = random.Random(seed)

    def decide(self, candidate: Candidate, state: MemoryState) -> list[MemoryOp]:
        assert self.capacity is not None
        overflow = _overflow(state, self.capacity)
        ops: list[MemoryOp] = []
        if overflow > 0:
            victims = self._rng.sample([r.id for r in state.records], overflow)
            ops.append(self.delete_op(tuple(victims), f"random: capacity {self.capacity} reached"))
        ops.append(self.add_op(candidate, "random: every new item is added"))
        return ops


def importance(text: str, metadata: Mapping[str, object] | None = None) -> float:
    """How much an item looks worth keeping: names, numbers, dates, images, length.

    Cheap regular-expression features weighted by
    :data:`~langchain_agentmem.policies.features.IMPORTANCE_WEIGHTS`; no model call.
    """
    return importance_score(TEXTS.get(text, metadata)[0])


class PerNamespace(Generic[T]):
    """One object per namespace (made by ``factory``); the least recently used go first.

    Safe to share between threads deciding for different namespaces.
    """

    def __init__(self, factory: Callable[[], T], max_namespaces: int = 1024) -> None:
        self.factory = factory
        self.max_namespaces = max_namespaces
        self._by_namespace: OrderedDict[str, T] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, namespace: str) -> T:
        """The object of ``namespace``."""
        with self._lock:
            found = self._by_namespace.get(namespace)
            if found is None:
                found = self._by_namespace[namespace] = self.factory()
                while len(self._by_namespace) > self.max_namespaces:
                    self._by_namespace.popitem(last=False)
            else:
                self._by_namespace.move_to_end(namespace)
            return found

    def drop(self, namespace: str) -> None:
        """Forget the object of ``namespace`` (a new one is made on its next use)."""
        with self._lock:
            self._by_namespace.pop(namespace, None)


class PriorityPolicy(MemoryPolicy):
    """Keep the ``capacity`` items of highest priority; subclasses say what priority is.

    A stored record's priority is a function of the record alone (:meth:`record_priority`),
    so every process that shares a store ranks its records alike; an offered item is
    admitted when its priority (which may also read the memory) beats the weakest kept.
    Priorities are cached per namespace, for at most ``max_namespaces`` namespaces.
    """

    needs_records = True

    def __init__(self, capacity: int | None = None, *, max_namespaces: int = 1024) -> None:
        super().__init__(require_capacity(self.name, capacity))
        self.priorities: PerNamespace[dict[str, tuple[datetime, float]]] = PerNamespace(
            dict, max_namespaces
        )
        """Per namespace, each record's priority with the ``updated_at`` it was read at."""

    def prepare(self, candidate: Candidate) -> None:
        TEXTS.get(candidate.text, candidate.metadata)

    def forget_namespace(self, namespace: str) -> None:
        self.priorities.drop(namespace)

    def priority(self, candidate: Candidate, state: MemoryState) -> float:
        """The candidate's priority (higher is kept longer)."""
        return importance(candidate.text, candidate.metadata)

    def record_priority(self, text: str, metadata: Mapping[str, Any]) -> float:
        """Priority of a stored record from its text and metadata (the same in every process)."""
        return importance(text, metadata)

    def stored_priority(self, record: RecordStat, namespace: str) -> float:
        """Priority of a stored record of ``namespace`` (cached until the record changes)."""
        cache = self.priorities.of(namespace)
        cached = cache.get(record.id)
        if cached is not None and cached[0] == record.updated_at:
            return cached[1]
        priority = self.record_priority(record.text, record.metadata)
        cache[record.id] = (record.updated_at, priority)
        return priority

    def stored_priorities(self, state: MemoryState) -> npt.NDArray[np.float64]:
        """Priorities of ``state.records``, in order (one pass over the cache)."""
        records = state.records
        cache = self.priorities.of(state.namespace)
        if len(cache) > 2 * state.size + 256:
            live = {r.id for r in records}
            for key in [k for k in cache if k not in live]:
                del cache[key]
        get = cache.get
        nan = (None, math.nan)
        pri = np.fromiter(
            (c[1] if (c := get(r.id, nan))[0] == r.updated_at else math.nan for r in records),
            dtype=np.float64,
            count=len(records),
        )
        for i in np.flatnonzero(np.isnan(pri)).tolist():
            pri[i] = self.stored_priority(records[i], state.namespace)
        return pri

    def weakest(
        self,
        state: MemoryState,
        count: int,
        priorities: npt.NDArray[np.float64] | None = None,
    ) -> tuple[tuple[str, ...], float]:
        """Ids of the ``count`` lowest-priority records and the highest priority among them.

        ``priorities`` (those of ``state.records``, in order) saves a pass when known.
        """
        pri = self.stored_priorities(state) if priorities is None else priorities
        # Ties go to the oldest: records are listed oldest first; argmin and the stable
        # sort return the first of equals.
        if count == 1:
            order = [int(np.argmin(pri))]
        else:
            order = np.argsort(pri, kind="stable")[:count].tolist()
        return tuple(state.records[i].id for i in order), float(pri[order[-1]])

    def keep_or_skip(
        self,
        candidate: Candidate,
        state: MemoryState,
        score: float,
        priorities: npt.NDArray[np.float64] | None = None,
    ) -> list[MemoryOp]:
        """ADD the candidate, evicting the weakest records if full, or skip it (NOOP).

        ``priorities`` (those of ``state.records``, in order) saves a pass when known.
        """
        assert self.capacity is not None
        overflow = _overflow(state, self.capacity)
        cache = self.priorities.of(state.namespace)
        if overflow == 0:
            return [self.add_op(candidate, f"{self.name}: room left; priority {score:.3f}")]
        victims, weakest = self.weakest(state, overflow, priorities)
        if score <= weakest:
            return [
                self.noop(
                    candidate,
                    f"{self.name}: priority {score:.3f} <= weakest kept {weakest:.3f}; skipped",
                )
            ]
        for rid in victims:
            cache.pop(rid, None)
        return [
            self.delete_op(
                victims,
                f"{self.name}: capacity {self.capacity} reached; forget priority {weakest:.3f}",
            ),
            self.add_op(
                candidate, f"{self.name}: priority {score:.3f} > weakest kept {weakest:.3f}"
            ),
        ]

    def decide(self, candidate: Candidate, state: MemoryState) -> list[MemoryOp]:
        return self.keep_or_skip(candidate, state, self.priority(candidate, state))

    def decide_put(self, candidate: Candidate, state: MemoryState) -> list[MemoryOp]:
        """As :meth:`MemoryPolicy.decide_put`; a full memory forgets its weakest records."""
        assert self.capacity is not None
        ops = super().decide_put(candidate, state)
        overflow = _overflow(state, self.capacity)
        if overflow == 0 or any(op.kind is OpKind.DELETE for op in ops):
            return ops
        # decide() declined the item, so it made no room: the weakest records go.
        victims, weakest = self.weakest(state, overflow)
        cache = self.priorities.of(state.namespace)
        for rid in victims:
            cache.pop(rid, None)
        reason = (
            f"{self.name}: capacity {self.capacity} reached by a write by id; forget "
            f"priority {weakest:.3f}"
        )
        return [self.delete_op(victims, reason), *ops]


class ImportancePolicy(PriorityPolicy):
    """Keep the most important items: named entities, numbers, dates, images, length."""

    name = "importance"


class NoveltyPolicy(PriorityPolicy):
    """Importance, less what memory already knows.

    A near-copy of a stored record is skipped (NOOP); a close paraphrase replaces it
    (UPDATE: the newer wording wins); otherwise the importance is lowered by the
    similarity to the nearest record and the item competes for a place.
    """

    name = "novelty"
    needs_neighbours = 3
    duplicate = 0.95
    """Similarity at or above which the candidate is a copy (NOOP)."""
    paraphrase = 0.85
    """Similarity at or above which the candidate replaces its neighbour (UPDATE)."""
    redundancy_floor = 0.6
    """Similarity below which the nearest record costs nothing."""

    def decide(self, candidate: Candidate, state: MemoryState) -> list[MemoryOp]:
        score = importance(candidate.text, candidate.metadata)
        if state.neighbours:
            nearest, sim = state.neighbours[0]
            if sim >= self.duplicate:
                return [self.noop(candidate, f"novelty: copy of {nearest} (cosine {sim:.3f})")]
            if sim >= self.paraphrase:
                # The record now holds the candidate's text: its priority is read again.
                self.priorities.of(state.namespace).pop(nearest, None)
                return [
                    self.update_op(
                        nearest,
                        candidate,
                        f"novelty: restates {nearest} (cosine {sim:.3f}); keep the newer wording",
                    )
                ]
            score -= max(0.0, sim - self.redundancy_floor)
        return self.keep_or_skip(candidate, state, score)


class ForgettingCurvePolicy(PriorityPolicy):
    """MemoryBank-style forgetting: retention ``exp(-age / strength)``.

    Strength starts from the item's importance and grows with every recall; the record
    with the lowest retention is forgotten first. Time is the items' own timestamps
    (``add(..., timestamp=...)``) when given, the clock otherwise.
    """

    name = "forgetting_curve"
    tracks_recalls = True

    def __init__(self, capacity: int | None = None, *, half_life_s: float = 86_400.0) -> None:
        super().__init__(capacity)
        if not half_life_s > 0:
            raise InvalidInputError(f"half_life_s must be > 0, got {half_life_s}")
        self.half_life_s = half_life_s

    def retention(
        self, record: RecordStat, now: float, *, namespace: str = "", priority: float | None = None
    ) -> float:
        """Share of the record (of ``namespace``) still remembered at ``now`` (1 = fresh)."""
        if priority is None:
            priority = self.stored_priority(record, namespace)
        base = max(priority, 0.0)
        strength = self.half_life_s * (1.0 + base) * (1.0 + record.access_count)
        last = max(_epoch(record.last_accessed_at or record.updated_at), _epoch(record.created_at))
        return math.exp(-max(now - last, 0.0) * math.log(2) / strength)

    def decide(self, candidate: Candidate, state: MemoryState) -> list[MemoryOp]:
        assert self.capacity is not None
        ns = state.namespace
        overflow = _overflow(state, self.capacity)
        ops: list[MemoryOp] = []
        if overflow > 0:
            pri = self.stored_priorities(state)  # one pass over the cache
            now = _epoch(candidate.timestamp)
            kept = [
                self.retention(r, now, priority=float(p))
                for r, p in zip(state.records, pri, strict=True)
            ]
            order = np.argsort(kept, kind="stable")[:overflow].tolist()
            ranked = [state.records[i] for i in order]
            worst = kept[order[-1]]
            cache = self.priorities.of(ns)
            for v in ranked:
                cache.pop(v.id, None)
            ops.append(
                self.delete_op(
                    tuple(v.id for v in ranked),
                    f"forgetting_curve: capacity {self.capacity} reached; forget retention "
                    f"{worst:.3f}",
                )
            )
        ops.append(self.add_op(candidate, "forgetting_curve: new items start fully retained"))
        return ops
