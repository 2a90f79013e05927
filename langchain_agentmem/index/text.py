"""What the indexes see of a record: its text, optionally decorated with its date."""

from __future__ import annotations

from datetime import datetime


def date_prefix(when: datetime | None) -> str:
    """``"8 May 2023: "`` for a record's time, or ``""`` when it has none."""
    if when is None:
        return ""
    return f"{when.day} {when:%B %Y}: "
