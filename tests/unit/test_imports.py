"""The public API is pinned: changes to it are deliberate."""

import langchain_agentmem

EXPECTED_ALL = [
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


def test_all_imports() -> None:
    assert sorted(langchain_agentmem.__all__) == sorted(EXPECTED_ALL)
    for name in EXPECTED_ALL:
        assert getattr(langchain_agentmem, name) is not None
