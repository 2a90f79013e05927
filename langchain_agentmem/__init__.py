"""langchain-agentmem: durable memory for LangChain and LangGraph agents."""

from langchain_agentmem.embeddings import SentenceTransformerEmbeddings
from langchain_agentmem.errors import (
    AgentMemoryError,
    InvalidInputError,
    InvalidTypeError,
    RecordNotFoundError,
    StoreError,
    UnknownPolicyError,
    UnknownStoreError,
)
from langchain_agentmem.index import HybridConfig
from langchain_agentmem.integrations.chat_history import (
    BufferChatMessageHistory,
    TokenBufferChatMessageHistory,
    WindowChatMessageHistory,
)
from langchain_agentmem.integrations.classic import AgentMemoryRecall
from langchain_agentmem.integrations.graph import (
    RecallState,
    amemories_message,
    arecalled_memories,
    memories_message,
    policy_node,
    recall_node,
    recalled_memories,
    trim_removals,
    user_thread_id,
)
from langchain_agentmem.integrations.middleware import AgentMemoryMiddleware
from langchain_agentmem.integrations.prompt import MemoryFormatter, format_memories
from langchain_agentmem.integrations.retriever import AgentMemoryRetriever
from langchain_agentmem.integrations.store import AgentMemoryStore
from langchain_agentmem.integrations.tools import memory_tools
from langchain_agentmem.integrations.vectorstore import AgentMemoryVectorStore
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.policies import MemoryPolicy, available_policies
from langchain_agentmem.policies.learned import LearnedPolicy
from langchain_agentmem.types import Decision, MemoryOp, MemoryRecord, OpKind

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
