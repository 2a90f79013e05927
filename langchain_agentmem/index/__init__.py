"""Search indexes: caches of the store, always rebuildable from it."""

from langchain_agentmem.index.dense import DenseIndex
from langchain_agentmem.index.hybrid import SEARCH_MODES, HybridConfig, check_mode, hybrid_search
from langchain_agentmem.index.lexical import LexicalIndex, tokenize
from langchain_agentmem.index.text import lexical_counts, lexical_text
from langchain_agentmem.index.threads import ThreadOrder

__all__ = [
    "SEARCH_MODES",
    "DenseIndex",
    "HybridConfig",
    "LexicalIndex",
    "ThreadOrder",
    "check_mode",
    "hybrid_search",
    "lexical_counts",
    "lexical_text",
    "tokenize",
]
