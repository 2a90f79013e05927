"""The file format of an export (JSON Lines), and reading and checking one.

The file starts with a header line, then one line per record and per chat message::

    {"format": "langchain-agentmem", "version": 1, "namespace": "alice",
     "embedding_model": "sentence-transformers/all-MiniLM-L6-v2", "dimensions": 384,
     "embeddings": false, "exported_at": "2026-...+00:00", "records": 2, "messages": 3}
    {"type": "record", "id": "...", "thread": "t1", "role": "human", "text": "...",
     "metadata": {...}, "created_at": "...+00:00", "updated_at": "...+00:00",
     "expires_at": null}
    {"type": "message", "thread": "t1", "created_at": "...+00:00", "message": {...}}

Times are ISO 8601 in UTC. ``embedding`` (base64 of little-endian float32) is written only
when asked for. :func:`read_export` reads a whole file before anything is written: a bad
line, or fewer or more lines than the header counts (a file cut short), is refused with an
error that names the line, and so are a record or message dated more than
:data:`CLOCK_SKEW` seconds past this machine's clock and a message other than a human, AI
or tool message (a system message in a file would instruct the model). The header's
``namespace`` says whose memories the file holds; an import never takes it for where they
go (the caller names that). Writing and importing one is :mod:`langchain_agentmem.memory.transfer`.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

import numpy as np
from langchain_core.messages import BaseMessageChunk, message_chunk_to_message, messages_from_dict

from langchain_agentmem.backends.encoding import dump_json
from langchain_agentmem.embedding.embeddings import normalize
from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.types import Vector
from langchain_agentmem.validation import (
    Limits,
    check_metadata,
    check_name,
    check_namespace,
    check_optional_name,
    check_record_id,
    check_text,
    check_time,
)

FORMAT = "langchain-agentmem"
"""The header's ``format``: what marks a file as an export."""
FORMAT_VERSION = 1
"""The newest format version this package writes and reads."""

Source = str | os.PathLike[str] | IO[str]
"""A file path or an open text file."""
CLOCK_SKEW = 300.0
"""Seconds a record or message of an export may be dated past this machine's clock (clocks
differ a little); a later date is refused, since it would win every "later is current"
comparison."""
MESSAGE_TYPES = ("human", "ai", "tool")
"""The chat message types an import adds to a thread (a chunk counts as its message); any
other (``system``, ``chat`` with a role of its choosing, ``function``) is refused."""


@dataclass(frozen=True)
class RecordLine:
    """A record line of an export, parsed and checked (``line``: its number in the file)."""

    line: int
    id: str
    text: str
    thread: str | None
    metadata: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None
    embedding: Vector | None


@dataclass(frozen=True)
class Export:
    """A whole export, parsed and checked by :func:`read_export` (nothing written yet)."""

    header: dict[str, Any]
    records: list[RecordLine]
    messages: list[tuple[str, str, float]]
    name: str = "<export>"
    """The file's name, for errors that name a line."""

    def holder(self) -> str:
        """Whose memories the header says the file holds, for messages (quoted, escaped):
        ``says it holds the memories of 'bob'``."""
        said = self.header.get("namespace")
        if isinstance(said, str) and said:
            return f"says it holds the memories of {said!r:.80}"
        return "names no user in its header"

    def target(self, namespace: str | None) -> str:
        """The checked namespace an import goes to: ``namespace``, which the caller must give
        (the header's is never taken: a file could name anyone)."""
        if namespace is None:
            raise InvalidInputError(
                f"pass namespace=NAME, the user to import into; {self.name} "
                f"{self.holder()}; nothing was imported"
            )
        return check_namespace(namespace, what="namespace")


class _Lines:
    """Numbered, parsed lines of an export, with errors that name the line."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.latest = time.time() + CLOCK_SKEW
        """The latest a record or message may be dated."""

    def fail(self, number: int, problem: str) -> InvalidInputError:
        return InvalidInputError(f"{self.name} line {number}: {problem}; nothing was imported")

    def parse(self, number: int, raw: str) -> dict[str, Any]:
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise self.fail(number, f"not valid JSON ({exc.msg} at column {exc.colno})") from None
        except RecursionError:
            raise self.fail(number, "JSON nested too deeply to read; flatten it") from None
        if not isinstance(value, dict):
            raise self.fail(number, f"expected a JSON object, got {type(value).__name__}")
        return value

    def time(self, number: int, value: object, what: str) -> datetime:
        if not isinstance(value, str):
            raise self.fail(number, f"{what} must be an ISO 8601 time string, got {value!r:.60}")
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise self.fail(number, f"{what} {value!r:.60} is not an ISO 8601 time") from None
        try:
            return check_time(parsed, what=what)
        except InvalidInputError as exc:
            raise self.fail(number, str(exc)) from None

    def past(self, number: int, value: object, what: str) -> datetime:
        """A time that is not in the future (beyond :data:`CLOCK_SKEW` seconds)."""
        parsed = self.time(number, value, what)
        if parsed.timestamp() > self.latest:
            raise self.fail(
                number,
                f"{what} {value!r:.60} is in the future (more than {CLOCK_SKEW:.0f} seconds "
                "past this machine's clock); fix the date in the file, or this clock",
            )
        return parsed

    @contextmanager
    def checking(self, number: int) -> Iterator[None]:
        """Turn the package's input errors into ones that name the line."""
        try:
            yield
        except (InvalidInputError, TypeError, ValueError) as exc:
            if isinstance(exc, InvalidInputError) and f"{self.name} line" in str(exc):
                raise
            raise self.fail(number, str(exc)) from None
        except RecursionError:
            raise self.fail(number, "nested too deeply to read; flatten it") from None


def _read_header(lines: _Lines, first: tuple[int, str] | None) -> dict[str, Any]:
    if first is None:
        raise InvalidInputError(f"{lines.name} is empty; expected an agentmem export")
    number, raw = first
    header = lines.parse(number, raw)
    if header.get("format") != FORMAT:
        raise lines.fail(
            number,
            f"not an agentmem export (its first line must be a header with format {FORMAT!r})",
        )
    version = header.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise lines.fail(number, f"header version {version!r} is not a format version")
    if version > FORMAT_VERSION:
        raise InvalidInputError(
            f"{lines.name} is export format version {version}, newer than this "
            f"langchain-agentmem reads ({FORMAT_VERSION}); upgrade the package to import it"
        )
    for key in ("records", "messages"):
        count = header.get(key)
        if count is not None and (
            isinstance(count, bool) or not isinstance(count, int) or count < 0
        ):
            raise lines.fail(number, f"header {key} {count!r:.60} is not a count of lines")
    return header


def _check_counts(lines: _Lines, header: dict[str, Any], records: int, messages: int) -> None:
    """Refuse a file that holds fewer or more lines than its header counts (cut short)."""
    want = header.get("records"), header.get("messages")
    if (want[0] is None or want[0] == records) and (want[1] is None or want[1] == messages):
        return
    named = zip(("records", "messages"), want, strict=True)
    said = " and ".join(f"{count} {key}" for key, count in named if count is not None)
    raise InvalidInputError(
        f"{lines.name}: the header says {said}, the file holds {records} records and "
        f"{messages} messages (cut short?); import the whole export; nothing was imported"
    )


def _record(lines: _Lines, number: int, line: dict[str, Any], dims: int | None) -> RecordLine:
    with lines.checking(number):
        metadata = check_metadata(line.get("metadata"))
        role = line.get("role")
        if isinstance(role, str) and "role" not in metadata:
            metadata["role"] = role
        vector = None
        encoded = line.get("embedding")
        if encoded is not None:
            try:
                raw = base64.b64decode(str(encoded), validate=True)
            except (binascii.Error, ValueError):
                raise lines.fail(number, "embedding is not base64") from None
            vector = np.frombuffer(raw, dtype="<f4").astype(np.float32)
            if len(raw) % 4 or (dims is not None and vector.shape[0] != dims):
                raise lines.fail(number, f"embedding does not hold {dims} float32 values")
            if not np.isfinite(vector).all():
                raise lines.fail(number, "embedding holds NaN or infinite values")
            with np.errstate(over="ignore"):
                norm = float(np.linalg.norm(vector.astype(np.float64)))
            if not (norm > 0 and math.isfinite(norm)):
                raise lines.fail(number, "embedding has no direction (all zeros)")
            # Scores are cosines only between unit vectors: a long vector must not rank first.
            vector = normalize((vector.astype(np.float64) / norm)[None, :])[0]
        return RecordLine(
            line=number,
            id=check_record_id(line.get("id")),
            text=check_text(line.get("text")),
            thread=check_optional_name(line.get("thread"), what="thread"),
            metadata=metadata,
            created_at=lines.past(number, line.get("created_at"), "created_at"),
            updated_at=lines.past(
                number, line.get("updated_at", line.get("created_at")), "updated_at"
            ),
            expires_at=None
            if line.get("expires_at") is None
            else lines.time(number, line.get("expires_at"), "expires_at"),
            embedding=vector,
        )


def _message(lines: _Lines, number: int, line: dict[str, Any]) -> tuple[str, str, float]:
    with lines.checking(number):
        thread = check_name(line.get("thread"), what="thread")
        message = line.get("message")
        if not isinstance(message, dict):
            raise lines.fail(number, "message must be a LangChain message dict")
        try:
            (parsed,) = messages_from_dict([message])
        except (KeyError, TypeError, ValueError) as exc:
            raise lines.fail(number, f"message is not a LangChain message ({exc})") from None
        if isinstance(parsed, BaseMessageChunk):
            parsed = message_chunk_to_message(parsed)
        if parsed.type not in MESSAGE_TYPES:
            raise lines.fail(
                number,
                f"a {parsed.type!r:.40} message is not imported into a thread, only "
                f"{', '.join(MESSAGE_TYPES)} messages are (a system message from a file would "
                "instruct the model); leave the line out and lower the header's messages count",
            )
        at = lines.past(number, line.get("created_at"), "created_at")
        return thread, dump_json(message), at.timestamp()


def _numbered(handle: Iterable[str]) -> Iterator[tuple[int, str]]:
    for number, raw in enumerate(handle, start=1):
        if raw.strip():
            yield number, raw


def read_export(source: Source) -> Export:
    """Parse and check a whole export (nothing is written); errors name the line, and a file
    whose counts of records or messages differ from its header's is refused."""
    if isinstance(source, (str, os.PathLike)):
        name = str(source)
        try:
            handle: IO[str] = open(source, encoding="utf-8")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise InvalidInputError(f"cannot read export {name!r}: {exc.strerror}") from None
    else:
        name, handle = getattr(source, "name", "<export>"), source
    lines = _Lines(str(name))
    try:
        numbered = _numbered(handle)
        header = _read_header(lines, next(numbered, None))
        dims = header.get("dimensions")
        dims = dims if isinstance(dims, int) and not isinstance(dims, bool) else None
        records: list[RecordLine] = []
        messages: list[tuple[str, str, float]] = []
        seen: dict[str, int] = {}
        for number, raw in numbered:
            line = lines.parse(number, raw)
            kind = line.get("type")
            if kind == "record":
                record = _record(lines, number, line, dims)
                if record.id in seen:
                    raise lines.fail(
                        number,
                        f"record id {record.id!r} already appeared on line {seen[record.id]}",
                    )
                seen[record.id] = number
                records.append(record)
            elif kind == "message":
                messages.append(_message(lines, number, line))
            else:
                raise lines.fail(
                    number, f"unknown line type {kind!r}; expected 'record' or 'message'"
                )
        _check_counts(lines, header, len(records), len(messages))
    except UnicodeDecodeError as exc:
        raise InvalidInputError(
            f"{name} is not UTF-8 text ({exc.reason}); nothing was imported"
        ) from None
    finally:
        if isinstance(source, (str, os.PathLike)):
            handle.close()
    return Export(header=header, records=records, messages=messages, name=str(name))


def check_limits(export: Export, limits: Limits) -> None:
    """Refuse a record that the memory would refuse from ``add`` (named by its line)."""
    lines = _Lines(export.name)
    for record in export.records:
        with lines.checking(record.line):
            limits.text(record.text)
            limits.metadata(record.metadata)


def check_dimensions(export: Export, dims: int) -> None:
    """Refuse an embedding of other dimensions than the model's ``dims`` (named by its line)."""
    lines = _Lines(export.name)
    for record in export.records:
        if record.embedding is not None and record.embedding.shape[0] != dims:
            raise lines.fail(
                record.line,
                f"embedding has {record.embedding.shape[0]} dimensions but this memory's "
                f"model gives {dims}; export again from a store of this model, or without "
                "embeddings (they are re-embedded then)",
            )


__all__ = [
    "CLOCK_SKEW",
    "FORMAT",
    "FORMAT_VERSION",
    "MESSAGE_TYPES",
    "Export",
    "RecordLine",
    "Source",
    "check_dimensions",
    "check_limits",
    "read_export",
]
