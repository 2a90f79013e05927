"""What a search ranks over: the records' indexes, kept by one set of indexing rules.

:class:`Corpus` is what the stages of a search may ask of a namespace. :class:`Indexed`
holds its text side and is the one place that says what a record adds to it: its terms
(text, date and the question it replies to) to BM25, its place in its thread, whether it
only asks, and who said it. The namespace view extends it with the dense side and the
stored rows; the memory policy's training builds one over a conversation's kept turns, so
what a policy is scored on is indexed as users' records are.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from langchain_agentmem.index.dense import DenseIndex
from langchain_agentmem.index.lexical import LexicalIndex, tokenize
from langchain_agentmem.index.text import TextTerms, lexical_counts
from langchain_agentmem.index.threads import ThreadOrder
from langchain_agentmem.ranking.config import HybridConfig
from langchain_agentmem.ranking.newer_first import Said
from langchain_agentmem.text.replies import asks, only_asks


class Corpus(Protocol):
    """What the stages of a search read of the records they rank."""

    @property
    def config(self) -> HybridConfig:
        """The weights of every stage."""

    @property
    def dense(self) -> DenseIndex:
        """The records' embeddings, searched by cosine."""

    @property
    def lexical(self) -> LexicalIndex:
        """The records' terms, searched by BM25."""

    @property
    def order(self) -> ThreadOrder:
        """Each record's place in its thread (its neighbours)."""

    @property
    def questions(self) -> Container[int]:
        """The keys of the records that only ask."""

    def embeddings(self, rids: list[int]) -> np.ndarray:
        """The stored (normalised) embeddings of ``rids``, one row each."""

    def said(self, rid: int) -> Said:
        """Who said a record, when, and its text."""

    def successors(self, rid: int) -> Sequence[tuple[int, str]]:
        """The records that replace ``rid`` (a model's ``replaces`` links), each with the
        attribute it changed, oldest first."""


@dataclass
class Indexed:
    """The text side of a corpus: BM25 terms, thread order, questions, who said what."""

    config: HybridConfig = field(default_factory=HybridConfig)
    lexical: LexicalIndex = field(init=False)
    """BM25 with the config's ``bm25_k1`` and ``bm25_b``."""
    order: ThreadOrder = field(default_factory=ThreadOrder)
    questions: set[int] = field(default_factory=set)
    """Keys of the records that only ask (:func:`~langchain_agentmem.text.replies.only_asks`)."""
    _said: dict[int, Said] = field(default_factory=dict)
    """What :meth:`said` returns for each key (searches read it per key)."""
    _ids: dict[int, str] = field(default_factory=dict)
    """Each key's record id, where the caller gave one."""
    _replaces: dict[int, tuple[str, ...]] = field(default_factory=dict)
    """The record ids each key replaces."""
    _replaced_by: dict[str, dict[int, str]] = field(default_factory=dict)
    """The keys that replace each record id, with the attribute each changed."""

    def __post_init__(self) -> None:
        self.lexical = LexicalIndex(k1=self.config.bm25_k1, b=self.config.bm25_b)

    def index_text(
        self,
        rid: int,
        text: str,
        created_at: float,
        *,
        thread: str | None,
        speaker: str | None,
        reply_to: str = "",
        terms: TextTerms | None = None,
        labels: Sequence[str] = (),
        record_id: str | None = None,
        replaces: Sequence[tuple[str, str]] = (),
    ) -> None:
        """Index one record's text (replacing what ``rid`` held).

        Args:
            rid: The record's key.
            text: What it says.
            created_at: When (epoch seconds; its date is a term when ``config.dates``).
            thread: Its thread (``None``: no neighbours).
            speaker: Who said it (``None``: unknown).
            reply_to: The message it replies to; its terms count at ``config.reply_weight``
                when that message asks something.
            terms: ``text`` already read (:func:`~langchain_agentmem.index.text.text_terms`).
            labels: What a model said the record is about: hidden terms, each counting
                ``config.label_weight``.
            record_id: The record's id (needed to be replaced).
            replaces: ``(record id, attribute)`` of the records this one makes out of date.
        """
        counts = lexical_counts(
            text,
            created_at,
            dates=self.config.dates,
            reply_to=reply_to,
            reply_weight=self.config.reply_weight,
            terms=None if terms is None else terms.counts,
        )
        if labels and self.config.label_weight > 0:
            for term in tokenize(" ".join(labels)):
                counts[term] += self.config.label_weight  # type: ignore[assignment]
        self.lexical.add_counts([rid], [counts])
        self._unlink(rid)
        if record_id is not None:
            self._ids[rid] = record_id
        if replaces:
            self._replaces[rid] = tuple(old for old, _ in replaces)
            for old, attribute in replaces:
                self._replaced_by.setdefault(old, {})[rid] = attribute
        question = only_asks(text) if terms is None else terms.asks_only
        self.order.add(rid, thread, created_at, asks=question or asks(text), speaker=speaker)
        self._said[rid] = (speaker, created_at, text)
        if question:
            self.questions.add(rid)
        else:
            self.questions.discard(rid)

    def unindex_text(self, rid: int) -> None:
        """Take ``rid`` out of the text side (a missing one is ignored)."""
        self._said.pop(rid, None)
        self._unlink(rid)
        self.lexical.remove([rid])
        self.order.remove(rid)
        self.questions.discard(rid)

    def _unlink(self, rid: int) -> None:
        self._ids.pop(rid, None)
        for old in self._replaces.pop(rid, ()):
            found = self._replaced_by.get(old)
            if found is not None:
                found.pop(rid, None)
                if not found:
                    del self._replaced_by[old]

    def said(self, rid: int) -> Said:
        """Who said a record, when, and its text."""
        return self._said[rid]

    def successors(self, rid: int) -> Sequence[tuple[int, str]]:
        """The records that replace ``rid``, each with the attribute it changed, oldest
        first."""
        found = self._replaced_by.get(self._ids.get(rid, ""), {})
        return sorted(found.items(), key=lambda item: (self._said[item[0]][1], item[0]))
