"""Exceptions raised by langchain-agentmem.

Every error names the offending value and says what to do instead. Input errors
subclass ``ValueError`` or ``TypeError`` so callers can catch them generically.
"""

from __future__ import annotations


class AgentMemoryError(Exception):
    """Base class of every error raised by this package."""


class InvalidInputError(AgentMemoryError, ValueError):
    """A value has the right type but is not acceptable (empty text, k < 1, ...)."""


class InvalidTypeError(AgentMemoryError, TypeError):
    """A value has the wrong type (text that is not a string, ...)."""


class UnknownStoreError(InvalidInputError):
    """The store URL names a scheme this package cannot open."""


class UnknownPolicyError(InvalidInputError):
    """The policy name is not one of the registered policies."""


class RecordNotFoundError(AgentMemoryError, KeyError):
    """No record with this id exists (in this namespace)."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable.
        return str(self.args[0]) if self.args else "record not found"


class StoreError(AgentMemoryError, RuntimeError):
    """The backing store is unusable (wrong schema version, closed, ...)."""
