"""``AgentMemoryRetriever``: long-term memory of one namespace as a LangChain retriever."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from langchain_agentmem.errors import InvalidTypeError
from langchain_agentmem.filters import Filter, checked_filter
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.ranking import check_mode
from langchain_agentmem.types import MemoryRecord
from langchain_agentmem.validation import check_k, check_min_score, check_name, check_text

RESERVED_METADATA = ("id", "thread", "namespace", "created_at", "updated_at", "score")
"""Metadata keys the retriever fills from the record (they win over stored metadata)."""


def check_search_mode(mode: object) -> str | None:
    """Validate a search mode (``None``: the memory's default)."""
    return None if mode is None else check_mode(mode)


def record_to_document(record: MemoryRecord) -> Document:
    """A search hit as a ``Document``: the text, with the record's metadata and provenance."""
    metadata: dict[str, Any] = dict(record.metadata)
    metadata.update(
        id=record.id,
        thread=record.thread,
        namespace=record.namespace,
        created_at=None if record.created_at is None else record.created_at.isoformat(),
        updated_at=None if record.updated_at is None else record.updated_at.isoformat(),
        score=record.score,
    )
    return Document(id=record.id, page_content=record.text, metadata=metadata)


class AgentMemoryRetriever(BaseRetriever):
    """Searches the long-term memory of one namespace.

    Setup:
        An ``AgentMemory`` holding records (``memory.add(...)`` or a chat history with
        ``remember=True``).

    Instantiate:
        .. code-block:: python

            from langchain_agentmem import AgentMemory, AgentMemoryRetriever

            memory = AgentMemory("sqlite:///memory.db")
            retriever = AgentMemoryRetriever(memory=memory, namespace="alice", k=4)

    Usage:
        .. code-block:: python

            docs = retriever.invoke("Where does Alice live?")
            docs = retriever.invoke("Where does Alice live?", k=2)  # per call
            food = AgentMemoryRetriever(
                memory=memory, namespace="alice", filter={"topic": "food"}, min_score=0.2
            )
            docs[0].metadata  # {..., "id", "thread", "namespace", "created_at",
                              #  "updated_at", "score"}

    Each ``Document`` carries the record text as ``page_content``, the record id as
    ``Document.id``, and the record's own metadata plus the keys in
    :data:`RESERVED_METADATA` (timestamps as ISO 8601 strings; those keys take
    precedence over stored metadata of the same name).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: AgentMemory
    """The store to search."""
    namespace: str
    """The user (or agent) whose records are searched; never crosses into another."""
    k: int = 4
    """How many documents to return."""
    mode: str | None = None
    """``"hybrid"``, ``"dense"``, ``"lexical"``, or ``None`` for the memory's default."""
    filter: dict[str, Any] | None = None
    """Only records whose metadata match (:mod:`langchain_agentmem.filters`)."""
    min_score: float | None = None
    """Leave out records scoring below this (``AgentMemory.search``'s score)."""

    def __init__(
        self,
        memory: AgentMemory,
        *,
        namespace: str,
        k: int = 4,
        mode: str | None = None,
        filter: Filter | None = None,
        min_score: float | None = None,
        **kwargs: Any,
    ) -> None:
        # Checked here so callers get the package's errors, not pydantic's wrapper.
        if not isinstance(memory, AgentMemory):
            raise InvalidTypeError(
                f"memory must be an AgentMemory, got {type(memory).__name__}; pass AgentMemory(url)"
            )
        fields: dict[str, Any] = {
            "memory": memory,
            "namespace": check_name(namespace, what="namespace"),
            "k": check_k(k),
            "mode": check_search_mode(mode),
            "filter": None if filter is None else dict(checked_filter(filter) or {}),
            "min_score": check_min_score(min_score),
        }
        super().__init__(**fields, **kwargs)

    def _search_args(
        self, query: object, k: object, mode: object, wanted: object, min_score: object
    ) -> dict[str, Any]:
        args: dict[str, Any] = {
            "query": check_text(query, what="query"),
            "namespace": self.namespace,
            "k": self.k if k is None else check_k(k),
            "filter": self.filter if wanted is None else checked_filter(wanted),
            "min_score": self.min_score if min_score is None else check_min_score(min_score),
        }
        chosen = self.mode if mode is None else check_search_mode(mode)
        # Only pass a mode when one is chosen, so the memory's own default applies.
        if chosen is not None:
            args["mode"] = chosen
        return args

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        mode: str | None = None,
        filter: Filter | None = None,
        min_score: float | None = None,
    ) -> list[Document]:
        args = self._search_args(query, k, mode, filter, min_score)
        return [record_to_document(r) for r in self.memory.search(**args)]

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        mode: str | None = None,
        filter: Filter | None = None,
        min_score: float | None = None,
    ) -> list[Document]:
        args = self._search_args(query, k, mode, filter, min_score)
        return [record_to_document(r) for r in await self.memory.asearch(**args)]
