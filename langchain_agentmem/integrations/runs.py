"""Whose a run is, for the adapters on LangGraph and ``create_agent``.

The user (namespace) comes from ``config["configurable"]`` or the run context, or on a
LangGraph server with authentication from the authenticated identity; the conversation
from LangGraph's ``thread_id``. :func:`user_thread_id` scopes a checkpoint thread id by
user, so no two users share one; :func:`check_memory` checks the memory an adapter is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from langgraph.runtime import get_runtime

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.validation import check_name, check_namespace


def check_memory(memory: object) -> AgentMemory:
    """``memory`` if it is an ``AgentMemory``, else a clear error."""
    if not isinstance(memory, AgentMemory):
        raise InvalidTypeError(
            f"memory must be an AgentMemory, got {type(memory).__name__}; pass AgentMemory(url)"
        )
    return memory


AUTH_USER_KEY = "langgraph_auth_user_id"
"""The ``configurable`` key where a LangGraph server puts the authenticated user's id."""


def user_namespace(
    config: Mapping[str, Any] | None, user_key: str, *, context: object = None
) -> str:
    """The namespace of the user a run belongs to.

    On a LangGraph server with authentication, the user is the authenticated identity
    (``configurable["langgraph_auth_user_id"]``), which clients cannot set; a
    ``user_key`` value that names someone else is refused. Otherwise it is read from
    ``config["configurable"][user_key]``, else from the run context (a mapping or an
    object with that attribute). Both present and different is an error: memory is never
    written to a namespace the caller did not mean.

    Raises:
        InvalidInputError: no user id anywhere, or two that disagree.
    """
    configurable = (config or {}).get("configurable") or {}
    from_config = configurable.get(user_key)
    if isinstance(context, Mapping):
        from_context = context.get(user_key)
    else:
        from_context = getattr(context, user_key, None)
    if from_config is not None and from_context is not None and from_config != from_context:
        raise InvalidInputError(
            f"the run names two users: configurable[{user_key!r}]={from_config!r} and "
            f"context.{user_key}={from_context!r}; pass one"
        )
    user = from_config if from_config is not None else from_context
    authenticated = configurable.get(AUTH_USER_KEY)
    if authenticated:
        if user is not None and user != authenticated:
            raise InvalidInputError(
                f"the run names user {user!r} but the authenticated user is "
                f"{authenticated!r}; on a LangGraph server memory belongs to the "
                "authenticated user, leave the user id out of the config"
            )
        return check_namespace(authenticated, what=f"configurable[{AUTH_USER_KEY!r}]")
    if user is None:
        raise InvalidInputError(
            f"no user id in the run config or context: pass config={{'configurable': "
            f"{{{user_key!r}: 'alice', 'thread_id': 't1'}}}} or the run context "
            f"context={{{user_key!r}: 'alice'}} (memory is per user; it is never shared by "
            "default)"
        )
    where = f"configurable[{user_key!r}]" if from_config is not None else f"context.{user_key}"
    return check_namespace(user, what=where)


def run_context() -> object:
    """The context of the LangGraph run this is called in (``invoke(..., context=...)``);
    ``None`` outside a graph run or when the run has none.

    LangGraph hands it to a node as ``runtime.context``; nodes built as runnables (those of
    this module) read it from the run (``langgraph.runtime.get_runtime``), sync or async.
    """
    try:
        runtime = get_runtime()
    except (RuntimeError, KeyError):  # outside a runnable, or a config without configurable
        return None
    return getattr(runtime, "context", None)


def user_thread_id(user: str, thread: str) -> str:
    """A LangGraph ``thread_id`` for ``thread`` of ``user`` that no other pair shares.

    LangGraph keys checkpoints by ``thread_id`` alone; both parts are percent-encoded
    before they are joined, so ``("a/b", "c")`` and ``("a", "b/c")`` never collide.
    """
    thread = check_name(thread, what="thread")
    return f"{user_threads_prefix(user)}{quote(thread, safe='')}"


def user_threads_prefix(user: str) -> str:
    """What every :func:`user_thread_id` of ``user`` starts with, and no other user's does."""
    return f"{quote(check_name(user, what='user'), safe='')}/"


def run_thread(config: Mapping[str, Any] | None) -> str | None:
    """LangGraph's ``thread_id`` of a run, if any."""
    thread = ((config or {}).get("configurable") or {}).get("thread_id")
    return None if thread is None else check_name(str(thread), what="thread_id")
