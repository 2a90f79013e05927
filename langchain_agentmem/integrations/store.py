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
"""

from __future__ import annotations

import asyncio
import base64
import collections
import concurrent.futures
import dataclasses
import logging
import math
import re
import threading
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote, unquote

import numpy as np
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
    TTLConfig,
)
from langgraph.store.base import validate_op_namespace as _validate_labels
from langgraph.store.base.embed import get_text_at_path

from langchain_agentmem.backends import RecordRow
from langchain_agentmem.embeddings import aembed_query, aembed_texts, embed_query, embed_texts
from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.integrations.runs import check_memory
from langchain_agentmem.items import to_record
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.types import MemoryRecord, Vector
from langchain_agentmem.validation import (
    MAX_NAME_LENGTH,
    STORE_MARK,
    StoreNamespace,
    check_name,
)

logger = logging.getLogger(__name__)

_EPOCH = datetime.fromtimestamp(0, tz=timezone.utc)
_TTL_KEYS = ("default_ttl", "refresh_on_read", "sweep_interval_minutes", "omit_expired")
_NAME = r"[^.\[\]{},]+"
_SEGMENT = rf"(?:{_NAME}|\{{{_NAME}(?:,{_NAME})*\}})(?:\[(?:\*|-?\d+)\])*"
_PATH = re.compile(rf"^(?:\$|{_SEGMENT}(?:\.{_SEGMENT})*)$")
KEY_ESCAPE = STORE_MARK + "k"
"""What the record id of a key starts with when the key cannot be an id as it is (a blank
one: ids are never blank) or itself starts with this (so every key has one id)."""


def key_record_id(key: object) -> str:
    """The record id that keeps the item of store key ``key``.

    Raises:
        InvalidTypeError: ``key`` is not a str.
        InvalidInputError: no store could keep it: a NUL character or a lone surrogate
            (PostgreSQL text holds neither), or too long for a record id.
    """
    if not isinstance(key, str):
        raise InvalidTypeError(
            f"key must be a str, got {type(key).__name__} {key!r:.60}; pass the key as a "
            "string such as 'diet'"
        )
    if "\x00" in key:
        raise InvalidInputError(
            f"key {key!r:.60} contains a NUL character at position {key.index(chr(0))}, "
            "which PostgreSQL text cannot hold (every store refuses it alike); remove it"
        )
    try:
        key.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(
            f"key {key!r:.60} is not valid Unicode ({exc.reason} at position {exc.start}), "
            "so no database can store it as text; remove lone surrogates"
        ) from None
    escaped = not key.strip() or key.startswith(KEY_ESCAPE)
    record_id = KEY_ESCAPE + key if escaped else key
    if len(record_id) > MAX_NAME_LENGTH:
        room = MAX_NAME_LENGTH - len(KEY_ESCAPE)
        if escaped:
            raise InvalidInputError(
                f"key is {len(key)} characters long; a key that is blank or starts with "
                f"{KEY_ESCAPE!r} is stored escaped and takes at most {room}: shorten it"
            )
        raise InvalidInputError(
            f"key is {len(key)} characters long; use at most {MAX_NAME_LENGTH} (the longest "
            "record id)"
        )
    return record_id


def record_key(record_id: str) -> str:
    """The store key of the item a record keeps (the inverse of :func:`key_record_id`)."""
    return record_id[len(KEY_ESCAPE) :] if record_id.startswith(KEY_ESCAPE) else record_id


def check_fields(fields: object, *, what: str = "fields") -> list[str]:
    """A list of LangGraph field paths, each checked; a clear error naming a bad one."""
    if isinstance(fields, str) or not isinstance(fields, Sequence):
        raise InvalidTypeError(
            f"{what} must be a list of str paths such as ['$'] or ['content'], got {fields!r:.60}"
        )
    out = []
    for path in fields:
        if not isinstance(path, str):
            raise InvalidTypeError(f"{what} holds {path!r:.40}, not a str path")
        if not _PATH.match(path):
            raise InvalidInputError(
                f"field path {path!r} does not parse; use '$' (the whole value), 'a', 'a.b', "
                "'a[0]', 'a[*].b' or 'a.{b,c}'"
            )
        out.append(path)
    return out


def check_ttl_config(ttl: object) -> TTLConfig | None:
    """LangGraph's ``TTLConfig``, checked: known keys, positive minutes."""
    if ttl is None:
        return None
    if not isinstance(ttl, Mapping):
        raise InvalidTypeError(f"ttl must be a TTLConfig dict or None, got {type(ttl).__name__}")
    unknown = sorted(str(k) for k in ttl if k not in _TTL_KEYS)
    if unknown:
        raise InvalidInputError(f"unknown ttl config keys {unknown}; use {list(_TTL_KEYS)}")
    for key in ("default_ttl", "sweep_interval_minutes"):
        if ttl.get(key) is not None:
            check_minutes(ttl[key], what=f"ttl[{key!r}]")
    for key in ("refresh_on_read", "omit_expired"):
        flag = ttl.get(key, True)
        if not isinstance(flag, bool):
            raise InvalidTypeError(f"ttl[{key!r}] must be a bool, got {flag!r}")
    return TTLConfig(**ttl)  # type: ignore[typeddict-item]


def check_minutes(value: object, *, what: str = "ttl") -> float:
    """A positive, finite number of minutes."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidTypeError(f"{what} must be minutes (a number), got {value!r:.40}")
    if not (value > 0 and math.isfinite(value)):
        raise InvalidInputError(
            f"{what} must be a positive number of minutes, got {value!r}; pass ttl=None for "
            "an item that never expires"
        )
    return float(value)


def _pack(vector: Vector) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def _unpack(text: str) -> Vector:
    return np.frombuffer(base64.b64decode(text), dtype="<f4").astype(np.float32)


def _compare(value: Any, wanted: Any) -> bool:
    """LangGraph's filter semantics: exact (nested) match or ``$eq`` / ``$gt`` / ... ops."""
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            return all(_operator(value, op, arg) for op, arg in wanted.items())
        return isinstance(value, Mapping) and all(
            _compare(value.get(k), v) for k, v in wanted.items()
        )
    return bool(value == wanted)


_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def _check_filter(wanted: Any, path: str) -> None:
    """Refuse an unknown ``$`` operator anywhere in a search filter, before any item is read."""
    if not isinstance(wanted, Mapping):
        return
    if any(str(k).startswith("$") for k in wanted):
        for op in wanted:
            if op not in _OPERATORS:
                raise InvalidInputError(
                    f"unsupported filter operator {op!r} in {path}; use "
                    f"{', '.join(_OPERATORS[:-1])} or {_OPERATORS[-1]}"
                )
        return
    for key, value in wanted.items():
        _check_filter(value, f"{path}[{key!r}]")


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


def _field(value: Mapping[str, Any], key: str) -> Any:
    """``value[key]``; a dotted key (``"user.level"``) reaches into nested dicts."""
    if key in value or "." not in key:
        return value.get(key)
    found: Any = value
    for part in key.split("."):
        if not isinstance(found, Mapping):
            return None
        found = found.get(part)
    return found


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


SCAN_RECORDS = 50_000
"""Most records whose decoded field vectors a store keeps between searches (whole
namespaces, least recently searched dropped first; the namespace searched last is always
kept)."""


@dataclass(frozen=True)
class _Entry:
    """One live record of a scanned namespace, its order and its decoded field vectors."""

    order: tuple[float, int]
    """``(created_at, rid)``: the order in which the store lists records."""
    record: MemoryRecord
    vectors: tuple[Vector, ...]


@dataclass(frozen=True)
class _Scan:
    """One namespace's live records and their field vectors, as of change ``seq``."""

    seq: int
    entries: dict[str, _Entry]
    records: list[MemoryRecord]
    vectors: np.ndarray
    """Every indexed field's vector, stacked (rows, dims); zero rows when none."""
    owner: np.ndarray
    """For each row of ``vectors``, the index of its record in ``records``."""
    expiry: float
    """The earliest expiry among ``records`` (``inf``: none expires)."""


def _entry(row: RecordRow) -> _Entry:
    """A stored row with its field vectors decoded (none when missing or malformed)."""
    vectors: tuple[Vector, ...] = ()
    packed = row.metadata.get("lg_vectors")
    if isinstance(packed, list) and packed:
        try:
            decoded = tuple(_unpack(p) for p in packed)
        except (ValueError, TypeError):
            decoded = ()
        if decoded and len({v.shape for v in decoded}) == 1:
            vectors = decoded
    # The record's own embedding is not needed to rank fields; leaving it out halves the cache.
    record = dataclasses.replace(to_record(row), embedding=None)
    return _Entry((row.created_at, row.rid), record, vectors)


def _scan_of(seq: int, entries: dict[str, _Entry]) -> _Scan:
    """Stack the entries' vectors, records in the store's order."""
    ordered = sorted(entries.values(), key=lambda e: e.order)
    dims = next((e.vectors[0].shape for e in ordered if e.vectors), None)
    rows: list[Vector] = []
    owner: list[int] = []
    for i, e in enumerate(ordered):
        if e.vectors and e.vectors[0].shape == dims:
            rows.extend(e.vectors)
            owner.extend([i] * len(e.vectors))
    expiries = [e.record.expires_at.timestamp() for e in ordered if e.record.expires_at]
    return _Scan(
        seq=seq,
        entries=entries,
        records=[e.record for e in ordered],
        vectors=np.stack(rows) if rows else np.zeros((0, 0), dtype=np.float32),
        owner=np.asarray(owner, dtype=np.int64),
        expiry=min(expiries, default=math.inf),
    )


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
        self._head = f"{STORE_MARK}{prefix}/"
        self._warned: set[tuple[str, ...]] = set()
        self._sweeper: threading.Thread | None = None
        self._stop = threading.Event()
        self._scans: collections.OrderedDict[str, _Scan] = collections.OrderedDict()
        self._scans_lock = threading.Lock()
        self._dims: int | None = None
        if self.ttl_config and self.ttl_config.get("sweep_interval_minutes"):
            self.start_ttl_sweeper()

    # -- the mapping -----------------------------------------------------------------------
    def memory_namespace(self, namespace: tuple[str, ...]) -> StoreNamespace:
        """The (reserved) memory namespace that holds the items of ``namespace``."""
        labels = "/".join(quote(label, safe="") for label in namespace)
        return StoreNamespace(self._head + labels)

    def _checked_namespace(
        self, namespace: tuple[str, ...], *, what: str = "namespace"
    ) -> StoreNamespace:
        """:meth:`memory_namespace`, refused when its labels are not valid Unicode or are
        too long once percent-encoded (the form that is stored, and that the limit bounds)."""
        for label in namespace:
            try:
                label.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidInputError(
                    f"{what} label {label!r:.60} is not valid Unicode (a lone surrogate); remove it"
                ) from None
        name = self.memory_namespace(namespace)
        if len(name) > MAX_NAME_LENGTH:
            room = MAX_NAME_LENGTH - len(self._head)
            raise InvalidInputError(
                f"{what} {tuple(namespace)!r:.80} is too long for this store: its labels, "
                f"{sum(map(len, namespace))} characters, take {len(name) - len(self._head)} "
                f"percent-encoded and joined by '/' as they are stored, and the store allows "
                f"{room} ({MAX_NAME_LENGTH} less {len(self._head)} for its prefix "
                f"{self.prefix!r}); letters, digits and '-._~' take 1 character each, every "
                "other character 3 per UTF-8 byte (9 for most Chinese characters): shorten "
                "the labels"
            )
        return name

    def store_namespace(self, memory_namespace: str) -> tuple[str, ...] | None:
        """The store namespace of a memory namespace (``None``: not this store's, or not
        spelled canonically)."""
        if not memory_namespace.startswith(self._head):
            return None
        decoded = tuple(unquote(label) for label in memory_namespace[len(self._head) :].split("/"))
        if not all(decoded) or self.memory_namespace(decoded) != memory_namespace:
            return None
        return decoded

    @staticmethod
    def _value(record: MemoryRecord) -> dict[str, Any] | None:
        value = record.metadata.get("lg_value")
        return dict(value) if isinstance(value, Mapping) else None

    def _item(self, record: MemoryRecord, namespace: tuple[str, ...]) -> Item | None:
        value = self._value(record)
        if value is None:  # not written by a store: pass over it
            return None
        created = record.created_at or _EPOCH
        return Item(
            namespace=namespace,
            key=record_key(record.id),
            value=value,
            created_at=created,
            updated_at=record.updated_at or created,
        )

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

    def _ttl_minutes(self, op: PutOp) -> float | None:
        if op.ttl is None:
            return None
        return check_minutes(op.ttl)

    # -- writes ----------------------------------------------------------------------------
    def _write(self, op: PutOp, paths: list[str], texts: list[str], vectors: Vector) -> None:
        ns = self.memory_namespace(op.namespace)
        rid = key_record_id(op.key)
        if op.value is None:
            self.memory.delete(rid, namespace=ns, missing_ok=True)
            return
        minutes = self._ttl_minutes(op)
        meta: dict[str, Any] = {"lg_value": dict(op.value), "lg_ttl": minutes}
        if texts:
            meta["lg_fields"] = paths
            meta["lg_vectors"] = [_pack(v) for v in vectors]
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

    def _check_put(self, op: PutOp) -> None:
        if not op.namespace:
            raise InvalidInputError("namespace is empty; pass a tuple such as ('memories', 'u1')")
        self._checked_namespace(tuple(op.namespace))
        key_record_id(op.key)
        if op.value is None:
            return
        if not isinstance(op.value, Mapping):
            raise InvalidTypeError(
                f"a store value must be a dict, got {type(op.value).__name__}; wrap it as "
                "{'value': ...}"
            )
        if op.index not in (None, False):
            check_fields(op.index, what="index")
        self._ttl_minutes(op)

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
        meta: dict[str, Any] = {"lg_value": dict(op.value), "lg_ttl": self._ttl_minutes(op)}
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
                versions=[r.updated_at or _EPOCH for r in read],
            )

    def _get(self, op: GetOp) -> Item | None:
        ns = self.memory_namespace(op.namespace)
        found = self.memory.get_many([key_record_id(op.key)], namespace=ns)
        item = self._item(found[0], tuple(op.namespace)) if found else None
        if item is not None and op.refresh_ttl:
            self._refresh(ns, found)
        return item

    def _namespaces(self, prefix: tuple[str, ...]) -> list[tuple[StoreNamespace, tuple[str, ...]]]:
        out = []
        for name in self.memory._store_namespaces(self._head):
            decoded = self.store_namespace(name)
            if decoded is not None and decoded[: len(prefix)] == prefix:
                out.append((name, decoded))
        return out

    @staticmethod
    def _keep(value: Mapping[str, Any], op: SearchOp) -> bool:
        if not op.filter:
            return True
        return all(_compare(_field(value, k), v) for k, v in op.filter.items())

    def _scan(self, name: str) -> _Scan:
        """The live records of ``name`` with their field vectors, decoded once per record.

        Reused while the namespace's change log has not moved and none of its records has
        reached its expiry (a TTL refresh only moves expiries later); caught up from the
        change log otherwise, reading only the records it names; read whole after an erase,
        an expiry, or the first time.
        """
        backend = self.memory.backend
        seq = backend.last_seq(name)
        now = time.time()  # the clock expiries are read from everywhere
        with self._scans_lock:
            cached = self._scans.get(name)
        entries: dict[str, _Entry] | None = None
        if cached is not None and cached.expiry > now:
            if cached.seq == seq:
                with self._scans_lock:
                    self._scans[name] = cached
                    self._scans.move_to_end(name)
                return cached
            changed = backend.changed_records(name, cached.seq)
            if changed is not None:
                touched, rows, last_seq = changed
                entries = dict(cached.entries)
                for record_id in touched:
                    entries.pop(record_id, None)
                entries.update((rid, _entry(row)) for rid, row in rows.items())
                seq = max(seq, last_seq)
        if entries is None:
            entries = {row.id: _entry(row) for row in backend.iter_records(name)}
        scan = _scan_of(seq, entries)
        with self._scans_lock:
            self._scans[name] = scan
            self._scans.move_to_end(name)
            held = sum(len(x.records) for x in self._scans.values())
            while held > SCAN_RECORDS and len(self._scans) > 1:
                _, dropped = self._scans.popitem(last=False)
                held -= len(dropped.records)
        return scan

    @staticmethod
    def _scores(scan: _Scan, query: Vector) -> list[float | None]:
        """Each record's best field similarity to ``query`` (``None``: nothing indexed)."""
        best: list[float | None] = [None] * len(scan.records)
        if not scan.owner.size or scan.vectors.shape[1] != query.shape[0]:
            return best
        sims = scan.vectors @ np.asarray(query, dtype=np.float32)
        top = np.full(len(scan.records), -np.inf)
        np.maximum.at(top, scan.owner, sims)
        for i in np.flatnonzero(np.isfinite(top)).tolist():
            best[i] = float(top[i])
        return best

    def _search(self, op: SearchOp, query: Vector | None) -> list[SearchItem]:
        Scored = tuple[float | None, Item, StoreNamespace, MemoryRecord]
        need = op.offset + op.limit
        scored: list[Scored] = []
        if query is None:
            for name, decoded in self._namespaces(tuple(op.namespace_prefix)):
                for record in self.memory.records(name):
                    item = self._item(record, decoded)
                    if item is not None and self._keep(item.value, op):
                        scored.append((None, item, name, record))
            scored.sort(key=lambda s: (s[1].updated_at, s[1].key), reverse=True)
        else:
            # Rank on the cached vectors first; build items only until the page is full.
            ranked: list[tuple[float, StoreNamespace, tuple[str, ...], MemoryRecord]] = []
            unranked: list[tuple[StoreNamespace, tuple[str, ...], MemoryRecord]] = []
            for name, decoded in self._namespaces(tuple(op.namespace_prefix)):
                scan = self._scan(name)
                for record, score in zip(scan.records, self._scores(scan, query), strict=True):
                    if score is None:
                        unranked.append((name, decoded, record))
                    else:
                        ranked.append((score, name, decoded, record))
            ranked.sort(key=lambda s: -s[0])
            for score, name, decoded, record in ranked:
                item = self._item(record, decoded)
                if item is not None and self._keep(item.value, op):
                    scored.append((score, item, name, record))
                    if len(scored) >= need:
                        break
            if len(scored) < need:
                rest: list[Scored] = []
                for name, decoded, record in unranked:
                    item = self._item(record, decoded)
                    if item is not None and self._keep(item.value, op):
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
            names = {n for n in names if all(_matches(n, c) for c in op.match_conditions)}
        if op.max_depth is not None:
            names = {n[: op.max_depth] for n in names}
        return sorted(names)[op.offset : op.offset + op.limit]

    # -- batches ---------------------------------------------------------------------------
    def _check_ops(self, ops: list[Op]) -> None:
        """Refuse a batch holding any bad op, before anything is read or written."""
        for op in ops:
            if not isinstance(op, (GetOp, PutOp, SearchOp, ListNamespacesOp)):
                raise InvalidTypeError(
                    f"unknown store op {type(op).__name__}; use GetOp, PutOp, SearchOp or "
                    "ListNamespacesOp"
                )
            _validate_labels(op)
            if isinstance(op, PutOp):
                self._check_put(op)
            elif isinstance(op, GetOp):
                self._checked_namespace(tuple(op.namespace))
                key_record_id(op.key)
            elif isinstance(op, SearchOp):
                self._checked_namespace(tuple(op.namespace_prefix), what="namespace_prefix")
                if op.limit < 1 or op.offset < 0:
                    raise InvalidInputError(
                        f"limit must be >= 1 and offset >= 0, got limit={op.limit}, "
                        f"offset={op.offset}"
                    )
                for key, wanted in (op.filter or {}).items():
                    _check_filter(wanted, f"filter[{key!r}]")
            else:
                for condition in op.match_conditions or ():
                    if condition.match_type not in ("prefix", "suffix"):
                        raise InvalidInputError(
                            f"match_type must be 'prefix' or 'suffix', got {condition.match_type!r}"
                        )

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
        self._check_ops(ops)  # bad input is refused before anything is read or written
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
        self._check_ops(ops)
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
        names = self.memory._store_namespaces(self._head, expiring=True)
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
