"""How ``AgentMemoryStore`` items map onto memory records, and back.

A namespace tuple is one reserved memory namespace (the store's prefix, then each label
percent-encoded); a key is a record id in it; a record written by a store is read back as
a LangGraph ``Item``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote, unquote

from langgraph.store.base import Item

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.types import MemoryRecord
from langchain_agentmem.validation import MAX_NAME_LENGTH, STORE_MARK, StoreNamespace

EPOCH = datetime.fromtimestamp(0, tz=timezone.utc)
"""The time an item without one was created or updated at."""
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


def namespace_head(prefix: str) -> str:
    """What the memory namespace of every item of the store with ``prefix`` starts with."""
    return f"{STORE_MARK}{prefix}/"


def memory_namespace(prefix: str, namespace: tuple[str, ...]) -> StoreNamespace:
    """The (reserved) memory namespace that holds the items of ``namespace``."""
    labels = "/".join(quote(label, safe="") for label in namespace)
    return StoreNamespace(namespace_head(prefix) + labels)


def checked_namespace(
    prefix: str, namespace: tuple[str, ...], *, what: str = "namespace"
) -> StoreNamespace:
    """:func:`memory_namespace`, refused when its labels are not valid Unicode or are
    too long once percent-encoded (the form that is stored, and that the limit bounds)."""
    for label in namespace:
        try:
            label.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInputError(
                f"{what} label {label!r:.60} is not valid Unicode (a lone surrogate); remove it"
            ) from None
    name = memory_namespace(prefix, namespace)
    head = namespace_head(prefix)
    if len(name) > MAX_NAME_LENGTH:
        room = MAX_NAME_LENGTH - len(head)
        raise InvalidInputError(
            f"{what} {tuple(namespace)!r:.80} is too long for this store: its labels, "
            f"{sum(map(len, namespace))} characters, take {len(name) - len(head)} "
            f"percent-encoded and joined by '/' as they are stored, and the store allows "
            f"{room} ({MAX_NAME_LENGTH} less {len(head)} for its prefix "
            f"{prefix!r}); letters, digits and '-._~' take 1 character each, every "
            "other character 3 per UTF-8 byte (9 for most Chinese characters): shorten "
            "the labels"
        )
    return name


def store_namespace(prefix: str, name: str) -> tuple[str, ...] | None:
    """The store namespace of memory namespace ``name`` (``None``: not the store's, or not
    spelled canonically)."""
    head = namespace_head(prefix)
    if not name.startswith(head):
        return None
    decoded = tuple(unquote(label) for label in name[len(head) :].split("/"))
    if not all(decoded) or memory_namespace(prefix, decoded) != name:
        return None
    return decoded


def item_value(record: MemoryRecord) -> dict[str, Any] | None:
    """The value a store wrote into ``record`` (``None``: not written by a store)."""
    value = record.metadata.get("lg_value")
    return dict(value) if isinstance(value, Mapping) else None


def record_item(record: MemoryRecord, namespace: tuple[str, ...]) -> Item | None:
    """The item ``record`` keeps in store namespace ``namespace`` (``None``: not a store's)."""
    value = item_value(record)
    if value is None:  # not written by a store: pass over it
        return None
    created = record.created_at or EPOCH
    return Item(
        namespace=namespace,
        key=record_key(record.id),
        value=value,
        created_at=created,
        updated_at=record.updated_at or created,
    )
