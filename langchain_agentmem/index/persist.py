"""Dense indexes saved next to the store: faiss's own format plus a JSON sidecar, no pickle.

The store stays the source of truth. A saved index is used only when its sidecar matches
(same namespace, dimensions, a change sequence the store has reached); the memory then
replays the store's changes made after it and checks the keys against the store. Anything
else (missing, unreadable, from another store state) is rebuilt from the store.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import faiss

from langchain_agentmem.index.dense import DenseIndex

FORMAT = 1


@dataclass(frozen=True)
class Loaded:
    """An index read back from disk and the change sequence it reflects."""

    index: DenseIndex
    seq: int


class IndexFiles:
    """One folder of per-namespace index files (``<store file>.indexes/``)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    @classmethod
    def beside(cls, store_path: str | os.PathLike[str]) -> IndexFiles:
        """The index folder of a store file."""
        path = Path(store_path)
        return cls(path.with_name(path.name + ".indexes"))

    def _stem(self, namespace: str) -> str:
        slug = re.sub(r"[^A-Za-z0-9_-]+", "_", namespace)[:40]
        digest = hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:16]
        return f"{slug}-{digest}"

    def paths(self, namespace: str) -> tuple[Path, Path]:
        """The faiss file and the JSON sidecar of ``namespace``."""
        stem = self._stem(namespace)
        return self.directory / f"{stem}.faiss", self.directory / f"{stem}.json"

    def any_file(self, namespace: str) -> bool:
        """Whether either file of ``namespace`` exists (one alone means the other was lost)."""
        return any(path.exists() for path in self.paths(namespace))

    def load(self, namespace: str, *, store_seq: int, dimensions: int) -> Loaded | str:
        """The saved index of ``namespace``, or why it cannot be used."""
        index_path, meta_path = self.paths(namespace)
        if not meta_path.exists() or not index_path.exists():
            return "no saved index"
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            seq, dims = int(meta["seq"]), int(meta["dimensions"])
            if meta.get("format") != FORMAT or meta.get("namespace") != namespace:
                return "the sidecar belongs to another format or namespace"
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return f"unreadable sidecar ({exc})"
        if dims != dimensions:
            return f"saved with {dims} dimensions, the store holds {dimensions}"
        if seq > store_seq:
            return f"saved at change {seq}, but the store is at {store_seq}"
        try:
            raw = faiss.read_index(str(index_path))
            index = DenseIndex.from_faiss(raw, dims)
        except (RuntimeError, ValueError) as exc:
            return f"unreadable index file ({str(exc).splitlines()[0][:120]})"
        if int(raw.ntotal) != int(meta.get("entries", -1)):
            return "the index file does not match its sidecar"
        return Loaded(index, seq)

    def save(self, namespace: str, index: DenseIndex, seq: int) -> None:
        """Write the index and its sidecar (each atomically: temp file, then rename)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        index_path, meta_path = self.paths(namespace)
        meta = {
            "format": FORMAT,
            "namespace": namespace,
            "seq": seq,
            "dimensions": index.dimensions,
            "entries": int(index.faiss_index.ntotal),
            "approximate": index.approximate,
        }
        fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".faiss.tmp")
        os.close(fd)
        try:
            faiss.write_index(index.faiss_index, tmp)
            os.replace(tmp, index_path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".json.tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(meta, out)
        os.replace(tmp, meta_path)
