"""``AgentMemory``: the one object every adapter talks to."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import IO, Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.messages import BaseMessage, message_to_dict, messages_from_dict

from langchain_agentmem.backends import Backend, RecordRow, open_backend
from langchain_agentmem.backends.sql import dump_json, epoch_to_datetime
from langchain_agentmem.cache import (
    DEFAULT_CACHE_RECORDS,
    CacheInfo,
    NamespaceCache,
    NamespaceView,
    check_cache_records,
)
from langchain_agentmem.embeddings import (
    aembed_query,
    aembed_texts,
    embed_query,
    embed_texts,
    normalize,
    resolve_embeddings,
)
from langchain_agentmem.errors import (
    InvalidInputError,
    InvalidTypeError,
    RecordNotFoundError,
    StoreError,
)
from langchain_agentmem.index import (
    HybridConfig,
    check_mode,
)
from langchain_agentmem.index.persist import IndexFiles
from langchain_agentmem.ops import Decide, apply_batch
from langchain_agentmem.policies import MemoryPolicy, make_policy
from langchain_agentmem.transfer import (
    ExportSummary,
    ImportSummary,
    export_namespace,
    import_namespace,
)
from langchain_agentmem.types import (
    Candidate,
    Decision,
    ErasedNamespace,
    MemoryOp,
    MemoryRecord,
    OpKind,
    Vector,
)
from langchain_agentmem.validation import (
    DEFAULT_MAX_METADATA_BYTES,
    DEFAULT_MAX_TEXT_CHARS,
    Limits,
    check_k,
    check_metadata,
    check_name,
    check_optional_name,
    check_record_id,
    check_text,
)

USER_POLICY = "user"
"""Policy name logged for ops a caller asked for directly (update / delete)."""


def to_record(row: RecordRow, *, score: float | None = None) -> MemoryRecord:
    """The public view of a stored row."""
    return MemoryRecord(
        id=row.id,
        namespace=row.namespace,
        text=row.text,
        thread=row.thread,
        metadata=row.metadata,
        created_at=epoch_to_datetime(row.created_at),
        updated_at=epoch_to_datetime(row.updated_at),
        score=score,
        embedding=row.embedding,
    )


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
    ) -> None:
        if hybrid is not None and not isinstance(hybrid, HybridConfig):
            raise InvalidTypeError(
                f"hybrid must be a HybridConfig or None, got {type(hybrid).__name__}"
            )
        self.hybrid = HybridConfig() if hybrid is None else hybrid
        cache_records = check_cache_records(cache_records)
        self.limits = Limits(max_text_chars, max_metadata_bytes)
        if policy is None:
            policy = "keep_all" if capacity is None else "learned"
        self.policy = make_policy(policy, capacity)
        self.embeddings = resolve_embeddings(embeddings)
        self.backend: Backend = open_backend(url)
        index_files: IndexFiles | None = None
        path = getattr(self.backend, "path", None)
        if persist_indexes and isinstance(path, str) and path != ":memory:":
            index_files = IndexFiles.beside(path)
        self._cache = NamespaceCache(
            self.backend, hybrid=self.hybrid, index_files=index_files, max_records=cache_records
        )

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The store URL."""
        return self.backend.url

    @property
    def capacity(self) -> int | None:
        """Most records per namespace, or ``None``."""
        return self.policy.capacity

    def close(self) -> None:
        """Save changed indexes (see ``persist_indexes``) and close the store."""
        self.save_indexes()
        self.backend.close()

    def save_indexes(self) -> None:
        """Write the dense index of every cached namespace changed since it was last saved."""
        self._cache.save()

    def cache_info(self) -> CacheInfo:
        """Hits, misses and evictions of the namespace cache, and what it holds now."""
        return self._cache.info()

    def __enter__(self) -> AgentMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"AgentMemory({self.url!r}, policy={self.policy.name!r}, capacity={self.capacity})"

    # -- long-term: writes -----------------------------------------------------------------
    def _candidate(
        self,
        text: object,
        namespace: object,
        thread: object,
        metadata: object,
        timestamp: object,
        record_id: object,
    ) -> tuple[str, str, str | None, dict[str, Any], datetime | None, str]:
        if timestamp is not None and not isinstance(timestamp, datetime):
            raise InvalidTypeError(
                f"timestamp must be a datetime or None, got {type(timestamp).__name__}"
            )
        rid = uuid.uuid4().hex if record_id is None else check_record_id(record_id)
        return (
            self.limits.text(check_text(text)),
            check_name(namespace, what="namespace"),
            check_optional_name(thread, what="thread"),
            self.limits.metadata(check_metadata(metadata)),
            timestamp,
            rid,
        )

    def _write(
        self, namespace: str, items: Sequence[Callable[[NamespaceView], Sequence[MemoryOp]]]
    ) -> list[list[MemoryOp]]:
        """Apply the ops of each item in one transaction, the cache following item by item.

        Each item is called inside the transaction, after the namespace's writer lock, with
        the namespace's view as the store holds it then plus the items before it: the state
        a policy sees is the one its ops apply to, whatever other processes do.
        """
        with self._cache.lock(namespace):
            views: list[NamespaceView] = []

            def step(item: Callable[[NamespaceView], Sequence[MemoryOp]]) -> Decide:
                def run() -> Sequence[MemoryOp]:
                    if not views:
                        views.append(self._cache.view(namespace))
                    return item(views[0])

                return run

            def mirror(ops: list[MemoryOp], rids: list[int], at: float) -> None:
                views[0].apply(namespace, ops, rids, at)

            try:
                out, seq = apply_batch(
                    self.backend, namespace, [step(i) for i in items], on_applied=mirror
                )
            except BaseException:
                # The view may hold ops that were rolled back: reload it when next used.
                self._cache.discard(namespace)
                raise
            if views:
                self._cache.committed(namespace, views[0], seq)
            if any(op.kind in (OpKind.UPDATE, OpKind.DELETE) for ops in out for op in ops):
                # The saved index holds a vector just replaced or deleted: not on disk.
                self._cache.discard_saved(namespace)
            return out

    def _commit_adds(self, candidates: Sequence[Candidate]) -> list[list[MemoryOp]]:
        """Let the policy decide each candidate (one namespace) in one transaction."""
        policy = self.policy

        def decide(c: Candidate) -> Callable[[NamespaceView], Sequence[MemoryOp]]:
            return lambda view: policy.decide(c, view.state(policy, c))

        return self._write(candidates[0].namespace, [decide(c) for c in candidates])

    def _commit_add(self, candidate: Candidate) -> list[MemoryOp]:
        return self._commit_adds([candidate])[0]

    def _commit_op(self, namespace: str, op: MemoryOp) -> MemoryOp:
        ((applied,),) = self._write(namespace, [lambda view: [op]])
        return applied

    def add(
        self,
        text: str,
        *,
        namespace: str,
        thread: str | None = None,
        metadata: dict[str, Any] | None = None,
        timestamp: datetime | None = None,
        record_id: str | None = None,
    ) -> list[MemoryOp]:
        """Offer an item to long-term memory; the policy decides what happens.

        Args:
            text: The text to remember.
            namespace: The user (or agent) it belongs to.
            thread: The conversation it came from.
            metadata: JSON-serialisable metadata stored with it.
            timestamp: The item's own time (default: now).
            record_id: The id to use if it is added (default: a new UUID).

        Returns:
            The ops applied (ADD / UPDATE / DELETE / NOOP), each with its reason.
        """
        text, namespace, thread, meta, ts, rid = self._candidate(
            text, namespace, thread, metadata, timestamp, record_id
        )
        vector = embed_texts(self.embeddings, [text])[0]
        return self._commit_add(Candidate(rid, namespace, text, vector, thread, meta, ts))

    async def aadd(
        self,
        text: str,
        *,
        namespace: str,
        thread: str | None = None,
        metadata: dict[str, Any] | None = None,
        timestamp: datetime | None = None,
        record_id: str | None = None,
    ) -> list[MemoryOp]:
        """Async :meth:`add`."""
        text, namespace, thread, meta, ts, rid = self._candidate(
            text, namespace, thread, metadata, timestamp, record_id
        )
        vector = (await aembed_texts(self.embeddings, [text]))[0]
        candidate = Candidate(rid, namespace, text, vector, thread, meta, ts)
        return await asyncio.to_thread(self._commit_add, candidate)

    def _owned(self, record_id: object, namespace: object) -> RecordRow:
        rid = check_record_id(record_id)
        ns = check_optional_name(namespace, what="namespace")
        row = self.backend.get_record(rid)
        if row is None or (ns is not None and row.namespace != ns):
            where = f" in namespace {ns!r}" if ns is not None else ""
            raise RecordNotFoundError(f"no record {rid!r}{where}; list ids with records(namespace)")
        return row

    def _commit_update(
        self, row: RecordRow, text: str, vector: Vector, metadata: dict[str, Any] | None
    ) -> MemoryOp:
        op = MemoryOp(
            kind=OpKind.UPDATE,
            record_ids=(row.id,),
            reason="updated by caller",
            text=text,
            metadata=metadata,
            embedding=vector,
            policy=USER_POLICY,
        )
        return self._commit_op(row.namespace, op)

    def update(
        self,
        record_id: str,
        text: str,
        *,
        namespace: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> MemoryOp:
        """Replace a record's text in place (re-embedded and re-indexed).

        Args:
            record_id: The record to change.
            text: Its new text.
            namespace: When given, the record must belong to it.
            metadata: New metadata (``None`` keeps the current metadata).
        """
        text = self.limits.text(check_text(text))
        meta = None if metadata is None else self.limits.metadata(check_metadata(metadata))
        row = self._owned(record_id, namespace)
        vector = embed_texts(self.embeddings, [text])[0]
        return self._commit_update(row, text, vector, meta)

    async def aupdate(
        self,
        record_id: str,
        text: str,
        *,
        namespace: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> MemoryOp:
        """Async :meth:`update`."""
        text = self.limits.text(check_text(text))
        meta = None if metadata is None else self.limits.metadata(check_metadata(metadata))
        row = await asyncio.to_thread(self._owned, record_id, namespace)
        vector = (await aembed_texts(self.embeddings, [text]))[0]
        return await asyncio.to_thread(self._commit_update, row, text, vector, meta)

    def delete(self, record_id: str, *, namespace: str | None = None) -> MemoryOp:
        """Forget a record.

        Args:
            record_id: The record to delete.
            namespace: When given, the record must belong to it.
        """
        row = self._owned(record_id, namespace)
        op = MemoryOp(
            kind=OpKind.DELETE,
            record_ids=(row.id,),
            reason="deleted by caller",
            policy=USER_POLICY,
        )
        return self._commit_op(row.namespace, op)

    async def adelete(self, record_id: str, *, namespace: str | None = None) -> MemoryOp:
        """Async :meth:`delete`."""
        return await asyncio.to_thread(self.delete, record_id, namespace=namespace)

    def _candidates(
        self,
        texts: object,
        namespace: object,
        thread: object,
        metadatas: object,
        record_ids: object,
    ) -> list[tuple[str, str, str | None, dict[str, Any], datetime | None, str]]:
        if isinstance(texts, str) or not isinstance(texts, Sequence):
            raise InvalidTypeError(
                f"texts must be a list of str, got {type(texts).__name__}; "
                "wrap a single text in a list or call add()"
            )
        n = len(texts)

        def per_text(value: object, name: str) -> Sequence[object]:
            if value is None:
                return [None] * n
            if isinstance(value, str) or not isinstance(value, Sequence) or len(value) != n:
                raise InvalidInputError(
                    f"{name} must be a list with one entry per text ({n}), got {value!r:.60}"
                )
            return value

        items = [
            self._candidate(text, namespace, thread, meta, None, rid)
            for text, meta, rid in zip(
                texts,
                per_text(metadatas, "metadatas"),
                per_text(record_ids, "record_ids"),
                strict=True,
            )
        ]
        seen: set[str] = set()
        for item in items:
            if item[5] in seen:
                raise InvalidInputError(f"record id {item[5]!r} appears twice; pass unique ids")
            seen.add(item[5])
        return items

    def add_many(
        self,
        texts: Sequence[str],
        *,
        namespace: str,
        thread: str | None = None,
        metadatas: Sequence[dict[str, Any] | None] | None = None,
        record_ids: Sequence[str | None] | None = None,
    ) -> list[list[MemoryOp]]:
        """Offer several items at once: embedded in one batch, then decided one by one.

        Every item is checked before anything is embedded or stored.

        Args:
            texts: The texts to remember.
            namespace: The user (or agent) they belong to.
            thread: The conversation they came from.
            metadatas: One metadata dict (or ``None``) per text.
            record_ids: One id (or ``None`` for a new UUID) per text.

        Returns:
            The ops applied for each text, in order.
        """
        items = self._candidates(texts, namespace, thread, metadatas, record_ids)
        if not items:
            return []
        vectors = embed_texts(self.embeddings, [item[0] for item in items])
        return self._commit_adds(
            [
                Candidate(rid, ns, text, vector, th, meta, ts)
                for (text, ns, th, meta, ts, rid), vector in zip(items, vectors, strict=True)
            ]
        )

    async def aadd_many(
        self,
        texts: Sequence[str],
        *,
        namespace: str,
        thread: str | None = None,
        metadatas: Sequence[dict[str, Any] | None] | None = None,
        record_ids: Sequence[str | None] | None = None,
    ) -> list[list[MemoryOp]]:
        """Async :meth:`add_many`."""
        items = self._candidates(texts, namespace, thread, metadatas, record_ids)
        if not items:
            return []
        vectors = await aembed_texts(self.embeddings, [item[0] for item in items])
        candidates = [
            Candidate(rid, ns, text, vector, th, meta, ts)
            for (text, ns, th, meta, ts, rid), vector in zip(items, vectors, strict=True)
        ]
        return await asyncio.to_thread(self._commit_adds, candidates)

    # -- long-term: reads ------------------------------------------------------------------
    def _search(
        self, query: str, vector: Vector | None, namespace: str, k: int, mode: str
    ) -> list[MemoryRecord]:
        with self._cache.lock(namespace):
            view = self._cache.view(namespace)
            if view.index is None:
                return []
            if mode == "lexical":
                hits = view.lexical.search(query, k)
            elif mode == "dense":
                assert vector is not None  # embedded by the caller for this mode
                hits = view.index.search(vector, k)
            else:
                assert vector is not None
                hits = view.hybrid(query, vector, k)
            rows = {rid: view.rows[rid] for rid, _ in hits}
            if hits and self.policy.tracks_recalls:
                self._note_recalls(view, [rid for rid, _ in hits])
        return [to_record(rows[rid], score=score) for rid, score in hits]

    def _note_recalls(self, view: NamespaceView, rids: list[int]) -> None:
        """Count a recall of each record, in the store and in the cached stats."""
        now = time.time()
        self.backend.touch(rids, now)
        for rid in rids:
            row = view.rows[rid]
            view.rows[rid] = dataclasses.replace(
                row, access_count=row.access_count + 1, last_accessed_at=now
            )

    def search(
        self, query: str, *, namespace: str, k: int = 5, mode: str = "hybrid"
    ) -> list[MemoryRecord]:
        """The ``k`` records of ``namespace`` that best match ``query``, best first.

        Args:
            query: What to look for.
            namespace: Where to look (never crosses into another namespace).
            k: Most records to return.
            mode: ``"hybrid"`` (default: dense and BM25 scores fused), ``"dense"``
                (embedding cosine similarity) or ``"lexical"`` (BM25; only records that
                share a word with the query).

        Each record's ``score`` is the cosine similarity (dense), the BM25 score (lexical)
        or the hybrid score (higher is better). The hybrid score is absolute, in [0, 1]:
        ``0.2 * cosine + 0.8 * BM25 / (the query's highest attainable BM25)``, lifted
        halfway toward a better-scoring neighbour in the same thread (see
        :mod:`langchain_agentmem.index.hybrid`), so one ``min_score`` means the same in
        every search.
        """
        query = check_text(query, what="query")
        namespace = check_name(namespace, what="namespace")
        k = check_k(k)
        mode = check_mode(mode)
        vector = None if mode == "lexical" else embed_query(self.embeddings, query)
        return self._search(query, vector, namespace, k, mode)

    async def asearch(
        self, query: str, *, namespace: str, k: int = 5, mode: str = "hybrid"
    ) -> list[MemoryRecord]:
        """Async :meth:`search`."""
        query = check_text(query, what="query")
        namespace = check_name(namespace, what="namespace")
        k = check_k(k)
        mode = check_mode(mode)
        vector = None if mode == "lexical" else await aembed_query(self.embeddings, query)
        return await asyncio.to_thread(self._search, query, vector, namespace, k, mode)

    def get(self, record_id: str, *, namespace: str | None = None) -> MemoryRecord:
        """One record by id, with its embedding.

        Raises:
            RecordNotFoundError: no such record (in ``namespace``, when given).
        """
        return to_record(self._owned(record_id, namespace))

    async def aget(self, record_id: str, *, namespace: str | None = None) -> MemoryRecord:
        """Async :meth:`get`."""
        return await asyncio.to_thread(self.get, record_id, namespace=namespace)

    def records(self, namespace: str) -> list[MemoryRecord]:
        """Every record of ``namespace``, oldest first."""
        namespace = check_name(namespace, what="namespace")
        return [to_record(row) for row in self.backend.iter_records(namespace)]

    async def arecords(self, namespace: str) -> list[MemoryRecord]:
        """Async :meth:`records`."""
        return await asyncio.to_thread(self.records, namespace)

    def decisions(self, namespace: str, *, limit: int | None = None) -> list[Decision]:
        """The audit log of ``namespace``: every op applied, when and why (oldest first)."""
        namespace = check_name(namespace, what="namespace")
        if limit is not None:
            limit = check_k(limit)
        return self.backend.decisions(namespace, limit=limit)

    async def adecisions(self, namespace: str, *, limit: int | None = None) -> list[Decision]:
        """Async :meth:`decisions`."""
        return await asyncio.to_thread(self.decisions, namespace, limit=limit)

    def namespaces(self) -> list[str]:
        """Namespaces that hold records or messages."""
        return self.backend.namespaces()

    def delete_namespace(self, namespace: str) -> ErasedNamespace:
        """Erase a user: every record, chat message, audit entry and saved index file.

        Records, messages and audit entries go in one transaction; other namespaces are
        untouched. Other processes drop their cached view of the namespace the next time
        they touch it (the store's change log tells them). Deleting a namespace that holds
        nothing is not an error: every count is zero.

        Returns:
            How many records, messages, audit entries and index files were removed.
        """
        namespace = check_name(namespace, what="namespace")
        with self._cache.lock(namespace):
            erased = self.backend.erase_namespace(namespace, at=time.time())
            try:
                files = self._cache.erase(namespace)
            except OSError as exc:
                raise StoreError(
                    f"namespace {namespace!r} was erased from the store, but its saved index "
                    f"could not be removed ({exc}); remove the store's '.indexes' folder (it "
                    "is rebuilt from the store)"
                ) from None
        return ErasedNamespace(
            namespace=namespace,
            records=erased.records,
            messages=erased.messages,
            decisions=erased.decisions,
            index_files=files,
        )

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
        in :mod:`langchain_agentmem.transfer`. A path is created readable by its owner only.

        Args:
            namespace: The user to export.
            out: A file path or an open text file.
            embeddings: Also write each record's embedding (else an import re-embeds).
            progress: Show a progress bar on stderr.
        """
        return export_namespace(
            self.backend, self.embeddings, namespace, out, embeddings=embeddings, progress=progress
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
            self.export_namespace, namespace, out, embeddings=embeddings, progress=progress
        )

    def import_namespace(
        self,
        source: str | os.PathLike[str] | IO[str],
        *,
        namespace: str | None = None,
        progress: bool = False,
    ) -> ImportSummary:
        """Import a file written by :meth:`export_namespace`, in one transaction.

        Record ids are kept; records already here (by id) and messages already in their
        thread are not added again, so importing twice adds nothing. Records are re-embedded
        with this memory's model when the file has no embeddings or another model made
        them. A malformed line (named by number) or a newer format imports nothing.

        Args:
            source: A file path or an open text file.
            namespace: The user to import into (default: the one in the file).
            progress: Show progress bars on stderr.
        """
        return import_namespace(
            self.backend, self.embeddings, source, namespace=namespace, progress=progress
        )

    async def aimport_namespace(
        self,
        source: str | os.PathLike[str] | IO[str],
        *,
        namespace: str | None = None,
        progress: bool = False,
    ) -> ImportSummary:
        """Async :meth:`import_namespace`."""
        return await asyncio.to_thread(
            self.import_namespace, source, namespace=namespace, progress=progress
        )

    def search_by_vector(
        self, embedding: Sequence[float] | Vector, *, namespace: str, k: int = 5
    ) -> list[MemoryRecord]:
        """The ``k`` records of ``namespace`` nearest to ``embedding`` (cosine), best first.

        Args:
            embedding: A query vector from the memory's embedding model.
            namespace: Where to look.
            k: Most records to return.
        """
        namespace = check_name(namespace, what="namespace")
        k = check_k(k)
        try:
            vector = normalize(np.asarray(embedding, dtype=np.float32))
        except (TypeError, ValueError):
            raise InvalidTypeError(
                f"embedding must be a list of floats, got {type(embedding).__name__}"
            ) from None
        if vector.ndim != 2 or vector.shape[0] != 1 or not np.isfinite(vector).all():
            raise InvalidInputError(
                "embedding must be one finite vector; embed the query with memory.embeddings"
            )
        with self._cache.lock(namespace):
            view = self._cache.view(namespace)
            if view.index is None:
                return []
            if view.index.dimensions != vector.shape[1]:
                raise InvalidInputError(
                    f"embedding has {vector.shape[1]} dimensions but namespace {namespace!r} "
                    f"holds {view.index.dimensions}-dim vectors; embed with memory.embeddings"
                )
            hits = view.index.search(vector[0], k)
            rows = {rid: view.rows[rid] for rid, _ in hits}
        return [to_record(rows[rid], score=score) for rid, score in hits]

    async def asearch_by_vector(
        self, embedding: Sequence[float] | Vector, *, namespace: str, k: int = 5
    ) -> list[MemoryRecord]:
        """Async :meth:`search_by_vector`."""
        return await asyncio.to_thread(self.search_by_vector, embedding, namespace=namespace, k=k)

    # -- short-term: chat messages -----------------------------------------------------------
    @staticmethod
    def _serialise(messages: Sequence[BaseMessage]) -> list[str]:
        if isinstance(messages, BaseMessage):
            messages = [messages]
        if isinstance(messages, (str, bytes)) or not isinstance(messages, Iterable):
            raise InvalidTypeError(
                f"messages must be a list of LangChain BaseMessage objects, got "
                f"{type(messages).__name__}; wrap text in HumanMessage / AIMessage"
            )
        payloads = []
        for message in messages:
            if not isinstance(message, BaseMessage):
                raise InvalidTypeError(
                    f"messages must be LangChain BaseMessage objects, got "
                    f"{type(message).__name__}; wrap text in HumanMessage / AIMessage"
                )
            try:
                payloads.append(dump_json(message_to_dict(message)))
            except (TypeError, ValueError) as exc:
                raise InvalidInputError(
                    f"message content is not JSON-serialisable ({exc}); store text or "
                    "LangChain content blocks"
                ) from None
        return payloads

    @staticmethod
    def _deserialise(payloads: Sequence[str]) -> list[BaseMessage]:
        return messages_from_dict([json.loads(p) for p in payloads])

    def add_messages(self, messages: Sequence[BaseMessage], *, namespace: str, thread: str) -> None:
        """Append messages to a thread's durable log, in one transaction."""
        namespace = check_name(namespace, what="namespace")
        thread = check_name(thread, what="thread")
        self.backend.append_messages(namespace, thread, self._serialise(messages))

    async def aadd_messages(
        self, messages: Sequence[BaseMessage], *, namespace: str, thread: str
    ) -> None:
        """Async :meth:`add_messages`."""
        await asyncio.to_thread(self.add_messages, messages, namespace=namespace, thread=thread)

    def messages(
        self, *, namespace: str, thread: str, last: int | None = None
    ) -> list[BaseMessage]:
        """A thread's messages, oldest first (only the newest ``last`` when given)."""
        namespace = check_name(namespace, what="namespace")
        thread = check_name(thread, what="thread")
        if last is not None:
            last = check_k(last)
        return self._deserialise(self.backend.get_messages(namespace, thread, last=last))

    async def amessages(
        self, *, namespace: str, thread: str, last: int | None = None
    ) -> list[BaseMessage]:
        """Async :meth:`messages`."""
        return await asyncio.to_thread(self.messages, namespace=namespace, thread=thread, last=last)

    def clear_messages(self, *, namespace: str, thread: str) -> int:
        """Delete a thread's messages (long-term records stay); returns how many."""
        namespace = check_name(namespace, what="namespace")
        thread = check_name(thread, what="thread")
        return self.backend.clear_messages(namespace, thread)

    async def aclear_messages(self, *, namespace: str, thread: str) -> int:
        """Async :meth:`clear_messages`."""
        return await asyncio.to_thread(self.clear_messages, namespace=namespace, thread=thread)

    def threads(self, namespace: str) -> list[str]:
        """Threads of ``namespace`` that hold messages, oldest first."""
        return self.backend.threads(check_name(namespace, what="namespace"))
