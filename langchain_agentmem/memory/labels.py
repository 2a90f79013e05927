"""The label and attribute-name embeddings a memory keeps: searches match a query's labels
with them, the annotator compares attribute names with them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_agentmem.embedding.embeddings import aembed_records, embed_records
from langchain_agentmem.types import Vector

MAX_LABEL_VECTORS = 50_000
"""Most label and attribute-name embeddings a memory keeps."""


class LabelVectors:
    """Embeddings of label and attribute names, by name (bounded: cleared when full)."""

    def __init__(self, embeddings: Embeddings, most: int = MAX_LABEL_VECTORS) -> None:
        self._embeddings = embeddings
        self._most = most
        self._vectors: dict[str, Vector] = {}

    @property
    def vectors(self) -> Mapping[str, Vector]:
        """The embeddings held, by name."""
        return self._vectors

    def unknown(self, names: Sequence[str]) -> list[str]:
        """Those of ``names`` not embedded yet, each once, in order."""
        return [name for name in dict.fromkeys(names) if name not in self._vectors]

    def remember(self, names: Sequence[str], vectors: np.ndarray) -> None:
        """Keep the embeddings of ``names`` (all dropped first when they would not fit)."""
        if len(self._vectors) + len(names) > self._most:
            self._vectors.clear()
        self._vectors.update(zip(names, np.asarray(vectors, dtype=np.float32), strict=True))

    def embed(self, names: Sequence[str]) -> None:
        """Embed those of ``names`` not embedded yet."""
        if missing := self.unknown(names):
            self.remember(missing, embed_records(self._embeddings, missing))

    async def aembed(self, names: Sequence[str]) -> None:
        """Async :meth:`embed`."""
        if missing := self.unknown(names):
            self.remember(missing, await aembed_records(self._embeddings, missing))
