"""Dense indexes saved next to the store: faiss's own format plus a JSON sidecar, no pickle.

Files are named by a keyed digest of the namespace (the key lives in the folder), so a
listing does not reveal who has memories; the folder is 0700 and every file in it 0600.
Only live vectors are written: an HNSW graph drops its dead entries first.

The store stays the source of truth. A saved index is used only when its sidecar matches
(same namespace, dimensions, a change sequence the store has reached); the memory then
replays the store's changes made after it and checks the keys against the store. Anything
else (missing, unreadable, from another store state) is rebuilt from the store.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

import faiss

from langchain_agentmem.errors import StoreError
from langchain_agentmem.files import private_folders, private_temp
from langchain_agentmem.index.dense import DenseIndex

FORMAT = 2
_KEY_FILE = "names.key"
_LEGACY_NAME = re.compile(r"^[A-Za-z0-9_-]{0,40}-[0-9a-f]{16}\.(faiss|json)$")
"""Files named ``<namespace slug>-<digest>`` by earlier versions (they reveal the name)."""
STALE_TEMP_S = 3600.0
"""Age after which a temp file is a crashed save's leftover (removed on open)."""


@dataclass(frozen=True)
class Loaded:
    """An index read back from disk and the change sequence it reflects."""

    index: DenseIndex
    seq: int


class IndexFiles:
    """One folder of per-namespace index files (``<store file>.indexes/``)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self._key: bytes | None = None

    @classmethod
    def beside(cls, store_path: str | os.PathLike[str]) -> IndexFiles:
        """The index folder of a store file."""
        path = Path(store_path)
        return cls(path.with_name(path.name + ".indexes"))

    def _prepare(self, *, create: bool) -> bool:
        """Make the folder private and read its naming key; False when there is no folder."""
        if self._key is not None:
            return True
        if not os.path.lexists(self.directory) and not create:
            return False
        try:
            # A link or another account's folder planted beside a store in a shared folder
            # is never followed, made private, swept or written into.
            private_folders(self.directory, own=True)
        except StoreError as exc:
            raise PermissionError(str(exc)) from None
        key_path = self.directory / _KEY_FILE
        if not key_path.exists():
            # Written whole, then linked into place: a process opening the folder at the
            # same moment reads either no key or the complete one, and one key wins.
            fd, tmp = private_temp(self.directory, suffix=".key.tmp")
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(os.urandom(32))
                with contextlib.suppress(FileExistsError):
                    os.link(tmp, key_path)
            finally:
                os.unlink(tmp)
        key = key_path.read_bytes()
        if len(key) < 16:
            raise OSError(f"index naming key {key_path} is damaged; delete it (indexes rebuild)")
        now = time.time()
        for old in self.directory.iterdir():
            if _LEGACY_NAME.match(old.name):
                old.unlink(missing_ok=True)
            elif old.name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    if now - old.stat().st_mtime > STALE_TEMP_S:
                        old.unlink()
        self._key = key
        return True

    def _stem(self, namespace: str) -> str:
        assert self._key is not None  # set by _prepare
        return hmac.new(self._key, namespace.encode("utf-8"), hashlib.sha256).hexdigest()[:32]

    def paths(self, namespace: str) -> tuple[Path, Path] | None:
        """The faiss file and the JSON sidecar of ``namespace`` (``None``: no folder yet)."""
        if not self._prepare(create=False):
            return None
        stem = self._stem(namespace)
        return self.directory / f"{stem}.faiss", self.directory / f"{stem}.json"

    def any_file(self, namespace: str) -> bool:
        """Whether either file of ``namespace`` exists (one alone means the other was lost)."""
        try:
            paths = self.paths(namespace)
        except OSError:
            return True
        return paths is not None and any(path.exists() for path in paths)

    def remove(self, namespace: str) -> int:
        """Delete the saved files of ``namespace``, with any temp file of an unfinished
        save (a crash's leftover); returns how many there were."""
        paths = self.paths(namespace)
        if paths is None:
            return 0
        removed = 0
        temps = self.directory.glob(f"{paths[0].stem}.*.tmp")
        for path in [*paths, *temps]:
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            removed += 1
        return removed

    def load(
        self,
        namespace: str,
        *,
        store_seq: int,
        dimensions: int,
        hnsw_threshold: int | None = None,
    ) -> Loaded | str:
        """The saved index of ``namespace``, or why it cannot be used (``hnsw_threshold``:
        as :class:`~langchain_agentmem.index.dense.DenseIndex` takes it)."""
        try:
            paths = self.paths(namespace)
        except OSError as exc:
            return f"unreadable index folder ({exc})"
        if paths is None:
            return "no saved index"
        index_path, meta_path = paths
        if not meta_path.exists() or not index_path.exists():
            return "no saved index"
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            seq, dims = int(meta["seq"]), int(meta["dimensions"])
            if meta.get("format") != FORMAT or meta.get("name") != index_path.stem:
                return "the sidecar belongs to another format or namespace"
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return f"unreadable sidecar ({exc})"
        if dims != dimensions:
            return f"saved with {dims} dimensions, the store holds {dimensions}"
        if seq > store_seq:
            return f"saved at change {seq}, but the store is at {store_seq}"
        try:
            raw = faiss.read_index(str(index_path))
            index = DenseIndex.from_faiss(raw, dims, hnsw_threshold=hnsw_threshold)
        except (RuntimeError, ValueError) as exc:
            return f"unreadable index file ({str(exc).splitlines()[0][:120]})"
        if int(raw.ntotal) != int(meta.get("entries", -1)):
            return "the index file does not match its sidecar"
        return Loaded(index, seq)

    def save(self, namespace: str, index: DenseIndex, seq: int) -> None:
        """Write the index and its sidecar (each atomically: temp file, then rename)."""
        self._prepare(create=True)
        paths = self.paths(namespace)
        assert paths is not None  # the folder exists now
        index_path, meta_path = paths
        index.purge()
        meta = {
            "format": FORMAT,
            "name": index_path.stem,
            "seq": seq,
            "dimensions": index.dimensions,
            "entries": int(index.faiss_index.ntotal),
            "approximate": index.approximate,
        }
        # Temp files carry the namespace's stem, so erasing it finds a crash's leftover.
        prefix = f"{index_path.stem}."
        fd, tmp = private_temp(self.directory, prefix=prefix, suffix=".faiss.tmp")
        os.close(fd)
        try:
            faiss.write_index(index.faiss_index, str(tmp))  # into the file made 0600 above
            os.replace(tmp, index_path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        fd, tmp = private_temp(self.directory, prefix=prefix, suffix=".json.tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(meta, out)
        os.replace(tmp, meta_path)
