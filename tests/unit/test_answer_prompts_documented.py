"""The benchmarks page shows the answers bench's prompts as the code sends them."""

from __future__ import annotations

from pathlib import Path

from langchain_agentmem.bench.answer_rows import ANSWER_SYSTEM
from langchain_agentmem.bench.judge import JUDGE_PROMPT
from langchain_agentmem.integrations.prompt import DEFAULT_HEADER

PAGE = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"


def _words(text: str) -> str:
    return " ".join(text.split())


def test_the_benchmarks_page_quotes_every_prompt_word_for_word() -> None:
    page = _words(PAGE.read_text(encoding="utf-8"))
    for name, prompt in {
        "ANSWER_SYSTEM": ANSWER_SYSTEM,
        "JUDGE_PROMPT": JUDGE_PROMPT,
        "DEFAULT_HEADER": DEFAULT_HEADER,
    }.items():
        assert _words(prompt) in page, f"docs/benchmarks.md no longer quotes {name} as sent"
