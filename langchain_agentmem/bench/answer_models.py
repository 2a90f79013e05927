"""The chat models of the answers bench: the one that answers, the one that judges, and
what their server says of its context size."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_agentmem.bench.answer_cache import AnswerCache
from langchain_agentmem.bench.answer_rows import ANSWER_TOKENS
from langchain_agentmem.bench.judge import JUDGE_TOKENS
from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.models import DEFAULT_MODEL, chat_model_from_env

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


def model_name(model: str | None) -> str:
    """The model asked: ``model``, else ``OPENAI_MODEL``, else the package's default."""
    return model or os.environ.get("OPENAI_MODEL", "").strip() or DEFAULT_MODEL


def server_url(url: str | None) -> str | None:
    """The server asked: ``url``, else ``OPENAI_BASE_URL`` (``None``: OpenAI's)."""
    return url or os.environ.get("OPENAI_BASE_URL", "").strip() or None


def bench_model(
    url: str | None, model: str | None, cache: str | Path, *, max_tokens: int
) -> BaseChatModel:
    """A chat model at ``url`` (OpenAI protocol) answering at temperature 0, at most
    ``max_tokens`` a reply, every answer kept in ``cache`` (keyed by the server too).

    Raises:
        InvalidInputError: no server named (neither ``url`` nor ``OPENAI_BASE_URL`` /
            ``OPENAI_API_KEY``).
    """
    base = server_url(url)
    name = model_name(model)
    built = chat_model_from_env(
        base_url=base,
        model=name,
        temperature=0,
        max_tokens=max_tokens,
        max_retries=2,
        timeout=600,
        cache=AnswerCache(cache, scope=base or "openai"),
    )
    if built is None:
        raise InvalidInputError(
            "no chat model to ask: pass --model-url http://host:port/v1 (any "
            "OpenAI-compatible server) or set OPENAI_BASE_URL / OPENAI_API_KEY"
        )
    return built


def bench_models(
    url: str | None,
    model: str | None,
    judge_url: str | None,
    judge_model: str | None,
    cache: str | Path | None,
) -> tuple[Path, BaseChatModel, BaseChatModel | None]:
    """The answers cache (default ``$AGENTMEM_HOME/cache/answers.jsonl``), the model that
    answers and the judge (``None`` without ``judge_model``), as the bench flags name them."""
    from langchain_agentmem.rl.data import cache_dir

    path = Path(cache) if cache else cache_dir() / "answers.jsonl"
    answering = answering_model(url, model, path)
    judge = judging_model(judge_url or url, judge_model, path) if judge_model else None
    return path, answering, judge


def answering_model(url: str | None, model: str | None, cache: str | Path) -> BaseChatModel:
    """The model that answers (:func:`bench_model`, short answers)."""
    return bench_model(url, model, cache, max_tokens=ANSWER_TOKENS)


def judging_model(url: str | None, model: str | None, cache: str | Path) -> BaseChatModel:
    """The model that judges (:func:`bench_model`, a one-word reply)."""
    return bench_model(url, model, cache, max_tokens=JUDGE_TOKENS)


_CONTEXT_KEYS = ("max_model_len", "context_length", "context_window", "n_ctx", "max_context")


def _context_in(value: Any) -> int | None:
    """The first context size found in a JSON answer (depth first)."""
    if isinstance(value, dict):
        for key in _CONTEXT_KEYS:
            found = value.get(key)
            if isinstance(found, int) and not isinstance(found, bool) and found > 0:
                return found
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            found = _context_in(item)
            if found is not None:
                return found
    return None


def _get(url: str) -> Any:
    key = os.environ.get("OPENAI_API_KEY", "").strip()
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key or 'none'}"})
    with urllib.request.urlopen(request, timeout=10) as answer:  # the user's own server
        return json.loads(answer.read().decode("utf-8"))


def server_context(url: str | None) -> int | None:
    """The context size (tokens) the server at ``url`` reports, if it does.

    Read from its model list (vLLM: ``max_model_len``; others: ``context_length``,
    ``n_ctx`` ...), then from llama.cpp's ``/props``; ``None`` when neither says.
    """
    if url is None:
        return None
    base = url.rstrip("/")
    root = base.removesuffix("/v1")
    for address in (f"{base}/models", f"{root}/props"):
        try:
            found = _context_in(_get(address))
        except (OSError, ValueError, urllib.error.URLError):
            continue
        if found is not None:
            return found
    return None


__all__ = [
    "answering_model",
    "bench_model",
    "bench_models",
    "judging_model",
    "model_name",
    "server_context",
    "server_url",
]
