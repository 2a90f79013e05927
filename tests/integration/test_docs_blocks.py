"""Every Python block of the README and the docs runs as written, in order, file by file.

Each file's blocks run one after another in one fresh Python process, in an empty folder,
with nothing defined beforehand: what a reader pasting them in order would have. The chat
model is a local server speaking the OpenAI protocol, reached as a reader's code reaches
theirs: through ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` / ``OPENAI_MODEL``. A block
preceded by ``<!-- not run: REASON -->`` is left out (three at most).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.openai_server import ScriptedOpenAIServer, scripted_notes

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOC_FILES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
NOT_RUN = re.compile(r"<!-- not run: [^>]+ -->\s*\Z")
PG_URL = "postgresql://postgres@127.0.0.1:5432/test"

DRIVER = """
import json, sys
blocks = json.load(open(sys.argv[1], encoding="utf-8"))
namespace = {"__name__": "__main__"}
for name, code in blocks:
    print(f"--- {name}", flush=True)
    exec(compile(code, name, "exec"), namespace)
"""


DOC_FACTS = {
    "I live in Lyon and I'm vegetarian.": {
        "about": ["home city", "diet"],
        "facts": {"home city": "Lyon", "diet": "vegetarian"},
    },
    "I moved to Porto last month.": {"about": ["home city"], "facts": {"home city": "Porto"}},
}
"""What the scripted model notes of the statements the docs annotate."""


_notes = scripted_notes(DOC_FACTS)
"""What the scripted model notes of a statement the docs store, and which it replaces."""


def python_blocks(path: Path) -> tuple[list[tuple[int, str]], int]:
    """The blocks of ``path`` to run (line, code), and how many are marked not run."""
    text = path.read_text(encoding="utf-8")
    run: list[tuple[int, str]] = []
    skipped = 0
    for match in BLOCK.finditer(text):
        if NOT_RUN.search(text[: match.start()]):
            skipped += 1
        else:
            run.append((text.count("\n", 0, match.start()) + 2, match.group(1)))
    return run, skipped


FILES_WITH_BLOCKS = [p for p in DOC_FILES if python_blocks(p)[0]]


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_the_front_door() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150
    assert any(line.startswith("pip install") for line in lines[:60])
    counts = [python_blocks(p) for p in DOC_FILES]
    assert sum(len(run) for run, _ in counts) >= 12
    assert sum(skipped for _, skipped in counts) <= 3
    assert (ROOT / "docs" / "getting-started.md").exists()


def _postgres_up() -> bool:
    import psycopg

    try:
        psycopg.connect(PG_URL, connect_timeout=3).close()
    except psycopg.OperationalError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize("path", FILES_WITH_BLOCKS, ids=_name)
def test_the_python_blocks_run_as_written(path: Path, tmp_path: Path) -> None:
    run, _ = python_blocks(path)
    if any(PG_URL in code for _, code in run) and not _postgres_up():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{_name(path)} needs PostgreSQL at {PG_URL}, which is down")
        pytest.skip(f"{_name(path)} needs PostgreSQL at {PG_URL}")
    work = tmp_path / "work"
    work.mkdir()
    blocks = tmp_path / "blocks.json"
    blocks.write_text(
        json.dumps([(f"{_name(path)}, block at line {line}", code) for line, code in run]),
        encoding="utf-8",
    )
    with ScriptedOpenAIServer(default="You live in Lyon.", annotate=_notes) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        env |= {
            "OPENAI_BASE_URL": server.url,
            "OPENAI_API_KEY": "test",
            "OPENAI_MODEL": "scripted",
            "AGENTMEM_HOME": str(tmp_path / "home"),
            "PYTHONWARNINGS": "ignore::DeprecationWarning",
        }
        done = subprocess.run(
            [sys.executable, "-c", DRIVER, str(blocks)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
        if path == README:  # the quickstart's second thread was told the first one's words
            asked = [i for i, r in enumerate(server.requests) if "cook" in server.prompt_text(i)]
            assert asked and "I live in Lyon" in server.prompt_text(asked[0])


def test_the_annotation_example_survives_answers_that_do_not_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    concepts = ROOT / "docs" / "concepts.md"
    (code,) = [c for _, c in python_blocks(concepts)[0] if "wait_annotated" in c]
    monkeypatch.setattr("langchain_agentmem.annotation.annotator.RETRY_WAITS", (0.05, 0.05))
    monkeypatch.chdir(tmp_path)
    with ScriptedOpenAIServer(default="You live in Porto.", annotate=lambda _: "Sure!") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_MODEL", "scripted")
        exec(compile(code, str(concepts), "exec"), {"__name__": "__main__"})
    said = capsys.readouterr().out
    assert said.count("(not annotated)") == 2
    assert "2 statements were not annotated" in said
    assert len(server.annotations) == 6  # each statement: the first try and two more


def _options(parser: argparse.ArgumentParser, words: list[str]) -> set[str]:
    """The option strings of the (sub)command that ``words`` name."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and words:
            return _options(action.choices[words[0]], words[1:])
    return {s for action in parser._actions for s in action.option_strings}


def test_every_agentmem_command_line_in_the_docs_names_real_options() -> None:
    from langchain_agentmem.cli import build_parser

    parser = build_parser()
    lines: list[str] = []
    checked = 0
    for path in DOC_FILES:
        text = path.read_text(encoding="utf-8")
        lines += re.findall(r"`(agentmem [^`]+)`", text)
        lines += re.findall(r"^(?:\S+=\S+ )*(agentmem .+)$", text, re.M)  # shell blocks
    for line in lines:
        words = [w for w in line.split() if re.fullmatch(r"[a-z-]+", w)][1:]
        command = [w for w in words[:2] if not w.startswith("-")]
        if command[1:] and command[0] != "bench":
            command = command[:1]
        if command and command[0] not in _options_names(parser):
            continue  # prose such as "agentmem commands"
        options = _options(parser, command)
        for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]*", line):
            assert flag in options, f"docs: `{line}` uses {flag}, which agentmem {command} lacks"
            checked += 1
    assert len(lines) >= 10 and checked >= 15


def _options_names(parser: argparse.ArgumentParser) -> set[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()
