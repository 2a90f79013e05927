"""Checks for values that come from users; each failure names the value and the fix."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.types import EARLIEST, LATEST, Clock

MAX_NAME_LENGTH = 512


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_text(text: object, *, what: str = "text") -> str:
    """Return ``text`` if it is a non-blank string, else raise a clear error."""
    if not isinstance(text, str):
        raise InvalidTypeError(
            f"{what} must be a str, got {type(text).__name__} {_short(text)}; "
            "pass the text to remember as a string"
        )
    if not text.strip():
        raise InvalidInputError(
            f"{what} is empty or whitespace ({_short(text)}); pass non-blank text"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(
            f"{what} is not valid Unicode ({exc.reason} at position {exc.start}); "
            "remove lone surrogates before storing it"
        ) from None
    if "\x00" in text:
        # PostgreSQL text cannot hold NUL; refusing it everywhere keeps every store alike.
        raise InvalidInputError(
            f"{what} contains a NUL character at position {text.index(chr(0))}; remove it"
        )
    return text


def check_name(value: object, *, what: str) -> str:
    """Validate a namespace or thread identifier."""
    if not isinstance(value, str):
        raise InvalidTypeError(
            f"{what} must be a non-empty str, got {type(value).__name__} {_short(value)}; "
            f"pass the {what} as a string such as 'user-42'"
        )
    if not value.strip():
        raise InvalidInputError(f"{what} is empty ({_short(value)}); pass a non-empty {what}")
    if len(value) > MAX_NAME_LENGTH:
        raise InvalidInputError(
            f"{what} is {len(value)} characters long; use at most {MAX_NAME_LENGTH}"
        )
    if "\x00" in value:
        raise InvalidInputError(f"{what} {_short(value)} contains a NUL character; remove it")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(f"{what} {_short(value)} is not valid Unicode") from None
    return value


MAX_QUERY_CHARS = 10_000
"""Longest query a search takes: BM25 scores every word of it while the namespace is
locked, so a longer one would stall that user's writes. Recall from a conversation's
message searches its first ``MAX_QUERY_CHARS`` characters."""


def check_query(query: object) -> str:
    """``query`` if it is a non-blank string of at most :data:`MAX_QUERY_CHARS`."""
    text = check_text(query, what="query")
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidInputError(
            f"query is {len(text):,} characters long; a search takes at most "
            f"{MAX_QUERY_CHARS:,} (MAX_QUERY_CHARS): search with its key words, a summary "
            "or its first part"
        )
    return text


def check_optional_name(value: object, *, what: str) -> str | None:
    """Like :func:`check_name` but ``None`` passes through."""
    return None if value is None else check_name(value, what=what)


def check_k(k: object, *, what: str = "k") -> int:
    """Validate a number of results (``what``: the argument's name, for the error)."""
    if isinstance(k, bool) or not isinstance(k, int):
        raise InvalidTypeError(f"{what} must be an int >= 1, got {type(k).__name__} {_short(k)}")
    if k < 1:
        raise InvalidInputError(f"{what} must be >= 1, got {k}; ask for at least one result")
    return k


MAX_COUNT = 2**62
"""The largest page size or offset taken (SQL's 64-bit integers)."""


def check_count(value: object, what: str, *, least: int) -> int:
    """A whole number of at least ``least`` (a page size, an offset), named ``what``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(
            f"{what} must be an int >= {least}, got {type(value).__name__} {_short(value)}"
        )
    if not least <= value <= MAX_COUNT:
        raise InvalidInputError(f"{what} must be from {least} to 2**62, got {value}")
    return value


def check_metadata(metadata: object) -> dict[str, Any]:
    """Validate metadata: a mapping with string keys (JSON-serialisable values)."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidTypeError(
            f"metadata must be a dict, got {type(metadata).__name__} {_short(metadata)}"
        )
    _check_json(metadata, "metadata", set(), 0)
    return dict(metadata)


_JSON_SCALARS = (str, int, float, bool, type(None))
MAX_METADATA_DEPTH = 64


SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
"""A high then a low surrogate as two code points: JSON reads their escapes back as the one
character they encode, so such a string cannot come back as it went in."""


def _check_str(value: str, path: str) -> None:
    found = SURROGATE_PAIR.search(value)
    if found is not None:
        raise InvalidInputError(
            f"{path} holds a surrogate pair as two code points at position {found.start()}, "
            "which would come back as one character; join it first (for example "
            "s.encode('utf-16', 'surrogatepass').decode('utf-16'))"
        )


def _check_json(value: object, path: str, seen: set[int], depth: int) -> None:
    """Refuse what JSON would reject or silently change (non-str keys, sets, objects,
    surrogate pairs held as two code points)."""
    if isinstance(value, str):
        _check_str(value, path)
        return
    if isinstance(value, _JSON_SCALARS):
        return
    if depth > MAX_METADATA_DEPTH:
        raise InvalidInputError(
            f"metadata is nested more than {MAX_METADATA_DEPTH} levels deep; flatten it"
        )
    if id(value) in seen:
        raise InvalidInputError(f"{path} contains itself; metadata must be a tree of values")
    if isinstance(value, Mapping):
        seen.add(id(value))
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidTypeError(
                    f"metadata keys must be str, got {_short(key)} at {path}; "
                    "convert keys to strings"
                )
            _check_str(key, f"a key of {path}")
            _check_json(item, f"{path}[{key!r}]", seen, depth + 1)
        seen.discard(id(value))
    elif isinstance(value, (list, tuple)):
        seen.add(id(value))
        for i, item in enumerate(value):
            _check_json(item, f"{path}[{i}]", seen, depth + 1)
        seen.discard(id(value))
    else:
        raise InvalidTypeError(
            f"{path} holds a {type(value).__name__} ({_short(value)}), which JSON cannot "
            "store; use str, int, float, bool, None, lists and dicts"
        )


def check_record_id(record_id: object) -> str:
    """Validate a record id."""
    return check_name(record_id, what="record id")


DEFAULT_MAX_TEXT_CHARS = 1_000_000
"""Longest text a memory accepts by default (a megabyte of plain text; chunk documents)."""
DEFAULT_MAX_METADATA_BYTES = 4 * 1024 * 1024
"""Largest metadata a memory accepts by default, as JSON."""
DEFAULT_MAX_RECALL_CHARS = 16_000
"""Most characters of recalled memories' words told to a model in one prompt, by default."""


def _check_limit(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"{name} must be a positive int, got {_short(value)}")
    return value


@dataclass(frozen=True)
class Limits:
    """Size limits on what one item may carry, so one user cannot stall the others."""

    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS
    max_metadata_bytes: int = DEFAULT_MAX_METADATA_BYTES
    max_recall_chars: int = DEFAULT_MAX_RECALL_CHARS
    """Most characters of recalled memories' words one prompt tells the model: the best
    first, the one that crosses the line cut short, the rest left out."""

    def __post_init__(self) -> None:
        _check_limit(self.max_text_chars, "max_text_chars")
        _check_limit(self.max_metadata_bytes, "max_metadata_bytes")
        _check_limit(self.max_recall_chars, "max_recall_chars")

    def text(self, text: str, *, what: str = "text") -> str:
        """``text`` if it is within the limit, else a clear error."""
        if len(text) > self.max_text_chars:
            raise InvalidInputError(
                f"{what} is {len(text):,} characters long; this memory accepts at most "
                f"{self.max_text_chars:,} (max_text_chars); split it into smaller items "
                "or raise the limit"
            )
        return text

    def metadata(self, metadata: dict[str, Any]) -> dict[str, Any]:
        """``metadata`` if its JSON is within the limit, else a clear error."""
        if not metadata:
            return metadata
        size = len(json.dumps(metadata, ensure_ascii=True, separators=(",", ":")))
        if size > self.max_metadata_bytes:
            raise InvalidInputError(
                f"metadata is {size:,} bytes as JSON; this memory accepts at most "
                f"{self.max_metadata_bytes:,} (max_metadata_bytes); store large payloads "
                "elsewhere and keep a reference in metadata, or raise the limit"
            )
        return metadata


STORE_MARK = "\x1f"
"""Memory namespaces that start with this hold ``AgentMemoryStore`` items. Such a name
only passes :func:`check_namespace` as a :class:`StoreNamespace`, which only the store
builds: no user id from a config, a context or a model can name, reach or forge one."""


class StoreNamespace(str):
    """A memory namespace reserved for a LangGraph store's items (see ``STORE_MARK``)."""

    __slots__ = ()


def check_namespace(value: object, *, what: str = "namespace") -> str:
    """Validate a namespace; the store's reserved names are refused unless the store made
    them."""
    name = check_name(value, what=what)
    if name.startswith(STORE_MARK) and not isinstance(value, StoreNamespace):
        raise InvalidInputError(
            f"{what} {_short(name)} starts with the character reserved for "
            "AgentMemoryStore's items (\\x1f); pick a name without it"
        )
    return name


def check_min_score(min_score: object) -> float | None:
    """A score threshold: a finite number, or ``None`` for none."""
    if min_score is None:
        return None
    if isinstance(min_score, bool) or not isinstance(min_score, (int, float)):
        raise InvalidTypeError(
            f"min_score must be a number or None, got {type(min_score).__name__} {min_score!r}"
        )
    if not math.isfinite(min_score):
        raise InvalidInputError(f"min_score must be finite, got {min_score!r}; or pass None")
    return float(min_score)


def check_clock(clock: object) -> Clock:
    """A memory's clock: a function of no arguments returning a datetime."""
    if not callable(clock):
        raise InvalidTypeError(
            f"clock must be a function returning a datetime, got {type(clock).__name__}; "
            "leave it out for the wall clock"
        )
    return clock  # type: ignore[return-value]


def check_time(value: object, *, what: str) -> datetime:
    """A time a record may carry: an aware UTC datetime (naive ones are UTC) between
    :data:`~langchain_agentmem.types.EARLIEST` and :data:`~langchain_agentmem.types.LATEST`.

    Raises:
        InvalidTypeError: not a datetime.
        InvalidInputError: outside those years once told in UTC (``9999-12-31T23:59-14:00``
            is in year 10000 there).
    """
    if not isinstance(value, datetime):
        raise InvalidTypeError(f"{what} must be a datetime, got {type(value).__name__}")
    try:
        utc = value.astimezone(timezone.utc) if value.tzinfo else value.replace(tzinfo=timezone.utc)
    except OverflowError:
        utc = None
    if utc is None or not EARLIEST <= utc <= LATEST:
        raise InvalidInputError(
            f"{what} {value.isoformat()} lies outside the times a record can carry "
            f"({EARLIEST:%Y-%m-%d} to {LATEST:%Y-%m-%d}, UTC); pass a time within them"
        )
    return utc


def read_clock(clock: Clock) -> datetime:
    """What ``clock`` says now, as an aware UTC datetime (a naive one is UTC).

    Raises:
        InvalidTypeError: the clock returned something other than a datetime.
        InvalidInputError: its time cannot be told in UTC (past year 9999 once converted).
    """
    now = clock()
    if not isinstance(now, datetime):
        raise InvalidTypeError(
            f"the memory's clock returned {type(now).__name__} {_short(now)}, not a datetime; "
            "return datetime.now(timezone.utc) or the time to replay"
        )
    return check_time(now, what="the memory's clock returned")


def check_flag(value: object, *, what: str) -> bool:
    """A switch: ``True`` or ``False``."""
    if not isinstance(value, bool):
        raise InvalidTypeError(
            f"{what} must be True or False, got {type(value).__name__} {value!r}"
        )
    return value
