"""Sync and async twins from one body: an operation written as a generator of steps.

The body yields what it needs done, :class:`Embed` (texts through the embedding model) or
:class:`Call` (blocking work: the store, a namespace's lock), and receives the result;
:func:`run` does each step in place, :func:`arun` awaits the model's async methods and
runs blocking work in a thread. A method and its ``a`` twin then differ in one line::

    def search(self, query, *, namespace):
        return run(self.embeddings, self._searching(query, namespace))

    async def asearch(self, query, *, namespace):
        return await arun(self.embeddings, self._searching(query, namespace))

Search uses it (its steps interleave embeddings, the store and a model call); a write reads
top to bottom instead (check, embed, commit), each twin written out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.embeddings import Embeddings

from langchain_agentmem.embedding.embeddings import (
    aembed_query,
    aembed_records,
    embed_query,
    embed_records,
)

T = TypeVar("T")


@dataclass(frozen=True)
class Embed:
    """Embed ``texts`` as records (normalised, one row each), or one text as a query."""

    texts: tuple[str, ...]
    query: bool = False


@dataclass(frozen=True)
class Call:
    """Blocking work: ``fn(*args)`` (run in a thread by :func:`arun`)."""

    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()

    @classmethod
    def of(cls, fn: Callable[..., Any], *args: Any) -> Call:
        """``fn(*args)`` as a step."""
        return cls(fn, args)


Step = Embed | Call
Steps = Generator[Step, Any, T]
"""An operation: it yields steps, is sent each step's result, and returns its own."""


def run(embeddings: Embeddings, steps: Steps[T]) -> T:
    """Run ``steps`` here, each step in turn."""
    result: Any = None
    while True:
        try:
            step = steps.send(result)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        if isinstance(step, Embed):
            result = (
                embed_query(embeddings, step.texts[0])
                if step.query
                else embed_records(embeddings, list(step.texts))
            )
        else:
            result = step.fn(*step.args)


async def arun(embeddings: Embeddings, steps: Steps[T]) -> T:
    """Run ``steps`` on the event loop: the model's async methods, blocking work in a thread."""
    result: Any = None
    while True:
        try:
            step = steps.send(result)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        if isinstance(step, Embed):
            result = (
                await aembed_query(embeddings, step.texts[0])
                if step.query
                else await aembed_records(embeddings, list(step.texts))
            )
        else:
            result = await asyncio.to_thread(step.fn, *step.args)
