"""``AgentMemory``'s user data: erase a namespace, export it to a file, import it back."""

from __future__ import annotations

import os
import time
from typing import IO

from langchain_core.embeddings import Embeddings

from langchain_agentmem.errors import StoreError
from langchain_agentmem.memory.access import NamespaceAccess
from langchain_agentmem.memory.export_format import Export
from langchain_agentmem.memory.transfer import (
    ExportSummary,
    ImportSummary,
    export_namespace,
    import_namespace,
)
from langchain_agentmem.types import ErasedNamespace
from langchain_agentmem.validation import Limits, check_namespace


class MemoryUserData:
    """A user's data as a whole: erasure, export and import (``AgentMemory``'s part).

    Args:
        access: The namespaces' access.
        embeddings: The memory's embedding model (exports name it; imports embed with it).
        limits: The sizes a record may take (applied to every imported record).
    """

    def __init__(self, access: NamespaceAccess, *, embeddings: Embeddings, limits: Limits) -> None:
        self.access = access
        self.backend = access.backend
        self.embeddings = embeddings
        self.limits = limits

    def delete_namespace(self, namespace: str) -> ErasedNamespace:
        """Erase a user: every record, chat message, audit entry and saved index file."""
        namespace = check_namespace(namespace)
        with self.access.lock(namespace):
            erased = self.backend.erase_namespace(namespace, at=time.time())
            self.backend.truncate_log()  # best effort: a reader may hold the log
            try:
                files = self.access.cache.erase(namespace)
            except OSError as exc:
                raise StoreError(
                    f"namespace {namespace!r} was erased from the store, but its saved index "
                    f"could not be removed ({exc}); remove the store's '.indexes' folder (it "
                    "is rebuilt from the store)"
                ) from None
        return ErasedNamespace(
            namespace=namespace,
            records=erased.records,
            messages=erased.messages,
            decisions=erased.decisions,
            index_files=files,
        )

    def export_namespace(
        self,
        namespace: str,
        out: str | os.PathLike[str] | IO[str],
        *,
        embeddings: bool = False,
        progress: bool = False,
    ) -> ExportSummary:
        """Write a user's records and chat messages to a JSON Lines file."""
        return export_namespace(
            self.backend, self.embeddings, namespace, out, embeddings=embeddings, progress=progress
        )

    def import_namespace(
        self,
        source: str | os.PathLike[str] | IO[str] | Export,
        *,
        namespace: str,
        progress: bool = False,
    ) -> ImportSummary:
        """Import a file written by :meth:`export_namespace`, in one transaction."""
        return import_namespace(
            self.access,
            self.embeddings,
            self.limits,
            source,
            namespace=namespace,
            progress=progress,
        )
