"""``AgentMemory``'s long-term writes: add, put, update and delete, one by one or in batches."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextlib import nullcontext
from datetime import datetime, timedelta
from typing import Any, Literal, overload

from langchain_core.embeddings import Embeddings

from langchain_agentmem.annotation.annotations import Notes
from langchain_agentmem.collector import collector_paused
from langchain_agentmem.embedding.embeddings import aembed_records, embed_records
from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.index.text import text_terms
from langchain_agentmem.memory.access import NamespaceAccess
from langchain_agentmem.memory.decisions import Annotating, Given, Offer, Removal, Upsert
from langchain_agentmem.memory.items import (
    check_expiry,
    check_vector,
    make_candidate,
    make_candidates,
    put_candidates,
    update_args,
    update_op,
    with_vectors,
)
from langchain_agentmem.policies import MemoryPolicy
from langchain_agentmem.types import Candidate, MemoryOp, Vector, with_embedding
from langchain_agentmem.validation import Limits, check_namespace, check_record_id


class MemoryWrites:
    """Writes of long-term records (``AgentMemory``'s part): every op goes through
    :meth:`NamespaceAccess.write`.

    Args:
        access: The namespaces' access.
        embeddings: The memory's embedding model.
        limits: The sizes a record may take.
        policy: What decides each offered record.
    """

    def __init__(
        self,
        access: NamespaceAccess,
        *,
        embeddings: Embeddings,
        limits: Limits,
        policy: MemoryPolicy,
    ) -> None:
        self.access = access
        self.backend = access.backend
        self.embeddings = embeddings
        self.limits = limits
        self.policy = policy

    def _commit_adds(
        self, candidates: Sequence[Candidate], vectors: Vector | None = None
    ) -> list[list[MemoryOp]]:
        """Let the policy decide each candidate (one namespace) in one transaction;
        ``vectors``: their embeddings, where not filled in yet."""
        with collector_paused() if len(candidates) > 1 else nullcontext():
            if vectors is not None:
                candidates = with_vectors(candidates, vectors)
            # Per-item work that needs no state, before the namespace is locked.
            terms = {c.id: text_terms(c.text) for c in candidates}
            for c in candidates:
                self.policy.prepare(c)
            return self.access.write(
                candidates[0].namespace,
                [Offer(c, self.policy) for c in candidates],
                terms=terms,
                expected=[c.id for c in candidates],
            )

    def _commit_add(self, candidate: Candidate) -> list[MemoryOp]:
        return self._commit_adds([candidate])[0]

    def _commit_op(self, namespace: str, op: MemoryOp) -> MemoryOp:
        ((applied, *_),) = self.access.write(namespace, [Given(op)])
        return applied  # after it: UPDATEs of records that quoted its old text

    def store_annotation(
        self,
        namespace: str,
        record_id: str,
        text: str,
        notes: Notes,
        model: str,
        links: Sequence[tuple[str, str]] = (),
    ) -> list[MemoryOp]:
        """Write what ``model`` noted of a record, as long as its text is still ``text``: its
        labels and facts, and the earlier statements it makes out of date (``links``, each
        ``(record id, reason)``; one metadata UPDATE, policy ``annotator``, with the
        reasons in the audit log)."""
        item = Annotating(record_id, text, notes, model, links)
        (applied,) = self.access.write(namespace, [item], sweep=False)
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
        """Offer an item to long-term memory; the policy decides what happens."""
        expiry = check_expiry(ttl, expires_at)
        said = self.access.said_at() if timestamp is None else timestamp
        item = make_candidate(
            self.limits, text, namespace, thread, metadata, said, record_id, expiry
        )
        (vector,) = embed_records(self.embeddings, [item.text])
        return self._commit_add(with_embedding(item, vector))

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
        expiry = check_expiry(ttl, expires_at)
        said = self.access.said_at() if timestamp is None else timestamp
        item = make_candidate(
            self.limits, text, namespace, thread, metadata, said, record_id, expiry
        )
        (vector,) = await aembed_records(self.embeddings, [item.text])
        return await asyncio.to_thread(self._commit_add, with_embedding(item, vector))

    def _commit_update(
        self,
        namespace: str,
        record_id: str,
        text: str,
        vector: Vector,
        metadata: dict[str, Any] | None,
        expires: datetime | None,
    ) -> MemoryOp:
        return self._commit_op(namespace, update_op(record_id, text, vector, metadata, expires))

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
        """Replace a record's text in place (re-embedded and re-indexed)."""
        text, meta, expires = update_args(self.limits, text, metadata, ttl, expires_at)
        row = self.access.owned(record_id, namespace)
        (vector,) = embed_records(self.embeddings, [text])
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
        text, meta, expires = update_args(self.limits, text, metadata, ttl, expires_at)
        row = await asyncio.to_thread(self.access.owned, record_id, namespace)
        (vector,) = await aembed_records(self.embeddings, [text])
        return await asyncio.to_thread(
            self._commit_update, row.namespace, row.id, text, vector, meta, expires
        )

    def _commit_puts(
        self, candidates: Sequence[Candidate], vectors: Vector | None = None
    ) -> list[list[MemoryOp]]:
        """Write each candidate by id (one namespace) in one transaction: an existing id is
        updated, a new one added, the policy deciding what else goes to make room;
        ``vectors``: their embeddings, where not filled in yet."""
        with collector_paused() if len(candidates) > 1 else nullcontext():
            if vectors is not None:
                candidates = with_vectors(candidates, vectors)
            return self.access.write(
                candidates[0].namespace,
                [Upsert(c, self.policy) for c in candidates],
                expected=[c.id for c in candidates],
            )

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
        """Write a record by id, whether or not it exists: one atomic step."""
        expiry = check_expiry(ttl, expires_at)
        item = make_candidate(
            self.limits, text, namespace, thread, metadata, None, record_id, expiry
        )
        if embedding is None:
            (vector,) = embed_records(self.embeddings, [item.text])
        else:
            vector = check_vector(embedding)[0]
        return self._commit_put(with_embedding(item, vector))

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
        expiry = check_expiry(ttl, expires_at)
        item = make_candidate(
            self.limits, text, namespace, thread, metadata, None, record_id, expiry
        )
        if embedding is None:
            (vector,) = await aembed_records(self.embeddings, [item.text])
        else:
            vector = check_vector(embedding)[0]
        return await asyncio.to_thread(self._commit_put, with_embedding(item, vector))

    def _commit_delete(self, namespace: str, record_id: str, missing_ok: bool) -> MemoryOp | None:
        (applied,) = self.access.write(namespace, [Removal(namespace, record_id, missing_ok)])
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
        """Forget a record."""
        rid = check_record_id(record_id)
        return self._commit_delete(check_namespace(namespace), rid, bool(missing_ok))

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
        """Offer several items at once: embedded in one batch, then decided one by one."""
        expires = check_expiry(ttl, expires_at)
        items = make_candidates(
            self.limits,
            texts,
            namespace,
            thread,
            metadatas,
            record_ids,
            expires,
            self.access.said_at(),
        )
        if not items:
            return []
        vectors = embed_records(self.embeddings, [item.text for item in items])
        return self._commit_adds(items, vectors)

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
        items = make_candidates(
            self.limits,
            texts,
            namespace,
            thread,
            metadatas,
            record_ids,
            expires,
            self.access.said_at(),
        )
        if not items:
            return []
        vectors = await aembed_records(self.embeddings, [item.text for item in items])
        return await asyncio.to_thread(self._commit_adds, items, vectors)

    def put_many(
        self,
        texts: Sequence[str],
        *,
        namespace: str,
        record_ids: Sequence[str],
        metadatas: Sequence[dict[str, Any] | None] | None = None,
        thread: str | None = None,
    ) -> list[list[MemoryOp]]:
        """:meth:`put` for several records: embedded in one batch, each written atomically."""
        items = put_candidates(self.limits, texts, namespace, record_ids, metadatas, thread)
        if not items:
            return []
        vectors = embed_records(self.embeddings, [item.text for item in items])
        return self._commit_puts(items, vectors)

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
        items = put_candidates(self.limits, texts, namespace, record_ids, metadatas, thread)
        if not items:
            return []
        vectors = await aembed_records(self.embeddings, [item.text for item in items])
        return await asyncio.to_thread(self._commit_puts, items, vectors)

    def set_expiry(
        self,
        record_ids: Sequence[str],
        *,
        namespace: str,
        ttl: float | timedelta | None = None,
        expires_at: datetime | None = None,
        versions: Sequence[datetime] | None = None,
    ) -> list[str]:
        """Move the expiry of live records of ``namespace`` (a TTL refreshed on read)."""
        ns = check_namespace(namespace)
        ids = [check_record_id(i) for i in record_ids]
        expires = check_expiry(ttl, expires_at)
        at = None if expires is None else expires.timestamp()
        stamps = None
        if versions is not None:
            stamps = [v.timestamp() for v in versions]
            if len(stamps) != len(ids):
                raise InvalidInputError(
                    f"versions holds {len(stamps)} times for {len(ids)} record ids; pass "
                    "one updated_at per id"
                )
        with self.access.lock(ns):
            ids = self.backend.set_expiry(ns, ids, at, versions=stamps)
            view = self.access.cache.peek(ns)
            if view is not None:
                view.set_expiry(ids, at)
        return ids
