"""``AgentMemory``: the one object every adapter talks to."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import IO, Any, Literal, overload

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.messages import BaseMessage, message_to_dict, messages_from_dict

from langchain_agentmem.backends import Backend, RecordRow, open_backend
from langchain_agentmem.backends.sql import dump_json, epoch_to_datetime
from langchain_agentmem.cache import (
    DEFAULT_CACHE_RECORDS,
    CacheInfo,
    NamespaceCache,
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
    tokenize,
)
from langchain_agentmem.index.persist import IndexFiles
from langchain_agentmem.ops import Decide, Lookup, apply_batch, expired_op
from langchain_agentmem.policies import MemoryPolicy, make_policy
from langchain_agentmem.transfer import (
    ExportSummary,
    ImportSummary,
    export_namespace,
    import_namespace,
)
from langchain_agentmem.types import (
    NEVER,
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
    STORE_MARK,
    Limits,
    StoreNamespace,
    check_k,
    check_metadata,
    check_name,
    check_namespace,
    check_optional_name,
    check_record_id,
    check_text,
)
from langchain_agentmem.view import NamespaceView

USER_POLICY = "user"
"""Policy name logged for ops a caller asked for directly (update / delete)."""

_NO_VECTOR: Vector = np.zeros(0, dtype=np.float32)
"""Placeholder embedding of a checked item until it is embedded."""


def to_record(
    row: RecordRow, *, score: float | None = None, embedding: Vector | None = None
) -> MemoryRecord:
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
        embedding=row.embedding if embedding is None else embedding,
        expires_at=None if row.expires_at is None else epoch_to_datetime(row.expires_at),
    )


def check_expiry(ttl: object, expires_at: object) -> datetime | None:
    """An item's expiry from a TTL (seconds or a ``timedelta``) or an absolute time.

    Raises:
        InvalidInputError: both given, a TTL that is not positive, a time already past.
        InvalidTypeError: values of the wrong type.
    """
    if ttl is not None and expires_at is not None:
        raise InvalidInputError(
            f"pass ttl ({ttl!r}) or expires_at ({expires_at!r}), not both; one expiry per item"
        )
    now = datetime.fromtimestamp(time.time(), timezone.utc)
    if ttl is not None:
        if isinstance(ttl, timedelta):
            seconds = ttl.total_seconds()
        elif isinstance(ttl, (int, float)) and not isinstance(ttl, bool):
            seconds = float(ttl)
        else:
            raise InvalidTypeError(
                f"ttl must be seconds (int or float) or a timedelta, got {type(ttl).__name__}"
            )
        if not seconds > 0 or seconds != seconds or seconds == float("inf"):
            raise InvalidInputError(
                f"ttl must be a finite number of seconds > 0, got {ttl!r}; leave it out for "
                "a record that never expires"
            )
        return now + timedelta(seconds=seconds)
    if expires_at is None:
        return None
    if not isinstance(expires_at, datetime):
        raise InvalidTypeError(
            f"expires_at must be a datetime or None, got {type(expires_at).__name__}"
        )
    if expires_at.tzinfo is None:
        expires_at = expires_at.replace(tzinfo=timezone.utc)
    if expires_at <= now:
        raise InvalidInputError(
            f"expires_at {expires_at.isoformat()} is already past; pass a future time"
        )
    return expires_at


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

    def _live_view(self, namespace: str) -> NamespaceView:
        """The namespace's cache with no expired record in it (swept first when one is due)."""
        with self._cache.lock(namespace):
            view = self._cache.view(namespace)
            now = time.time()
            if not view.due(now):
                return view
            self._sweep(namespace)
            view = self._cache.view(namespace)
            # Rows cached as expired that the store kept (their expiry was moved by
            # another writer) are read again; the rest are gone.
            stale = [
                row.id
                for row in view.rows.values()
                if row.expires_at is not None and row.expires_at <= now
            ]
            current = {row.id: row for row in self.backend.get_records(namespace, stale)}
            for record_id in stale:
                view.drop(record_id)
                if record_id in current:
                    view.put(current[record_id])
            view.next_expiry = min(
                (r.expires_at for r in view.rows.values() if r.expires_at is not None),
                default=None,
            )
            return view

    def _sweep(self, namespace: str) -> int:
        def decide(view: NamespaceView, lookup: Lookup) -> list[MemoryOp]:
            expired = lookup.expired()
            return [expired_op(expired)] if expired else []

        (applied,) = self._write(namespace, [decide], sweep=False)
        return sum(len(op.record_ids) for op in applied)

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
            return self._sweep(self._namespace(namespace))
        return sum(self._sweep(ns) for ns in self.backend.expiring_namespaces(time.time()))

    async def asweep(self, namespace: str | None = None) -> int:
        """Async :meth:`sweep`."""
        return await asyncio.to_thread(self.sweep, namespace)

    def _namespace(self, namespace: object) -> str:
        return check_namespace(namespace)

    # -- long-term: writes -----------------------------------------------------------------
    def _candidate(
        self,
        text: object,
        namespace: object,
        thread: object,
        metadata: object,
        timestamp: object,
        record_id: object,
        expires: datetime | None = None,
    ) -> Candidate:
        """A checked item, not yet embedded (its embedding is filled in later)."""
        if timestamp is not None and not isinstance(timestamp, datetime):
            raise InvalidTypeError(
                f"timestamp must be a datetime or None, got {type(timestamp).__name__}"
            )
        rid = uuid.uuid4().hex if record_id is None else check_record_id(record_id)
        return Candidate(
            id=rid,
            namespace=self._namespace(namespace),
            text=self.limits.text(check_text(text)),
            embedding=_NO_VECTOR,
            thread=check_optional_name(thread, what="thread"),
            metadata=self.limits.metadata(check_metadata(metadata)),
            timestamp=timestamp,
            expires_at=expires,
        )

    def _decide(self, candidate: Candidate, view: NamespaceView) -> list[MemoryOp]:
        ops = list(self.policy.decide(candidate, view.state(self.policy, candidate)))
        if candidate.expires_at is None:
            return ops
        # A policy that builds its own ADD still gives the item the expiry it was offered with.
        return [
            dataclasses.replace(op, expires_at=candidate.expires_at)
            if op.kind is OpKind.ADD and op.record_ids == (candidate.id,) and op.expires_at is None
            else op
            for op in ops
        ]

    def _write(
        self,
        namespace: str,
        items: Sequence[Callable[[NamespaceView, Lookup], Sequence[MemoryOp]]],
        *,
        sweep: bool = True,
        terms: Mapping[str, Counter[str]] | None = None,
    ) -> list[list[MemoryOp]]:
        """Apply the ops of each item in one transaction, the cache following item by item.

        Each item is called inside the transaction, after the namespace's writer lock, with
        the namespace's view as the store holds it then plus the items before it, and a
        :class:`Lookup` of the store: the state a policy (or an upsert) sees is the one its
        ops apply to, whatever other processes do. Expired records of a cached namespace
        are swept first (``sweep``). ``terms`` holds added texts tokenised beforehand (by id).
        """
        with self._cache.lock(namespace):
            if sweep:
                cached = self._cache.peek(namespace)
                if cached is not None and cached.due(time.time()):
                    self._live_view(namespace)
            views: list[NamespaceView] = []

            def step(item: Callable[[NamespaceView, Lookup], Sequence[MemoryOp]]) -> Decide:
                def run(lookup: Lookup) -> Sequence[MemoryOp]:
                    if not views:
                        views.append(self._cache.view(namespace))
                    return item(views[0], lookup)

                return run

            def mirror(ops: list[MemoryOp], rids: list[int], at: float) -> None:
                views[0].apply(namespace, ops, rids, at, terms)

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
        # Per-item work that needs no state, before the namespace is locked.
        terms = {c.id: Counter(tokenize(c.text)) for c in candidates}
        for c in candidates:
            self.policy.prepare(c)

        def decide(c: Candidate) -> Callable[[NamespaceView, Lookup], Sequence[MemoryOp]]:
            return lambda view, lookup: self._decide(c, view)

        return self._write(candidates[0].namespace, [decide(c) for c in candidates], terms=terms)

    def _commit_add(self, candidate: Candidate) -> list[MemoryOp]:
        return self._commit_adds([candidate])[0]

    def _commit_op(self, namespace: str, op: MemoryOp) -> MemoryOp:
        ((applied,),) = self._write(namespace, [lambda view, lookup: [op]])
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
        ttl: float | timedelta | None = None,
        expires_at: datetime | None = None,
    ) -> list[MemoryOp]:
        """Offer an item to long-term memory; the policy decides what happens.

        Args:
            text: The text to remember.
            namespace: The user (or agent) it belongs to.
            thread: The conversation it came from.
            metadata: JSON-serialisable metadata stored with it.
            timestamp: The item's own time (default: now).
            record_id: The id to use if it is added (default: a new UUID); ids are unique
                within a namespace.
            ttl: Forget the record this long after now (seconds or a ``timedelta``).
            expires_at: Forget the record at this time (naive datetimes are UTC).

        Returns:
            The ops applied (ADD / UPDATE / DELETE / NOOP), each with its reason.
        """
        item = self._candidate(
            text, namespace, thread, metadata, timestamp, record_id, check_expiry(ttl, expires_at)
        )
        vector = embed_texts(self.embeddings, [item.text])[0]
        return self._commit_add(dataclasses.replace(item, embedding=vector))

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
        item = self._candidate(
            text, namespace, thread, metadata, timestamp, record_id, check_expiry(ttl, expires_at)
        )
        vector = (await aembed_texts(self.embeddings, [item.text]))[0]
        candidate = dataclasses.replace(item, embedding=vector)
        return await asyncio.to_thread(self._commit_add, candidate)

    def _owned(self, record_id: object, namespace: object) -> RecordRow:
        rid = check_record_id(record_id)
        ns = self._namespace(namespace)
        row = self.backend.get_record(ns, rid)
        if row is None:
            raise RecordNotFoundError(
                f"no record {rid!r} in namespace {ns!r}; list ids with records(namespace)"
            )
        return row

    def _commit_update(
        self,
        namespace: str,
        record_id: str,
        text: str,
        vector: Vector,
        metadata: dict[str, Any] | None,
        expires: datetime | None,
    ) -> MemoryOp:
        op = MemoryOp(
            kind=OpKind.UPDATE,
            record_ids=(record_id,),
            reason="updated by caller",
            text=text,
            metadata=metadata,
            embedding=vector,
            policy=USER_POLICY,
            expires_at=expires,
        )
        return self._commit_op(namespace, op)

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
        text = self.limits.text(check_text(text))
        meta = None if metadata is None else self.limits.metadata(check_metadata(metadata))
        expires = check_expiry(ttl, expires_at)
        row = self._owned(record_id, namespace)
        vector = embed_texts(self.embeddings, [text])[0]
        return self._commit_update(row.namespace, row.id, text, vector, meta, expires)

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
        text = self.limits.text(check_text(text))
        meta = None if metadata is None else self.limits.metadata(check_metadata(metadata))
        expires = check_expiry(ttl, expires_at)
        row = await asyncio.to_thread(self._owned, record_id, namespace)
        vector = (await aembed_texts(self.embeddings, [text]))[0]
        return await asyncio.to_thread(
            self._commit_update, row.namespace, row.id, text, vector, meta, expires
        )

    def _commit_puts(self, candidates: Sequence[Candidate]) -> list[list[MemoryOp]]:
        """Write each candidate by id (one namespace) in one transaction: an existing id is
        updated, a new one offered to the policy."""

        def decide(c: Candidate) -> Callable[[NamespaceView, Lookup], Sequence[MemoryOp]]:
            def upsert(view: NamespaceView, lookup: Lookup) -> Sequence[MemoryOp]:
                if not lookup.exists(c.id):
                    return self._decide(c, view)
                return [
                    MemoryOp(
                        kind=OpKind.UPDATE,
                        record_ids=(c.id,),
                        reason="updated by caller",
                        text=c.text,
                        metadata=c.metadata,
                        embedding=c.embedding,
                        policy=USER_POLICY,
                        expires_at=c.expires_at or NEVER,
                    )
                ]

            return upsert

        return self._write(candidates[0].namespace, [decide(c) for c in candidates])

    def _commit_put(self, candidate: Candidate) -> list[MemoryOp]:
        return self._commit_puts([candidate])[0]

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
        replaced); a new id is offered to the policy like :meth:`add`. The check and the
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
            The ops applied (UPDATE, or the policy's ops for a new id).
        """
        item = self._candidate(
            text, namespace, thread, metadata, None, record_id, check_expiry(ttl, expires_at)
        )
        if embedding is None:
            vector = embed_texts(self.embeddings, [item.text])[0]
        else:
            vector = self._vector(embedding)[0]
        return self._commit_put(dataclasses.replace(item, embedding=vector))

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
    ) -> list[MemoryOp]:
        """Async :meth:`put`."""
        item = self._candidate(
            text, namespace, thread, metadata, None, record_id, check_expiry(ttl, expires_at)
        )
        vector = (await aembed_texts(self.embeddings, [item.text]))[0]
        return await asyncio.to_thread(
            self._commit_put, dataclasses.replace(item, embedding=vector)
        )

    def _commit_delete(self, namespace: str, record_id: str, missing_ok: bool) -> MemoryOp | None:
        op = MemoryOp(
            kind=OpKind.DELETE,
            record_ids=(record_id,),
            reason="deleted by caller",
            policy=USER_POLICY,
        )

        def decide(view: NamespaceView, lookup: Lookup) -> list[MemoryOp]:
            if lookup.exists(record_id):
                return [op]
            if missing_ok:
                return []
            raise RecordNotFoundError(
                f"no record {record_id!r} in namespace {namespace!r}; "
                "list ids with records(namespace)"
            )

        (applied,) = self._write(namespace, [decide])
        return applied[0] if applied else None

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
        rid = check_record_id(record_id)
        return self._commit_delete(self._namespace(namespace), rid, bool(missing_ok))

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

    def _candidates(
        self,
        texts: object,
        namespace: object,
        thread: object,
        metadatas: object,
        record_ids: object,
        expires: datetime | None = None,
    ) -> list[Candidate]:
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
            self._candidate(text, namespace, thread, meta, None, rid, expires)
            for text, meta, rid in zip(
                texts,
                per_text(metadatas, "metadatas"),
                per_text(record_ids, "record_ids"),
                strict=True,
            )
        ]
        seen: set[str] = set()
        for item in items:
            if item.id in seen:
                raise InvalidInputError(f"record id {item.id!r} appears twice; pass unique ids")
            seen.add(item.id)
        return items

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
        expires = check_expiry(ttl, expires_at)
        items = self._candidates(texts, namespace, thread, metadatas, record_ids, expires)
        if not items:
            return []
        vectors = embed_texts(self.embeddings, [item.text for item in items])
        return self._commit_adds(
            [
                dataclasses.replace(item, embedding=vector)
                for item, vector in zip(items, vectors, strict=True)
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
        ttl: float | timedelta | None = None,
        expires_at: datetime | None = None,
    ) -> list[list[MemoryOp]]:
        """Async :meth:`add_many`."""
        expires = check_expiry(ttl, expires_at)
        items = self._candidates(texts, namespace, thread, metadatas, record_ids, expires)
        if not items:
            return []
        vectors = await aembed_texts(self.embeddings, [item.text for item in items])
        candidates = [
            dataclasses.replace(item, embedding=vector)
            for item, vector in zip(items, vectors, strict=True)
        ]
        return await asyncio.to_thread(self._commit_adds, candidates)

    def _put_items(
        self,
        texts: object,
        namespace: object,
        record_ids: object,
        metadatas: object,
        thread: object,
    ) -> list[Candidate]:
        if record_ids is None:
            raise InvalidInputError("put_many() needs record_ids (one per text); use add_many()")
        items = self._candidates(texts, namespace, thread, metadatas, record_ids)
        return items

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
        items = self._put_items(texts, namespace, record_ids, metadatas, thread)
        if not items:
            return []
        vectors = embed_texts(self.embeddings, [item.text for item in items])
        return self._commit_puts(
            [
                dataclasses.replace(item, embedding=vector)
                for item, vector in zip(items, vectors, strict=True)
            ]
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
        items = self._put_items(texts, namespace, record_ids, metadatas, thread)
        if not items:
            return []
        vectors = await aembed_texts(self.embeddings, [item.text for item in items])
        candidates = [
            dataclasses.replace(item, embedding=vector)
            for item, vector in zip(items, vectors, strict=True)
        ]
        return await asyncio.to_thread(self._commit_puts, candidates)

    # -- long-term: reads ------------------------------------------------------------------
    def _search(
        self, query: str, vector: Vector | None, namespace: str, k: int, mode: str
    ) -> list[MemoryRecord]:
        with self._cache.lock(namespace):
            view = self._live_view(namespace)
            hits = view.search(query, vector, k, mode)
            rows = {rid: (view.rows[rid], view.embedding(rid)) for rid, _ in hits}
            if hits and self.policy.tracks_recalls:
                self._note_recalls(view, [rid for rid, _ in hits])
        return [to_record(rows[rid][0], score=score, embedding=rows[rid][1]) for rid, score in hits]

    def _note_recalls(self, view: NamespaceView, rids: list[int]) -> None:
        """Count a recall of each record, in the store and in the cached stats."""
        now = time.time()
        self.backend.touch(rids, now)
        view.recalled(rids, now)

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
        namespace = self._namespace(namespace)
        k = check_k(k)
        mode = check_mode(mode)
        vector = None if mode == "lexical" else embed_query(self.embeddings, query)
        return self._search(query, vector, namespace, k, mode)

    async def asearch(
        self, query: str, *, namespace: str, k: int = 5, mode: str = "hybrid"
    ) -> list[MemoryRecord]:
        """Async :meth:`search`."""
        query = check_text(query, what="query")
        namespace = self._namespace(namespace)
        k = check_k(k)
        mode = check_mode(mode)
        vector = None if mode == "lexical" else await aembed_query(self.embeddings, query)
        return await asyncio.to_thread(self._search, query, vector, namespace, k, mode)

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

    def set_expiry(
        self,
        record_ids: Sequence[str],
        *,
        namespace: str,
        ttl: float | timedelta | None = None,
        expires_at: datetime | None = None,
    ) -> None:
        """Move the expiry of live records of ``namespace`` (a TTL refreshed on read).

        Both ``None`` clears their expiry. Not a memory op: text and audit log are untouched.
        """
        ns = self._namespace(namespace)
        ids = [check_record_id(i) for i in record_ids]
        expires = check_expiry(ttl, expires_at)
        at = None if expires is None else expires.timestamp()
        with self._cache.lock(ns):
            self.backend.set_expiry(ns, ids, at)
            view = self._cache.peek(ns)
            if view is not None:
                for rid in [view.rid_of[i] for i in ids if i in view.rid_of]:
                    view.rows[rid] = dataclasses.replace(view.rows[rid], expires_at=at)
                if at is not None and (view.next_expiry is None or at < view.next_expiry):
                    view.next_expiry = at

    def admin_find_record(self, record_id: str) -> list[MemoryRecord]:
        """Administration: the records with id ``record_id`` in every namespace.

        Ids are unique per namespace, so several users may hold one id. Every other read
        and write is scoped to one namespace; this one is not, so never hand it to code
        that acts for a user.
        """
        return [to_record(row) for row in self.backend.find_records(check_record_id(record_id))]

    def records(self, namespace: str) -> list[MemoryRecord]:
        """Every record of ``namespace``, oldest first."""
        namespace = self._namespace(namespace)
        return [to_record(row) for row in self.backend.iter_records(namespace)]

    async def arecords(self, namespace: str) -> list[MemoryRecord]:
        """Async :meth:`records`."""
        return await asyncio.to_thread(self.records, namespace)

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

    def _store_namespaces(self, head: str, *, expiring: bool = False) -> list[StoreNamespace]:
        """The reserved namespaces starting with ``head`` (``AgentMemoryStore``'s); with
        ``expiring``, those holding expired records instead."""
        if not head.startswith(STORE_MARK):
            raise InvalidInputError(f"{head!r} is not a store namespace prefix")
        names = (
            self.backend.expiring_namespaces(time.time()) if expiring else self.backend.namespaces()
        )
        return [StoreNamespace(ns) for ns in names if ns.startswith(head)]

    def delete_namespace(self, namespace: str) -> ErasedNamespace:
        """Erase a user: every record, chat message, audit entry and saved index file.

        Records, messages and audit entries go in one transaction; other namespaces are
        untouched. Other processes drop their cached view of the namespace the next time
        they touch it (the store's change log tells them). Deleting a namespace that holds
        nothing is not an error: every count is zero.

        Returns:
            How many records, messages, audit entries and index files were removed.
        """
        namespace = self._namespace(namespace)
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
        namespace = self._namespace(namespace)
        k = check_k(k)
        vector = self._vector(embedding)
        with self._cache.lock(namespace):
            view = self._live_view(namespace)
            if view.index is None:
                return []
            if view.index.dimensions != vector.shape[1]:
                raise InvalidInputError(
                    f"embedding has {vector.shape[1]} dimensions but namespace {namespace!r} "
                    f"holds {view.index.dimensions}-dim vectors; embed with memory.embeddings"
                )
            view.flush()
            hits = view.index.search(vector[0], k)
            rows = {rid: (view.rows[rid], view.embedding(rid)) for rid, _ in hits}
        return [to_record(rows[rid][0], score=score, embedding=rows[rid][1]) for rid, score in hits]

    @staticmethod
    def _vector(embedding: object) -> Vector:
        """One finite vector, L2-normalised, as a (1, dims) array."""
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
        return vector

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
        namespace = self._namespace(namespace)
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
        namespace = self._namespace(namespace)
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
        namespace = self._namespace(namespace)
        thread = check_name(thread, what="thread")
        return self.backend.clear_messages(namespace, thread)

    async def aclear_messages(self, *, namespace: str, thread: str) -> int:
        """Async :meth:`clear_messages`."""
        return await asyncio.to_thread(self.clear_messages, namespace=namespace, thread=thread)

    def threads(self, namespace: str) -> list[str]:
        """Threads of ``namespace`` that hold messages, oldest first."""
        return self.backend.threads(self._namespace(namespace))
