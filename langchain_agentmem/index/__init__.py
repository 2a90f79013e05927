"""Search indexes: caches of the store, always rebuildable from it."""

from langchain_agentmem.index.dense import DenseIndex

__all__ = ["DenseIndex"]
