"""Adapters from LangChain and LangGraph abstractions to ``AgentMemory``."""
