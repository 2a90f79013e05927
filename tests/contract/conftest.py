"""Fixtures of the store contract: an ``AgentMemory`` on every kind of store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from langchain_agentmem import AgentMemory, SentenceTransformerEmbeddings


@pytest.fixture
def mem(store_url: str, embeddings: SentenceTransformerEmbeddings) -> Iterator[AgentMemory]:
    """An AgentMemory with the real model on a fresh store of each kind."""
    memory = AgentMemory(store_url, embeddings=embeddings)
    yield memory
    memory.close()
