"""``AgentMemory``: the one object every adapter talks to."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from langchain_agentmem.annotation.annotator import AnnotationWait, Annotator
from langchain_agentmem.backends import Backend, open_backend
from langchain_agentmem.embedding.embeddings import resolve_embeddings
from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.index.lexical import query_terms
from langchain_agentmem.index.persist import IndexFiles
from langchain_agentmem.memory.judging import MemoryAnnotationStore
from langchain_agentmem.memory.messages import MemoryMessages
from langchain_agentmem.memory.reads import MemoryReads
from langchain_agentmem.memory.userdata import MemoryUserData
from langchain_agentmem.memory.writes import MemoryWrites
from langchain_agentmem.namespace.cache import (
    DEFAULT_CACHE_RECORDS,
    CacheInfo,
    NamespaceCache,
    check_cache_records,
)
from langchain_agentmem.namespace.view import NamespaceView
from langchain_agentmem.policies import MemoryPolicy, make_policy
from langchain_agentmem.policies.features import TEXTS
from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.types import Clock, wall_clock
from langchain_agentmem.validation import (
    DEFAULT_MAX_METADATA_BYTES,
    DEFAULT_MAX_RECALL_CHARS,
    DEFAULT_MAX_TEXT_CHARS,
    Limits,
    check_clock,
)

__all__ = ["AgentMemory"]


class AgentMemory(MemoryReads, MemoryWrites, MemoryMessages, MemoryUserData):
    """Short-term and long-term memory of agents, on one durable store.

    Setup:
        ``pip install langchain-agentmem``; the default embedding model ships with it.

    Instantiate:
        .. code-block:: python

            from langchain_agentmem import AgentMemory

            memory = AgentMemory()  # sqlite:///$AGENTMEM_HOME/memory.db
            memory = AgentMemory("sqlite:///memory.db", policy="fifo", capacity=1000)
            memory = AgentMemory(":memory:")  # for tests

    Usage:
        .. code-block:: python

            memory.add("My name is Alice.", namespace="alice", thread="t1")
            hits = memory.search("What is my name?", namespace="alice", k=3)
            memory.decisions("alice")  # the audit log

    Args:
        url: Store URL (``None``: the embedded default file).
        embeddings: Any LangChain ``Embeddings``, a sentence-transformers model folder, or
            ``None`` for the bundled all-MiniLM-L6-v2.
        policy: Name of a policy (see :func:`available_policies`) or a policy object
            (default: ``"learned"`` when a capacity is given, else ``"keep_all"``).
        capacity: Most long-term records per namespace (policies that forget need it).
        persist_indexes: Save dense indexes next to a SQLite store file (in
            ``<file>.indexes/``) on :meth:`close` and load them on open, so a large namespace
            need not be re-indexed; they are rebuilt from the store whenever they do not match.
        hybrid: How hybrid search weighs cosine, BM25 and thread neighbours, and whether
            record dates go into the lexical index (:class:`HybridConfig`; default: the
            weights measured on LoCoMo).
        cache_records: Most records this process keeps indexed in memory, over all
            namespaces; the least recently used namespaces are dropped first and reload
            on their next use (see :meth:`cache_info`).
        max_text_chars: Longest text accepted (longer: an error, nothing stored).
        max_metadata_bytes: Largest metadata accepted, as JSON.
        max_recall_chars: Most characters of recalled words one prompt tells the model
            (every surface: the best memories first, the one that crosses the line cut
            short with " ...", the rest left out).
        model: A chat model (any LangChain ``BaseChatModel``: the agent's own, or a small
            one) that annotates each stored statement, off the write path: what it is
            about, and which earlier statements of its speaker it makes out of date
            (:mod:`langchain_agentmem.annotation.annotations`; the record's text is never changed):
            one labelling call per statement, then one judging call for each of at most
            two earlier statements it may replace.
            ``None``: no model is called.
        model_calls_per_minute: Most annotation calls a minute (``None``: no limit).
        label_queries: Also ask ``model`` what each search's query is about (one call a
            search, on its path; the answer kept per query) and search the namespace's labels
            it names. Off by default: a query's labels are matched by embedding alone.
        clock: What the memory takes as now: a function returning a datetime (default: the
            wall clock). It dates what is written without a time of its own (records; an
            application replaying history passes the replayed time) and is the day a prompt
            of recalled memories calls today. Expiries (``ttl``, ``expires_at``) always run
            on the wall clock: they are about keeping data, not about what was said when.

    Operations on one namespace run one at a time, in order; different namespaces run in
    parallel (threads, ``asyncio``; on PostgreSQL over its connection pool).
    """

    def __init__(
        self,
        url: str | os.PathLike[str] | None = None,
        *,
        embeddings: Embeddings | str | os.PathLike[str] | None = None,
        policy: str | MemoryPolicy | None = None,
        capacity: int | None = None,
        persist_indexes: bool = True,
        hybrid: HybridConfig | None = None,
        cache_records: int = DEFAULT_CACHE_RECORDS,
        max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
        max_metadata_bytes: int = DEFAULT_MAX_METADATA_BYTES,
        max_recall_chars: int = DEFAULT_MAX_RECALL_CHARS,
        model: BaseChatModel | None = None,
        model_calls_per_minute: float | None = None,
        label_queries: bool = False,
        clock: Clock | None = None,
    ) -> None:
        if hybrid is not None and not isinstance(hybrid, HybridConfig):
            raise InvalidTypeError(
                f"hybrid must be a HybridConfig or None, got {type(hybrid).__name__}"
            )
        self.hybrid = HybridConfig() if hybrid is None else hybrid
        cache_records = check_cache_records(cache_records)
        self.limits = Limits(max_text_chars, max_metadata_bytes, max_recall_chars)
        if policy is None:
            policy = "keep_all" if capacity is None else "learned"
        self.policy = make_policy(policy, capacity)
        self.embeddings = resolve_embeddings(embeddings)
        self.backend: Backend = open_backend(url)
        index_files: IndexFiles | None = None
        path = getattr(self.backend, "path", None)
        if persist_indexes and isinstance(path, str) and path != ":memory:":
            index_files = IndexFiles.beside(path)
        self._cache = NamespaceCache(
            self.backend,
            hybrid=self.hybrid,
            index_files=index_files,
            max_records=cache_records,
            on_erased=self._forget_erased,
            on_opened=None if model is None else self._offer_loaded,
        )
        self.annotator: Annotator | None = None
        self._holder = uuid.uuid4().hex
        if not isinstance(label_queries, bool) or (label_queries and model is None):
            raise InvalidInputError(
                f"label_queries must be True or False, and True only with a model=; got "
                f"{label_queries!r} with model={type(model).__name__ if model else None}"
            )
        self.label_queries = label_queries
        self.clock = wall_clock if clock is None else check_clock(clock)
        if model is not None:
            self.annotator = _annotator(model, model_calls_per_minute, self)
        self._closed = False
        self._close_hooks: list[Callable[[], None]] = []
        self._label_vectors = {}

    def _forget_erased(self, namespace: str) -> None:
        """Drop what this process holds of an erased namespace beyond its view."""
        if self.annotator is not None:
            self.annotator.forget(namespace)
        self.policy.forget_namespace(namespace)
        TEXTS.clear()  # recent texts' features, the erased user's among them
        query_terms.cache_clear()  # recent queries' terms, the erased user's among them

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The store URL."""
        return self.backend.url

    @property
    def capacity(self) -> int | None:
        """Most records per namespace, or ``None``."""
        return self.policy.capacity

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def on_close(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` when this memory closes (a store's sweeper stops so)."""
        self._close_hooks.append(hook)

    def close(self) -> None:
        """Stop what works on this memory (stores' sweepers), save changed indexes (see
        ``persist_indexes``) and close the store."""
        self._closed = True
        if self.annotator is not None:
            self.annotator.close()
        hooks, self._close_hooks = self._close_hooks, []
        for hook in hooks:
            hook()
        self.save_indexes()
        self.backend.close()

    def _offer_loaded(self, namespace: str, view: NamespaceView) -> None:
        """Queue the statements of a namespace just loaded that wait for annotation."""
        assert self.annotator is not None
        self.annotator.offer_all(
            namespace, [(row.id, row.text, row.metadata) for row in view.rows.values()]
        )

    def wait_annotated(self, timeout: float | None = None) -> AnnotationWait:
        """Block until every statement stored so far is annotated or given up on, or
        ``timeout`` seconds pass (tests, benchmarks, a script that exits).

        The answer is true when nothing is left (at once without a ``model``); its
        ``left`` counts the statements still waiting, its ``given_up`` names those whose
        every try failed (:class:`~langchain_agentmem.annotation.annotator.AnnotationWait`). A
        statement another process sharing the store is annotating counts as left until
        that process stores its annotation (or lets go)."""
        return AnnotationWait() if self.annotator is None else self.annotator.wait(timeout)

    async def await_annotated(self, timeout: float | None = None) -> AnnotationWait:
        """Async :meth:`wait_annotated`."""
        return await asyncio.to_thread(self.wait_annotated, timeout)

    def annotation_paused(self) -> contextlib.AbstractContextManager[None]:
        """A context in which the model is sent no new annotation call (a call already
        sent finishes): for a turn that needs the same model, when it serves one request
        at a time. Statements stored meanwhile wait, and are annotated after it."""
        return contextlib.nullcontext() if self.annotator is None else self.annotator.paused()

    @contextlib.asynccontextmanager
    async def aannotation_paused(self) -> AsyncIterator[None]:
        """Async :meth:`annotation_paused` (the wait for a call in flight runs in a thread)."""
        paused = self.annotation_paused()
        await asyncio.to_thread(paused.__enter__)
        try:
            yield
        finally:
            paused.__exit__(None, None, None)

    def save_indexes(self) -> None:
        """Write the dense index of every cached namespace changed since it was last saved."""
        self._cache.save()

    def cache_info(self) -> CacheInfo:
        """Hits, misses and evictions of the namespace cache, and what it holds now."""
        return self._cache.info()

    def __enter__(self) -> AgentMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"AgentMemory({self.url!r}, policy={self.policy.name!r}, capacity={self.capacity})"

    def sweep(self, namespace: str | None = None) -> int:
        """Delete the records whose expiry has passed (logged as DELETE, reason "expired").

        Expired records are invisible to every read as soon as they expire; this frees
        their space. Reads and writes of a namespace sweep it when one is due, so calling
        this is only needed to sweep namespaces nobody reads (a periodic job, say).

        Args:
            namespace: Sweep only this namespace (default: every namespace).

        Returns:
            How many records were deleted.
        """
        if namespace is not None:
            return self._sweep(self._namespace(namespace))
        return sum(self._sweep(ns) for ns in self.backend.expiring_namespaces(time.time()))

    async def asweep(self, namespace: str | None = None) -> int:
        """Async :meth:`sweep`."""
        return await asyncio.to_thread(self.sweep, namespace)


def _annotator(model: object, per_minute: object, memory: MemoryWrites) -> Annotator:
    """The annotator of a ``model=`` argument, checked."""
    if not isinstance(model, BaseChatModel):
        raise InvalidTypeError(
            f"model must be a LangChain chat model (a BaseChatModel, such as ChatOpenAI), got "
            f"{type(model).__name__}; or leave it out to call no model"
        )
    if per_minute is not None and (
        isinstance(per_minute, bool)
        or not isinstance(per_minute, (int, float))
        or not per_minute > 0
    ):
        raise InvalidInputError(
            f"model_calls_per_minute must be a number > 0 or None, got {per_minute!r}"
        )
    return Annotator(model, MemoryAnnotationStore(memory), calls_per_minute=per_minute)
