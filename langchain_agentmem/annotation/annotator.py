"""Annotating stored statements with a chat model, off the write path.

A write returns before its record is annotated: :class:`Annotator` keeps a queue of the
records to annotate and works through it in one daemon thread: one labelling call per record
(:func:`~langchain_agentmem.annotation.annotations.request`), then one judging call for each earlier
statement it may replace (:func:`~langchain_agentmem.annotation.annotations.judge_request`; at most
:data:`~langchain_agentmem.memory.judging.JUDGED`, none when there is no candidate). Nothing is
stored of the queue: a record is waiting exactly when it is a statement without a current
annotation, so whatever a closed or crashed process left is found again when its namespace
is next loaded. Before its calls a record is claimed in the store
(:meth:`AnnotationStore.claim`), so processes sharing a namespace annotate each statement
once. A model error, a timeout or an answer that does not parse leaves the record as it
was, is logged once and tried again later (doubling waits, :data:`RETRY_WAITS`), never
failing a write.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from langchain_agentmem.annotation.annotations import (
    Notes,
    judge_request,
    parse,
    parse_judgement,
    parse_query_labels,
    query_request,
    request,
    worth_annotating,
)

log = logging.getLogger(__name__)

RETRY_WAITS = (2.0, 8.0, 30.0)
"""Seconds before each new try of a record whose annotation failed; after the last, it
waits until its namespace is loaded again (by another process, or after a restart)."""

CLOSE_GRACE = 2.0
"""Seconds :meth:`Annotator.close` waits for a call in flight."""

MAX_ASKED = 1024
"""Most queries whose labels :meth:`Annotator.query_labels` keeps (cleared when full)."""

DEFAULT_TIMEOUT = 60.0
"""Seconds a model call may take before it counts as failed."""

LEASE_CALLS = 4
"""Calls a claim on annotating a record lasts for (each at most the call timeout): the
labelling call, the judging calls (:data:`~langchain_agentmem.memory.judging.JUDGED`) and a
spare."""

HELD_WAIT = 5.0
"""Seconds before a record another process is annotating is looked at again (annotated by
then, it is dropped; its claim run out, it is annotated here)."""

_ROLES: dict[str, Callable[[str], BaseMessage]] = {
    "system": SystemMessage,
    "user": HumanMessage,
    "assistant": AIMessage,
}


def model_name(model: BaseChatModel) -> str:
    """How an annotation names the model that made it (``model_name``, ``model``, or the
    class)."""
    for attr in ("model_name", "model"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value[:80]
    return type(model).__name__


def messages(text: str) -> list[BaseMessage]:
    """The labelling request for ``text`` as LangChain messages."""
    return as_messages(request(text))


def as_messages(request: list[dict[str, str]]) -> list[BaseMessage]:
    """A request's chat messages (OpenAI roles) as LangChain messages."""
    return [_ROLES[m["role"]](m["content"]) for m in request]


def _text(answer: BaseMessage) -> str:
    return answer.content if isinstance(answer.content, str) else str(answer.content)


@dataclass(frozen=True)
class LinkCandidate:
    """An earlier statement a new one may replace, as the judge is asked about it."""

    record_id: str
    text: str
    why: str
    """The link's reason if the judge says yes (``"home city: now Porto"``)."""


@dataclass(frozen=True)
class AnnotationWait:
    """Where annotation stood when a wait ended: true when nothing was left to annotate.

    ``if memory.wait_annotated(timeout=60):`` reads as a yes or no; :attr:`given_up` says
    which statements stay unannotated because every try failed.
    """

    left: int = 0
    """Statements still queued or being annotated (0: the wait ended because none was)."""
    given_up: tuple[tuple[str, str], ...] = ()
    """``(namespace, record id)`` of each statement given up on: every try failed (a model
    error, a timeout, an answer that does not parse), so it stays as it was until its
    namespace is loaded again (by another process, or after a restart)."""

    def __bool__(self) -> bool:
        return self.left == 0


@dataclass
class _Pending:
    namespace: str
    record_id: str
    text: str
    due: float = 0.0
    tries: int = 0


class AnnotationStore(Protocol):
    """What an :class:`Annotator` claims, reads and writes through (a memory's is
    :class:`~langchain_agentmem.memory.judging.MemoryAnnotationStore`)."""

    def claim(self, namespace: str, record_id: str, text: str, seconds: float) -> bool | None:
        """Take the claim on annotating a record for ``seconds``: True when granted, False
        while another process holds it, ``None`` when there is nothing left to do
        (annotated, changed or gone meanwhile)."""
        ...

    def release(self, namespace: str, record_id: str) -> None:
        """Drop this annotator's claim on a record."""
        ...

    def store(
        self,
        namespace: str,
        record_id: str,
        text: str,
        notes: Notes,
        model: str,
        links: Sequence[tuple[str, str]],
    ) -> object:
        """Store what ``model`` noted of a record whose text is still ``text``, with the
        earlier statements it replaces (``links``, each ``(record id, reason)``)."""
        ...

    def link_candidates(
        self, namespace: str, record_id: str, text: str, notes: Notes
    ) -> Sequence[LinkCandidate]:
        """The earlier statements a record may replace, for the model to judge."""
        ...


class Annotator:
    """One model, one queue, one thread: annotates records as they are stored."""

    def __init__(
        self,
        model: BaseChatModel,
        store: AnnotationStore,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        calls_per_minute: float | None = None,
    ) -> None:
        self.model = model
        self.name = model_name(model)
        self._store = store
        self._timeout = timeout
        self._gap = 0.0 if not calls_per_minute else 60.0 / calls_per_minute
        self.lease = LEASE_CALLS * (timeout + self._gap)
        """Seconds a claim on annotating a record is taken for."""
        self._last_call = 0.0
        self._queue: dict[tuple[str, str], _Pending] = {}
        self._busy = 0
        self._flight: set[tuple[str, str]] = set()
        self._given_up: dict[tuple[str, str], None] = {}  # a dict: kept in order, once each
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._calls = concurrent.futures.ThreadPoolExecutor(1, "agentmem-annotate-call")
        self._closed = False
        self._pauses = 0
        self._calling = False
        self._asked: dict[str, tuple[str, ...]] = {}
        self._read_failed = False
        self.calls = 0
        """Model calls made off the write path (labelling and judging)."""
        self.judgements = 0
        """Judging calls made (of :attr:`calls`)."""
        self.failures = 0
        """Calls that failed (an error, a timeout, an answer that did not parse)."""

    # -- what the memory tells it ------------------------------------------------------------
    def offer(
        self, namespace: str, record_id: str, text: str, metadata: Mapping[str, Any] | None
    ) -> None:
        """Queue a stored record when it is a statement worth annotating."""
        if not worth_annotating(text, metadata):
            return
        with self._cond:
            if self._closed:
                return
            key = (namespace, record_id)
            if key in self._flight:
                return
            known = self._queue.get(key)
            if known is None or known.text != text:
                self._queue[key] = _Pending(namespace, record_id, text)
            self._given_up.pop(key, None)
            self._start()
            self._cond.notify_all()

    def offer_all(
        self, namespace: str, records: Sequence[tuple[str, str, Mapping[str, Any] | None]]
    ) -> None:
        """Queue each ``(record_id, text, metadata)`` of a namespace just loaded."""
        for record_id, text, metadata in records:
            self.offer(namespace, record_id, text, metadata)

    def forget(self, namespace: str) -> None:
        """Drop what is queued of an erased namespace."""
        with self._cond:
            for key in [k for k in self._queue if k[0] == namespace]:
                del self._queue[key]
            for key in [k for k in self._given_up if k[0] == namespace]:
                del self._given_up[key]
            self._cond.notify_all()

    def query_labels(self, query: str) -> tuple[str, ...]:
        """What the model says ``query`` asks about (a call on the caller's thread, its
        answer kept for the same query); none when the call fails, which is logged once."""
        with self._cond:
            if query in self._asked:
                return self._asked[query]
        try:
            answer = self.model.invoke(as_messages(query_request(query)))
        except Exception as exc:
            if not self._read_failed:
                log.warning(
                    "could not ask %s what a query is about (%s: %s); searching without",
                    self.name,
                    type(exc).__name__,
                    str(exc)[:200],
                )
            self._read_failed = True
            return ()
        labels = parse_query_labels(_text(answer))
        with self._cond:
            if len(self._asked) >= MAX_ASKED:
                self._asked.clear()
            self._asked[query] = labels
        return labels

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """While inside, no call is sent; entering waits for a call in flight to end (at
        most the call's timeout). Pauses nest."""
        with self._cond:
            self._pauses += 1
            deadline = time.monotonic() + self._timeout
            while self._calling and (left := deadline - time.monotonic()) > 0:
                self._cond.wait(left)
        try:
            yield
        finally:
            with self._cond:
                self._pauses -= 1
                self._cond.notify_all()

    # -- waiting and stopping ----------------------------------------------------------------
    def pending(self) -> int:
        """Records queued or being annotated now."""
        with self._cond:
            return len(self._queue) + self._busy

    def wait(self, timeout: float | None = None) -> AnnotationWait:
        """Block until nothing is queued or being annotated, or ``timeout`` seconds pass;
        what is left then, and what was given up on. Records waiting to be tried again
        count as queued."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._queue or self._busy:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                self._cond.wait(left)
            return AnnotationWait(len(self._queue) + self._busy, tuple(self._given_up))

    def close(self) -> None:
        """Stop: what is queued, and a call still waiting for the model after a short
        grace, is left to a later load of its namespace (a closing chat does not wait for
        the model)."""
        with self._cond:
            self._closed = True
            self._queue.clear()
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=CLOSE_GRACE)
        self._calls.shutdown(wait=False, cancel_futures=True)
        with self._cond:
            stuck = list(self._flight)
        for namespace, record_id in stuck:  # a call still out: another process may take it
            self._let_go(namespace, record_id)

    # -- the worker ----------------------------------------------------------------------------
    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(
                target=self._run, name="agentmem-annotator", daemon=True
            )
            self._thread.start()

    def _next(self) -> _Pending | None:
        """The next record due (waiting for one), or ``None`` once closed."""
        with self._cond:
            while not self._closed:
                now = time.monotonic()
                due = min(self._queue.values(), key=lambda p: p.due, default=None)
                if due is not None and due.due <= now:
                    del self._queue[(due.namespace, due.record_id)]
                    self._flight.add((due.namespace, due.record_id))
                    self._busy += 1
                    return due
                self._cond.wait(None if due is None else due.due - now)
            return None

    def _run(self) -> None:
        while (item := self._next()) is not None:
            try:
                self._annotate(item)
            except Exception as exc:
                self._failed(item, exc)
            finally:
                with self._cond:
                    self._busy -= 1
                    self._flight.discard((item.namespace, item.record_id))
                    self._cond.notify_all()

    def _let_go(self, namespace: str, record_id: str) -> None:
        try:
            self._store.release(namespace, record_id)
        except Exception as exc:  # the store closed or failed: the claim runs out by itself
            log.debug("could not release the claim on %r: %s", record_id, exc)

    def _annotate(self, item: _Pending) -> None:
        granted = self._store.claim(item.namespace, item.record_id, item.text, self.lease)
        if granted is None:
            return  # annotated by another process, changed or gone meanwhile
        if not granted:
            self._again(item, HELD_WAIT)
            return
        try:
            self._label(item)
        finally:
            self._let_go(item.namespace, item.record_id)

    def _label(self, item: _Pending) -> None:
        content = self._ask(messages(item.text))
        notes = parse(content, item.text)
        if notes is None:
            raise ValueError(f"the answer holds no annotation: {content[:80]!r}")
        links = []
        found = self._store.link_candidates(item.namespace, item.record_id, item.text, notes)
        for candidate in found:
            self.judgements += 1
            if parse_judgement(self._ask(as_messages(judge_request(candidate.text, item.text)))):
                links.append((candidate.record_id, candidate.why))
        self._store.store(item.namespace, item.record_id, item.text, notes, self.name, links)

    def _ask(self, request: list[BaseMessage]) -> str:
        """One model call, paced by the rate limit and held while paused; its answer's
        text."""
        wait = self._last_call + self._gap - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        with self._cond:
            while self._pauses and not self._closed:
                self._cond.wait()
            if self._closed:
                raise RuntimeError("the memory closed")
            self._calling = True
        try:
            self._last_call = time.monotonic()
            self.calls += 1
            future = self._calls.submit(self.model.invoke, request)
            answer = future.result(timeout=self._timeout)
        finally:
            with self._cond:
                self._calling = False
                self._cond.notify_all()
        return _text(answer)

    def _failed(self, item: _Pending, exc: BaseException) -> None:
        if self._closed:
            return  # the memory closed under the call: the record waits for a later load
        self.failures += 1
        if item.tries == 0:
            log.warning(
                "could not annotate record %r of %r with %s (%s: %s); it stays as it is and "
                "is tried again",
                item.record_id,
                item.namespace,
                self.name,
                type(exc).__name__,
                str(exc)[:200],
            )
        if item.tries >= len(RETRY_WAITS):
            with self._cond:
                self._given_up[(item.namespace, item.record_id)] = None
            return
        item.tries += 1
        self._again(item, RETRY_WAITS[item.tries - 1])

    def _again(self, item: _Pending, wait: float) -> None:
        """Queue ``item`` again, due in ``wait`` seconds (not once closed)."""
        item.due = time.monotonic() + wait
        with self._cond:
            if not self._closed:
                self._queue.setdefault((item.namespace, item.record_id), item)
