"""The SQL backends' shared table layout: schema version, record columns, erasure markers.

``RECORD_COLUMNS`` and :func:`row_to_record` read a record row back; ``LIVE`` hides expired
records. The tables themselves (DDL and migrations) are each backend's, in its dialect.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from langchain_agentmem.backends.base import RecordRow
from langchain_agentmem.backends.encoding import from_blob
from langchain_agentmem.validation import STORE_MARK

SCHEMA_VERSION = 6
"""1: ids unique across the store. 2: ids unique per namespace; records may expire. 3: which
process annotates a record (``agentmem_claims``). 4: the log entries that still hold a text
indexed apart (forgetting a record reads those, not the namespace's whole log). 5: each such
entry names the record whose text it holds (``text_of``, indexed: forgetting a record finds
its entries by lookup), and records are indexed by thread (its reply copies, likewise).
6: each record keeps the terms the lexical index reads of its text (``terms``, written with
the text; ``NULL`` in rows written before: read from their text)."""

RECORD_COLUMNS = (
    "rid, id, namespace, thread, text, metadata, embedding, created_at, updated_at, "
    "last_accessed_at, access_count, expires_at, terms"
)
LIVE = "(expires_at IS NULL OR expires_at > ?)"
"""The condition every read puts on records: expired ones are invisible at once."""
ERASE_KIND = "ERASE"
"""Kind of the change-log entry that marks a namespace as erased (see :func:`erase_marker`)."""


def erase_marker(namespace: str) -> str:
    """The namespace column of a namespace's erasure markers: a digest, not the name.

    It starts with two :data:`~langchain_agentmem.validation.STORE_MARK` characters: no
    caller's namespace may start with one, and a store's start with one and then its prefix,
    which never holds the mark, so no namespace anyone can write to shares it.
    """
    return 2 * STORE_MARK + "erased:" + hashlib.sha256(namespace.encode("utf-8")).hexdigest()


def legacy_erase_marker(namespace: str) -> str:
    """The marker namespace of earlier releases, which a user could spell: only its ERASE
    entries are read (and never deleted by another namespace's erasure)."""
    return "erased:" + hashlib.sha256(namespace.encode("utf-8")).hexdigest()


def row_to_record(row: Sequence[Any]) -> RecordRow:
    """Build a :class:`RecordRow` from a row selected with ``RECORD_COLUMNS``."""
    # Positional, in the order of RecordRow's fields: a namespace's load builds one a record,
    # and keywords cost a third more.
    return RecordRow(
        int(row[0]),
        row[1],
        row[2],
        row[3],
        row[4],
        json.loads(row[5]),
        from_blob(row[6]),
        float(row[7]),
        float(row[8]),
        None if row[9] is None else float(row[9]),
        int(row[10]),
        None if row[11] is None else float(row[11]),
        row[12],
    )
