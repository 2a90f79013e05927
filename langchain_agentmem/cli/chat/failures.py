"""How ``agentmem chat`` tells a failed model call: the error in its place, and one line for it.

:func:`model_calls` is a middleware that raises :class:`ModelCallFailed` for any error of a
model call, so the chat tells the model's failures from its own; :func:`explain` says what
went wrong in one line, and :func:`fatal` whether every later turn would fail the same way.
"""

from __future__ import annotations

from typing import Any

from langchain_agentmem.text.controls import shown


class ModelCallFailed(Exception):
    """Raised in place of any error of a model call (:func:`model_calls`), so the chat
    tells a failed model call from its own faults."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(cause)
        self.cause = cause


def fatal(exc: BaseException) -> bool:
    """Whether every later turn would fail as ``exc`` did (a refused key, an unknown model),
    so the chat ends."""
    import openai

    cause = exc.cause if isinstance(exc, ModelCallFailed) else exc
    return isinstance(
        cause, (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError)
    )


def _detail(value: object) -> str:
    """What a server or library said, as one line a terminal may show (at most 200
    characters of it: :func:`~langchain_agentmem.text.controls.shown`)."""
    return shown(" ".join(str(value).split())[:200])


def _found(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> BaseException | None:
    """The first error of ``kinds`` among ``exc`` and what caused it, or ``None``."""
    seen: set[int] = set()
    at: BaseException | None = exc
    while at is not None and id(at) not in seen:
        if isinstance(at, kinds):
            return at
        seen.add(id(at))
        at = at.__cause__ or at.__context__
    return None


def explain(
    exc: BaseException, *, base_url: str | None, model: str, started: bool = False
) -> str | None:
    """One line for a failed model call, or ``None`` when ``exc`` is not the model's
    (``started``: part of the reply had come)."""
    import httpx
    import openai

    where = base_url or "api.openai.com"
    if isinstance(exc, ModelCallFailed):
        why = explain(exc.cause, base_url=base_url, model=model, started=started)
        if why is not None:
            return why
        cause = exc.cause
        if isinstance(cause, ValueError) and "No generations" in str(cause):
            return (
                f"the model server at {where} sent an empty reply (a local server does when "
                "the conversation no longer fits its context: lower --history-tokens or "
                "--max-reply-tokens); try again"
            )
        return f"the model call failed ({type(cause).__name__}: {_detail(cause)}); try again"
    if isinstance(exc, openai.APIConnectionError):
        hung_up = _found(exc, (httpx.RemoteProtocolError, httpx.ReadError))
        exc = hung_up or exc  # it answered, then hung up
        if started and hung_up is None:
            return f"the model server at {where} dropped the connection mid-reply; try again"
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
        return (
            f"the model server at {where} dropped the connection mid-reply "
            f"({type(exc).__name__}); try again"
        )
    if isinstance(exc, openai.APITimeoutError):
        return f"the model server at {where} did not answer in time; try again or check it"
    if isinstance(exc, openai.APIConnectionError):
        return (
            f"cannot reach the model server at {where}: is it running? "
            "(set OPENAI_BASE_URL to its /v1 address)"
        )
    if isinstance(exc, httpx.TransportError):
        return f"the model call failed ({type(exc).__name__}: {_detail(exc)}); try again"
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return (
            f"the model server at {where} refused the API key ({exc.status_code}): "
            "set OPENAI_API_KEY to a valid key"
        )
    if isinstance(exc, openai.NotFoundError):
        return (
            f"the model server at {where} has no model {model!r} (404): "
            "set OPENAI_MODEL to a model it serves"
        )
    if isinstance(exc, openai.RateLimitError):
        return f"the model server at {where} is rate-limiting this key (429); wait and retry"
    if isinstance(exc, openai.APIStatusError):
        return f"the model server at {where} answered {exc.status_code}: {_detail(exc.message)}"
    if isinstance(exc, openai.OpenAIError):
        return f"the model call failed: {_detail(exc)}"
    return None


def model_calls() -> Any:
    """A middleware raising :class:`ModelCallFailed` for any error of a model call."""
    from langchain.agents.middleware.types import AgentMiddleware

    class _ModelCalls(AgentMiddleware):  # type: ignore[type-arg]
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            try:
                return handler(request)
            except Exception as exc:
                raise ModelCallFailed(exc) from exc

    return _ModelCalls()
