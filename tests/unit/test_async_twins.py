"""Every method of ``AgentMemory`` has an async twin that takes the same parameters."""

from __future__ import annotations

import inspect

from langchain_core.messages import HumanMessage

from langchain_agentmem import AgentMemory

NO_TWIN = {"close", "on_close", "cache_info", "save_indexes", "admin_find_record", "now"}
"""Lifecycle and cache housekeeping (local, called once), an administrator's lookup
across namespaces that no request path of an app should make, and reading the memory's clock
(no I/O)."""


def _public_methods() -> dict[str, object]:
    return {
        name: member
        for name, member in inspect.getmembers(AgentMemory, inspect.isfunction)
        if not name.startswith("_")
    }


def _is_async(method: object) -> bool:
    """A coroutine function, or an async context manager's (``async with``)."""
    return inspect.iscoroutinefunction(method) or inspect.isasyncgenfunction(
        inspect.unwrap(method)  # type: ignore[arg-type]
    )


def test_every_method_has_an_async_twin() -> None:
    methods = _public_methods()
    sync = {n for n, m in methods.items() if not _is_async(m)}
    missing = sorted(n for n in sync - NO_TWIN if f"a{n}" not in methods)
    assert not missing, f"no async twin: {missing}"
    for name in sync - NO_TWIN:
        assert _is_async(methods[f"a{name}"]), name


def test_twins_take_the_same_parameters() -> None:
    methods = _public_methods()
    for name, method in methods.items():
        twin = methods.get(f"a{name}")
        if twin is None or _is_async(method):
            continue
        ours, theirs = inspect.signature(method), inspect.signature(twin)  # type: ignore[arg-type]
        assert list(ours.parameters.values()) == list(theirs.parameters.values()), name


async def test_the_new_twins_do_what_their_sync_methods_do() -> None:
    memory = AgentMemory(":memory:")
    vector = memory.embeddings.embed_query("Ana lives in Porto.")
    await memory.aput("home", "Ana lives in Porto.", namespace="ana", embedding=vector)
    hit = memory.search_by_vector(vector, namespace="ana", k=1)[0]
    assert hit.id == "home" and hit.score > 0.999
    assert await memory.anamespaces() == memory.namespaces() == ["ana"]
    assert await memory.aset_expiry(["home"], namespace="ana", ttl=60) == ["home"]
    assert memory.get("home", namespace="ana").expires_at is not None
    memory.add_messages([HumanMessage("Hi")], namespace="ana", thread="t1")
    assert await memory.athreads("ana") == memory.threads("ana") == ["t1"]
