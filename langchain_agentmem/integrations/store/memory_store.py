"""``AgentMemoryStore``: a LangGraph ``BaseStore`` backed by ``AgentMemory``.

Code written for LangGraph's store (``create_agent(store=...)``, tools that use
``runtime.store``, LangMem's store-backed tools) reads and writes our memory, with
semantic search by the memory's embedding model, as LangGraph's own stores do.

How LangGraph items map onto memory records:

- A namespace tuple ``("users", "a/b")`` becomes one memory namespace: a reserved mark,
  the store's ``prefix``, then each label percent-encoded (``/`` and ``%`` included), so
  distinct tuples never share a namespace. Reserved namespaces are unreachable from every
  other surface (a user id, a config, a model argument cannot name them), and only the
  canonical spelling of a tuple is read back.
- An item's key is its record id in that namespace (ids are unique per namespace). Any
  ``str`` LangGraph's own stores take is a key, ``""`` and blank ones included: a blank
  key (record ids are never blank), and a key that starts with ``"\x1fk"``, is kept under
  the id ``"\x1fk"`` + the key, so every key has one id and no two keys share one.
  Refused, as no store can keep them alike: NUL characters and lone surrogates (PostgreSQL
  text holds neither) and keys over 512 characters (510 for escaped ones).
- Each indexed field (a LangGraph path: ``"$"`` for the whole value, ``"a.b"``,
  ``"a[*].c"``, ...) is embedded on its own; a query scores an item by its best field
  (cosine similarity), as LangGraph's stores do. The value, the field vectors and the TTL
  live in the record's metadata; malformed records are passed over.

Writes by key are atomic: the existence check and the write happen inside the namespace's
locked transaction, so concurrent puts of one key never fail (the last one wins) and
deleting a missing key is not an error. A put always lands under its key, and no other key
changes with it: the memory's policy sees each new key and may forget other items to make
room (capacity), but neither declines the item nor folds it into another key; every
decision lands in the audit log.

TTL (LangGraph's ``ttl`` config, ``ttl=`` minutes per put, ``refresh_ttl`` on reads) uses
the memory's record expiry: expired items are invisible to every read at once and swept
on write, by :meth:`AgentMemoryStore.sweep_ttl` or by the sweeper thread.

Within one ``batch``, reads see the store as it was before the batch and puts apply after
them in order, the last put of a key winning (as LangGraph's own stores do).

The store's parts live beside it: ``items`` (namespaces, keys and items onto records),
``checks`` (settings and ops, checked), ``filters`` (search filters and match conditions)
and ``scan`` (field vectors cached between searches).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import math
import threading
import warnings
from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any

import numpy as np
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)
from langgraph.store.base.embed import get_text_at_path

import langchain_agentmem.integrations.store.items as store_items
from langchain_agentmem.embedding.embeddings import (
    aembed_query,
    aembed_texts,
    embed_query,
    embed_texts,
)
from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.integrations.runs import check_memory
from langchain_agentmem.integrations.store.checks import (
    check_fields,
    check_minutes,
    check_ops,
    check_ttl_config,
    put_minutes,
)
from langchain_agentmem.integrations.store.filters import keep, matches
from langchain_agentmem.integrations.store.items import (
    EPOCH,
    key_record_id,
    namespace_head,
    record_item,
)
from langchain_agentmem.integrations.store.scan import ScanCache, pack_vector, scores
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.types import MemoryRecord, Vector
from langchain_agentmem.validation import STORE_MARK, StoreNamespace, check_name

logger = logging.getLogger(__name__)


class AgentMemoryStore(BaseStore):
    """A LangGraph store whose items are ``AgentMemory`` records.

    Setup:
        ``pip install langchain-agentmem``.

    Instantiate:
        .. code-block:: python

            from langchain_agentmem import AgentMemory, AgentMemoryStore

            store = AgentMemoryStore(AgentMemory("sqlite:///memory.db"))
            # embed only some fields (LangMem's items keep their text under "content"):
            store = AgentMemoryStore(memory, fields=["content"])
            # LangGraph's TTL: items expire 60 minutes after their last write or read
            store = AgentMemoryStore(memory, ttl={"default_ttl": 60, "sweep_interval_minutes": 5})

    Usage:
        .. code-block:: python

            store.put(("memories", "alice"), "diet", {"content": "Alice is vegetarian."})
            store.get(("memories", "alice"), "diet").value
            store.search(("memories", "alice"), query="what does she eat?", limit=3)

            agent = create_agent(llm, tools=[...], store=store)  # tools use runtime.store

    Args:
        memory: The memory the items live in.
        prefix: Names this store's part of the memory (two stores with different
            prefixes share a memory without seeing each other's items).
        fields: Paths of a value to embed, each on its own (LangGraph syntax; default
            ``["$"]``: the whole value as JSON); a put's ``index`` argument overrides them.
        ttl: LangGraph's ``TTLConfig``: ``default_ttl`` (minutes), ``refresh_on_read``
            (default ``True``), ``sweep_interval_minutes`` (starts a sweeper thread,
            stopped by :meth:`close`, :meth:`stop_ttl_sweeper` or closing the memory);
            ``omit_expired`` is
            accepted, and expired items are always omitted.
    """

    supports_ttl = True

    def __init__(
        self,
        memory: AgentMemory,
        *,
        prefix: str = "lg",
        fields: Sequence[str] | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        self.memory = check_memory(memory)
        prefix = check_name(prefix, what="prefix")
        if "/" in prefix or "%" in prefix or STORE_MARK in prefix:
            raise InvalidInputError(f"prefix {prefix!r} must not contain '/', '%' or \\x1f")
        self.prefix = prefix
        self.fields = check_fields(["$"] if fields is None else fields)
        self.ttl_config = check_ttl_config(ttl)
        self._head = namespace_head(prefix)
        self._warned: set[tuple[str, ...]] = set()
        self._sweeper: threading.Thread | None = None
        self._stop = threading.Event()
        self._scans = ScanCache()
        self._dims: int | None = None
        if self.ttl_config and self.ttl_config.get("sweep_interval_minutes"):
            self.start_ttl_sweeper()

    # -- the mapping -----------------------------------------------------------------------
    def memory_namespace(self, namespace: tuple[str, ...]) -> StoreNamespace:
        """The (reserved) memory namespace that holds the items of ``namespace``."""
        return store_items.memory_namespace(self.prefix, namespace)

    def store_namespace(self, memory_namespace: str) -> tuple[str, ...] | None:
        """The store namespace of a memory namespace (``None``: not this store's, or not
        spelled canonically)."""
        return store_items.store_namespace(self.prefix, memory_namespace)

    def _texts(self, namespace: tuple[str, ...], op: PutOp) -> tuple[list[str], list[str]]:
        """The embedded fields of a put: their paths and texts (one text per match)."""
        assert op.value is not None  # deletes never get here
        if op.index is False:
            return [], []
        explicit = op.index is not None
        paths = check_fields(op.index, what="index") if op.index is not None else self.fields
        found: list[tuple[str, str]] = []
        for path in paths:
            found.extend((path, t) for t in get_text_at_path(op.value, path) if t.strip())
        if not found and (explicit or paths != ["$"]) and namespace not in self._warned:
            self._warned.add(namespace)
            warnings.warn(
                f"store item {op.key!r} in namespace {namespace} holds none of the indexed "
                f"fields {paths}; it is stored but search never ranks it. Index the fields "
                "your items have (LangMem's items keep their text under 'content'), or "
                "pass index=False (warned once per namespace)",
                UserWarning,
                stacklevel=4,
            )
        return [p for p, _ in found], [t for _, t in found]

    # -- writes ----------------------------------------------------------------------------
    def _write(self, op: PutOp, paths: list[str], texts: list[str], vectors: Vector) -> None:
        ns = self.memory_namespace(op.namespace)
        rid = key_record_id(op.key)
        if op.value is None:
            self.memory.delete(rid, namespace=ns, missing_ok=True)
            return
        minutes = put_minutes(op)
        meta: dict[str, Any] = {"lg_value": dict(op.value), "lg_ttl": minutes}
        if texts:
            meta["lg_fields"] = paths
            meta["lg_vectors"] = [pack_vector(v) for v in vectors]
            mean = vectors.mean(axis=0)
            primary = mean if float(np.linalg.norm(mean)) > 1e-6 else vectors[0]
            self.memory.put(
                rid,
                "\n".join(texts),
                namespace=ns,
                metadata=meta,
                ttl=None if minutes is None else timedelta(minutes=minutes),
                embedding=primary,
            )
        else:  # stored and gettable, never ranked by a query; the id is its (non-blank) text
            self.memory.put(
                rid,
                rid,
                namespace=ns,
                metadata=meta,
                ttl=None if minutes is None else timedelta(minutes=minutes),
            )

    def _puts(self, puts: list[PutOp]) -> list[tuple[PutOp, list[str], list[str]]]:
        """Each put (already checked) with the paths and texts it indexes, refused before
        anything is embedded when the record would be over the memory's limits."""
        planned = []
        for op in puts:
            paths, texts = ([], []) if op.value is None else self._texts(tuple(op.namespace), op)
            if op.value is not None:
                self._check_size(op, paths, texts)
            planned.append((op, paths, texts))
        return planned

    def _check_size(self, op: PutOp, paths: list[str], texts: list[str]) -> None:
        """Refuse a put whose record the memory would refuse, as :meth:`_write` builds it
        (the packed vectors stood in for by strings of their length)."""
        assert op.value is not None  # deletes never get here
        limits = self.memory.limits
        what = f"the indexed text of store item {op.key!r}"
        limits.text("\n".join(texts) if texts else key_record_id(op.key), what=what)
        meta: dict[str, Any] = {"lg_value": dict(op.value), "lg_ttl": put_minutes(op)}
        if texts:
            packed = "A" * (4 * math.ceil(4 * self._dimensions() / 3))  # base64 of float32s
            meta["lg_fields"] = paths
            meta["lg_vectors"] = [packed] * len(texts)
        limits.metadata(meta)

    def _dimensions(self) -> int:
        """How many dimensions the memory's model gives (asked once)."""
        if self._dims is None:
            said = getattr(self.memory.embeddings, "dimensions", None)
            if isinstance(said, int) and not isinstance(said, bool) and said > 0:
                self._dims = said
            else:
                self._dims = int(embed_query(self.memory.embeddings, "dimensions").shape[0])
        return self._dims

    def _apply_puts(self, puts: list[PutOp]) -> None:
        planned = self._puts(puts)
        texts = [t for _, _, ts in planned for t in ts]
        vectors = embed_texts(self.memory.embeddings, texts) if texts else np.zeros((0, 0))
        at = 0
        for op, paths, ts in planned:
            self._write(op, paths, ts, np.asarray(vectors[at : at + len(ts)], dtype=np.float32))
            at += len(ts)

    async def _aapply_puts(self, puts: list[PutOp]) -> None:
        planned = self._puts(puts)
        texts = [t for _, _, ts in planned for t in ts]
        vectors = await aembed_texts(self.memory.embeddings, texts) if texts else np.zeros((0, 0))
        at = 0
        for op, paths, ts in planned:
            chunk = np.asarray(vectors[at : at + len(ts)], dtype=np.float32)
            await asyncio.to_thread(self._write, op, paths, ts, chunk)
            at += len(ts)

    # -- reads -----------------------------------------------------------------------------
    def _refresh(self, namespace: StoreNamespace, records: Sequence[MemoryRecord]) -> None:
        """Restart the TTL of items read (those written with one)."""
        by_ttl: dict[float, list[MemoryRecord]] = {}
        for r in records:
            minutes = r.metadata.get("lg_ttl")
            if isinstance(minutes, (int, float)) and minutes > 0:
                by_ttl.setdefault(float(minutes), []).append(r)
        for minutes, read in by_ttl.items():
            # Only the version read: a put that landed since keeps its own TTL (or none).
            self.memory.set_expiry(
                [r.id for r in read],
                namespace=namespace,
                ttl=timedelta(minutes=minutes),
                versions=[r.updated_at or EPOCH for r in read],
            )

    def _get(self, op: GetOp) -> Item | None:
        ns = self.memory_namespace(op.namespace)
        found = self.memory.get_many([key_record_id(op.key)], namespace=ns)
        item = record_item(found[0], tuple(op.namespace)) if found else None
        if item is not None and op.refresh_ttl:
            self._refresh(ns, found)
        return item

    def _namespaces(self, prefix: tuple[str, ...]) -> list[tuple[StoreNamespace, tuple[str, ...]]]:
        out = []
        for name in self.memory.store_namespaces(self._head):
            decoded = self.store_namespace(name)
            if decoded is not None and decoded[: len(prefix)] == prefix:
                out.append((name, decoded))
        return out

    def _search(self, op: SearchOp, query: Vector | None) -> list[SearchItem]:
        Scored = tuple[float | None, Item, StoreNamespace, MemoryRecord]
        need = op.offset + op.limit
        scored: list[Scored] = []
        if query is None:
            for name, decoded in self._namespaces(tuple(op.namespace_prefix)):
                for record in self.memory.records(name):
                    item = record_item(record, decoded)
                    if item is not None and keep(item.value, op):
                        scored.append((None, item, name, record))
            scored.sort(key=lambda s: (s[1].updated_at, s[1].key), reverse=True)
        else:
            # Rank on the cached vectors first; build items only until the page is full.
            ranked: list[tuple[float, StoreNamespace, tuple[str, ...], MemoryRecord]] = []
            unranked: list[tuple[StoreNamespace, tuple[str, ...], MemoryRecord]] = []
            for name, decoded in self._namespaces(tuple(op.namespace_prefix)):
                scan = self._scans.scan(self.memory, name)
                for record, score in zip(scan.records, scores(scan, query), strict=True):
                    if score is None:
                        unranked.append((name, decoded, record))
                    else:
                        ranked.append((score, name, decoded, record))
            ranked.sort(key=lambda s: -s[0])
            for score, name, decoded, record in ranked:
                item = record_item(record, decoded)
                if item is not None and keep(item.value, op):
                    scored.append((score, item, name, record))
                    if len(scored) >= need:
                        break
            if len(scored) < need:
                rest: list[Scored] = []
                for name, decoded, record in unranked:
                    item = record_item(record, decoded)
                    if item is not None and keep(item.value, op):
                        rest.append((None, item, name, record))
                rest.sort(key=lambda s: s[1].updated_at, reverse=True)
                scored.extend(rest)
        page = scored[op.offset : op.offset + op.limit]
        if op.refresh_ttl:
            by_ns: dict[StoreNamespace, list[MemoryRecord]] = {}
            for _, _, name, record in page:
                by_ns.setdefault(name, []).append(record)
            for name, records in by_ns.items():
                self._refresh(name, records)
        return [
            SearchItem(
                namespace=item.namespace,
                key=item.key,
                value=item.value,
                created_at=item.created_at,
                updated_at=item.updated_at,
                score=score,
            )
            for score, item, _, _ in page
        ]

    def _list(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        names = {decoded for _, decoded in self._namespaces(())}
        if op.match_conditions:
            names = {n for n in names if all(matches(n, c) for c in op.match_conditions)}
        if op.max_depth is not None:
            names = {n[: op.max_depth] for n in names}
        return sorted(names)[op.offset : op.offset + op.limit]

    # -- batches ---------------------------------------------------------------------------
    @staticmethod
    def _last_puts(ops: list[Op]) -> list[PutOp]:
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, PutOp):
                puts.pop((tuple(op.namespace), op.key), None)
                puts[(tuple(op.namespace), op.key)] = op
        return list(puts.values())

    def _reads(self, ops: list[Op], queries: Mapping[str, Vector]) -> list[Result]:
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op, queries.get(op.query) if op.query else None))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list(op))
            else:
                results.append(None)
        return results

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ops: reads first (in order, on the state before the batch), then the puts."""
        ops = list(ops)
        check_ops(ops, self.prefix)  # bad input is refused before anything is read or written
        puts = self._last_puts(ops)
        queries = {
            q: np.asarray(embed_query(self.memory.embeddings, q), dtype=np.float32)
            for q in {op.query for op in ops if isinstance(op, SearchOp) and op.query}
        }
        results = self._reads(ops, queries)
        if puts:
            self._apply_puts(puts)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async :meth:`batch` (embeddings awaited, store calls in a worker thread)."""
        ops = list(ops)
        check_ops(ops, self.prefix)
        puts = self._last_puts(ops)
        queries = {}
        for q in {op.query for op in ops if isinstance(op, SearchOp) and op.query}:
            vector = await aembed_query(self.memory.embeddings, q)
            queries[q] = np.asarray(vector, dtype=np.float32)
        results = await asyncio.to_thread(self._reads, ops, queries)
        if puts:
            await self._aapply_puts(puts)
        return results

    # -- TTL sweeping ----------------------------------------------------------------------
    def sweep_ttl(self) -> int:
        """Delete this store's expired items now; returns how many."""
        names = self.memory.store_namespaces(self._head, expiring=True)
        return sum(self.memory.sweep(name) for name in names)

    async def asweep_ttl(self) -> int:
        """Async :meth:`sweep_ttl`."""
        return await asyncio.to_thread(self.sweep_ttl)

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        """Sweep expired items every ``sweep_interval_minutes`` in a daemon thread.

        Defaults to the ``ttl`` config's interval (else 5 minutes). Returns a future that
        completes when the sweeper stops; cancelling it stops the sweeper.
        """
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        if self._sweeper is not None and self._sweeper.is_alive():
            future.add_done_callback(lambda f: self._stop.set() if f.cancelled() else None)
            return future
        configured = (self.ttl_config or {}).get("sweep_interval_minutes")
        minutes = check_minutes(
            sweep_interval_minutes or configured or 5, what="sweep_interval_minutes"
        )
        self._stop.clear()
        self.memory.on_close(self._stop.set)  # closing the memory stops its sweeper

        def loop() -> None:
            while not self._stop.wait(minutes * 60) and not self.memory.closed:
                try:
                    swept = self.sweep_ttl()
                    if swept:
                        logger.info("AgentMemoryStore swept %d expired items", swept)
                except Exception:  # a failed sweep is retried next time; the thread lives on
                    if self.memory.closed:  # closed while sweeping: nothing left to sweep
                        break
                    logger.exception("AgentMemoryStore TTL sweep failed")
            if not future.done():
                future.set_result(None)

        self._sweeper = threading.Thread(target=loop, daemon=True, name="agentmem-ttl-sweeper")
        self._sweeper.start()
        future.add_done_callback(lambda f: self._stop.set() if f.cancelled() else None)
        return future

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; ``False`` if it did not stop within ``timeout`` s."""
        if self._sweeper is None or not self._sweeper.is_alive():
            return True
        self._stop.set()
        self._sweeper.join(timeout)
        stopped = not self._sweeper.is_alive()
        if stopped:
            self._sweeper = None
        return stopped

    def close(self) -> None:
        """Stop the sweeper (the memory stays open: close it yourself)."""
        self.stop_ttl_sweeper()

    def __enter__(self) -> AgentMemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"AgentMemoryStore({self.memory!r}, prefix={self.prefix!r}, fields={self.fields})"
