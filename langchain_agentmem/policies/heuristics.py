"""Hand-written policies."""

from __future__ import annotations

from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.policies.base import MemoryPolicy
from langchain_agentmem.types import Candidate, MemoryOp, MemoryState


class KeepAllPolicy(MemoryPolicy):
    """Keep every item; no capacity."""

    name = "keep_all"

    def __init__(self, capacity: int | None = None) -> None:
        if capacity is not None:
            raise InvalidInputError(
                f"policy 'keep_all' keeps everything and takes no capacity (got {capacity}); "
                "pick a policy that forgets, such as policy='fifo', or drop capacity"
            )
        super().__init__(None)

    def decide(self, candidate: Candidate, state: MemoryState) -> list[MemoryOp]:
        return [self.add_op(candidate, "keep_all: every item is kept")]


class FifoPolicy(MemoryPolicy):
    """Keep the newest ``capacity`` items: the oldest are forgotten first."""

    name = "fifo"
    needs_records = True

    def __init__(self, capacity: int | None = None) -> None:
        if capacity is None:
            raise InvalidInputError(
                "policy 'fifo' needs a capacity; pass capacity=N (the most records to keep)"
            )
        super().__init__(capacity)

    def decide(self, candidate: Candidate, state: MemoryState) -> list[MemoryOp]:
        assert self.capacity is not None  # checked in __init__
        overflow = state.size + 1 - self.capacity
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
