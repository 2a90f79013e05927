"""Where memory lives: the store is the single source of truth."""

from langchain_agentmem.backends.base import Backend, RecordRow, Transaction
from langchain_agentmem.backends.open import open_backend
from langchain_agentmem.backends.url import default_store_url

__all__ = ["Backend", "RecordRow", "Transaction", "default_store_url", "open_backend"]
