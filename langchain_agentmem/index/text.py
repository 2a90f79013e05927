"""What the lexical index sees of a record (never what search returns as ``.text``)."""

from __future__ import annotations

from datetime import datetime, timezone


def lexical_text(text: str, created_at: float | None, *, dates: bool) -> str:
    """The record text, with its date in front when ``dates`` (``"[8 May 2023] ..."``).

    The date (UTC, from the record's timestamp) lets BM25 match questions that name a month
    or a year, and evens out BM25's length normalisation across short turns.
    """
    if not dates or created_at is None:
        return text
    day = datetime.fromtimestamp(created_at, tz=timezone.utc)
    return f"[{day.day} {day:%B %Y}] {text}"
