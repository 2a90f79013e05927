"""Search indexes: caches of the store, always rebuildable from it."""

from langchain_agentmem.index.dense import DenseIndex
from langchain_agentmem.index.lexical import LexicalIndex, tokenize
from langchain_agentmem.index.text import lexical_counts, lexical_text
from langchain_agentmem.index.threads import ThreadOrder

__all__ = [
    "DenseIndex",
    "LexicalIndex",
    "ThreadOrder",
    "lexical_counts",
    "lexical_text",
    "tokenize",
]
