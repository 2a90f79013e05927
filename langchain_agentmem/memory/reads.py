"""``AgentMemory``'s long-term reads: search, get, records, namespaces and the audit log."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_agentmem.annotation.annotator import Annotator
from langchain_agentmem.backends import RecordRow
from langchain_agentmem.embedding.embeddings import (
    aembed_query,
    aembed_records,
    embed_query,
    embed_records,
)
from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.filters import Filter, checked_filter, passes
from langchain_agentmem.index.lexical import query_terms
from langchain_agentmem.index.speakers import NamedQuery
from langchain_agentmem.memory.access import MemoryCore
from langchain_agentmem.memory.items import check_vector, to_record
from langchain_agentmem.namespace.view import NamespaceView
from langchain_agentmem.ranking import check_mode
from langchain_agentmem.ranking.query import (
    Query,
    Speakers,
    labels_named,
    named_query,
    query_of,
    speakers_read,
)
from langchain_agentmem.types import Decision, MemoryRecord, RecordChanges, Vector
from langchain_agentmem.validation import (
    STORE_MARK,
    StoreNamespace,
    check_count,
    check_k,
    check_min_score,
    check_namespace,
    check_query,
    check_record_id,
)


def search_args(
    query: object, namespace: object, k: object, mode: object
) -> tuple[str, str, int, str]:
    """The checked query, namespace, ``k`` and mode of a search."""
    return (
        check_query(query),
        check_namespace(namespace),
        check_k(k),
        check_mode(mode),
    )


@dataclass(frozen=True)
class Narrowed:
    """What a search keeps of its hits: records whose metadata pass ``filter``, scoring at
    least ``min_score``."""

    filter: Filter | None = None
    min_score: float | None = None

    @classmethod
    def of(cls, wanted: object, min_score: object) -> Narrowed:
        """Checked ``filter`` and ``min_score`` arguments of a search."""
        return cls(checked_filter(wanted), check_min_score(min_score))


def _hits(
    view: NamespaceView, query: Query, k: int, mode: str, keep: Narrowed
) -> list[tuple[int, float]]:
    """The ``k`` best hits of ``query`` in ``view`` that ``keep`` keeps, best first.

    With a filter, the search asks for more than ``k`` (as many more as the filter leaves
    out, then twice as many each time) until ``k`` records pass or none is left to ask for,
    so ``k`` results come back whenever ``k`` records pass."""
    if keep.filter is None:
        hits = view.search(query, k, mode)
    else:
        allowed = {rid for rid, row in view.rows.items() if passes(row.metadata, keep.filter)}
        total = len(view.rows)
        hits = []
        asking = min(total, k * math.ceil(total / len(allowed))) if allowed else 0
        while asking:
            found = view.search(query, asking, mode)
            hits = [(rid, score) for rid, score in found if rid in allowed][:k]
            if len(hits) == k or len(found) < asking or asking == total:
                break
            asking = min(total, asking * 2)
    if keep.min_score is not None:
        hits = [(rid, score) for rid, score in hits if score >= keep.min_score]
    return hits


@dataclass(frozen=True)
class Reread:
    """Who speaks in the namespace changed since the query was read: read it with these
    names and search again."""

    speakers: Speakers


def _rows(
    view: NamespaceView, hits: list[tuple[int, float]]
) -> dict[int, tuple[RecordRow, Vector]]:
    """Each hit's cached row and stored vector (the vectors in one index lookup)."""
    rids = [rid for rid, _ in hits]
    if not rids:
        return {}
    vectors = view.embeddings(rids)
    return {rid: (view.rows[rid], vectors[i].copy()) for i, rid in enumerate(rids)}


class MemoryReads(MemoryCore):
    """Reads of long-term records and of the audit log."""

    def _known(self, namespace: str, mode: str) -> tuple[Speakers, tuple[str, ...]]:
        """The names a ``mode`` search takes out of a query and the labels it may match, as
        this process's cache of the namespace last saw them (loaded when not cached), in
        one look: :meth:`_search` checks the names where it reads the store anyway."""
        if mode != "hybrid":
            return (), ()
        with self._cache.lock(namespace):
            view = self._cache.peek(namespace) or self._live_view(namespace)
            labels = tuple(view.labels) if self.hybrid.label_weight > 0 else ()
            return speakers_read(view.speakers, view.config), labels

    def _query(
        self, asked: NamedQuery, vector: Vector | None, labels: Sequence[str], named: str
    ) -> Query:
        """The query ranking reads (:func:`~langchain_agentmem.ranking.query.query_of`)."""
        return query_of(
            asked,
            vector,
            labels=labels,
            vectors=self._label_vectors,
            config=self.hybrid,
            named_labels=named,
        )

    def _search(
        self,
        query: Query,
        namespace: str,
        k: int,
        mode: str,
        keep: Narrowed,
        speakers: Speakers | None = None,
    ) -> list[MemoryRecord] | Reread:
        """The hits of ``query``; or, where ``speakers`` (the names ``query`` was read
        with; ``None``: not checked) differ from the namespace's now, :class:`Reread`."""
        query_terms(query.text)  # tokenised here, outside the lock (cached for the search)
        with self._cache.lock(namespace):
            view = self._live_view(namespace)
            if speakers is not None and mode == "hybrid":
                now = speakers_read(view.speakers, view.config)
                if now != speakers:
                    return Reread(now)
            if query.vector is not None:
                view.check_query(query.vector, namespace)
            hits = _hits(view, query, k, mode, keep)
            rows = _rows(view, hits)
            if hits and self.policy.tracks_recalls:
                self._note_recalls(view, [rid for rid, _ in hits])
        return [to_record(rows[rid][0], score=score, embedding=rows[rid][1]) for rid, score in hits]

    def _note_recalls(self, view: NamespaceView, rids: list[int]) -> None:
        """Count a recall of each record, in the store and in the cached stats."""
        now = time.time()
        self.backend.touch(rids, now)
        view.recalled(rids, now)

    def _unknown_labels(self, labels: Sequence[str]) -> list[str]:
        """Those of ``labels`` whose embedding this memory does not hold yet."""
        return [label for label in dict.fromkeys(labels) if label not in self._label_vectors]

    def _label_asker(self, labels: Sequence[str]) -> Annotator | None:
        """What a search asks what its query is about (``None``: it asks nothing)."""
        return self.annotator if self.label_queries and labels else None

    def _found(self, found: list[MemoryRecord] | Reread) -> list[MemoryRecord]:
        """The records of a search asked again with the names it was told (never a reread)."""
        assert not isinstance(found, Reread)
        return found

    def search(
        self,
        query: str,
        *,
        namespace: str,
        k: int = 5,
        mode: str = "hybrid",
        filter: Filter | None = None,
        min_score: float | None = None,
    ) -> list[MemoryRecord]:
        """The ``k`` records of ``namespace`` that best match ``query``, best first.

        Args:
            query: What to look for.
            namespace: Where to look (never crosses into another namespace).
            k: Most records to return.
            mode: ``"hybrid"`` (default: dense and BM25 scores fused), ``"dense"``
                (embedding cosine similarity) or ``"lexical"`` (BM25; only records that
                share a word with the query).
            filter: Only records whose metadata match (LangGraph's store filter:
                ``{"topic": "food"}``, ``{"year": {"$gte": 2024}}``; see
                :mod:`langchain_agentmem.filters`); ``k`` of them are returned whenever
                ``k`` match.
            min_score: Leave out records scoring below this (the score as below).

        Each record's ``score`` is the cosine similarity (dense), the BM25 score (lexical)
        or the hybrid score (higher is better). The hybrid score is absolute, in [0, 1]:
        ``0.25 * cosine + 0.75 * BM25 / (the query's highest attainable BM25)``, lifted
        halfway toward a better-scoring neighbour in the same thread (see
        :mod:`langchain_agentmem.ranking.search`), so one ``min_score`` means the same in
        every search. A query that names a speaker of the namespace (a record's
        ``metadata["speaker"]``) is searched without the name, and that speaker's records
        gain ``HybridConfig.named_speaker`` in hybrid score; others' records that name
        them, ``HybridConfig.named_mention``.

        Raises:
            InvalidInputError: a blank query, or one longer than ``MAX_QUERY_CHARS``
                (10,000 characters).
        """
        query, namespace, k, mode = search_args(query, namespace, k, mode)
        keep = Narrowed.of(filter, min_score)
        speakers, labels = self._known(namespace, mode)
        if missing := self._unknown_labels(labels):
            self._remember_labels(missing, embed_records(self.embeddings, missing))
        asked = named_query(query, speakers)
        vector = None if mode == "lexical" else embed_query(self.embeddings, asked.text)
        named = ""
        if (asker := self._label_asker(labels)) is not None:
            said = asker.query_labels(query)
            if missing := self._unknown_labels(said):
                self._remember_labels(missing, embed_records(self.embeddings, missing))
            named = labels_named(said, labels, self._label_vectors)
        asking = self._query(asked, vector, labels, named)
        found = self._search(asking, namespace, k, mode, keep, speakers)
        if isinstance(found, Reread):  # another writer changed who speaks here
            asked = named_query(query, found.speakers)
            vector = None if mode == "lexical" else embed_query(self.embeddings, asked.text)
            asking = self._query(asked, vector, labels, named)
            found = self._found(self._search(asking, namespace, k, mode, keep, None))
        return found

    async def asearch(
        self,
        query: str,
        *,
        namespace: str,
        k: int = 5,
        mode: str = "hybrid",
        filter: Filter | None = None,
        min_score: float | None = None,
    ) -> list[MemoryRecord]:
        """Async :meth:`search`."""
        query, namespace, k, mode = search_args(query, namespace, k, mode)
        keep = Narrowed.of(filter, min_score)
        speakers, labels = await asyncio.to_thread(self._known, namespace, mode)
        if missing := self._unknown_labels(labels):
            self._remember_labels(missing, await aembed_records(self.embeddings, missing))
        asked = named_query(query, speakers)
        vector = None if mode == "lexical" else await aembed_query(self.embeddings, asked.text)
        named = ""
        if (asker := self._label_asker(labels)) is not None:
            said = await asyncio.to_thread(asker.query_labels, query)
            if missing := self._unknown_labels(said):
                self._remember_labels(missing, await aembed_records(self.embeddings, missing))
            named = labels_named(said, labels, self._label_vectors)
        asking = self._query(asked, vector, labels, named)
        found = await asyncio.to_thread(self._search, asking, namespace, k, mode, keep, speakers)
        if isinstance(found, Reread):  # another writer changed who speaks here
            asked = named_query(query, found.speakers)
            vector = None if mode == "lexical" else await aembed_query(self.embeddings, asked.text)
            asking = self._query(asked, vector, labels, named)
            found = self._found(
                await asyncio.to_thread(self._search, asking, namespace, k, mode, keep, None)
            )
        return found

    def get(self, record_id: str, *, namespace: str) -> MemoryRecord:
        """One record of ``namespace`` by id, with its embedding.

        Raises:
            RecordNotFoundError: no such record in ``namespace`` (or it expired).
        """
        return to_record(self._owned(record_id, namespace))

    async def aget(self, record_id: str, *, namespace: str) -> MemoryRecord:
        """Async :meth:`get`."""
        return await asyncio.to_thread(self.get, record_id, namespace=namespace)

    def get_many(self, record_ids: Sequence[str], *, namespace: str) -> list[MemoryRecord]:
        """The records of ``namespace`` with these ids, in the order asked (missing ones
        left out)."""
        if isinstance(record_ids, str) or not isinstance(record_ids, Sequence):
            raise InvalidTypeError(
                f"record_ids must be a list of str, got {type(record_ids).__name__}; "
                "wrap one id in a list"
            )
        wanted = [check_record_id(i) for i in record_ids]
        rows = {row.id: row for row in self.backend.get_records(self._namespace(namespace), wanted)}
        return [to_record(rows[i]) for i in dict.fromkeys(wanted) if i in rows]

    async def aget_many(self, record_ids: Sequence[str], *, namespace: str) -> list[MemoryRecord]:
        """Async :meth:`get_many`."""
        return await asyncio.to_thread(self.get_many, record_ids, namespace=namespace)

    def admin_find_record(self, record_id: str) -> list[MemoryRecord]:
        """Administration: the records with id ``record_id`` in every namespace.

        Ids are unique per namespace, so several users may hold one id. Every other read
        and write is scoped to one namespace; this one is not, so never hand it to code
        that acts for a user.
        """
        return [to_record(row) for row in self.backend.find_records(check_record_id(record_id))]

    def records(
        self,
        namespace: str,
        *,
        limit: int | None = None,
        offset: int = 0,
        newest_first: bool = False,
    ) -> list[MemoryRecord]:
        """The records of ``namespace``, oldest first, a page at a time.

        Args:
            namespace: Whose records.
            limit: Most records to return (``None``: all from ``offset`` on).
            offset: How many to skip first (pages of ``limit`` from 0, ``limit``, ...).
            newest_first: Newest first instead.
        """
        namespace = self._namespace(namespace)
        limit = None if limit is None else check_count(limit, "limit", least=1)
        offset = check_count(offset, "offset", least=0)
        rows = self.backend.iter_records(
            namespace, limit=limit, offset=offset, newest_first=bool(newest_first)
        )
        return [to_record(row) for row in rows]

    async def arecords(
        self,
        namespace: str,
        *,
        limit: int | None = None,
        offset: int = 0,
        newest_first: bool = False,
    ) -> list[MemoryRecord]:
        """Async :meth:`records`."""
        return await asyncio.to_thread(
            self.records, namespace, limit=limit, offset=offset, newest_first=newest_first
        )

    def decisions(self, namespace: str, *, limit: int | None = None) -> list[Decision]:
        """The audit log of ``namespace``: every op applied, when and why (oldest first)."""
        namespace = self._namespace(namespace)
        if limit is not None:
            limit = check_k(limit)
        return self.backend.decisions(namespace, limit=limit)

    async def adecisions(self, namespace: str, *, limit: int | None = None) -> list[Decision]:
        """Async :meth:`decisions`."""
        return await asyncio.to_thread(self.decisions, namespace, limit=limit)

    def namespaces(self) -> list[str]:
        """Namespaces that hold records or messages (a LangGraph store's are left out:
        ``AgentMemoryStore.list_namespaces`` lists those)."""
        return [ns for ns in self.backend.namespaces() if not ns.startswith(STORE_MARK)]

    async def anamespaces(self) -> list[str]:
        """Async :meth:`namespaces`."""
        return await asyncio.to_thread(self.namespaces)

    def store_namespaces(self, prefix: str, *, expiring: bool = False) -> list[StoreNamespace]:
        """The reserved namespaces of a LangGraph store that start with ``prefix``.

        Args:
            prefix: ``AgentMemoryStore``'s reserved prefix (or a longer one).
            expiring: Only those holding records past their expiry.
        """
        if not isinstance(prefix, str) or not prefix.startswith(STORE_MARK):
            raise InvalidInputError(
                f"{prefix!r} is not a store namespace prefix; store namespaces start with "
                f"{STORE_MARK!r} (AgentMemoryStore lists its own)"
            )
        names = (
            self.backend.expiring_namespaces(time.time()) if expiring else self.backend.namespaces()
        )
        return [StoreNamespace(ns) for ns in names if ns.startswith(prefix)]

    async def astore_namespaces(
        self, prefix: str, *, expiring: bool = False
    ) -> list[StoreNamespace]:
        """Async :meth:`store_namespaces`."""
        return await asyncio.to_thread(self.store_namespaces, prefix, expiring=expiring)

    def version(self, namespace: str) -> int:
        """The namespace's version: it moves on with every write to its records (0: none)."""
        return self.backend.last_seq(self._namespace(namespace))

    async def aversion(self, namespace: str) -> int:
        """Async :meth:`version`."""
        return await asyncio.to_thread(self.version, namespace)

    def changes(self, namespace: str, since: int) -> RecordChanges | None:
        """What changed in ``namespace`` after version ``since``.

        Returns:
            The records touched and the new version; ``None`` when the namespace was erased
            meanwhile (read it whole again).
        """
        changed = self.backend.changed_records(self._namespace(namespace), since)
        if changed is None:
            return None
        touched, rows, version = changed
        records = {record_id: to_record(row) for record_id, row in rows.items()}
        return RecordChanges(tuple(touched), records, version)

    async def achanges(self, namespace: str, since: int) -> RecordChanges | None:
        """Async :meth:`changes`."""
        return await asyncio.to_thread(self.changes, namespace, since)

    def search_by_vector(
        self,
        embedding: Sequence[float] | Vector,
        *,
        namespace: str,
        k: int = 5,
        filter: Filter | None = None,
        min_score: float | None = None,
    ) -> list[MemoryRecord]:
        """The ``k`` records of ``namespace`` nearest to ``embedding`` (cosine), best first.

        Args:
            embedding: A query vector from the memory's embedding model.
            namespace: Where to look.
            k: Most records to return.
            filter: Only records whose metadata match (as :meth:`search`).
            min_score: Leave out records of a lower cosine.
        """
        namespace = self._namespace(namespace)
        k = check_k(k)
        keep = Narrowed.of(filter, min_score)
        vector = check_vector(embedding)
        with self._cache.lock(namespace):
            view = self._live_view(namespace)
            if view.index is None:
                return []
            view.check_query(vector, namespace)
            hits = _hits(view, Query("", vector[0]), k, "dense", keep)
            rows = _rows(view, hits)
        return [to_record(rows[rid][0], score=score, embedding=rows[rid][1]) for rid, score in hits]

    async def asearch_by_vector(
        self,
        embedding: Sequence[float] | Vector,
        *,
        namespace: str,
        k: int = 5,
        filter: Filter | None = None,
        min_score: float | None = None,
    ) -> list[MemoryRecord]:
        """Async :meth:`search_by_vector`."""
        return await asyncio.to_thread(
            self.search_by_vector,
            embedding,
            namespace=namespace,
            k=k,
            filter=filter,
            min_score=min_score,
        )
