"""``AgentMemoryStore``: the memory as a LangGraph ``BaseStore``, and the parts it is made of."""

from langchain_agentmem.integrations.store.memory_store import AgentMemoryStore

__all__ = ["AgentMemoryStore"]
