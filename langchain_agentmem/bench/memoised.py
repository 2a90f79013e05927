"""Embeddings computed once per text: a benchmark that stores one session in many
haystacks embeds it once.

:class:`MemoisedEmbeddings` wraps the model a memory embeds with and keeps each text's
vector, so what the memory stores and searches is exactly what the model gives; only the
repeats are not recomputed. It is a benchmark's tool: it keeps every text it saw in memory.
"""

from __future__ import annotations

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_agentmem.embedding.embeddings import ArrayEmbeddings, embed_texts
from langchain_agentmem.types import Vector


class MemoisedEmbeddings(Embeddings):
    """``base``'s vectors, each text embedded once (records and queries alike).

    It packs nothing: a record's text and sentences are embedded as a batch, each as the
    model embeds it alone (``embed_packed`` is the same vectors, up to float rounding).
    """

    def __init__(self, base: Embeddings) -> None:
        self.base = base
        self.vectors: dict[str, Vector] = {}
        self.embedded = 0
        """Texts the model was asked to embed (the rest came from memory)."""

    def embed_array(self, texts: list[str]) -> Vector:
        """``texts`` as a float32 matrix, new ones embedded in one batch."""
        new = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if new:
            fresh = (
                self.base.embed_array(new)
                if isinstance(self.base, ArrayEmbeddings)
                else embed_texts(self.base, new)
            )
            self.vectors.update(zip(new, np.asarray(fresh, dtype=np.float32), strict=True))
            self.embedded += len(new)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self.vectors[t] for t in texts])

    def embed_packed(self, texts: list[str]) -> Vector:
        """A record's text and sentences (:meth:`embed_array`)."""
        return self.embed_array(texts)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Texts to store."""
        return [list(map(float, row)) for row in self.embed_array(list(texts))]

    def embed_query(self, text: str) -> list[float]:
        """A query."""
        return [float(x) for x in self.embed_array([text])[0]]


__all__ = ["MemoisedEmbeddings"]
