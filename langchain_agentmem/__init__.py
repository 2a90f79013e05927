"""langchain-agentmem: durable memory for LangChain and LangGraph agents.

The names below load on first use (PEP 562), so ``agentmem --help`` and a script that
needs one class do not import every integration (and torch) up front.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_agentmem.embedding.embeddings import SentenceTransformerEmbeddings
    from langchain_agentmem.embedding.quantized import QuantizedEmbeddings
    from langchain_agentmem.errors import (
        AgentMemoryError,
        InvalidInputError,
        InvalidTypeError,
        RecordNotFoundError,
        StoreError,
        UnknownPolicyError,
        UnknownStoreError,
    )
    from langchain_agentmem.integrations.chat_history import (
        BufferChatMessageHistory,
        TokenBufferChatMessageHistory,
        WindowChatMessageHistory,
    )
    from langchain_agentmem.integrations.classic import AgentMemoryRecall
    from langchain_agentmem.integrations.graph import RecallState, policy_node, recall_node
    from langchain_agentmem.integrations.middleware import AgentMemoryMiddleware
    from langchain_agentmem.integrations.prompt import MemoryFormatter, format_memories
    from langchain_agentmem.integrations.recalled import (
        amemories_message,
        arecalled_memories,
        memories_message,
        recalled_memories,
    )
    from langchain_agentmem.integrations.retriever import AgentMemoryRetriever
    from langchain_agentmem.integrations.runs import user_thread_id
    from langchain_agentmem.integrations.store.memory_store import AgentMemoryStore
    from langchain_agentmem.integrations.tools import memory_tools
    from langchain_agentmem.integrations.turns import trim_removals
    from langchain_agentmem.integrations.vectorstore import AgentMemoryVectorStore
    from langchain_agentmem.memory import AgentMemory
    from langchain_agentmem.policies import MemoryPolicy, available_policies
    from langchain_agentmem.policies.learned import LearnedPolicy
    from langchain_agentmem.ranking import HybridConfig
    from langchain_agentmem.types import Decision, MemoryOp, MemoryRecord, OpKind

_WHERE = {
    "SentenceTransformerEmbeddings": "langchain_agentmem.embedding.embeddings",
    "QuantizedEmbeddings": "langchain_agentmem.embedding.quantized",
    "AgentMemoryError": "langchain_agentmem.errors",
    "InvalidInputError": "langchain_agentmem.errors",
    "InvalidTypeError": "langchain_agentmem.errors",
    "RecordNotFoundError": "langchain_agentmem.errors",
    "StoreError": "langchain_agentmem.errors",
    "UnknownPolicyError": "langchain_agentmem.errors",
    "UnknownStoreError": "langchain_agentmem.errors",
    "HybridConfig": "langchain_agentmem.ranking",
    "BufferChatMessageHistory": "langchain_agentmem.integrations.chat_history",
    "TokenBufferChatMessageHistory": "langchain_agentmem.integrations.chat_history",
    "WindowChatMessageHistory": "langchain_agentmem.integrations.chat_history",
    "AgentMemoryRecall": "langchain_agentmem.integrations.classic",
    "RecallState": "langchain_agentmem.integrations.graph",
    "policy_node": "langchain_agentmem.integrations.graph",
    "recall_node": "langchain_agentmem.integrations.graph",
    "AgentMemoryMiddleware": "langchain_agentmem.integrations.middleware",
    "MemoryFormatter": "langchain_agentmem.integrations.prompt",
    "format_memories": "langchain_agentmem.integrations.prompt",
    "amemories_message": "langchain_agentmem.integrations.recalled",
    "arecalled_memories": "langchain_agentmem.integrations.recalled",
    "memories_message": "langchain_agentmem.integrations.recalled",
    "recalled_memories": "langchain_agentmem.integrations.recalled",
    "AgentMemoryRetriever": "langchain_agentmem.integrations.retriever",
    "user_thread_id": "langchain_agentmem.integrations.runs",
    "AgentMemoryStore": "langchain_agentmem.integrations.store.memory_store",
    "memory_tools": "langchain_agentmem.integrations.tools",
    "trim_removals": "langchain_agentmem.integrations.turns",
    "AgentMemoryVectorStore": "langchain_agentmem.integrations.vectorstore",
    "AgentMemory": "langchain_agentmem.memory",
    "MemoryPolicy": "langchain_agentmem.policies",
    "available_policies": "langchain_agentmem.policies",
    "LearnedPolicy": "langchain_agentmem.policies.learned",
    "Decision": "langchain_agentmem.types",
    "MemoryOp": "langchain_agentmem.types",
    "MemoryRecord": "langchain_agentmem.types",
    "OpKind": "langchain_agentmem.types",
}
"""The module each public name lives in."""

__all__ = [
    "AgentMemory",
    "AgentMemoryError",
    "AgentMemoryMiddleware",
    "AgentMemoryRecall",
    "AgentMemoryRetriever",
    "AgentMemoryStore",
    "AgentMemoryVectorStore",
    "BufferChatMessageHistory",
    "Decision",
    "HybridConfig",
    "InvalidInputError",
    "InvalidTypeError",
    "LearnedPolicy",
    "MemoryFormatter",
    "MemoryOp",
    "MemoryPolicy",
    "MemoryRecord",
    "OpKind",
    "QuantizedEmbeddings",
    "RecallState",
    "RecordNotFoundError",
    "SentenceTransformerEmbeddings",
    "StoreError",
    "TokenBufferChatMessageHistory",
    "UnknownPolicyError",
    "UnknownStoreError",
    "WindowChatMessageHistory",
    "amemories_message",
    "arecalled_memories",
    "available_policies",
    "format_memories",
    "memories_message",
    "memory_tools",
    "policy_node",
    "recall_node",
    "recalled_memories",
    "trim_removals",
    "user_thread_id",
]

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use."""
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
