"""One namespace as a process holds it: its dense and lexical indexes and record stats.

A cache of the store (which stays the source of truth): built from the store's rows,
caught up from its change log, or mirrored from ops inside the write transaction that
applies them.
"""

from __future__ import annotations

import bisect
import copy
import dataclasses
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from langchain_agentmem.annotation.annotations import current_annotation, labels_of, links_of
from langchain_agentmem.backends import RecordRow
from langchain_agentmem.backends.encoding import dump_json, epoch_to_datetime
from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.index import DenseIndex
from langchain_agentmem.index.text import TextTerms, read_stored_terms
from langchain_agentmem.policies import MemoryPolicy
from langchain_agentmem.policies.features import content_words
from langchain_agentmem.ranking import hybrid_search
from langchain_agentmem.ranking.corpus import Indexed
from langchain_agentmem.ranking.query import Query
from langchain_agentmem.text.replies import only_asks, reply_of
from langchain_agentmem.types import (
    Candidate,
    MemoryOp,
    MemoryState,
    OpKind,
    RecordStat,
    Vector,
    expiry_epoch,
    to_epoch,
)


def record_stat(row: RecordRow) -> RecordStat:
    """What a policy sees of a stored row."""
    return RecordStat(
        id=row.id,
        created_at=epoch_to_datetime(row.created_at),
        updated_at=epoch_to_datetime(row.updated_at),
        last_accessed_at=None
        if row.last_accessed_at is None
        else epoch_to_datetime(row.last_accessed_at),
        access_count=row.access_count,
        text=row.text,
        metadata=row.metadata,
        thread=row.thread,
    )


def as_stored(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Metadata as the store gives it back (a JSON round trip; flat dicts are copied)."""
    if all(type(v) in _SCALARS for v in metadata.values()):
        return dict(metadata)
    loaded: dict[str, Any] = json.loads(dump_json(dict(metadata)))
    return loaded


_SCALARS = frozenset({str, int, float, bool, type(None)})


_NO_VECTOR: Vector = np.zeros(0, dtype=np.float32)


def speaker_of(metadata: Mapping[str, Any] | None) -> str | None:
    """Who said a record: its ``speaker``, else its ``role`` (``None``: unknown)."""
    who = (metadata.get("speaker") or metadata.get("role")) if metadata else None
    return None if who is None else str(who)


def named_speaker(metadata: Mapping[str, Any] | None) -> str | None:
    """A record's speaker's name (``metadata["speaker"]``; roles are not names)."""
    who = metadata.get("speaker") if metadata else None
    return who if isinstance(who, str) and who.strip() else None


@dataclass
class NamespaceView(Indexed):
    """The cache of one namespace: its text side (:class:`Indexed`), the dense index and
    the stored rows with what policies see of them.

    A :class:`~langchain_agentmem.ranking.corpus.Corpus` once it holds a record.
    """

    index: DenseIndex | None = None
    last_seq: int = 0
    rid_of: dict[str, int] = field(default_factory=dict)
    rows: dict[int, RecordRow] = field(default_factory=dict)
    saved_seq: int = -1
    """Change sequence of the index file on disk (-1: none written by this process)."""
    pending: dict[int, Vector] = field(default_factory=dict)
    """Vectors put with ``dense=False`` during a batch, added to the index in one call."""
    doomed: set[int] = field(default_factory=set)
    """Keys dropped since the last flush, still in the dense index."""
    next_expiry: float | None = None
    """Earliest expiry among the cached rows (may lag low after deletes; never high)."""
    _by_age: list[tuple[float, int]] | None = None
    """``(created_at, rid)`` of every record, sorted; built when a policy first needs it."""
    _stats: list[RecordStat] = field(default_factory=list)
    """What policies see of each record, in the order of ``_by_age``."""
    _snapshot: tuple[RecordStat, ...] | None = None
    """``tuple(_stats)`` until the next change (one object while nothing changes)."""
    speakers: Counter[str] = field(default_factory=Counter)
    """How many records each named speaker (``metadata["speaker"]``) holds."""
    labels: Counter[str] = field(default_factory=Counter)
    """How many records hold each label (what a model said they are about)."""

    @property
    def dense(self) -> DenseIndex:
        """The dense index (once a record is held)."""
        assert self.index is not None, "an empty namespace has no dense index"
        return self.index

    def put(self, row: RecordRow, *, dense: bool = True, terms: TextTerms | None = None) -> None:
        """Index ``row`` (``terms``: its text already read, see :func:`text_terms`)."""
        self._check_dimensions(row.id, row.namespace, int(row.embedding.shape[0]))
        if dense:
            self.flush()
            self.dense.add([row.rid], row.embedding.reshape(1, -1))
        # The vector lives in the dense index (or ``pending``): not a second copy here.
        row = copy.copy(row)
        object.__setattr__(row, "embedding", _NO_VECTOR)
        self._keep(row, terms)

    def _check_dimensions(self, record_id: str, namespace: str, dims: int) -> None:
        """Make the dense index on the first record; refuse a vector of another length."""
        if self.index is None:
            self.index = DenseIndex(dims, hnsw_threshold=self.config.hnsw_threshold)
        elif self.index.dimensions != dims:
            raise InvalidInputError(
                f"record {record_id!r} has a {dims}-dim embedding but namespace "
                f"{namespace!r} holds {self.index.dimensions}-dim ones; use the same "
                "embedding model for one store, or open a new store"
            )

    def _keep(self, row: RecordRow, terms: TextTerms | None) -> None:
        """Hold and index the text side of ``row`` (its vector already placed): its terms
        given, else as its row stored them, else read from its text."""
        if terms is None:
            terms = read_stored_terms(row.terms)
        if row.terms is not None:
            object.__setattr__(row, "terms", None)  # indexed now: not held twice
        self._index_row(row, terms)
        if row.expires_at is not None and (
            self.next_expiry is None or row.expires_at < self.next_expiry
        ):
            self.next_expiry = row.expires_at
        self.rid_of[row.id] = row.rid
        self._forget_speaker(self.rows.get(row.rid))
        self.rows[row.rid] = row
        name = named_speaker(row.metadata)
        if name is not None:
            self.speakers[name] += 1
        self._snapshot = None
        if self._by_age is not None:
            key = (row.created_at, row.rid)
            i = bisect.bisect_left(self._by_age, key)
            if i < len(self._by_age) and self._by_age[i] == key:
                self._stats[i] = record_stat(row)
            else:
                self._by_age.insert(i, key)
                self._stats.insert(i, record_stat(row))

    def advance(self, seq: int) -> None:
        """Note that the view holds the store's changes up to ``seq``."""
        self.last_seq = max(self.last_seq, seq)

    def mark_saved(self, seq: int) -> None:
        """Note that the dense index on disk is as of change ``seq`` (-1: none is current)."""
        self.saved_seq = seq

    def adopt(self, index: DenseIndex, rows: list[RecordRow]) -> None:
        """Index ``rows`` around ``index``, which holds their vectors (loaded from disk)."""
        self.index = index
        for row in rows:
            self.put(row, dense=False)

    def _index_row(self, row: RecordRow, terms: TextTerms | None = None) -> None:
        """Index ``row``'s text side, its current annotation included (``terms``: its text
        already read)."""
        note = current_annotation(row.metadata, row.text)
        labels = labels_of(note)
        self.index_text(
            row.rid,
            row.text,
            row.created_at,
            thread=row.thread,
            speaker=speaker_of(row.metadata),
            reply_to=reply_of(row.metadata),
            terms=terms,
            labels=labels,
            record_id=row.id,
            replaces=links_of(note),
        )
        if labels:
            self.labels.update(labels)

    def _forget_speaker(self, row: RecordRow | None) -> None:
        name = None if row is None else named_speaker(row.metadata)
        if name is not None:
            self.speakers[name] -= 1
            if self.speakers[name] <= 0:
                del self.speakers[name]
        if row is not None:
            self.labels.subtract(labels_of(current_annotation(row.metadata, row.text)))
            self.labels += Counter()  # drops labels no record holds any more

    def annotate(self, record_id: str, metadata: Mapping[str, Any]) -> None:
        """Mirror a change of a record's metadata alone (a model's annotation): its text
        side is indexed again; its vector stays where it is."""
        rid = self.rid_of.get(record_id)
        if rid is None:
            return
        old = self.rows[rid]
        row = dataclasses.replace(old, metadata=as_stored(metadata))
        self._forget_speaker(old)
        self.rows[rid] = row
        name = named_speaker(row.metadata)
        if name is not None:
            self.speakers[name] += 1
        self._index_row(row)
        self._snapshot = None
        if self._by_age is not None:
            self._stats[bisect.bisect_left(self._by_age, (row.created_at, rid))] = record_stat(row)

    def due(self, now: float) -> bool:
        """Whether some cached row may have expired by ``now``."""
        return self.next_expiry is not None and self.next_expiry <= now

    def expiry_at_most(self, at: float | None) -> None:
        """Note that some record expires at ``at`` (``None``: nothing new expires)."""
        if at is not None and (self.next_expiry is None or at < self.next_expiry):
            self.next_expiry = at

    def recount_expiry(self) -> None:
        """Read the earliest expiry again from the cached rows (after a sweep)."""
        self.next_expiry = min(
            (r.expires_at for r in self.rows.values() if r.expires_at is not None),
            default=None,
        )

    def set_expiry(self, record_ids: Sequence[str], at: float | None) -> None:
        """Mirror a move of the expiry of ``record_ids`` to ``at`` (``None``: never)."""
        for rid in [self.rid_of[i] for i in record_ids if i in self.rid_of]:
            self.rows[rid] = dataclasses.replace(self.rows[rid], expires_at=at)
        self.expiry_at_most(at)

    def drop(self, record_id: str) -> None:
        rid = self.rid_of.pop(record_id, None)
        if rid is not None:
            row = self.rows.pop(rid, None)
            self._forget_speaker(row)
            self._snapshot = None
            if row is not None and self._by_age is not None:
                i = bisect.bisect_left(self._by_age, (row.created_at, rid))
                del self._by_age[i], self._stats[i]
            self.pending.pop(rid, None)
            self.unindex_text(rid)
            # Taken out of the dense index at the next flush: one call for a batch (a
            # flat index compacts all its vectors on every removal).
            self.doomed.add(rid)

    def fill(self, rows: list[RecordRow]) -> None:
        """Index ``rows`` in bulk, in one faiss call, exactly (past the HNSW threshold the
        index :attr:`~langchain_agentmem.index.dense.DenseIndex.wants_graph`: the cache builds
        it off the request). ``rows`` are this view's from now on: their vectors move into
        the index."""
        for row in rows:
            self._check_dimensions(row.id, row.namespace, int(row.embedding.shape[0]))
        self.dense.add([r.rid for r in rows], np.stack([r.embedding for r in rows]), graph=False)
        for row in rows:
            object.__setattr__(row, "embedding", _NO_VECTOR)
            self._keep(row, None)

    def flush(self) -> None:
        """Bring the dense index in step: removals, then vectors held back, one call each."""
        if self.doomed and self.index is not None:
            self.index.remove(sorted(self.doomed))
        self.doomed.clear()
        if self.pending and self.index is not None:
            rids = list(self.pending)
            self.index.add(rids, np.stack([self.pending[r] for r in rids]))
        self.pending.clear()

    def apply(
        self,
        namespace: str,
        applied: Sequence[MemoryOp],
        rids: Sequence[int],
        at: float,
        terms: Mapping[str, TextTerms] | None = None,
    ) -> None:
        """Mirror ops just applied inside a write transaction (not yet visible elsewhere).

        Args:
            namespace: This view's namespace.
            applied: The ops, with their embeddings.
            rids: The store's key of each ADD, in order.
            at: The clock the transaction read (``created_at`` of undated ADDs).
            terms: Each added record's text, read beforehand (by id).
        """
        keys = iter(rids)
        for op in applied:
            if op.kind is OpKind.ADD:
                assert op.text is not None and op.embedding is not None
                created = to_epoch(op.timestamp, at)
                # An expired record of the same id gave it up in the same transaction.
                self.drop(op.record_ids[0])
                vector = np.asarray(op.embedding, dtype=np.float32)
                self._check_dimensions(op.record_ids[0], namespace, int(vector.shape[0]))
                row = RecordRow(
                    rid=next(keys),
                    id=op.record_ids[0],
                    namespace=namespace,
                    thread=op.thread,
                    text=op.text,
                    metadata=as_stored(op.metadata or {}),
                    embedding=_NO_VECTOR,
                    created_at=created,
                    updated_at=to_epoch(op.updated_at, created),
                    last_accessed_at=None,
                    access_count=0,
                    expires_at=expiry_epoch(op.expires_at),
                )
                self.pending[row.rid] = vector
                self._keep(row, None if terms is None else terms.get(row.id))
            elif op.kind is OpKind.UPDATE and op.text is None:
                assert op.metadata is not None  # a change of metadata alone
                for record_id in op.record_ids:
                    self.annotate(record_id, op.metadata)
            elif op.kind is OpKind.UPDATE:
                assert op.text is not None and op.embedding is not None
                for record_id in op.record_ids:
                    old = self.rows[self.rid_of[record_id]]
                    meta = old.metadata if op.metadata is None else op.metadata
                    new = dataclasses.replace(
                        old,
                        text=op.text,
                        metadata=as_stored(meta),
                        embedding=np.asarray(op.embedding, dtype=np.float32),
                        updated_at=at,
                        expires_at=old.expires_at
                        if op.expires_at is None
                        else expiry_epoch(op.expires_at),
                    )
                    self.drop(record_id)
                    self.put(new, dense=False)
                    self.pending[new.rid] = new.embedding
            elif op.kind is OpKind.DELETE:
                for record_id in op.record_ids:
                    self.drop(record_id)

    def embeddings(self, rids: list[int]) -> np.ndarray:
        """The stored vectors of records ``rids``, one row each (one index lookup)."""
        if not self.pending:
            assert self.index is not None
            return self.index.vectors(rids)
        held = [rid for rid in rids if rid not in self.pending]
        found: dict[int, Vector] = {}
        if held:
            assert self.index is not None
            found = dict(zip(held, self.index.vectors(held), strict=True))
        return np.stack([self.pending[r] if r in self.pending else found[r] for r in rids]).astype(
            np.float32
        )

    def recalled(self, rids: Sequence[int], at: float) -> None:
        """Count a recall of each record (the store was told already)."""
        for rid in rids:
            row = self.rows[rid]
            self.rows[rid] = row = dataclasses.replace(
                row, access_count=row.access_count + 1, last_accessed_at=at
            )
            self._snapshot = None
            if self._by_age is not None:
                self._stats[bisect.bisect_left(self._by_age, (row.created_at, rid))] = record_stat(
                    row
                )

    def records(self) -> tuple[RecordStat, ...]:
        """What a policy sees of every record, oldest first."""
        if self._by_age is None:
            self._by_age = sorted((r.created_at, r.rid) for r in self.rows.values())
            self._stats = [record_stat(self.rows[rid]) for _, rid in self._by_age]
        if self._snapshot is None:
            self._snapshot = tuple(self._stats)
        return self._snapshot

    def search(self, query: Query, k: int, mode: str) -> list[tuple[int, float]]:
        """The ``k`` best ``(rid, score)`` for ``query`` in ``mode`` (its vector unless
        lexical)."""
        if self.index is None:
            return []
        self.flush()
        if mode == "lexical":
            return self.lexical.search(query.text, k)
        assert query.vector is not None  # embedded (and checked) by the caller for this mode
        if mode == "dense":
            return self.index.search(query.vector, k)
        return self.hybrid(query, k)

    def check_query(self, vector: Vector, namespace: str) -> None:
        """Refuse a query vector of other dimensions than the indexed ones (faiss would
        read past it)."""
        dims = int(vector.shape[-1])
        if self.index is not None and self.index.dimensions != dims:
            raise InvalidInputError(
                f"the query's embedding has {dims} dimensions but namespace {namespace!r} holds "
                f"{self.index.dimensions}-dim vectors; search with the embedding model that "
                "wrote them (memory.embeddings), or open a new store"
            )

    def hybrid(self, query: Query, k: int) -> list[tuple[int, float]]:
        """Dense and BM25 scores on absolute scales, lifted by thread neighbours."""
        if self.index is None:
            return []
        return hybrid_search(query, k, self)

    def state(self, policy: MemoryPolicy, candidate: Candidate) -> MemoryState:
        """What ``policy`` sees of this namespace when ``candidate`` is offered."""
        records = self.records() if policy.needs_records else ()
        neighbours: tuple[tuple[str, float], ...] = ()
        if policy.needs_neighbours and self.index is not None:
            self.flush()
            hits = self.index.search(candidate.embedding, policy.needs_neighbours)
            neighbours = tuple((self.rows[rid].id, score) for rid, score in hits)
        return MemoryState(
            namespace=candidate.namespace,
            size=len(self.rows),
            capacity=policy.capacity,
            records=records,
            neighbours=neighbours,
            asked_before=self.asked_before(candidate, policy.repeated_question),
        )

    def asked_before(
        self, candidate: Candidate, threshold: float | None
    ) -> tuple[str, float] | None:
        """The question ``candidate`` repeats (its id and cosine), or ``None``.

        A repeat only asks, as the stored record does; both are the same speaker's; their
        cosine is at least ``threshold``; and the content words of one hold all of the
        other's ("Where do I live again?" repeats "where do i live"; "What did I eat
        today?" does not repeat "What did I eat yesterday?", however close).
        """
        if threshold is None or not self.questions or not only_asks(candidate.text):
            return None
        assert self.index is not None  # it holds the questions
        self.flush()
        speaker = speaker_of(candidate.metadata)
        words: set[str] | None = None
        for rid, score in self.index.search(candidate.embedding, self.config.repeat_neighbours):
            if score < threshold:
                break
            if rid not in self.questions or self.said(rid)[0] != speaker:
                continue
            words = content_words(candidate.text) if words is None else words
            theirs = content_words(self.rows[rid].text)
            if words <= theirs or theirs <= words:
                return self.rows[rid].id, float(score)
        return None
