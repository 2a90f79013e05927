"""How search ranks records: the tuned values, the query, the stages of a hybrid search.

Above :mod:`langchain_agentmem.index` (the indexes it reads), below the namespace view.
"""

from langchain_agentmem.ranking.config import HybridConfig, sources
from langchain_agentmem.ranking.query import Query, query_of
from langchain_agentmem.ranking.search import SEARCH_MODES, check_mode, hybrid_search

__all__ = [
    "SEARCH_MODES",
    "HybridConfig",
    "Query",
    "check_mode",
    "hybrid_search",
    "query_of",
    "sources",
]
