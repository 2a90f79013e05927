"""The policy contract."""

from __future__ import annotations

import abc

from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.types import Candidate, MemoryOp, MemoryState, OpKind


class MemoryPolicy(abc.ABC):
    """Decides what long-term memory does with each offered item.

    Policies are pure: ``decide`` reads the candidate and a state snapshot and returns
    ops; it performs no I/O. The memory applies the ops in one transaction.
    """

    name: str = "policy"
    needs_records: bool = False
    """Whether ``decide`` reads ``state.records`` (the memory then fills it)."""
    needs_neighbours: int = 0
    """How many nearest stored records ``decide`` wants in ``state.neighbours``."""
    tracks_recalls: bool = False
    """Whether recalls matter to the policy (the memory then notes each search hit)."""
    repeated_question: float | None = 0.85
    """Cosine at or above which a question the memory holds already, asked by the same
    speaker in words one of the two holds all of, is not stored again (NOOP; ``None``:
    every question goes to :meth:`decide`).
    A question shows what the user cares about, rarely the answer, and copies of it crowd
    out the facts it asks about."""

    def __init__(self, capacity: int | None = None) -> None:
        self.capacity = capacity

    def offer(self, candidate: Candidate, state: MemoryState) -> list[MemoryOp]:
        """The ops for an offered ``candidate``: a NOOP for a question asked before (see
        :attr:`repeated_question`), else :meth:`decide`'s."""
        if state.asked_before is not None:
            record_id, cosine = state.asked_before
            return [
                self.noop(
                    candidate,
                    f"{self.name}: asked before, as {record_id} (cosine {cosine:.3f}); "
                    "not stored again",
                )
            ]
        return self.decide(candidate, state)

    @abc.abstractmethod
    def decide(self, candidate: Candidate, state: MemoryState) -> list[MemoryOp]:
        """Return the ops for ``candidate`` given ``state``."""

    def decide_put(self, candidate: Candidate, state: MemoryState) -> list[MemoryOp]:
        """Return the ops for a write by id of a new ``candidate``: it is always added.

        A write by id names where the item lands, so the policy may forget other records
        to make room but neither decline the item (NOOP) nor fold it into another record
        (UPDATE). This keeps :meth:`decide`'s DELETEs and its ADD of the candidate, and adds
        the candidate where :meth:`decide` did not.
        """
        ops = self.decide(candidate, state)
        kept = [op for op in ops if op.kind is OpKind.DELETE or _adds(op, candidate)]
        if any(_adds(op, candidate) for op in kept):
            return kept
        declined = "; ".join(op.reason for op in ops if op.kind is not OpKind.DELETE)
        reason = f"{declined}; not applied: a write by id is added under its id"
        return [*kept, self.add_op(candidate, reason.lstrip("; "))]

    def forget_namespace(self, namespace: str) -> None:
        """Drop what the policy holds of an erased namespace (caches of its records)."""
        return None

    def prepare(self, candidate: Candidate) -> None:
        """Do the candidate's own work (features of its text) ahead of :meth:`decide`.

        Called before the namespace is locked, so one long text does not hold up other
        writers; :meth:`decide` must decide the same whether or not this ran.
        """
        return None

    def add_op(self, candidate: Candidate, reason: str) -> MemoryOp:
        """The ADD op for ``candidate``."""
        return MemoryOp(
            kind=OpKind.ADD,
            record_ids=(candidate.id,),
            reason=reason,
            text=candidate.text,
            metadata=candidate.metadata,
            thread=candidate.thread,
            timestamp=candidate.timestamp,
            embedding=candidate.embedding,
            policy=self.name,
            expires_at=candidate.expires_at,
        )

    def update_op(self, record_id: str, candidate: Candidate, reason: str) -> MemoryOp:
        """An UPDATE op: ``record_id`` takes the candidate's text (its metadata is kept)."""
        return MemoryOp(
            kind=OpKind.UPDATE,
            record_ids=(record_id,),
            reason=reason,
            text=candidate.text,
            embedding=candidate.embedding,
            policy=self.name,
        )

    def delete_op(self, record_ids: tuple[str, ...], reason: str) -> MemoryOp:
        """A DELETE op."""
        return MemoryOp(kind=OpKind.DELETE, record_ids=record_ids, reason=reason, policy=self.name)

    def noop(self, candidate: Candidate, reason: str) -> MemoryOp:
        """A NOOP op: the candidate is not kept."""
        return MemoryOp(kind=OpKind.NOOP, reason=reason, text=candidate.text, policy=self.name)


def _adds(op: MemoryOp, candidate: Candidate) -> bool:
    return op.kind is OpKind.ADD and op.record_ids == (candidate.id,)


def require_capacity(name: str, capacity: int | None) -> int:
    """The capacity of a policy that forgets; a clear error when it is missing."""
    if capacity is None:
        raise InvalidInputError(
            f"policy {name!r} needs a capacity; pass capacity=N (the most records to keep)"
        )
    return capacity
