"""Policies by name."""

from __future__ import annotations

from collections.abc import Callable

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError, UnknownPolicyError
from langchain_agentmem.policies.base import MemoryPolicy
from langchain_agentmem.policies.heuristics import (
    FifoPolicy,
    ForgettingCurvePolicy,
    ImportancePolicy,
    KeepAllPolicy,
    LruPolicy,
    NoveltyPolicy,
    RandomPolicy,
)
from langchain_agentmem.policies.learned import LearnedPolicy


def _learned(capacity: int | None) -> MemoryPolicy:
    return LearnedPolicy(capacity)


_REGISTRY: dict[str, Callable[[int | None], MemoryPolicy]] = {
    "keep_all": KeepAllPolicy,
    "fifo": FifoPolicy,
    "lru": LruPolicy,
    "random": RandomPolicy,
    "importance": ImportancePolicy,
    "novelty": NoveltyPolicy,
    "forgetting_curve": ForgettingCurvePolicy,
    "learned": _learned,
}


def available_policies() -> list[str]:
    """Names accepted by ``AgentMemory(policy=...)``."""
    return sorted(_REGISTRY)


def check_capacity(capacity: object) -> int | None:
    """Validate a capacity: ``None`` or an int >= 1."""
    if capacity is None:
        return None
    if isinstance(capacity, bool) or not isinstance(capacity, int):
        raise InvalidTypeError(
            f"capacity must be an int >= 1 or None, got {type(capacity).__name__} {capacity!r}"
        )
    if capacity < 1:
        raise InvalidInputError(
            f"capacity must be >= 1, got {capacity}; pass the most records to keep, or None"
        )
    return capacity


def make_policy(policy: str | MemoryPolicy, capacity: int | None = None) -> MemoryPolicy:
    """Build a policy from a name (or pass a policy object through)."""
    capacity = check_capacity(capacity)
    if isinstance(policy, MemoryPolicy):
        if capacity is not None and policy.capacity != capacity:
            raise InvalidInputError(
                f"capacity={capacity} conflicts with the policy object's capacity "
                f"{policy.capacity}; set it on the policy only"
            )
        return policy
    if not isinstance(policy, str):
        raise InvalidTypeError(
            f"policy must be a name or a MemoryPolicy, got {type(policy).__name__}"
        )
    try:
        factory = _REGISTRY[policy]
    except KeyError:
        raise UnknownPolicyError(
            f"unknown policy {policy!r}; choose one of {', '.join(available_policies())}"
        ) from None
    return factory(capacity)
