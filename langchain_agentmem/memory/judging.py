"""Which earlier statements the model is asked to judge as made out of date by a new one.

Once the model has annotated a statement, it is asked about at most :data:`JUDGED` earlier
statements of the same speaker: those whose facts set one of its attributes to another
value first, then the closest in meaning (cosine :data:`JUDGE_MIN_COSINE` or more) that
share a label or attribute name with it (:func:`shares_name`). :func:`link_candidates`
picks them from rows and vectors (pure); :class:`MemoryAnnotationStore` is what a memory
hands its :class:`~langchain_agentmem.annotation.annotator.Annotator`: claims, candidates and
writes.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np

from langchain_agentmem.annotation.annotations import (
    SAME_ATTRIBUTE,
    Earlier,
    Notes,
    current_annotation,
    facts_of,
    is_statement,
    labels_of,
    replaced,
)
from langchain_agentmem.annotation.annotator import LinkCandidate
from langchain_agentmem.backends import RecordRow
from langchain_agentmem.memory.access import NamespaceAccess
from langchain_agentmem.memory.labels import LabelVectors
from langchain_agentmem.memory.writes import MemoryWrites
from langchain_agentmem.namespace.view import NamespaceView, speaker_of
from langchain_agentmem.types import MemoryOp, Vector

JUDGED = 2
"""Most earlier statements the model is asked about for one new statement (a judging call
each; measured in ``benchmarks/results/annotations.txt``)."""

JUDGE_MIN_COSINE = 0.3
"""Least cosine of an earlier statement to a new one for the model to judge it when no
fact of theirs names one attribute."""


def same_attribute(a: str, b: str, label_vectors: Mapping[str, Vector]) -> bool:
    """Whether two attribute names are one ("home city", "city of residence"): equal, or
    their embeddings at cosine :data:`~langchain_agentmem.annotation.annotations.SAME_ATTRIBUTE` or
    more."""
    if a == b:
        return True
    va, vb = label_vectors.get(a), label_vectors.get(b)
    return va is not None and vb is not None and float(va @ vb) >= SAME_ATTRIBUTE


def shares_name(mine: set[str], theirs: set[str], label_vectors: Mapping[str, Vector]) -> bool:
    """Whether two statements' labels and attribute names share one."""
    return any(same_attribute(a, b, label_vectors) for a in mine for b in theirs)


def link_candidates(
    notes: Notes,
    earlier: Sequence[RecordRow],
    vectors: np.ndarray,
    label_vectors: Mapping[str, Vector],
) -> list[LinkCandidate]:
    """The earlier statements (``earlier``, oldest first) a statement noted as ``notes``
    may make out of date, for the model to judge: those that set one of its attributes to
    another value first, then the closest in meaning (cosine :data:`JUDGE_MIN_COSINE` or
    more); at most :data:`JUDGED`, and one close in meaning only when it shares a label or
    attribute name with the statement (:func:`shares_name`).

    Args:
        notes: What the model noted of the new statement.
        earlier: The earlier statements of its speaker, oldest first.
        vectors: The new statement's embedding, then those of ``earlier``, in order.
        label_vectors: Embeddings of label and attribute names (those missing match only
            themselves).
    """
    mine = set(notes.about) | set(notes.facts)

    def same(a: str, b: str) -> bool:
        return same_attribute(a, b, label_vectors)

    by_facts = dict(replaced(notes.facts, _earlier(earlier), same))
    found = dict(by_facts)
    about = " / ".join(dict.fromkeys((*notes.facts, *notes.about))) or "statement"
    cosines = vectors[1:] @ vectors[0]
    for i in np.argsort(-cosines, kind="stable").tolist():
        if len(found) >= JUDGED or cosines[i] < JUDGE_MIN_COSINE:
            break
        found.setdefault(earlier[i].id, f"{about}: the model judged it replaced")
    by_id = {other.id: other for other in earlier}
    return [
        LinkCandidate(old, by_id[old].text, why)
        for old, why in list(found.items())[:JUDGED]
        if old in by_facts or shares_name(mine, _names(by_id[old]), label_vectors)
    ]


class MemoryAnnotationStore:
    """What a memory's :class:`~langchain_agentmem.annotation.annotator.Annotator` claims, reads and
    writes through (an :class:`~langchain_agentmem.annotation.annotator.AnnotationStore`).

    Args:
        access: The memory's namespaces' access (claims are made as its ``holder``).
        writes: The memory's writes (an annotation is one write).
        labels: The memory's label and attribute-name embeddings.
    """

    def __init__(self, access: NamespaceAccess, writes: MemoryWrites, labels: LabelVectors) -> None:
        self.access = access
        self.writes = writes
        self.labels = labels

    def claim(self, namespace: str, record_id: str, text: str, seconds: float) -> bool | None:
        """Claim a record for annotation by this memory for ``seconds`` (see
        :meth:`~langchain_agentmem.annotation.annotator.AnnotationStore.claim`)."""
        backend = self.access.backend
        row = backend.get_record(namespace, record_id)
        if row is None or row.text != text or current_annotation(row.metadata, text):
            return None
        now = time.time()
        return backend.claim(namespace, record_id, self.access.holder, until=now + seconds, now=now)

    def release(self, namespace: str, record_id: str) -> None:
        """Drop this memory's claim on annotating a record."""
        self.access.backend.release(namespace, record_id, self.access.holder)

    def store(
        self,
        namespace: str,
        record_id: str,
        text: str,
        notes: Notes,
        model: str,
        links: Sequence[tuple[str, str]] = (),
    ) -> list[MemoryOp]:
        """Write what ``model`` noted of a record whose text is still ``text`` (see
        :meth:`~langchain_agentmem.memory.writes.MemoryWrites.store_annotation`)."""
        return self.writes.store_annotation(namespace, record_id, text, notes, model, links)

    def link_candidates(
        self, namespace: str, record_id: str, text: str, notes: Notes
    ) -> list[LinkCandidate]:
        """The earlier statements of a record's speaker it may make out of date, for the
        model to judge (:func:`link_candidates`); none when its text is no longer
        ``text``."""
        self._embed_names(set(notes.about) | set(notes.facts), namespace)
        with self.access.lock(namespace):
            view = self.access.live_view(namespace)
            rid = view.rid_of.get(record_id)
            if rid is None or view.rows[rid].text != text:
                return []
            row = view.rows[rid]
            earlier = _earlier_statements(view, row)
            if not earlier:
                return []
            vectors = view.embeddings([rid, *(other.rid for other in earlier)])
        return link_candidates(notes, earlier, vectors, self.labels.vectors)

    def _embed_names(self, names: set[str], namespace: str) -> None:
        """Embed the attribute and label names of ``namespace`` not embedded yet."""
        with self.access.lock(namespace):
            view = self.access.live_view(namespace)
            known = {k for row in view.rows.values() for k in _names(row)}
        self.labels.embed(sorted(names | known))


def _facts(row: RecordRow) -> dict[str, str]:
    return facts_of(current_annotation(row.metadata, row.text))


def _names(row: RecordRow) -> set[str]:
    """A record's labels and attribute names (none before it is annotated)."""
    note = current_annotation(row.metadata, row.text)
    return set(labels_of(note)) | set(facts_of(note))


def _earlier_statements(view: NamespaceView, row: RecordRow) -> list[RecordRow]:
    """The statements of ``row``'s speaker stored before it, oldest first."""
    who = speaker_of(row.metadata)
    found = [
        other
        for other in view.rows.values()
        if other.rid != row.rid
        and (other.created_at, other.rid) < (row.created_at, row.rid)
        and speaker_of(other.metadata) == who
        and is_statement(other.text, other.metadata)
    ]
    return sorted(found, key=lambda other: (other.created_at, other.rid))


def _earlier(rows: Sequence[RecordRow]) -> list[Earlier]:
    """The annotated ones of ``rows``, as replacement reads them."""
    return [Earlier(row.id, facts) for row in rows if (facts := _facts(row))]
