"""LangChain's standard retriever suite, unmodified, on the real model and SQLite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.retrievers import BaseRetriever
from langchain_tests.integration_tests import RetrieversIntegrationTests

from langchain_agentmem import AgentMemory, AgentMemoryRetriever, SentenceTransformerEmbeddings

FACTS = [
    "Alice moved to Lyon in 2021.",
    "Alice's dog is called Pixel.",
    "Alice works as a nurse at the city hospital.",
    "Alice is allergic to peanuts.",
    "Alice plays the cello on Sundays.",
]


class TestAgentMemoryRetrieverStandard(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _memory(self, tmp_path: Path, embeddings: SentenceTransformerEmbeddings) -> Any:
        """A store whose namespace holds a few facts (and another namespace, more)."""
        memory = AgentMemory(f"sqlite:///{tmp_path / 'r.db'}", embeddings=embeddings)
        memory.add_many(FACTS, namespace="alice", thread="t1")
        memory.add_many(["Bob lives in Oslo.", "Bob's cat is Mo."], namespace="bob")
        self.memory = memory
        yield
        memory.close()

    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return AgentMemoryRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"memory": self.memory, "namespace": "alice"}

    @property
    def retriever_query_example(self) -> str:
        return "Where does Alice live?"
