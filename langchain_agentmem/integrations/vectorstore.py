"""``AgentMemoryVectorStore``: long-term memory of one namespace as a LangChain vector store."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore
from langchain_core.vectorstores.utils import maximal_marginal_relevance

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.filters import Filter, checked_filter
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.types import MemoryRecord
from langchain_agentmem.validation import check_k, check_name, check_record_id, check_text


def _document(record: MemoryRecord) -> Document:
    return Document(id=record.id, page_content=record.text, metadata=dict(record.metadata))


def _no_extra(kwargs: dict[str, Any], method: str) -> None:
    # Silently ignoring an argument would return wrong results; say so instead.
    if kwargs:
        raise InvalidInputError(
            f"{method}() got unsupported arguments {sorted(kwargs)}; a search takes k and "
            "filter (a dict of metadata keys to wanted values)"
        )


def _wanted(kwargs: dict[str, Any], method: str) -> Filter | None:
    """The ``filter`` of a search's keyword arguments; any other one is refused."""
    wanted = kwargs.pop("filter", None)
    _no_extra(kwargs, method)
    return checked_filter(wanted)


class AgentMemoryVectorStore(VectorStore):
    """The long-term memory of one namespace, as a LangChain ``VectorStore``.

    Writes go through ``AgentMemory`` (so the memory's policy decides and every op lands
    in the audit log); searches are dense (cosine similarity over the memory's
    embeddings) and never leave the namespace.

    Setup:
        An ``AgentMemory``; its embedding model is the store's (``store.embeddings``).

    Instantiate:
        .. code-block:: python

            from langchain_agentmem import AgentMemory, AgentMemoryVectorStore

            memory = AgentMemory("sqlite:///memory.db")
            store = AgentMemoryVectorStore(memory, namespace="alice")

    Usage:
        .. code-block:: python

            ids = store.add_texts(["Alice lives in Lyon."], metadatas=[{"src": "chat"}])
            store.add_texts(["Alice lives in Paris."], ids=ids)  # same id: updated in place
            store.similarity_search_with_score("Where does Alice live?", k=1)
            store.delete(ids)
            retriever = store.as_retriever(search_kwargs={"k": 3})

    Record ids are unique per namespace: the same id in another namespace is another
    record, never touched from here. Following LangChain's contract, ``delete`` and
    ``get_by_ids`` pass over ids that are not in this namespace.

    Args:
        memory: The store.
        namespace: The user (or agent) whose records this vector store holds.
        thread: Thread recorded on the records this store adds.
    """

    def __init__(self, memory: AgentMemory, *, namespace: str, thread: str | None = None) -> None:
        if not isinstance(memory, AgentMemory):
            raise InvalidTypeError(
                f"memory must be an AgentMemory, got {type(memory).__name__}; pass AgentMemory(url)"
            )
        self.memory = memory
        self.namespace = check_name(namespace, what="namespace")
        self.thread = None if thread is None else check_name(thread, what="thread")

    def __repr__(self) -> str:
        return f"AgentMemoryVectorStore({self.memory!r}, namespace={self.namespace!r})"

    @property
    def embeddings(self) -> Embeddings:
        """The memory's embedding model."""
        return self.memory.embeddings

    # -- writes ----------------------------------------------------------------------------
    def _plan(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None,
        ids: Sequence[str | None] | None,
    ) -> tuple[list[str], list[dict[str, Any] | None], list[str]]:
        """Check the input; every text gets an id (a new UUID where none is given)."""
        if isinstance(texts, str):
            raise InvalidTypeError("texts must be a list of str, not one str; wrap it in a list")
        text_list = [check_text(t) for t in texts]
        n = len(text_list)
        if metadatas is not None and len(metadatas) != n:
            raise InvalidInputError(
                f"got {len(metadatas)} metadatas for {n} texts; pass one per text"
            )
        if ids is not None and len(ids) != n:
            raise InvalidInputError(f"got {len(ids)} ids for {n} texts; pass one per text")
        metas: list[dict[str, Any] | None] = list(metadatas) if metadatas else [None] * n
        given = list(ids) if ids is not None else [None] * n
        id_list = [uuid.uuid4().hex if i is None else check_record_id(i) for i in given]
        if len(set(id_list)) != n:
            raise InvalidInputError(f"ids {id_list!r:.80} repeat an id; pass unique ids")
        return text_list, metas, id_list

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: Sequence[str | None] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Embed and store texts; an id already in this namespace is updated in place.

        Each id is written in one atomic step (exists? update : add), so concurrent
        writers of one id never fail: the last one wins.

        Args:
            texts: The texts to store.
            metadatas: One metadata dict per text.
            ids: One id per text (``None`` entries get a new UUID).

        Returns:
            The ids, in the order of ``texts``.
        """
        _no_extra(kwargs, "add_texts")
        texts_, metas, id_list = self._plan(texts, metadatas, ids)
        self.memory.put_many(
            texts_,
            namespace=self.namespace,
            record_ids=id_list,
            metadatas=metas,
            thread=self.thread,
        )
        return id_list

    async def aadd_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: Sequence[str | None] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Async :meth:`add_texts`."""
        _no_extra(kwargs, "aadd_texts")
        texts_, metas, id_list = self._plan(texts, metadatas, ids)
        await self.memory.aput_many(
            texts_,
            namespace=self.namespace,
            record_ids=id_list,
            metadatas=metas,
            thread=self.thread,
        )
        return id_list

    def _check_ids(self, ids: object, method: str) -> list[str]:
        if ids is None:
            raise InvalidInputError(
                f"{method}() needs a list of ids; it never acts on a whole namespace"
            )
        if isinstance(ids, str) or not isinstance(ids, Sequence):
            raise InvalidTypeError(
                f"ids must be a list of str, got {type(ids).__name__}; wrap one id in a list"
            )
        return [check_record_id(i) for i in ids]

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool:
        """Delete records of this namespace by id; ids not in it are passed over.

        Returns:
            ``True`` if this call deleted every id, ``False`` if some were not here.
        """
        _no_extra(kwargs, "delete")
        wanted = list(dict.fromkeys(self._check_ids(ids, "delete")))
        deleted = [
            self.memory.delete(record_id, namespace=self.namespace, missing_ok=True)
            for record_id in wanted
        ]
        return all(op is not None for op in deleted)

    async def adelete(self, ids: list[str] | None = None, **kwargs: Any) -> bool:
        """Async :meth:`delete`."""
        _no_extra(kwargs, "adelete")
        return await asyncio.to_thread(self.delete, ids)

    # -- reads -----------------------------------------------------------------------------
    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """Documents of this namespace with these ids (missing ones are left out)."""
        wanted = self._check_ids(ids, "get_by_ids")
        return [_document(r) for r in self.memory.get_many(wanted, namespace=self.namespace)]

    async def aget_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """Async :meth:`get_by_ids`."""
        return await asyncio.to_thread(self.get_by_ids, ids)

    def _query_vector(self, query: object) -> list[float]:
        return self.embeddings.embed_query(check_text(query, what="query"))

    async def _aquery_vector(self, query: object) -> list[float]:
        return await self.embeddings.aembed_query(check_text(query, what="query"))

    def _hits(
        self, embedding: Sequence[float], k: int, wanted: Filter | None = None
    ) -> list[MemoryRecord]:
        return self.memory.search_by_vector(
            embedding, namespace=self.namespace, k=check_k(k), filter=wanted
        )

    def similarity_search_with_score(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """The ``k`` documents most similar to ``query``, with cosine similarity
        (``filter=``: only documents whose metadata match, :mod:`langchain_agentmem.filters`)."""
        wanted = _wanted(kwargs, "similarity_search_with_score")
        hits = self._hits(self._query_vector(query), k, wanted)
        return [(_document(r), float(r.score or 0.0)) for r in hits]

    async def asimilarity_search_with_score(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """Async :meth:`similarity_search_with_score`."""
        wanted = _wanted(kwargs, "asimilarity_search_with_score")
        vector = await self._aquery_vector(query)
        hits = await asyncio.to_thread(self._hits, vector, k, wanted)
        return [(_document(r), float(r.score or 0.0)) for r in hits]

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        """The ``k`` documents most similar to ``query``, best first."""
        return [doc for doc, _ in self.similarity_search_with_score(query, k, **kwargs)]

    async def asimilarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        """Async :meth:`similarity_search`."""
        pairs = await self.asimilarity_search_with_score(query, k, **kwargs)
        return [doc for doc, _ in pairs]

    def similarity_search_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[Document]:
        """The ``k`` documents nearest to ``embedding``."""
        wanted = _wanted(kwargs, "similarity_search_by_vector")
        return [_document(r) for r in self._hits(embedding, k, wanted)]

    async def asimilarity_search_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[Document]:
        """Async :meth:`similarity_search_by_vector`."""
        wanted = _wanted(kwargs, "asimilarity_search_by_vector")
        return [_document(r) for r in await asyncio.to_thread(self._hits, embedding, k, wanted)]

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        # Scores are cosine similarities; LangChain wants relevance in [0, 1].
        return lambda score: min(1.0, max(0.0, score))

    def max_marginal_relevance_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        """``k`` documents near ``embedding`` that are also diverse among themselves."""
        wanted = _wanted(kwargs, "max_marginal_relevance_search")
        k = check_k(k)
        hits = self._hits(embedding, max(check_k(fetch_k, what="fetch_k"), k), wanted)
        if not hits:
            return []
        vectors = [np.asarray(r.embedding, dtype=np.float32).tolist() for r in hits]
        chosen = maximal_marginal_relevance(
            np.asarray(embedding, dtype=np.float32), vectors, lambda_mult=lambda_mult, k=k
        )
        return [_document(hits[i]) for i in chosen]

    def max_marginal_relevance_search(
        self,
        query: str,
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        """Maximal-marginal-relevance search for ``query``."""
        return self.max_marginal_relevance_search_by_vector(
            self._query_vector(query), k, fetch_k, lambda_mult, **kwargs
        )

    async def amax_marginal_relevance_search(
        self,
        query: str,
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        """Async :meth:`max_marginal_relevance_search`."""
        vector = await self._aquery_vector(query)
        return await asyncio.to_thread(
            self.max_marginal_relevance_search_by_vector,
            vector,
            k,
            fetch_k,
            lambda_mult,
            **kwargs,
        )

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        namespace: str | None = None,
        memory: AgentMemory | None = None,
        url: str | None = None,
        **kwargs: Any,
    ) -> AgentMemoryVectorStore:
        """A vector store holding ``texts``.

        Args:
            texts: The texts to store.
            embedding: The embedding model (used to open a new memory at ``url``).
            metadatas: One metadata dict per text.
            ids: One id per text.
            namespace: The namespace to fill (required).
            memory: An open memory to use instead of opening ``url``; it must use
                ``embedding``.
            url: Store URL of the memory to open (``None``: the embedded default file).
        """
        _no_extra(kwargs, "from_texts")
        if namespace is None:
            raise InvalidInputError(
                "from_texts() needs namespace=...: the user (or agent) the texts belong to"
            )
        if memory is None:
            memory = AgentMemory(url, embeddings=embedding)
        elif memory.embeddings is not embedding:
            raise InvalidInputError(
                "from_texts() got a memory whose embeddings differ from embedding; pass "
                "embedding=memory.embeddings"
            )
        store = cls(memory, namespace=namespace)
        store.add_texts(texts, metadatas, ids=ids)
        return store
