"""Fixtures of the store contract: an ``AgentMemory`` on every kind of store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from langchain_agentmem import AgentMemory, AgentMemoryStore, SentenceTransformerEmbeddings
from tests.contract.store_parts import EMB


@pytest.fixture
def mem(store_url: str, embeddings: SentenceTransformerEmbeddings) -> Iterator[AgentMemory]:
    """An AgentMemory with the real model on a fresh store of each kind."""
    memory = AgentMemory(store_url, embeddings=embeddings)
    yield memory
    memory.close()


@pytest.fixture
def memory(store_url: str) -> Iterator[AgentMemory]:
    """An AgentMemory with a hash embedder on a fresh store of each kind (the store
    contract is about the store, not the model)."""
    with AgentMemory(store_url, embeddings=EMB) as mem:
        yield mem


@pytest.fixture
def store(memory: AgentMemory) -> Iterator[AgentMemoryStore]:
    """An ``AgentMemoryStore`` over :func:`memory`."""
    with AgentMemoryStore(memory) as st:
        yield st
