"""The user's chat model, from the environment (``.env`` included); never a default download."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # langchain_core takes a second to import: not for `agentmem --help`
    from langchain_core.caches import BaseCache
    from langchain_core.language_models import BaseChatModel

DEFAULT_MODEL = "gpt-4o-mini"


def load_env(path: str | os.PathLike[str] | None = None) -> None:
    """Read ``.env`` (current directory, or ``path``) into the environment; set values win."""
    from dotenv import load_dotenv

    load_dotenv(Path(path) if path else Path.cwd() / ".env", override=False)


def model_configured() -> bool:
    """Whether ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` names a model to talk to."""
    return bool(os.environ.get("OPENAI_API_KEY", "").strip()) or bool(
        os.environ.get("OPENAI_BASE_URL", "").strip()
    )


def chat_model_from_env(
    *,
    max_retries: int | None = None,
    timeout: float | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
    base_url: str | None = None,
    model: str | None = None,
    cache: BaseCache | None = None,
) -> BaseChatModel | None:
    """A ``ChatOpenAI`` for the configured OpenAI-compatible server, or ``None``.

    Reads ``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` and ``OPENAI_MODEL``. A local server
    (llama.cpp, vLLM, Ollama) needs only ``OPENAI_BASE_URL``.

    Args:
        max_retries: Retries of a failed call (``None``: the client's default); an
            interactive chat wants few, so a server that is down is reported at once.
        timeout: Seconds to wait for the server to connect or send the next part of its
            answer (``None``: the client's default, 600); an interactive chat wants less.
        max_tokens: Most tokens of one reply (``None``: the server's limit). Sent as
            ``max_completion_tokens`` and, to a server other than OpenAI's, as
            ``max_tokens`` too (what llama.cpp, vLLM and Ollama read).
        temperature: Sampling temperature (``None``: the server's default).
        base_url: The server, instead of ``OPENAI_BASE_URL``.
        model: The model's name, instead of ``OPENAI_MODEL``.
        cache: Where answers are kept and looked up (``None``: none).
    """
    if not (base_url or model_configured()):
        return None
    from langchain_openai import ChatOpenAI

    base_url = base_url or os.environ.get("OPENAI_BASE_URL", "").strip() or None
    api_key = os.environ.get("OPENAI_API_KEY", "").strip() or "not-needed"
    model = model or os.environ.get("OPENAI_MODEL", "").strip() or DEFAULT_MODEL
    extra: dict[str, Any] = {} if max_retries is None else {"max_retries": max_retries}
    if cache is not None:
        extra["cache"] = cache
    if timeout is not None:
        extra["timeout"] = timeout
    if temperature is not None:
        extra["temperature"] = temperature
    if max_tokens is not None:
        extra["max_tokens"] = max_tokens
        if base_url is not None:
            extra["extra_body"] = {"max_tokens": max_tokens}
    return ChatOpenAI(model=model, base_url=base_url, api_key=api_key, **extra)  # type: ignore[arg-type]


ANNOTATION_TOKENS = 160
"""Most tokens of one annotation answer (a JSON object of a few labels and facts)."""


def annotating_model() -> BaseChatModel | None:
    """The environment's chat model as ``AgentMemory(model=...)`` asks it: temperature 0,
    short answers, one retry, a minute at most (``None``: no model configured)."""
    return chat_model_from_env(
        max_retries=1, timeout=60, max_tokens=ANNOTATION_TOKENS, temperature=0
    )
