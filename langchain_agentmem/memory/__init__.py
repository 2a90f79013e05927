"""``AgentMemory``: the one object every adapter talks to."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import datetime, timedelta
from typing import IO, Any, Literal, overload

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from langchain_agentmem.annotation.annotator import AnnotationWait, Annotator
from langchain_agentmem.backends import Backend, open_backend
from langchain_agentmem.embedding.embeddings import resolve_embeddings
from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.filters import Filter
from langchain_agentmem.index.lexical import query_terms
from langchain_agentmem.index.persist import IndexFiles
from langchain_agentmem.memory.access import NamespaceAccess
from langchain_agentmem.memory.export_format import Export
from langchain_agentmem.memory.judging import MemoryAnnotationStore
from langchain_agentmem.memory.labels import LabelVectors
from langchain_agentmem.memory.messages import MemoryMessages
from langchain_agentmem.memory.reads import MemoryReads
from langchain_agentmem.memory.transfer import ExportSummary, ImportSummary
from langchain_agentmem.memory.userdata import MemoryUserData
from langchain_agentmem.memory.writes import MemoryWrites
from langchain_agentmem.namespace.cache import (
    DEFAULT_CACHE_RECORDS,
    CacheInfo,
    NamespaceCache,
    check_cache_records,
)
from langchain_agentmem.namespace.view import NamespaceView
from langchain_agentmem.policies import MemoryPolicy, make_policy
from langchain_agentmem.policies.features import TEXTS
from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.types import (
    Clock,
    Decision,
    ErasedNamespace,
    MemoryOp,
    MemoryRecord,
    OpKind,
    RecordChanges,
    Vector,
    wall_clock,
)
from langchain_agentmem.validation import (
    DEFAULT_MAX_METADATA_BYTES,
    DEFAULT_MAX_RECALL_CHARS,
    DEFAULT_MAX_TEXT_CHARS,
    Limits,
    StoreNamespace,
    check_clock,
    check_namespace,
)

__all__ = ["AgentMemory"]


class AgentMemory:
    """Short-term and long-term memory of agents, on one durable store.

    Setup:
        ``pip install langchain-agentmem``; the default embedding model ships with it.

    Instantiate:
        .. code-block:: python

            from langchain_agentmem import AgentMemory

            memory = AgentMemory()  # sqlite:///$AGENTMEM_HOME/memory.db
            memory = AgentMemory("sqlite:///memory.db", policy="fifo", capacity=1000)
            memory = AgentMemory(":memory:")  # for tests

    Usage:
        .. code-block:: python

            memory.add("My name is Alice.", namespace="alice", thread="t1")
            hits = memory.search("What is my name?", namespace="alice", k=3)
            memory.decisions("alice")  # the audit log

    Args:
        url: Store URL (``None``: the embedded default file).
        embeddings: Any LangChain ``Embeddings``, a sentence-transformers model folder, or
            ``None`` for the bundled all-MiniLM-L6-v2.
        policy: Name of a policy (see :func:`available_policies`) or a policy object
            (default: ``"learned"`` when a capacity is given, else ``"keep_all"``).
        capacity: Most long-term records per namespace (policies that forget need it).
        persist_indexes: Save dense indexes next to a SQLite store file (in
            ``<file>.indexes/``) on :meth:`close` and load them on open, so a large namespace
            need not be re-indexed; they are rebuilt from the store whenever they do not match.
        hybrid: How hybrid search weighs cosine, BM25 and thread neighbours, and whether
            record dates go into the lexical index (:class:`HybridConfig`; default: the
            weights measured on LoCoMo).
        cache_records: Most records this process keeps indexed in memory, over all
            namespaces; the least recently used namespaces are dropped first and reload
            on their next use (see :meth:`cache_info`).
        max_text_chars: Longest text accepted (longer: an error, nothing stored).
        max_metadata_bytes: Largest metadata accepted, as JSON.
        max_recall_chars: Most characters of recalled words one prompt tells the model
            (every surface: the best memories first, the one that crosses the line cut
            short with " ...", the rest left out).
        model: A chat model (any LangChain ``BaseChatModel``: the agent's own, or a small
            one) that annotates each stored statement, off the write path: what it is
            about, and which earlier statements of its speaker it makes out of date
            (:mod:`langchain_agentmem.annotation.annotations`; the record's text is never changed):
            one labelling call per statement, then one judging call for each of at most
            two earlier statements it may replace.
            ``None``: no model is called.
        model_calls_per_minute: Most annotation calls a minute (``None``: no limit).
        label_queries: Also ask ``model`` what each search's query is about (one call a
            search, on its path; the answer kept per query) and search the namespace's labels
            it names. Off by default: a query's labels are matched by embedding alone.
        clock: What the memory takes as now: a function returning a datetime (default: the
            wall clock). It dates what is written without a time of its own (records; an
            application replaying history passes the replayed time) and is the day a prompt
            of recalled memories calls today. Expiries (``ttl``, ``expires_at``) always run
            on the wall clock: they are about keeping data, not about what was said when.

    Operations on one namespace run one at a time, in order; different namespaces run in
    parallel (threads, ``asyncio``; on PostgreSQL over its connection pool).
    """

    def __init__(
        self,
        url: str | os.PathLike[str] | None = None,
        *,
        embeddings: Embeddings | str | os.PathLike[str] | None = None,
        policy: str | MemoryPolicy | None = None,
        capacity: int | None = None,
        persist_indexes: bool = True,
        hybrid: HybridConfig | None = None,
        cache_records: int = DEFAULT_CACHE_RECORDS,
        max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
        max_metadata_bytes: int = DEFAULT_MAX_METADATA_BYTES,
        max_recall_chars: int = DEFAULT_MAX_RECALL_CHARS,
        model: BaseChatModel | None = None,
        model_calls_per_minute: float | None = None,
        label_queries: bool = False,
        clock: Clock | None = None,
    ) -> None:
        if hybrid is not None and not isinstance(hybrid, HybridConfig):
            raise InvalidTypeError(
                f"hybrid must be a HybridConfig or None, got {type(hybrid).__name__}"
            )
        self._hybrid = HybridConfig() if hybrid is None else hybrid
        cache_records = check_cache_records(cache_records)
        self._limits = Limits(max_text_chars, max_metadata_bytes, max_recall_chars)
        if policy is None:
            policy = "keep_all" if capacity is None else "learned"
        self._policy = make_policy(policy, capacity)
        self._embeddings = resolve_embeddings(embeddings)
        backend = open_backend(url)
        index_files: IndexFiles | None = None
        path = getattr(backend, "path", None)
        if persist_indexes and isinstance(path, str) and path != ":memory:":
            index_files = IndexFiles.beside(path)
        if not isinstance(label_queries, bool) or (label_queries and model is None):
            raise InvalidInputError(
                f"label_queries must be True or False, and True only with a model=; got "
                f"{label_queries!r} with model={type(model).__name__ if model else None}"
            )
        self._label_queries = label_queries
        cache = NamespaceCache(
            backend,
            hybrid=self._hybrid,
            index_files=index_files,
            max_records=cache_records,
            on_erased=self._forget_erased,
            on_opened=None if model is None else self._offer_loaded,
        )
        self._access = NamespaceAccess(
            backend,
            cache,
            clock=wall_clock if clock is None else check_clock(clock),
            holder=uuid.uuid4().hex,
            on_stored=None if model is None else self._offer_stored,
        )
        labels = LabelVectors(self._embeddings)
        self._writes = MemoryWrites(
            self._access, embeddings=self._embeddings, limits=self._limits, policy=self._policy
        )
        self._annotator: Annotator | None = None
        if model is not None:
            store = MemoryAnnotationStore(self._access, self._writes, labels)
            self._annotator = _make_annotator(model, model_calls_per_minute, store)
        self._reads = MemoryReads(
            self._access,
            embeddings=self._embeddings,
            hybrid=self._hybrid,
            policy=self._policy,
            labels=labels,
            label_asker=self._annotator if label_queries else None,
        )
        self._messages = MemoryMessages(backend)
        self._userdata = MemoryUserData(
            self._access, embeddings=self._embeddings, limits=self._limits
        )
        self._closed = False
        self._close_hooks: list[Callable[[], None]] = []

    def _forget_erased(self, namespace: str) -> None:
        """Drop what this process holds of an erased namespace beyond its view."""
        if self.annotator is not None:
            self.annotator.forget(namespace)
        self.policy.forget_namespace(namespace)
        TEXTS.clear()  # recent texts' features, the erased user's among them
        query_terms.cache_clear()  # recent queries' terms, the erased user's among them

    # -- what it is made with ------------------------------------------------------------
    @property
    def backend(self) -> Backend:
        """The store."""
        return self._access.backend

    @property
    def embeddings(self) -> Embeddings:
        """The embedding model."""
        return self._embeddings

    @property
    def policy(self) -> MemoryPolicy:
        """What decides each offered record."""
        return self._policy

    @property
    def hybrid(self) -> HybridConfig:
        """How hybrid search ranks."""
        return self._hybrid

    @property
    def limits(self) -> Limits:
        """The sizes a text, its metadata and a prompt's recalled words may take."""
        return self._limits

    @property
    def clock(self) -> Clock:
        """What the memory takes as now."""
        return self._access.clock

    @property
    def annotator(self) -> Annotator | None:
        """What annotates stored statements with ``model`` (``None``: no model)."""
        return self._annotator

    @property
    def label_queries(self) -> bool:
        """Whether each search also asks the model what its query is about."""
        return self._label_queries

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The store URL."""
        return self.backend.url

    @property
    def capacity(self) -> int | None:
        """Most records per namespace, or ``None``."""
        return self.policy.capacity

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def on_close(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` when this memory closes (a store's sweeper stops so)."""
        self._close_hooks.append(hook)

    def now(self) -> datetime:
        """What this memory's clock says now (UTC): the time a record written without one is
        said at, and the day a prompt of recalled memories calls today."""
        return self._access.now()

    def close(self) -> None:
        """Stop what works on this memory (stores' sweepers), save changed indexes (see
        ``persist_indexes``) and close the store."""
        self._closed = True
        if self.annotator is not None:
            self.annotator.close()
        hooks, self._close_hooks = self._close_hooks, []
        for hook in hooks:
            hook()
        self._access.cache.close()
        self.save_indexes()
        self.backend.close()

    def _offer_stored(self, namespace: str, out: list[list[MemoryOp]]) -> None:
        """Queue the statements just stored, or whose text just changed, for annotation."""
        assert self.annotator is not None
        for ops in out:
            for op in ops:
                if op.text is not None and op.kind in (OpKind.ADD, OpKind.UPDATE):
                    for record_id in op.record_ids:
                        self.annotator.offer(namespace, record_id, op.text, op.metadata)

    def _offer_loaded(self, namespace: str, view: NamespaceView) -> None:
        """Queue the statements of a namespace just loaded that wait for annotation."""
        assert self.annotator is not None
        self.annotator.offer_all(
            namespace, [(row.id, row.text, row.metadata) for row in view.rows.values()]
        )

    def wait_annotated(self, timeout: float | None = None) -> AnnotationWait:
        """Block until every statement stored so far is annotated or given up on, or
        ``timeout`` seconds pass (tests, benchmarks, a script that exits).

        The answer is true when nothing is left (at once without a ``model``); its
        ``left`` counts the statements still waiting, its ``given_up`` names those whose
        every try failed (:class:`~langchain_agentmem.annotation.annotator.AnnotationWait`). A
        statement another process sharing the store is annotating counts as left until
        that process stores its annotation (or lets go)."""
        return AnnotationWait() if self.annotator is None else self.annotator.wait(timeout)

    async def await_annotated(self, timeout: float | None = None) -> AnnotationWait:
        """Async :meth:`wait_annotated`."""
        return await asyncio.to_thread(self.wait_annotated, timeout)

    def annotation_paused(self) -> contextlib.AbstractContextManager[None]:
        """A context in which the model is sent no new annotation call (a call already
        sent finishes): for a turn that needs the same model, when it serves one request
        at a time. Statements stored meanwhile wait, and are annotated after it."""
        return contextlib.nullcontext() if self.annotator is None else self.annotator.paused()

    @contextlib.asynccontextmanager
    async def aannotation_paused(self) -> AsyncIterator[None]:
        """Async :meth:`annotation_paused` (the wait for a call in flight runs in a thread)."""
        paused = self.annotation_paused()
        await asyncio.to_thread(paused.__enter__)
        try:
            yield
        finally:
            paused.__exit__(None, None, None)

    def save_indexes(self) -> None:
        """Write the dense index of every cached namespace changed since it was last saved."""
        self._access.cache.save()

    def cache_info(self) -> CacheInfo:
        """Hits, misses and evictions of the namespace cache, and what it holds now."""
        return self._access.cache.info()

    def __enter__(self) -> AgentMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"AgentMemory({self.url!r}, policy={self.policy.name!r}, capacity={self.capacity})"

    def sweep(self, namespace: str | None = None) -> int:
        """Delete the records whose expiry has passed (logged as DELETE, reason "expired").

        Expired records are invisible to every read as soon as they expire; this frees
        their space. Reads and writes of a namespace sweep it when one is due, so calling
        this is only needed to sweep namespaces nobody reads (a periodic job, say).

        Args:
            namespace: Sweep only this namespace (default: every namespace).

        Returns:
            How many records were deleted.
        """
        if namespace is not None:
            return self._access.sweep(check_namespace(namespace))
        return sum(self._access.sweep(ns) for ns in self.backend.expiring_namespaces(time.time()))

    async def asweep(self, namespace: str | None = None) -> int:
        """Async :meth:`sweep`."""
        return await asyncio.to_thread(self.sweep, namespace)

    # -- reads ---------------------------------------------------------------
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
        return self._reads.search(
            query,
            namespace=namespace,
            k=k,
            mode=mode,
            filter=filter,
            min_score=min_score,
        )

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
        return await self._reads.asearch(
            query,
            namespace=namespace,
            k=k,
            mode=mode,
            filter=filter,
            min_score=min_score,
        )

    def get(self, record_id: str, *, namespace: str) -> MemoryRecord:
        """One record of ``namespace`` by id, with its embedding.

        Raises:
            RecordNotFoundError: no such record in ``namespace`` (or it expired).
        """
        return self._reads.get(record_id, namespace=namespace)

    async def aget(self, record_id: str, *, namespace: str) -> MemoryRecord:
        """Async :meth:`get`."""
        return await asyncio.to_thread(self.get, record_id, namespace=namespace)

    def get_many(self, record_ids: Sequence[str], *, namespace: str) -> list[MemoryRecord]:
        """The records of ``namespace`` with these ids, in the order asked (missing ones
        left out)."""
        return self._reads.get_many(record_ids, namespace=namespace)

    async def aget_many(self, record_ids: Sequence[str], *, namespace: str) -> list[MemoryRecord]:
        """Async :meth:`get_many`."""
        return await asyncio.to_thread(self.get_many, record_ids, namespace=namespace)

    def admin_find_record(self, record_id: str) -> list[MemoryRecord]:
        """Administration: the records with id ``record_id`` in every namespace.

        Ids are unique per namespace, so several users may hold one id. Every other read
        and write is scoped to one namespace; this one is not, so never hand it to code
        that acts for a user.
        """
        return self._reads.admin_find_record(record_id)

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
        return self._reads.records(namespace, limit=limit, offset=offset, newest_first=newest_first)

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
            self.records,
            namespace,
            limit=limit,
            offset=offset,
            newest_first=newest_first,
        )

    def decisions(self, namespace: str, *, limit: int | None = None) -> list[Decision]:
        """The audit log of ``namespace``: every op applied, when and why (oldest first)."""
        return self._reads.decisions(namespace, limit=limit)

    async def adecisions(self, namespace: str, *, limit: int | None = None) -> list[Decision]:
        """Async :meth:`decisions`."""
        return await asyncio.to_thread(self.decisions, namespace, limit=limit)

    def namespaces(self) -> list[str]:
        """Namespaces that hold records or messages (a LangGraph store's are left out:
        ``AgentMemoryStore.list_namespaces`` lists those)."""
        return self._reads.namespaces()

    async def anamespaces(self) -> list[str]:
        """Async :meth:`namespaces`."""
        return await asyncio.to_thread(self.namespaces)

    def store_namespaces(self, prefix: str, *, expiring: bool = False) -> list[StoreNamespace]:
        """The reserved namespaces of a LangGraph store that start with ``prefix``.

        Args:
            prefix: ``AgentMemoryStore``'s reserved prefix (or a longer one).
            expiring: Only those holding records past their expiry.
        """
        return self._reads.store_namespaces(prefix, expiring=expiring)

    async def astore_namespaces(
        self, prefix: str, *, expiring: bool = False
    ) -> list[StoreNamespace]:
        """Async :meth:`store_namespaces`."""
        return await asyncio.to_thread(self.store_namespaces, prefix, expiring=expiring)

    def version(self, namespace: str) -> int:
        """The namespace's version: it moves on with every write to its records (0: none)."""
        return self._reads.version(namespace)

    async def aversion(self, namespace: str) -> int:
        """Async :meth:`version`."""
        return await asyncio.to_thread(self.version, namespace)

    def changes(self, namespace: str, since: int) -> RecordChanges | None:
        """What changed in ``namespace`` after version ``since``.

        Returns:
            The records touched and the new version; ``None`` when the namespace was erased
            meanwhile (read it whole again).
        """
        return self._reads.changes(namespace, since)

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
        return self._reads.search_by_vector(
            embedding,
            namespace=namespace,
            k=k,
            filter=filter,
            min_score=min_score,
        )

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

    # -- writes --------------------------------------------------------------
    def add(
        self,
        text: str,
        *,
        namespace: str,
        thread: str | None = None,
        metadata: dict[str, Any] | None = None,
        timestamp: datetime | None = None,
        record_id: str | None = None,
        ttl: float | timedelta | None = None,
        expires_at: datetime | None = None,
    ) -> list[MemoryOp]:
        """Offer an item to long-term memory; the policy decides what happens.

        Args:
            text: The text to remember.
            namespace: The user (or agent) it belongs to.
            thread: The conversation it came from.
            metadata: JSON-serialisable metadata stored with it.
            timestamp: The item's own time (default: now, by the memory's ``clock``).
            record_id: The id to use if it is added (default: a new UUID); ids are unique
                within a namespace.
            ttl: Forget the record this long after now (seconds or a ``timedelta``).
            expires_at: Forget the record at this time (naive datetimes are UTC).

        Returns:
            The ops applied (ADD / UPDATE / DELETE / NOOP), each with its reason.
        """
        return self._writes.add(
            text,
            namespace=namespace,
            thread=thread,
            metadata=metadata,
            timestamp=timestamp,
            record_id=record_id,
            ttl=ttl,
            expires_at=expires_at,
        )

    async def aadd(
        self,
        text: str,
        *,
        namespace: str,
        thread: str | None = None,
        metadata: dict[str, Any] | None = None,
        timestamp: datetime | None = None,
        record_id: str | None = None,
        ttl: float | timedelta | None = None,
        expires_at: datetime | None = None,
    ) -> list[MemoryOp]:
        """Async :meth:`add`."""
        return await self._writes.aadd(
            text,
            namespace=namespace,
            thread=thread,
            metadata=metadata,
            timestamp=timestamp,
            record_id=record_id,
            ttl=ttl,
            expires_at=expires_at,
        )

    def update(
        self,
        record_id: str,
        text: str,
        *,
        namespace: str,
        metadata: dict[str, Any] | None = None,
        ttl: float | timedelta | None = None,
        expires_at: datetime | None = None,
    ) -> MemoryOp:
        """Replace a record's text in place (re-embedded and re-indexed).

        Args:
            record_id: The record to change.
            text: Its new text.
            namespace: The namespace the record belongs to.
            metadata: New metadata (``None`` keeps the current metadata).
            ttl: New expiry, this long after now (``None`` with ``expires_at=None`` keeps
                the record's expiry).
            expires_at: New expiry time.

        Raises:
            RecordNotFoundError: no such record in ``namespace`` (or it expired).
        """
        return self._writes.update(
            record_id,
            text,
            namespace=namespace,
            metadata=metadata,
            ttl=ttl,
            expires_at=expires_at,
        )

    async def aupdate(
        self,
        record_id: str,
        text: str,
        *,
        namespace: str,
        metadata: dict[str, Any] | None = None,
        ttl: float | timedelta | None = None,
        expires_at: datetime | None = None,
    ) -> MemoryOp:
        """Async :meth:`update`."""
        return await self._writes.aupdate(
            record_id,
            text,
            namespace=namespace,
            metadata=metadata,
            ttl=ttl,
            expires_at=expires_at,
        )

    def put(
        self,
        record_id: str,
        text: str,
        *,
        namespace: str,
        thread: str | None = None,
        metadata: dict[str, Any] | None = None,
        ttl: float | timedelta | None = None,
        expires_at: datetime | None = None,
        embedding: Sequence[float] | Vector | None = None,
    ) -> list[MemoryOp]:
        """Write a record by id, whether or not it exists: one atomic step.

        An existing record of ``namespace`` is updated in place (text, metadata and expiry
        replaced); a new id is added, and the policy may forget other records to make room
        (it neither declines the record nor folds it into another one). The check and the
        write happen under the namespace's writer lock, so concurrent puts of one id never
        fail: the last one wins, in every process.

        Args:
            record_id: The record's id in ``namespace``.
            text: Its text.
            namespace: The user (or agent) it belongs to.
            thread: The conversation it came from (kept on update).
            metadata: Its metadata (replaces the current metadata).
            ttl: Forget it this long after now (seconds or a ``timedelta``).
            expires_at: Forget it at this time.
            embedding: The embedding to store instead of embedding ``text`` (a vector of
                the memory's model, normalised here).

        Returns:
            The ops applied (UPDATE; for a new id its ADD, after the DELETEs that made room).
        """
        return self._writes.put(
            record_id,
            text,
            namespace=namespace,
            thread=thread,
            metadata=metadata,
            ttl=ttl,
            expires_at=expires_at,
            embedding=embedding,
        )

    async def aput(
        self,
        record_id: str,
        text: str,
        *,
        namespace: str,
        thread: str | None = None,
        metadata: dict[str, Any] | None = None,
        ttl: float | timedelta | None = None,
        expires_at: datetime | None = None,
        embedding: Sequence[float] | Vector | None = None,
    ) -> list[MemoryOp]:
        """Async :meth:`put`."""
        return await self._writes.aput(
            record_id,
            text,
            namespace=namespace,
            thread=thread,
            metadata=metadata,
            ttl=ttl,
            expires_at=expires_at,
            embedding=embedding,
        )

    @overload
    def delete(
        self, record_id: str, *, namespace: str, missing_ok: Literal[False] = False
    ) -> MemoryOp: ...

    @overload
    def delete(self, record_id: str, *, namespace: str, missing_ok: bool) -> MemoryOp | None: ...

    def delete(
        self, record_id: str, *, namespace: str, missing_ok: bool = False
    ) -> MemoryOp | None:
        """Forget a record.

        The check that it exists and the delete are one atomic step.

        Args:
            record_id: The record to delete.
            namespace: The namespace it belongs to.
            missing_ok: Return ``None`` instead of raising when there is no such record
                (deleting what is gone is then not an error).

        Raises:
            RecordNotFoundError: no such record in ``namespace`` and not ``missing_ok``.
        """
        return self._writes.delete(record_id, namespace=namespace, missing_ok=missing_ok)

    @overload
    async def adelete(
        self, record_id: str, *, namespace: str, missing_ok: Literal[False] = False
    ) -> MemoryOp: ...

    @overload
    async def adelete(
        self, record_id: str, *, namespace: str, missing_ok: bool
    ) -> MemoryOp | None: ...

    async def adelete(
        self, record_id: str, *, namespace: str, missing_ok: bool = False
    ) -> MemoryOp | None:
        """Async :meth:`delete`."""
        return await asyncio.to_thread(
            self.delete, record_id, namespace=namespace, missing_ok=missing_ok
        )

    def add_many(
        self,
        texts: Sequence[str],
        *,
        namespace: str,
        thread: str | None = None,
        metadatas: Sequence[dict[str, Any] | None] | None = None,
        record_ids: Sequence[str | None] | None = None,
        ttl: float | timedelta | None = None,
        expires_at: datetime | None = None,
    ) -> list[list[MemoryOp]]:
        """Offer several items at once: embedded in one batch, then decided one by one.

        Every item is checked before anything is embedded or stored.

        Args:
            texts: The texts to remember.
            namespace: The user (or agent) they belong to.
            thread: The conversation they came from.
            metadatas: One metadata dict (or ``None``) per text.
            record_ids: One id (or ``None`` for a new UUID) per text.
            ttl: Forget each record this long after now (seconds or a ``timedelta``).
            expires_at: Forget the records at this time.

        Returns:
            The ops applied for each text, in order.
        """
        return self._writes.add_many(
            texts,
            namespace=namespace,
            thread=thread,
            metadatas=metadatas,
            record_ids=record_ids,
            ttl=ttl,
            expires_at=expires_at,
        )

    async def aadd_many(
        self,
        texts: Sequence[str],
        *,
        namespace: str,
        thread: str | None = None,
        metadatas: Sequence[dict[str, Any] | None] | None = None,
        record_ids: Sequence[str | None] | None = None,
        ttl: float | timedelta | None = None,
        expires_at: datetime | None = None,
    ) -> list[list[MemoryOp]]:
        """Async :meth:`add_many`."""
        return await self._writes.aadd_many(
            texts,
            namespace=namespace,
            thread=thread,
            metadatas=metadatas,
            record_ids=record_ids,
            ttl=ttl,
            expires_at=expires_at,
        )

    def put_many(
        self,
        texts: Sequence[str],
        *,
        namespace: str,
        record_ids: Sequence[str],
        metadatas: Sequence[dict[str, Any] | None] | None = None,
        thread: str | None = None,
    ) -> list[list[MemoryOp]]:
        """:meth:`put` for several records: embedded in one batch, each written atomically.

        Returns:
            The ops applied for each text, in order.
        """
        return self._writes.put_many(
            texts,
            namespace=namespace,
            record_ids=record_ids,
            metadatas=metadatas,
            thread=thread,
        )

    async def aput_many(
        self,
        texts: Sequence[str],
        *,
        namespace: str,
        record_ids: Sequence[str],
        metadatas: Sequence[dict[str, Any] | None] | None = None,
        thread: str | None = None,
    ) -> list[list[MemoryOp]]:
        """Async :meth:`put_many`."""
        return await self._writes.aput_many(
            texts,
            namespace=namespace,
            record_ids=record_ids,
            metadatas=metadatas,
            thread=thread,
        )

    def set_expiry(
        self,
        record_ids: Sequence[str],
        *,
        namespace: str,
        ttl: float | timedelta | None = None,
        expires_at: datetime | None = None,
        versions: Sequence[datetime] | None = None,
    ) -> list[str]:
        """Move the expiry of live records of ``namespace`` (a TTL refreshed on read).

        Both ``None`` clears their expiry. Not a memory op: text and audit log are untouched.

        Args:
            record_ids: The records to move.
            namespace: Their namespace.
            ttl: The new expiry, from now.
            expires_at: The new expiry, as a time.
            versions: Each record's ``updated_at`` as it was read: a record written since
                is left as it is (a refresh extends only the version it read).

        Returns:
            The ids whose expiry moved.
        """
        return self._writes.set_expiry(
            record_ids,
            namespace=namespace,
            ttl=ttl,
            expires_at=expires_at,
            versions=versions,
        )

    async def aset_expiry(
        self,
        record_ids: Sequence[str],
        *,
        namespace: str,
        ttl: float | timedelta | None = None,
        expires_at: datetime | None = None,
        versions: Sequence[datetime] | None = None,
    ) -> list[str]:
        """Async :meth:`set_expiry`."""
        return await asyncio.to_thread(
            self.set_expiry,
            record_ids,
            namespace=namespace,
            ttl=ttl,
            expires_at=expires_at,
            versions=versions,
        )

    # -- messages ------------------------------------------------------------
    def add_messages(self, messages: Sequence[BaseMessage], *, namespace: str, thread: str) -> None:
        """Append messages to a thread's durable log, in one transaction."""
        self._messages.add_messages(messages, namespace=namespace, thread=thread)

    async def aadd_messages(
        self, messages: Sequence[BaseMessage], *, namespace: str, thread: str
    ) -> None:
        """Async :meth:`add_messages`."""
        await asyncio.to_thread(self.add_messages, messages, namespace=namespace, thread=thread)

    def messages(
        self, *, namespace: str, thread: str, last: int | None = None
    ) -> list[BaseMessage]:
        """A thread's messages, oldest first (only the newest ``last`` when given)."""
        return self._messages.messages(namespace=namespace, thread=thread, last=last)

    async def amessages(
        self, *, namespace: str, thread: str, last: int | None = None
    ) -> list[BaseMessage]:
        """Async :meth:`messages`."""
        return await asyncio.to_thread(self.messages, namespace=namespace, thread=thread, last=last)

    def clear_messages(self, *, namespace: str, thread: str) -> int:
        """Delete a thread's messages (long-term records stay); returns how many."""
        return self._messages.clear_messages(namespace=namespace, thread=thread)

    async def aclear_messages(self, *, namespace: str, thread: str) -> int:
        """Async :meth:`clear_messages`."""
        return await asyncio.to_thread(self.clear_messages, namespace=namespace, thread=thread)

    def threads(self, namespace: str) -> list[str]:
        """Threads of ``namespace`` that hold messages, oldest first."""
        return self._messages.threads(namespace)

    async def athreads(self, namespace: str) -> list[str]:
        """Async :meth:`threads`."""
        return await asyncio.to_thread(self.threads, namespace)

    # -- userdata ------------------------------------------------------------
    def delete_namespace(self, namespace: str) -> ErasedNamespace:
        """Erase a user: every record, chat message, audit entry and saved index file.

        Records, messages and audit entries go in one transaction; other namespaces are
        untouched. Other processes drop their cached view of the namespace the next time
        they touch it (the store's change log tells them). Deleting a namespace that holds
        nothing is not an error: every count is zero.

        Returns:
            How many records, messages, audit entries and index files were removed.
        """
        return self._userdata.delete_namespace(namespace)

    async def adelete_namespace(self, namespace: str) -> ErasedNamespace:
        """Async :meth:`delete_namespace`."""
        return await asyncio.to_thread(self.delete_namespace, namespace)

    def export_namespace(
        self,
        namespace: str,
        out: str | os.PathLike[str] | IO[str],
        *,
        embeddings: bool = False,
        progress: bool = False,
    ) -> ExportSummary:
        """Write a user's records and chat messages to a JSON Lines file.

        The format (a versioned header, then one line per record and message) is described
        in :mod:`langchain_agentmem.memory.transfer`. A path gets a new file, readable by its owner
        only, renamed over it when complete; a file already there is replaced (never
        written into) only if it is an earlier export.

        Args:
            namespace: The user to export.
            out: A file path or an open text file.
            embeddings: Also write each record's embedding (else an import re-embeds).
            progress: Show a progress bar on stderr.
        """
        return self._userdata.export_namespace(
            namespace,
            out,
            embeddings=embeddings,
            progress=progress,
        )

    async def aexport_namespace(
        self,
        namespace: str,
        out: str | os.PathLike[str] | IO[str],
        *,
        embeddings: bool = False,
        progress: bool = False,
    ) -> ExportSummary:
        """Async :meth:`export_namespace`."""
        return await asyncio.to_thread(
            self.export_namespace,
            namespace,
            out,
            embeddings=embeddings,
            progress=progress,
        )

    def import_namespace(
        self,
        source: str | os.PathLike[str] | IO[str] | Export,
        *,
        namespace: str,
        progress: bool = False,
    ) -> ImportSummary:
        """Import a file written by :meth:`export_namespace`, in one transaction.

        Record ids are kept; records already here (by id) and messages already in their
        thread are not added again, so importing twice adds nothing. Records are re-embedded
        with this memory's model when the file has no embeddings or another model made
        them. A malformed line (named by number), a record over this memory's limits, an
        embedding of other dimensions than the model's, a file cut short (other counts than
        its header's), a newer format, a record or message dated in the future or a message
        other than a human, AI or tool message imports nothing.

        Args:
            source: A file path, an open text file, or what
                :func:`~langchain_agentmem.memory.export_format.read_export` read from one.
            namespace: The user to import into; required (the file names a user too, but a
                file can name anyone: it is never taken for the target).
            progress: Show progress bars on stderr.
        """
        return self._userdata.import_namespace(source, namespace=namespace, progress=progress)

    async def aimport_namespace(
        self,
        source: str | os.PathLike[str] | IO[str] | Export,
        *,
        namespace: str,
        progress: bool = False,
    ) -> ImportSummary:
        """Async :meth:`import_namespace`."""
        return await asyncio.to_thread(
            self.import_namespace,
            source,
            namespace=namespace,
            progress=progress,
        )


def _make_annotator(model: object, per_minute: object, store: MemoryAnnotationStore) -> Annotator:
    """The annotator of a ``model=`` argument, checked."""
    if not isinstance(model, BaseChatModel):
        raise InvalidTypeError(
            f"model must be a LangChain chat model (a BaseChatModel, such as ChatOpenAI), got "
            f"{type(model).__name__}; or leave it out to call no model"
        )
    if per_minute is not None and (
        isinstance(per_minute, bool)
        or not isinstance(per_minute, (int, float))
        or not per_minute > 0
    ):
        raise InvalidInputError(
            f"model_calls_per_minute must be a number > 0 or None, got {per_minute!r}"
        )
    return Annotator(model, store, calls_per_minute=per_minute)
