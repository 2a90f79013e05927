"""Budgets: the share of a conversation's turns a memory may hold."""

from __future__ import annotations

from langchain_agentmem.errors import InvalidInputError


def check_budget(budget: object) -> float:
    """A budget: the share of a conversation's turns memory may hold, in (0, 1]."""
    if isinstance(budget, bool) or not isinstance(budget, (int, float)):
        raise InvalidInputError(f"budget must be a number in (0, 1], got {budget!r}")
    value = float(budget)
    if not 0.0 < value <= 1.0:
        raise InvalidInputError(
            f"budget must be in (0, 1] (the share of turns memory may hold), got {budget!r}; "
            "for example 0.1 keeps a tenth of the turns"
        )
    return value


def capacity_for(budget: float, n_turns: int) -> int:
    """Records a conversation of ``n_turns`` may keep under ``budget`` (at least 1)."""
    return max(1, round(check_budget(budget) * n_turns))


def parse_budgets(raw: str) -> list[float]:
    """``"0.1,0.25"`` -> ``[0.1, 0.25]``, each checked to be in (0, 1]."""
    out: list[float] = []
    for part in str(raw).split(","):
        try:
            value = float(part)
        except ValueError:
            raise InvalidInputError(
                f"budget {part.strip()!r} is not a number; pass shares of turns such as 0.1,0.25"
            ) from None
        out.append(check_budget(value))
    return out
