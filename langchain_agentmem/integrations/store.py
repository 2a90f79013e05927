"""``AgentMemoryStore``: a LangGraph ``BaseStore`` backed by ``AgentMemory``.

Code written for LangGraph's store (``create_agent(store=...)``, tools that use
``runtime.store``, LangMem's store-backed tools) reads and writes our memory, with
semantic search by the memory's embedding model.

How LangGraph items map onto memory records (collision-free):

- A namespace tuple ``("users", "a/b")`` becomes the memory namespace
  ``"<prefix>/users/a%2Fb"``: each label is percent-encoded (``/`` and ``%`` included),
  so distinct tuples never share a namespace. Memory namespaces under ``<prefix>/`` are
  the store's; ``list_namespaces`` decodes them.
- An item's record id is ``"<prefix>:" + sha256(JSON [prefix, namespace, key])``: one
  record per (namespace, key), stable across processes.
- The record's text is what is embedded: the item's ``index`` fields (LangGraph path
  syntax, several texts joined by newlines), by default the whole value as JSON. The
  value itself, the key and whether it is indexed are kept in the record's metadata
  (``lg_value``, ``lg_key``, ``lg_indexed``).

New keys are offered through the memory's policy, like every write: a capacity-bound
policy may forget old items, and every decision lands in the audit log. A policy that
declines an item (NOOP) leaves the key absent. Updating a key replaces its record in
place; putting ``None`` deletes it. Labels follow LangGraph's rules (non-empty strings
without ``.``); TTLs are not supported.

Within one ``batch``, reads see the store as it was before the batch and puts apply after
them in order, the last put of a key winning (as LangGraph's own stores do).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote, unquote

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from langgraph.store.base import validate_op_namespace as _validate_labels
from langgraph.store.base.embed import get_text_at_path

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError, RecordNotFoundError
from langchain_agentmem.integrations.graph import check_memory
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.types import MemoryRecord
from langchain_agentmem.validation import check_name

_EPOCH = datetime.fromtimestamp(0, tz=timezone.utc)


def _compare(value: Any, wanted: Any) -> bool:
    """LangGraph's filter semantics: exact (nested) match or ``$eq`` / ``$gt`` / ... ops."""
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            return all(_operator(value, op, arg) for op, arg in wanted.items())
        return isinstance(value, Mapping) and all(
            _compare(value.get(k), v) for k, v in wanted.items()
        )
    return bool(value == wanted)


def _operator(value: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(value == arg)
    if op == "$ne":
        return bool(value != arg)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        try:
            if op == "$gt":
                return bool(value > arg)
            if op == "$gte":
                return bool(value >= arg)
            if op == "$lt":
                return bool(value < arg)
            return bool(value <= arg)
        except TypeError:
            return False
    raise InvalidInputError(
        f"unsupported filter operator {op!r}; use $eq, $ne, $gt, $gte, $lt or $lte"
    )


def _matches(path: tuple[str, ...], condition: MatchCondition) -> bool:
    pattern = tuple(condition.path)
    if len(path) < len(pattern):
        return False
    if condition.match_type == "prefix":
        pairs = zip(path, pattern, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(path), reversed(pattern), strict=False)
    else:
        raise InvalidInputError(
            f"match_type must be 'prefix' or 'suffix', got {condition.match_type!r}"
        )
    return all(p == "*" or a == p for a, p in pairs)


class AgentMemoryStore(BaseStore):
    """A LangGraph store whose items are ``AgentMemory`` records.

    Setup:
        ``pip install langchain-agentmem``.

    Instantiate:
        .. code-block:: python

            from langchain_agentmem import AgentMemory, AgentMemoryStore

            store = AgentMemoryStore(AgentMemory("sqlite:///memory.db"), fields=["text"])

    Usage:
        .. code-block:: python

            store.put(("memories", "alice"), "diet", {"text": "Alice is vegetarian."})
            store.get(("memories", "alice"), "diet").value
            store.search(("memories", "alice"), query="what does she eat?", limit=3)

            agent = create_agent(llm, tools=[...], store=store)  # tools use runtime.store

    Args:
        memory: The memory the items live in.
        prefix: Memory namespaces of this store start with ``prefix + "/"``.
        fields: Default paths of a value to embed (LangGraph syntax, ``"$"``: the whole
            value as JSON); a put's ``index`` argument overrides them.
    """

    supports_ttl = False

    def __init__(
        self,
        memory: AgentMemory,
        *,
        prefix: str = "lg",
        fields: Sequence[str] | None = None,
    ) -> None:
        self.memory = check_memory(memory)
        prefix = check_name(prefix, what="prefix")
        if "/" in prefix or ":" in prefix:
            raise InvalidInputError(f"prefix {prefix!r} must not contain '/' or ':'")
        self.prefix = prefix
        if fields is None:
            fields = ["$"]
        if isinstance(fields, str) or not all(isinstance(f, str) for f in fields):
            raise InvalidTypeError(f"fields must be a list of str paths, got {fields!r:.60}")
        self.fields = list(fields)

    # -- the mapping -----------------------------------------------------------------------
    def memory_namespace(self, namespace: tuple[str, ...]) -> str:
        """The memory namespace that holds the items of ``namespace``."""
        return "/".join([self.prefix, *(quote(label, safe="") for label in namespace)])

    def store_namespace(self, memory_namespace: str) -> tuple[str, ...] | None:
        """The store namespace of a memory namespace (``None``: not one of this store's)."""
        head = self.prefix + "/"
        if not memory_namespace.startswith(head):
            return None
        return tuple(unquote(label) for label in memory_namespace[len(head) :].split("/"))

    def record_id(self, namespace: tuple[str, ...], key: str) -> str:
        """The record id of an item."""
        blob = json.dumps([self.prefix, list(namespace), key], ensure_ascii=False)
        return f"{self.prefix}:{hashlib.sha256(blob.encode('utf-8')).hexdigest()}"

    def _parts(self, record: MemoryRecord) -> dict[str, Any]:
        created = record.created_at or _EPOCH
        return {
            "namespace": self.store_namespace(record.namespace) or (),
            "key": str(record.metadata["lg_key"]),
            "value": dict(record.metadata["lg_value"]),
            "created_at": created,
            "updated_at": record.updated_at or created,
        }

    def _item(self, record: MemoryRecord) -> Item:
        return Item(**self._parts(record))

    def _search_item(self, record: MemoryRecord) -> SearchItem:
        return SearchItem(**self._parts(record), score=record.score)

    def _text(self, op: PutOp) -> tuple[str, bool]:
        assert op.value is not None  # deletes never get here
        paths = self.fields if op.index is None else op.index
        texts: list[str] = []
        if paths is not False:
            for path in paths:
                texts.extend(t for t in get_text_at_path(op.value, path) if t.strip())
        if texts:
            return "\n".join(texts), True
        return op.key, False  # stored and gettable, never ranked by a query

    # -- ops -------------------------------------------------------------------------------
    def _find(self, namespace: tuple[str, ...], key: str) -> MemoryRecord | None:
        try:
            return self.memory.get(
                self.record_id(namespace, key), namespace=self.memory_namespace(namespace)
            )
        except RecordNotFoundError:
            return None

    def _get(self, op: GetOp) -> Item | None:
        found = self._find(op.namespace, op.key)
        return None if found is None else self._item(found)

    def _put(self, op: PutOp) -> None:
        if op.ttl is not None:
            raise NotImplementedError(
                f"TTL is not supported by AgentMemoryStore (got ttl={op.ttl}); pass ttl=None "
                "and let the memory policy forget"
            )
        if not op.namespace:
            raise InvalidInputError("namespace is empty; pass a tuple such as ('memories', 'u1')")
        key = check_name(op.key, what="key")
        ns = self.memory_namespace(op.namespace)
        existing = self._find(op.namespace, key)
        if op.value is None:
            if existing is not None:
                self.memory.delete(existing.id, namespace=ns)
            return
        if not isinstance(op.value, Mapping):
            raise InvalidTypeError(
                f"a store value must be a dict, got {type(op.value).__name__}; wrap it as "
                "{'value': ...}"
            )
        text, indexed = self._text(op)
        meta = {"lg_key": key, "lg_value": dict(op.value), "lg_indexed": indexed}
        if existing is not None:
            self.memory.update(existing.id, text, namespace=ns, metadata=meta)
        else:
            self.memory.add(
                text, namespace=ns, metadata=meta, record_id=self.record_id(op.namespace, key)
            )

    def _namespaces(self, prefix: tuple[str, ...]) -> list[tuple[str, tuple[str, ...]]]:
        out = []
        for name in self.memory.namespaces():
            decoded = self.store_namespace(name)
            if decoded is not None and decoded[: len(prefix)] == prefix:
                out.append((name, decoded))
        return out

    def _keep(self, record: MemoryRecord, op: SearchOp) -> bool:
        if not op.filter:
            return True
        value = record.metadata.get("lg_value") or {}
        return all(_compare(value.get(k), v) for k, v in op.filter.items())

    def _search(self, op: SearchOp) -> list[SearchItem]:
        if op.limit < 1 or op.offset < 0:
            raise InvalidInputError(
                f"limit must be >= 1 and offset >= 0, got limit={op.limit}, offset={op.offset}"
            )
        want = op.offset + op.limit
        found: list[MemoryRecord] = []
        if op.query:
            unranked: list[MemoryRecord] = []
            for name, _ in self._namespaces(tuple(op.namespace_prefix)):
                k = want
                while True:
                    hits = self.memory.search(op.query, namespace=name, k=k, mode="dense")
                    kept = [
                        r for r in hits if r.metadata.get("lg_indexed", True) and self._keep(r, op)
                    ]
                    if len(kept) >= want or len(hits) < k:
                        break
                    k *= 4
                found.extend(kept[:want])
                if len(kept) < want:  # the ranking is exhausted: unindexed items come last
                    unranked.extend(
                        r
                        for r in self.memory.records(name)
                        if not r.metadata.get("lg_indexed", True) and self._keep(r, op)
                    )
            found.sort(key=lambda r: -(r.score or 0.0))
            found.extend(sorted(unranked, key=lambda r: r.updated_at or _EPOCH, reverse=True))
        else:
            for name, _ in self._namespaces(tuple(op.namespace_prefix)):
                found.extend(r for r in self.memory.records(name) if self._keep(r, op))
            found.sort(key=lambda r: (r.updated_at or _EPOCH, r.id), reverse=True)
        page = found[op.offset : op.offset + op.limit]
        return [self._search_item(r) for r in page]

    def _list(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        names = {decoded for _, decoded in self._namespaces(())}
        if op.match_conditions:
            names = {n for n in names if all(_matches(n, c) for c in op.match_conditions)}
        if op.max_depth is not None:
            names = {n[: op.max_depth] for n in names}
        return sorted(names)[op.offset : op.offset + op.limit]

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ops: reads first (in order, on the state before the batch), then the puts."""
        ops = list(ops)
        for op in ops:
            if not isinstance(op, (GetOp, PutOp, SearchOp, ListNamespacesOp)):
                raise InvalidTypeError(
                    f"unknown store op {type(op).__name__}; use GetOp, PutOp, SearchOp or "
                    "ListNamespacesOp"
                )
            _validate_labels(op)
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list(op))
            else:
                puts.pop((tuple(op.namespace), op.key), None)
                puts[(tuple(op.namespace), op.key)] = op
                results.append(None)
        for put in puts.values():
            self._put(put)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async :meth:`batch` (run in a worker thread)."""
        return await asyncio.to_thread(self.batch, list(ops))

    def __repr__(self) -> str:
        return f"AgentMemoryStore({self.memory!r}, prefix={self.prefix!r}, fields={self.fields})"
