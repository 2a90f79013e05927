"""LangChain's standard vector store suite, unmodified, on a real SQLite store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.vectorstores import VectorStore
from langchain_tests.integration_tests import VectorStoreIntegrationTests

from langchain_agentmem import AgentMemory, AgentMemoryVectorStore


class TestAgentMemoryVectorStoreStandard(VectorStoreIntegrationTests):
    @pytest.fixture
    def vectorstore(self, tmp_path: Path) -> Iterator[VectorStore]:  # type: ignore[override]
        """An empty namespace of a fresh SQLite store, with the suite's fake embedding.

        Another namespace of the same store holds records, so every test also checks
        that nothing leaks across namespaces.
        """
        memory = AgentMemory(f"sqlite:///{tmp_path / 'vs.db'}", embeddings=self.get_embeddings())
        AgentMemoryVectorStore(memory, namespace="neighbour").add_texts(
            ["foo", "bar", "baz"], ids=["n1", "n2", "n3"]
        )
        yield AgentMemoryVectorStore(memory, namespace="suite")
        memory.close()
