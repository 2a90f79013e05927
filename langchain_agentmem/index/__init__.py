"""Search indexes: caches of the store, always rebuildable from it."""

from langchain_agentmem.index.dense import DenseIndex
from langchain_agentmem.index.hybrid import SEARCH_MODES, check_mode, fuse
from langchain_agentmem.index.lexical import LexicalIndex, tokenize

__all__ = ["SEARCH_MODES", "DenseIndex", "LexicalIndex", "check_mode", "fuse", "tokenize"]
