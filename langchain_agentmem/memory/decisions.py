"""What each item of a write does, as named objects the write loop is handed.

A write locks its namespace, opens one transaction, and asks each item's decider for its ops
on the namespace's view and a :class:`~langchain_agentmem.namespace.ops.Lookup` of the store
as they are then (``memory/access.py``, ``WriteBatch.apply``): a check such as "does this id
exist" and the write it leads to are one atomic step. A decider only reads what it is
handed and returns ops; the loop applies them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from langchain_agentmem.annotation.annotations import (
    ANNOTATION,
    Notes,
    annotation,
    current_annotation,
)
from langchain_agentmem.errors import RecordNotFoundError
from langchain_agentmem.memory.items import (
    annotation_op,
    delete_op,
    upsert_op,
    with_offered_expiry,
)
from langchain_agentmem.namespace.ops import Lookup, expired_op
from langchain_agentmem.namespace.view import NamespaceView
from langchain_agentmem.policies import MemoryPolicy
from langchain_agentmem.types import Candidate, MemoryOp


class Decider(Protocol):
    """One item of a write."""

    def decide(self, view: NamespaceView, lookup: Lookup) -> Sequence[MemoryOp]:
        """The item's ops, on the namespace as it is now."""


@dataclass(frozen=True)
class Offer:
    """An add: the policy decides (ADD, UPDATE of a like record, DELETEs to make room, NOOP)."""

    candidate: Candidate
    policy: MemoryPolicy

    def decide(self, view: NamespaceView, lookup: Lookup) -> list[MemoryOp]:
        ops = self.policy.offer(self.candidate, view.state(self.policy, self.candidate))
        return with_offered_expiry(list(ops), self.candidate)


@dataclass(frozen=True)
class Upsert:
    """A put: an existing id is updated in place; a new one is added, the policy deciding
    what else goes to make room."""

    candidate: Candidate
    policy: MemoryPolicy

    def decide(self, view: NamespaceView, lookup: Lookup) -> list[MemoryOp]:
        if lookup.exists(self.candidate.id):
            return [upsert_op(self.candidate)]
        ops = self.policy.decide_put(self.candidate, view.state(self.policy, self.candidate))
        return with_offered_expiry(list(ops), self.candidate)


@dataclass(frozen=True)
class Given:
    """An op its caller decided (an update of a record it checked)."""

    op: MemoryOp

    def decide(self, view: NamespaceView, lookup: Lookup) -> list[MemoryOp]:
        return [self.op]


@dataclass(frozen=True)
class Removal:
    """A delete: the record if it exists; else nothing (``missing_ok``) or an error."""

    namespace: str
    record_id: str
    missing_ok: bool

    def decide(self, view: NamespaceView, lookup: Lookup) -> list[MemoryOp]:
        if lookup.exists(self.record_id):
            return [delete_op(self.record_id)]
        if self.missing_ok:
            return []
        raise RecordNotFoundError(
            f"no record {self.record_id!r} in namespace {self.namespace!r}; "
            "list ids with records(namespace)"
        )


@dataclass(frozen=True)
class Annotating:
    """What ``model`` noted of a record, kept as long as its text is still ``text``: its
    labels and facts, and the earlier statements it makes out of date (``links``, each
    ``(record id, reason)``; one metadata UPDATE, policy ``annotator``)."""

    record_id: str
    text: str
    notes: Notes
    model: str
    links: Sequence[tuple[str, str]] = ()

    def decide(self, view: NamespaceView, lookup: Lookup) -> list[MemoryOp]:
        rid = view.rid_of.get(self.record_id)
        if rid is None or not lookup.exists(self.record_id):
            return []
        row = view.rows[rid]
        if row.text != self.text or current_annotation(row.metadata, self.text):
            return []  # changed, or annotated by another process, meanwhile
        kept = [(old, why) for old, why in self.links if old in view.rid_of]
        note = annotation(self.notes, self.model, self.text, kept)
        metadata = {**row.metadata, ANNOTATION: note}
        return [annotation_op(self.record_id, metadata, self.model, kept)]


@dataclass(frozen=True)
class Expiry:
    """A sweep: delete what has expired."""

    def decide(self, view: NamespaceView, lookup: Lookup) -> list[MemoryOp]:
        expired = lookup.expired()
        return [expired_op(expired)] if expired else []
