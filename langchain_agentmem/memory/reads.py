"""``AgentMemory``'s long-term reads: search, get, records, namespaces and the audit log."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.embeddings import Embeddings

from langchain_agentmem.annotation.annotator import Annotator
from langchain_agentmem.backends import RecordRow
from langchain_agentmem.embedding.embeddings import (
    aembed_query,
    embed_query,
)
from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.filters import Filter, checked_filter, passes
from langchain_agentmem.index.lexical import query_terms
from langchain_agentmem.index.speakers import NamedQuery
from langchain_agentmem.memory.access import NamespaceAccess
from langchain_agentmem.memory.items import check_vector, to_record
from langchain_agentmem.memory.labels import LabelVectors
from langchain_agentmem.namespace.view import NamespaceView
from langchain_agentmem.policies import MemoryPolicy
from langchain_agentmem.ranking import HybridConfig, check_mode
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


class MemoryReads:
    """Reads of long-term records and of the audit log (``AgentMemory``'s part).

    Args:
        access: The namespaces' access.
        embeddings: The memory's embedding model.
        hybrid: How hybrid search ranks.
        policy: The memory's policy (told of recalls when it tracks them).
        labels: The label embeddings searches match queries' labels with.
        label_asker: What each search asks what its query is about (``None``: nothing).
    """

    def __init__(
        self,
        access: NamespaceAccess,
        *,
        embeddings: Embeddings,
        hybrid: HybridConfig,
        policy: MemoryPolicy,
        labels: LabelVectors,
        label_asker: Annotator | None = None,
    ) -> None:
        self.access = access
        self.backend = access.backend
        self.embeddings = embeddings
        self.hybrid = hybrid
        self.policy = policy
        self.labels = labels
        self._asker = label_asker

    def _known(self, namespace: str, mode: str) -> tuple[Speakers, tuple[str, ...]]:
        """The names a ``mode`` search takes out of a query and the labels it may match, as
        this process's cache of the namespace last saw them (loaded when not cached), in
        one look: :meth:`_search` checks the names where it reads the store anyway."""
        if mode != "hybrid":
            return (), ()
        with self.access.lock(namespace):
            view = self.access.cache.peek(namespace) or self.access.live_view(namespace)
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
            vectors=self.labels.vectors,
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
        with self.access.lock(namespace):
            view = self.access.live_view(namespace)
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

    def _label_asker(self, labels: Sequence[str]) -> Annotator | None:
        """What a search asks what its query is about (``None``: it asks nothing)."""
        return self._asker if labels else None

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
        """The ``k`` records of ``namespace`` that best match ``query``, best first."""
        query, namespace, k, mode = search_args(query, namespace, k, mode)
        keep = Narrowed.of(filter, min_score)
        speakers, labels = self._known(namespace, mode)
        self.labels.embed(labels)
        asked = named_query(query, speakers)
        vector = None if mode == "lexical" else embed_query(self.embeddings, asked.text)
        named = ""
        if (asker := self._label_asker(labels)) is not None:
            said = asker.query_labels(query)
            self.labels.embed(said)
            named = labels_named(said, labels, self.labels.vectors)
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
        await self.labels.aembed(labels)
        asked = named_query(query, speakers)
        vector = None if mode == "lexical" else await aembed_query(self.embeddings, asked.text)
        named = ""
        if (asker := self._label_asker(labels)) is not None:
            said = await asyncio.to_thread(asker.query_labels, query)
            await self.labels.aembed(said)
            named = labels_named(said, labels, self.labels.vectors)
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
        """One record of ``namespace`` by id, with its embedding."""
        return to_record(self.access.owned(record_id, namespace))

    def get_many(self, record_ids: Sequence[str], *, namespace: str) -> list[MemoryRecord]:
        """The records of ``namespace`` with these ids, in the order asked (missing ones
        left out)."""
        if isinstance(record_ids, str) or not isinstance(record_ids, Sequence):
            raise InvalidTypeError(
                f"record_ids must be a list of str, got {type(record_ids).__name__}; "
                "wrap one id in a list"
            )
        wanted = [check_record_id(i) for i in record_ids]
        rows = {row.id: row for row in self.backend.get_records(check_namespace(namespace), wanted)}
        return [to_record(rows[i]) for i in dict.fromkeys(wanted) if i in rows]

    def admin_find_record(self, record_id: str) -> list[MemoryRecord]:
        """Administration: the records with id ``record_id`` in every namespace."""
        return [to_record(row) for row in self.backend.find_records(check_record_id(record_id))]

    def records(
        self,
        namespace: str,
        *,
        limit: int | None = None,
        offset: int = 0,
        newest_first: bool = False,
    ) -> list[MemoryRecord]:
        """The records of ``namespace``, oldest first, a page at a time."""
        namespace = check_namespace(namespace)
        limit = None if limit is None else check_count(limit, "limit", least=1)
        offset = check_count(offset, "offset", least=0)
        rows = self.backend.iter_records(
            namespace, limit=limit, offset=offset, newest_first=bool(newest_first)
        )
        return [to_record(row) for row in rows]

    def decisions(self, namespace: str, *, limit: int | None = None) -> list[Decision]:
        """The audit log of ``namespace``: every op applied, when and why (oldest first)."""
        namespace = check_namespace(namespace)
        if limit is not None:
            limit = check_k(limit)
        return self.backend.decisions(namespace, limit=limit)

    def namespaces(self) -> list[str]:
        """Namespaces that hold records or messages (a LangGraph store's are left out:
        ``AgentMemoryStore.list_namespaces`` lists those)."""
        return [ns for ns in self.backend.namespaces() if not ns.startswith(STORE_MARK)]

    def store_namespaces(self, prefix: str, *, expiring: bool = False) -> list[StoreNamespace]:
        """The reserved namespaces of a LangGraph store that start with ``prefix``."""
        if not isinstance(prefix, str) or not prefix.startswith(STORE_MARK):
            raise InvalidInputError(
                f"{prefix!r} is not a store namespace prefix; store namespaces start with "
                f"{STORE_MARK!r} (AgentMemoryStore lists its own)"
            )
        names = (
            self.backend.expiring_namespaces(time.time()) if expiring else self.backend.namespaces()
        )
        return [StoreNamespace(ns) for ns in names if ns.startswith(prefix)]

    def version(self, namespace: str) -> int:
        """The namespace's version: it moves on with every write to its records (0: none)."""
        return self.backend.last_seq(check_namespace(namespace))

    def changes(self, namespace: str, since: int) -> RecordChanges | None:
        """What changed in ``namespace`` after version ``since``."""
        changed = self.backend.changed_records(check_namespace(namespace), since)
        if changed is None:
            return None
        touched, rows, version = changed
        records = {record_id: to_record(row) for record_id, row in rows.items()}
        return RecordChanges(tuple(touched), records, version)

    def search_by_vector(
        self,
        embedding: Sequence[float] | Vector,
        *,
        namespace: str,
        k: int = 5,
        filter: Filter | None = None,
        min_score: float | None = None,
    ) -> list[MemoryRecord]:
        """The ``k`` records of ``namespace`` nearest to ``embedding`` (cosine), best first."""
        namespace = check_namespace(namespace)
        k = check_k(k)
        keep = Narrowed.of(filter, min_score)
        vector = check_vector(embedding)
        with self.access.lock(namespace):
            view = self.access.live_view(namespace)
            if view.index is None:
                return []
            view.check_query(vector, namespace)
            hits = _hits(view, Query("", vector[0]), k, "dense", keep)
            rows = _rows(view, hits)
        return [to_record(rows[rid][0], score=score, embedding=rows[rid][1]) for rid, score in hits]
