"""The README's Python examples run as written, in order, and do what their comments say.

The blocks share one namespace, as a reader pasting them into one session would. Only what
a reader must bring is defined up front: a chat model (``llm``, a fake: its words do not
matter here), a ``prompt``, a query ``q``, a store ``url`` and a ``record_id``; the one
PostgreSQL address is pointed at the test server.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

from langchain_agentmem import AgentMemory, OpKind
from tests.fakes import RecordingChatModel

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
PG_EXAMPLE = "postgresql://user@host:5432/db"


def blocks() -> list[str]:
    return BLOCK.findall(README.read_text(encoding="utf-8"))


@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_the_readme_examples_run_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pg_url: str
) -> None:
    monkeypatch.chdir(tmp_path)
    code = blocks()
    assert len(code) >= 10 and sum(PG_EXAMPLE in b for b in code) == 1
    ns: dict[str, Any] = {
        "llm": RecordingChatModel.replying("Hello Alice."),
        "prompt": ChatPromptTemplate.from_messages(
            [MessagesPlaceholder("history"), ("human", "{question}")]
        ),
        "q": "What is my name?",
        "url": f"sqlite:///{tmp_path / 'other.db'}",
    }
    opened: list[AgentMemory] = []
    try:
        for i, block in enumerate(code, 1):
            if "record_id" in block:  # the erasure block: a record of the memory at hand
                (added,) = ns["memory"].add("Alice's passport ends 4711.", namespace="alice")
                ns["record_id"] = added.record_ids[0]
            exec(compile(block.replace(PG_EXAMPLE, pg_url), f"README block {i}", "exec"), ns)
            if isinstance(ns.get("memory"), AgentMemory) and ns["memory"] not in opened:
                opened.append(ns["memory"])
            if i == 1:  # the quick start
                assert ns["ops"][0].kind is OpKind.ADD
                assert ns["hits"][0].text == "My name is Alice and I love playing chess."
            if "graph.invoke" in block:
                texts = [r.text for r in ns["memory"].records("alice")]
                assert any("I live in Lyon." in t for t in texts)
                assert ns["store"].search(("memories", "alice"), query="what does she eat?")
        assert ns["memory"].records("alice") == []  # the last block erased the user
    finally:
        for mem in opened:
            mem.close()


def _options(parser: argparse.ArgumentParser, words: list[str]) -> set[str]:
    """The option strings of the (sub)command that ``words`` name."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and words:
            return _options(action.choices[words[0]], words[1:])
    return {s for action in parser._actions for s in action.option_strings}


def test_every_agentmem_command_line_in_the_readme_names_real_options() -> None:
    from langchain_agentmem.cli import build_parser

    text = README.read_text(encoding="utf-8")
    lines = re.findall(r"`(agentmem [^`]+)`", text)
    lines += re.findall(r"^(agentmem .+)$", text, re.M)  # in shell blocks, comments included
    parser = build_parser()
    checked = 0
    for line in lines:
        words = [w for w in line.split() if re.fullmatch(r"[a-z-]+", w)][1:]
        command = [w for w in words[:2] if not w.startswith("-")]
        if command[1:] and command[0] != "bench":
            command = command[:1]
        options = _options(parser, command)
        for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]*", line):
            assert flag in options, f"README: `{line}` uses {flag}, which agentmem {command} lacks"
            checked += 1
    assert len(lines) >= 10 and checked >= 15
