"""Export a user's memory to a file and import it back (a backup, a move, a hand-over).

The file's format, and reading and checking one, is :mod:`langchain_agentmem.memory.export_format`.
An import leaves out records that expired since the export, and re-embeds the records whose
file carries no embedding or whose embeddings came from another model. Importing keeps
record ids, adds nothing that is already there (records by id, messages already in their
thread), and writes everything in one transaction: a bad line, or fewer or more lines than
the header counts (a file cut short), imports nothing.

An export is input like any other: an import goes only to the user its caller names (never
to the one the file's header names), refuses dates in the future and messages other than
human, AI and tool messages (see :mod:`~langchain_agentmem.memory.export_format`), applies the
memory's limits (``max_text_chars``, ``max_metadata_bytes``) to every record, keeps an
embedding from the file only when it has the memory's model's dimensions (whatever the
header says), and stores it normalised, as the model's own are.

An export to a path is written to a new file in the same folder and renamed over the path
when complete: a file already at the path is replaced, never written into, so whoever
holds it open (another account that planted it in a shared folder) never reads the export,
and a failed export leaves the earlier file as it was.
"""

from __future__ import annotations

import base64
import glob
import json
import os
import secrets
import stat
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_agentmem.backends.base import Backend, Transaction
from langchain_agentmem.backends.encoding import epoch_to_datetime
from langchain_agentmem.collector import breathe, collector_paused
from langchain_agentmem.embedding.embeddings import embed_records
from langchain_agentmem.embedding.naming import embedding_model_name
from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.memory.access import NamespaceAccess
from langchain_agentmem.memory.export_format import (
    FORMAT,
    FORMAT_VERSION,
    Export,
    RecordLine,
    Source,
    check_dimensions,
    check_limits,
    read_export,
)
from langchain_agentmem.namespace.ops import Lookup
from langchain_agentmem.types import MemoryOp, OpKind, Vector
from langchain_agentmem.validation import Limits, check_namespace

IMPORT_POLICY = "import"
"""Policy name logged for records an import added."""
EMBED_BATCH = 256


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


def _iso(epoch: float) -> str:
    return epoch_to_datetime(epoch).isoformat()


def _progress(total: int, enabled: bool, desc: str) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, disable=not enabled, desc=desc, unit="line", file=sys.stderr)


def _check_replaceable(path: str) -> None:
    """Refuse to replace anything but an earlier export, an empty file or nothing: not a
    store, a link, a folder or a device (an export replaces only its own kind).

    Raises:
        InvalidInputError: ``path`` is a symbolic link, not a regular file, or a non-empty
            file that is not an export.
    """
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(found.st_mode):
        raise InvalidInputError(
            f"{path!r} is a symbolic link; an export is never written through one: pass "
            "the path of the file itself (nothing was written)"
        )
    if not stat.S_ISREG(found.st_mode):
        raise InvalidInputError(
            f"{path!r} is not a regular file (a folder, a device or a pipe); an export is "
            "written to a file of its own: pass a file path, or '-' for standard output "
            "(nothing was written)"
        )
    if found.st_size == 0:
        return
    # Not through a link, and without waiting on a pipe put there since the lstat.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    with open(fd, "rb") as handle:
        first = handle.readline(64 * 1024)
    try:
        header = json.loads(first)
    except ValueError:  # UnicodeDecodeError is one
        header = None
    if not (isinstance(header, dict) and header.get("format") == FORMAT):
        raise InvalidInputError(
            f"{path!r} exists and is not an agentmem export; an export only "
            "replaces an earlier export: pass a new path (nothing was written)"
        )


STALE_EXPORT_S = 3600.0
"""Age past which a temporary file of an export to the same path is a killed run's leftover."""


def _remove_stale(folder: str, name: str) -> None:
    """Remove the temporary files an export to ``name`` left when it was killed mid-write
    (personal data nothing else removes): this user's own, older than an hour."""
    now = time.time()
    for left in Path(folder).glob(f".{glob.escape(name[:100])}.*.tmp"):
        with suppress(OSError):
            found = left.lstat()
            if (
                stat.S_ISREG(found.st_mode)
                and found.st_uid == os.geteuid()
                and now - found.st_mtime > STALE_EXPORT_S
            ):
                left.unlink()


def _new_file(path: str) -> tuple[int, str]:
    """A new, empty file beside ``path``, owner-only: its descriptor and its path.

    ``O_EXCL`` and ``O_NOFOLLOW``: never a file or a link that someone put there first. What
    an export to the same path killed mid-write left there is removed first.
    """
    folder, name = os.path.split(os.path.abspath(path))
    _remove_stale(folder, name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(8):
        temp = os.path.join(folder, f".{name[:100]}.{secrets.token_hex(8)}.tmp")
        try:
            return os.open(temp, flags | getattr(os, "O_CLOEXEC", 0), 0o600), temp
        except FileExistsError:
            continue  # a name taken, by chance or not: draw another
        except OSError as exc:
            raise InvalidInputError(
                f"cannot write an export in {folder!r} ({exc.strerror}); pass a path in a "
                "folder you can write to (nothing was written)"
            ) from None
    raise InvalidInputError(
        f"cannot create a new file in {folder!r} (every name drawn was taken); pass a path "
        "in another folder (nothing was written)"
    )


def _replace(temp: str, path: str) -> None:
    """Rename ``temp`` over ``path`` (a link or a file there is replaced, not followed)."""
    try:
        os.replace(temp, path)
    except PermissionError as exc:
        raise InvalidInputError(
            f"cannot replace {path!r} ({exc.strerror}): in a folder others can write in "
            "(sticky, such as /tmp) a file another account owns is theirs; pass a new path "
            "(nothing was written)"
        ) from None


@contextmanager
def _open_out(out: Source) -> Iterator[IO[str]]:
    if not isinstance(out, (str, os.PathLike)):
        yield out
        return
    path = os.fspath(out)
    _check_replaceable(path)
    # A new file renamed over the path once complete: a file already there (planted by
    # another account in a shared folder, say) is replaced, not truncated and written in
    # place, so its open descriptors never see the export; a failed export leaves it be.
    fd, temp = _new_file(path)
    try:
        with open(fd, "w", encoding="utf-8", newline="\n") as handle:
            os.fchmod(fd, 0o600)  # personal data: its owner's only, whatever the umask
            yield handle
            handle.flush()
            os.fsync(handle.fileno())  # whole on disk before its name is
        _replace(temp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(temp)
        raise


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
        out: A file path or an open text file. A path gets a new file, 0600, renamed over
            it when complete; what is there already is replaced only if it is an earlier
            export or empty (never a link, a folder, a device or another file).
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


def _model_dimensions(embedder: Embeddings, probe: str) -> int:
    """How many dimensions ``embedder`` gives (the header's word is not taken for it)."""
    return int(embed_records(embedder, [probe]).shape[1])


def import_namespace(
    access: NamespaceAccess,
    embedder: Embeddings,
    limits: Limits,
    source: Source | Export,
    *,
    namespace: str,
    progress: bool = False,
) -> ImportSummary:
    """Import an export into the store (the format: :mod:`langchain_agentmem.memory.export_format`).

    Args:
        access: The memory's namespaces' access: what is imported goes through its one
            write path (indexed, logged, and offered to the annotator like any write).
        embedder: The memory's embedding model (re-embeds what the file cannot give).
        limits: The memory's size limits (applied to every record).
        source: A file path, an open text file, or what
            :func:`~langchain_agentmem.memory.export_format.read_export` read from one
            (to check a file before opening the store).
        namespace: The user to import into; required: the file's header names a user too,
            but a file can name anyone, so it is never taken for the target.
        progress: Show progress bars on stderr (embedding, writing).

    Raises:
        InvalidInputError: a malformed line (named by number), a record over the limits,
            an embedding of other dimensions than the model's, other counts of records or
            messages than the header's (a file cut short), an export of a newer format, a
            record or message dated in the future, a message other than a human, AI or
            tool message, no ``namespace``, or a thread that already holds a different
            conversation. Nothing is imported then.
    """
    export = source if isinstance(source, Export) else read_export(source)
    header, records, messages = export.header, export.records, export.messages
    target = export.target(namespace)
    backend = access.backend
    check_limits(export, limits)
    same_model = header.get("embedding_model") == embedding_model_name(embedder)
    vectors = _Vectors(embedder)
    if same_model and any(r.embedding is not None for r in records):
        check_dimensions(export, _model_dimensions(embedder, records[0].text))
        vectors.given.update((r.id, r.embedding) for r in records if r.embedding is not None)
    # Embed, before the transaction (which holds the namespace's lock), only what will be
    # added as things stand; the transaction checks again and embeds what changed meanwhile.
    now = time.time()
    live = [r for r in records if r.expires_at is None or r.expires_at.timestamp() > now]
    present = {row.id for row in backend.get_records(target, [r.id for r in live])}
    vectors.embed([r for r in live if r.id not in present], progress)
    origin = f"imported from an export of {header.get('exported_at', 'unknown date')}"
    threads: dict[str, list[tuple[str, float]]] = {}
    for thread, payload, at in messages:
        threads.setdefault(thread, []).append((payload, at))
    with access.batch(target, sweep=False, expected=[r.id for r in live]) as batch:
        new, expired = _new_records(batch.writer.lookup(time.time()), records)
        vectors.embed(new, False)  # deleted meanwhile: rare
        ops = [_import_op(r, origin, vectors.given[r.id]) for r in new]
        with (
            collector_paused(),
            _progress(len(ops), progress and bool(ops), "import") as bar,
        ):
            for op in ops:
                batch.apply_ops([op])
                bar.update(1)
                breathe()  # a long import leaves no thread without a collection for long
        added_messages = sum(
            _import_thread(batch.tx, target, thread, items) for thread, items in threads.items()
        )
    from_file = [r for r in new if same_model and r.embedding is not None]
    return ImportSummary(
        namespace=target,
        records=len(new),
        skipped=len(records) - len(new) - expired,
        messages=added_messages,
        reembedded=len(new) - len(from_file),
        expired=expired,
    )


class _Vectors:
    """The vectors of an import's records: from the file where it can give them, else
    embedded in batches."""

    def __init__(self, embedder: Embeddings) -> None:
        self.embedder = embedder
        self.given: dict[str, Vector] = {}

    def embed(self, records: list[RecordLine], show: bool) -> None:
        """Embed those of ``records`` without a vector yet."""
        todo = [r for r in records if r.id not in self.given]
        with _progress(len(todo), show and bool(todo), "embed") as bar:
            for start in range(0, len(todo), EMBED_BATCH):
                batch = todo[start : start + EMBED_BATCH]
                texts = [r.text for r in batch]
                for record, vector in zip(batch, embed_records(self.embedder, texts), strict=True):
                    self.given[record.id] = vector
                bar.update(len(batch))


def _new_records(lookup: Lookup, records: Sequence[RecordLine]) -> tuple[list[RecordLine], int]:
    """The records the namespace does not hold yet, and how many expired since the export."""
    new: list[RecordLine] = []
    expired = 0
    now = lookup.now
    for record in records:
        # Ids are unique per namespace: another namespace's record of the same id is
        # another record, never touched here.
        if record.expires_at is not None and record.expires_at.timestamp() <= now:
            expired += 1  # expired since the export: forgotten, not brought back
        elif not lookup.exists(record.id):
            new.append(record)
    return new, expired


def _import_op(record: RecordLine, origin: str, vector: Vector) -> MemoryOp:
    """The ADD that brings ``record`` back as it was (its dates, its expiry)."""
    return MemoryOp(
        kind=OpKind.ADD,
        record_ids=(record.id,),
        reason=origin,
        text=record.text,
        metadata=record.metadata,
        thread=record.thread,
        timestamp=record.created_at,
        updated_at=record.updated_at,
        expires_at=record.expires_at,
        embedding=vector,
        policy=IMPORT_POLICY,
    )


def _import_thread(
    tx: Transaction, target: str, thread: str, items: list[tuple[str, float]]
) -> int:
    """Append the export's messages of ``thread`` that the thread does not hold yet;
    returns how many.

    Raises:
        InvalidInputError: the thread holds other messages than the export.
    """
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
    return len(fresh)


__all__ = [
    "ExportSummary",
    "ImportSummary",
    "export_namespace",
    "import_namespace",
]
