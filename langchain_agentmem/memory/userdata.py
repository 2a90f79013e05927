"""``AgentMemory``'s user data: erase a namespace, export it to a file, import it back."""

from __future__ import annotations

import asyncio
import os
import time
from typing import IO

from langchain_agentmem.errors import StoreError
from langchain_agentmem.memory.access import MemoryCore
from langchain_agentmem.memory.export_format import Export
from langchain_agentmem.memory.transfer import (
    ExportSummary,
    ImportSummary,
    export_namespace,
    import_namespace,
)
from langchain_agentmem.types import ErasedNamespace


class MemoryUserData(MemoryCore):
    """A user's data as a whole: erasure, export and import."""

    def delete_namespace(self, namespace: str) -> ErasedNamespace:
        """Erase a user: every record, chat message, audit entry and saved index file.

        Records, messages and audit entries go in one transaction; other namespaces are
        untouched. Other processes drop their cached view of the namespace the next time
        they touch it (the store's change log tells them). Deleting a namespace that holds
        nothing is not an error: every count is zero.

        Returns:
            How many records, messages, audit entries and index files were removed.
        """
        namespace = self._namespace(namespace)
        with self._cache.lock(namespace):
            erased = self.backend.erase_namespace(namespace, at=time.time())
            self.backend.truncate_log()  # best effort: a reader may hold the log
            try:
                files = self._cache.erase(namespace)
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

    async def adelete_namespace(self, namespace: str) -> ErasedNamespace:
        """Async :meth:`delete_namespace`."""
        return await asyncio.to_thread(self.delete_namespace, namespace)

    def export_namespace(
        self,
        namespace: str,
        out: str | os.PathLike[str] | IO[str],
        *,
        embeddings: bool = False,
        progress: bool = False,
    ) -> ExportSummary:
        """Write a user's records and chat messages to a JSON Lines file.

        The format (a versioned header, then one line per record and message) is described
        in :mod:`langchain_agentmem.memory.transfer`. A path gets a new file, readable by its owner
        only, renamed over it when complete; a file already there is replaced (never
        written into) only if it is an earlier export.

        Args:
            namespace: The user to export.
            out: A file path or an open text file.
            embeddings: Also write each record's embedding (else an import re-embeds).
            progress: Show a progress bar on stderr.
        """
        return export_namespace(
            self.backend, self.embeddings, namespace, out, embeddings=embeddings, progress=progress
        )

    async def aexport_namespace(
        self,
        namespace: str,
        out: str | os.PathLike[str] | IO[str],
        *,
        embeddings: bool = False,
        progress: bool = False,
    ) -> ExportSummary:
        """Async :meth:`export_namespace`."""
        return await asyncio.to_thread(
            self.export_namespace, namespace, out, embeddings=embeddings, progress=progress
        )

    def import_namespace(
        self,
        source: str | os.PathLike[str] | IO[str] | Export,
        *,
        namespace: str,
        progress: bool = False,
    ) -> ImportSummary:
        """Import a file written by :meth:`export_namespace`, in one transaction.

        Record ids are kept; records already here (by id) and messages already in their
        thread are not added again, so importing twice adds nothing. Records are re-embedded
        with this memory's model when the file has no embeddings or another model made
        them. A malformed line (named by number), a record over this memory's limits, an
        embedding of other dimensions than the model's, a file cut short (other counts than
        its header's), a newer format, a record or message dated in the future or a message
        other than a human, AI or tool message imports nothing.

        Args:
            source: A file path, an open text file, or what
                :func:`~langchain_agentmem.memory.export_format.read_export` read from one.
            namespace: The user to import into; required (the file names a user too, but a
                file can name anyone: it is never taken for the target).
            progress: Show progress bars on stderr.
        """
        return import_namespace(self, source, namespace=namespace, progress=progress)

    async def aimport_namespace(
        self,
        source: str | os.PathLike[str] | IO[str] | Export,
        *,
        namespace: str,
        progress: bool = False,
    ) -> ImportSummary:
        """Async :meth:`import_namespace`."""
        return await asyncio.to_thread(
            self.import_namespace, source, namespace=namespace, progress=progress
        )
