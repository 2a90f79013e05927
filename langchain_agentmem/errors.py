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


class MissingExtraError(AgentMemoryError, ImportError):
    """A feature needs an optional part of the package (an extra) that is not installed."""


def missing_extra(extra: str, feature: str, exc: ImportError) -> MissingExtraError:
    """The error for ``feature``, which needs the ``extra`` extra, when importing a package
    of it failed with ``exc``."""
    missing = f"{exc.name} is not installed" if exc.name else str(exc)
    return MissingExtraError(
        f"{feature} needs the {extra!r} extra ({missing}): pip install "
        f"'langchain-agentmem[{extra}]', or in a checkout of the repository: "
        f"pip install '.[{extra}]'"
    )
