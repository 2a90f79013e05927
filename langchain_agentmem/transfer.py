"""Export a user's memory to JSON Lines and import it back (a backup, a move, a hand-over).

The file starts with a header line, then one line per record and per chat message::

    {"format": "langchain-agentmem", "version": 1, "namespace": "alice",
     "embedding_model": "sentence-transformers/all-MiniLM-L6-v2", "dimensions": 384,
     "embeddings": false, "exported_at": "2026-...+00:00", "records": 2, "messages": 3}
    {"type": "record", "id": "...", "thread": "t1", "role": "human", "text": "...",
     "metadata": {...}, "created_at": "...+00:00", "updated_at": "...+00:00",
     "expires_at": null}
    {"type": "message", "thread": "t1", "created_at": "...+00:00", "message": {...}}

Times are ISO 8601 in UTC; an import leaves out records that expired since the export.
``embedding`` (base64 of little-endian float32) is written only when asked for; an import
re-embeds the records whose file carries no embedding or whose embeddings came from
another model. Importing keeps record ids, adds nothing that is already there (records by
id, messages already in their thread), and writes everything in one transaction: a bad
line, or fewer or more lines than the header counts (a file cut short), imports nothing.

An export is input like any other: an import applies the memory's limits
(``max_text_chars``, ``max_metadata_bytes``) to every record, keeps an embedding from the
file only when it has the memory's model's dimensions (whatever the header says), and
stores it normalised, as the model's own are.
"""

from __future__ import annotations

import base64
import binascii
import errno
import json
import math
import os
import stat
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import IO, Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.messages import messages_from_dict

from langchain_agentmem.backends.base import Backend
from langchain_agentmem.backends.encoding import dump_json, epoch_to_datetime
from langchain_agentmem.embeddings import embed_records, embedding_model_name, normalize
from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.ops import apply_batch_in
from langchain_agentmem.types import MemoryOp, OpKind, Vector
from langchain_agentmem.validation import (
    Limits,
    check_metadata,
    check_name,
    check_namespace,
    check_optional_name,
    check_record_id,
    check_text,
)

FORMAT = "langchain-agentmem"
FORMAT_VERSION = 1
IMPORT_POLICY = "import"
"""Policy name logged for records an import added."""
EMBED_BATCH = 256

Source = str | os.PathLike[str] | IO[str]


@dataclass(frozen=True)
class ExportSummary:
    """What an export wrote."""

    namespace: str
    records: int
    messages: int


@dataclass(frozen=True)
class ImportSummary:
    """What an import added.

    Attributes:
        namespace: The user imported into.
        records: Records added.
        skipped: Records of the file already there (by id), not added again.
        messages: Chat messages added (those already in their thread are not).
        reembedded: Added records embedded with the store's model (the file had no
            embedding for them, or another model made it).
        expired: Records of the file whose expiry passed since the export, not added.
    """

    namespace: str
    records: int
    skipped: int
    messages: int
    reembedded: int
    expired: int = 0


@dataclass(frozen=True)
class _Record:
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
    records: list[_Record]
    messages: list[tuple[str, str, float]]
    name: str = "<export>"
    """The file's name, for errors that name a line."""

    def target(self, namespace: str | None = None) -> str:
        """The checked namespace an import goes to: ``namespace``, else the file's."""
        chosen = namespace if namespace is not None else self.header.get("namespace")
        return check_namespace(chosen, what="namespace")


def _iso(epoch: float) -> str:
    return epoch_to_datetime(epoch).isoformat()


def _progress(total: int, enabled: bool, desc: str) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, disable=not enabled, desc=desc, unit="line", file=sys.stderr)


def _check_replaceable(path: str | os.PathLike[str]) -> None:
    """Refuse to write over a file that holds something other than an earlier export (a
    store, say): an export replaces only its own kind.

    Raises:
        InvalidInputError: ``path`` is a non-empty regular file that is not an export.
    """
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(found.st_mode) or found.st_size == 0:
        return
    with open(path, "rb") as handle:
        first = handle.readline(64 * 1024)
    try:
        header = json.loads(first)
    except ValueError:  # UnicodeDecodeError is one
        header = None
    if not (isinstance(header, dict) and header.get("format") == FORMAT):
        raise InvalidInputError(
            f"{os.fspath(path)!r} exists and is not an agentmem export; an export only "
            "replaces an earlier export: pass a new path (nothing was written)"
        )


@contextmanager
def _open_out(out: Source) -> Iterator[IO[str]]:
    if isinstance(out, (str, os.PathLike)):
        _check_replaceable(out)
        # Personal data: readable by its owner only, like the store itself.
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(out, flags, 0o600)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            raise InvalidInputError(
                f"{os.fspath(out)!r} is a symbolic link; an export is never written through "
                "one: pass the path of the file itself (nothing was written)"
            ) from None
        try:
            os.fchmod(fd, 0o600)  # a file already there keeps its mode otherwise
        except BaseException:
            os.close(fd)
            raise
        with open(fd, "w", encoding="utf-8", newline="\n") as handle:
            yield handle
    else:
        yield out


def export_namespace(
    backend: Backend,
    embedder: Embeddings,
    namespace: str,
    out: Source,
    *,
    embeddings: bool = False,
    progress: bool = False,
) -> ExportSummary:
    """Write ``namespace``'s records and chat messages to ``out`` as JSON Lines.

    Args:
        backend: The store to read.
        embedder: The model that made the store's embeddings (named in the header).
        namespace: The user to export.
        out: A file path (created 0600; an existing file only if it is an earlier export)
            or an open text file.
        embeddings: Also write each record's embedding.
        progress: Show a progress bar on stderr.
    """
    namespace = check_namespace(namespace)
    rows = list(backend.iter_records(namespace))
    messages = list(backend.iter_messages(namespace))
    dims = int(rows[0].embedding.shape[0]) if rows else None
    header = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "namespace": namespace,
        "embedding_model": embedding_model_name(embedder),
        "dimensions": dims,
        "embeddings": bool(embeddings),
        "exported_at": datetime.now(timezone.utc).isoformat(),
        "records": len(rows),
        "messages": len(messages),
    }
    with _open_out(out) as handle, _progress(len(rows) + len(messages), progress, "export") as bar:
        handle.write(json.dumps(header, ensure_ascii=False) + "\n")
        for row in rows:
            role = row.metadata.get("role")
            line: dict[str, Any] = {
                "type": "record",
                "id": row.id,
                "thread": row.thread,
                "role": role if isinstance(role, str) else None,
                "text": row.text,
                "metadata": row.metadata,
                "created_at": _iso(row.created_at),
                "updated_at": _iso(row.updated_at),
                "expires_at": None if row.expires_at is None else _iso(row.expires_at),
            }
            if embeddings:
                vector = np.asarray(row.embedding, dtype="<f4").tobytes()
                line["embedding"] = base64.b64encode(vector).decode("ascii")
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
            bar.update(1)
        for thread, payload, created_at in messages:
            message_line = {
                "type": "message",
                "thread": thread,
                "created_at": _iso(created_at),
                "message": json.loads(payload),
            }
            handle.write(json.dumps(message_line, ensure_ascii=False) + "\n")
            bar.update(1)
    return ExportSummary(namespace=namespace, records=len(rows), messages=len(messages))


# -- import ---------------------------------------------------------------------------------


class _Lines:
    """Numbered, parsed lines of an export, with errors that name the line."""

    def __init__(self, name: str) -> None:
        self.name = name

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
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)

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


def _record(lines: _Lines, number: int, line: dict[str, Any], dims: int | None) -> _Record:
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
        return _Record(
            line=number,
            id=check_record_id(line.get("id")),
            text=check_text(line.get("text")),
            thread=check_optional_name(line.get("thread"), what="thread"),
            metadata=metadata,
            created_at=lines.time(number, line.get("created_at"), "created_at"),
            updated_at=lines.time(
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
            messages_from_dict([message])
        except (KeyError, TypeError, ValueError) as exc:
            raise lines.fail(number, f"message is not a LangChain message ({exc})") from None
        at = lines.time(number, line.get("created_at"), "created_at")
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
        records: list[_Record] = []
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


def _check_limits(export: Export, limits: Limits) -> None:
    """Refuse a record that the memory would refuse from ``add`` (named by its line)."""
    lines = _Lines(export.name)
    for record in export.records:
        with lines.checking(record.line):
            limits.text(record.text)
            limits.metadata(record.metadata)


def _model_dimensions(embedder: Embeddings, probe: str) -> int:
    """How many dimensions ``embedder`` gives (the header's word is not taken for it)."""
    return int(embed_records(embedder, [probe]).shape[1])


def _check_dimensions(export: Export, dims: int) -> None:
    lines = _Lines(export.name)
    for record in export.records:
        if record.embedding is not None and record.embedding.shape[0] != dims:
            raise lines.fail(
                record.line,
                f"embedding has {record.embedding.shape[0]} dimensions but this memory's "
                f"model gives {dims}; export again from a store of this model, or without "
                "embeddings (they are re-embedded then)",
            )


def import_namespace(
    backend: Backend,
    embedder: Embeddings,
    source: Source | Export,
    *,
    namespace: str | None = None,
    progress: bool = False,
    limits: Limits | None = None,
) -> ImportSummary:
    """Import an export into the store (see the module docstring for the format).

    Args:
        backend: The store to write to.
        embedder: The store's embedding model (re-embeds what the file cannot give).
        source: A file path, an open text file, or what :func:`read_export` read from one
            (to check a file before opening the store).
        namespace: The user to import into (default: the one named in the file).
        progress: Show progress bars on stderr (embedding, writing).
        limits: The memory's size limits, applied to every record (default: the defaults).

    Raises:
        InvalidInputError: a malformed line (named by number), a record over the limits,
            an embedding of other dimensions than the model's, other counts of records or
            messages than the header's (a file cut short), an export of a newer format, or
            a thread that already holds a different conversation. Nothing is
            imported then.
    """
    export = source if isinstance(source, Export) else read_export(source)
    header, records, messages = export.header, export.records, export.messages
    target = export.target(namespace)
    _check_limits(export, limits or Limits())
    same_model = header.get("embedding_model") == embedding_model_name(embedder)
    vectors: dict[str, Vector] = {}
    if same_model and any(r.embedding is not None for r in records):
        _check_dimensions(export, _model_dimensions(embedder, records[0].text))
        vectors.update((r.id, r.embedding) for r in records if r.embedding is not None)

    def embed(todo: list[_Record], show: bool) -> None:
        with _progress(len(todo), show and bool(todo), "embed") as bar:
            for start in range(0, len(todo), EMBED_BATCH):
                batch = todo[start : start + EMBED_BATCH]
                texts = [r.text for r in batch]
                for record, vector in zip(batch, embed_records(embedder, texts), strict=True):
                    vectors[record.id] = vector
                bar.update(len(batch))

    # Embed, before the transaction (which holds the namespace's lock), only what will be
    # added as things stand; the transaction checks again and embeds what changed meanwhile.
    now = time.time()
    live = [r for r in records if r.expires_at is None or r.expires_at.timestamp() > now]
    present = {row.id for row in backend.get_records(target, [r.id for r in live])}
    embed([r for r in live if r.id not in present and r.id not in vectors], progress)
    origin = f"imported from an export of {header.get('exported_at', 'unknown date')}"
    threads: dict[str, list[tuple[str, float]]] = {}
    for thread, payload, at in messages:
        threads.setdefault(thread, []).append((payload, at))
    # Other readers (this process's cache too) catch up through the ADD entries logged here.
    with backend.transaction() as tx:
        tx.lock_namespace(target)
        new: list[_Record] = []
        expired = 0
        now = time.time()
        for record in records:
            # Ids are unique per namespace: another namespace's record of the same id is
            # another record, never touched here.
            if record.expires_at is not None and record.expires_at.timestamp() <= now:
                expired += 1  # expired since the export: forgotten, not brought back
            elif not tx.record_exists(target, record.id, now):
                new.append(record)
        embed([r for r in new if r.id not in vectors], False)  # deleted meanwhile: rare
        ops = [
            MemoryOp(
                kind=OpKind.ADD,
                record_ids=(r.id,),
                reason=origin,
                text=r.text,
                metadata=r.metadata,
                thread=r.thread,
                timestamp=r.created_at,
                updated_at=r.updated_at,
                expires_at=r.expires_at,
                embedding=vectors[r.id],
                policy=IMPORT_POLICY,
            )
            for r in new
        ]
        with _progress(len(ops), progress and bool(ops), "import") as bar:
            for start in range(0, len(ops), 500):
                apply_batch_in(tx, target, [ops[start : start + 500]])
                bar.update(len(ops[start : start + 500]))
        added_messages = 0
        for thread, items in threads.items():
            stored = tx.thread_messages(namespace=target, thread=thread)
            incoming = [payload for payload, _ in items]
            if incoming[: len(stored)] == stored:
                fresh = items[len(stored) :]
            elif stored[: len(incoming)] == incoming:
                fresh = []
            else:
                raise InvalidInputError(
                    f"thread {thread!r} of namespace {target!r} already holds other messages "
                    "than the export; import into another namespace (--user), or clear that "
                    "thread first; nothing was imported"
                )
            tx.insert_messages(
                namespace=target,
                thread=thread,
                payloads=[payload for payload, _ in fresh],
                created_at=[at for _, at in fresh],
            )
            added_messages += len(fresh)
    from_file = [r for r in new if same_model and r.embedding is not None]
    return ImportSummary(
        namespace=target,
        records=len(new),
        skipped=len(records) - len(new) - expired,
        messages=added_messages,
        reembedded=len(new) - len(from_file),
        expired=expired,
    )


__all__ = [
    "FORMAT_VERSION",
    "Export",
    "ExportSummary",
    "ImportSummary",
    "export_namespace",
    "import_namespace",
    "read_export",
]
