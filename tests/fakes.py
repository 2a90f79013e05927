"""Test doubles used where the LLM's words do not matter.

``RecordingChatModel`` is LangChain's ``GenericFakeChatModel`` that also keeps every
prompt it receives, so a test can check what a chain actually sent to the model
(the remembered history, the recalled memories). It works through ``invoke``,
``ainvoke``, ``stream`` and ``astream`` (all of them go through ``_generate``).

Usage:
    .. code-block:: python

        from tests.fakes import RecordingChatModel

        llm = RecordingChatModel.replying("Nice to meet you.", "You are Alice.")
        chain.invoke(...)
        assert "Alice" in llm.prompt_text(-1)
"""

from __future__ import annotations

import itertools
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, get_buffer_string
from langchain_core.outputs import ChatResult
from pydantic import Field


class RecordingChatModel(GenericFakeChatModel):
    """A fake chat model that records each prompt (the list of messages it was sent)."""

    prompts: list[list[BaseMessage]] = Field(default_factory=list)
    """Every prompt received, oldest first."""

    @classmethod
    def replying(cls, *replies: str | AIMessage) -> RecordingChatModel:
        """A model that answers with ``replies`` in turn, cycling (default: ``"OK."``)."""
        return cls(messages=itertools.cycle(replies or ("OK.",)))

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.prompts.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)

    def bind_tools(self, tools: Any, **kwargs: Any) -> RecordingChatModel:  # type: ignore[override]
        """Tools change nothing: the scripted replies carry any tool calls."""
        return self

    def prompt_text(self, index: int = -1) -> str:
        """The prompt number ``index`` as one string ("Human: ...", "AI: ...", ...)."""
        return get_buffer_string(self.prompts[index])
