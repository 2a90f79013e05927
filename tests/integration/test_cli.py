"""The ``agentmem`` command line: version, help, usage errors, checks before work."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

import pytest

from langchain_agentmem import AgentMemory, __version__
from langchain_agentmem.cli import build_parser, main
from langchain_agentmem.cli.args import examples_of
from tests.stores import HashEmbeddings


def _commands(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every (sub)command under ``parser``, with the words that name it."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append(((*words, name), sub))
                found.extend(_commands(sub, (*words, name)))
    return found


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"agentmem {__version__}"


def test_every_command_shows_its_defaults_and_examples_that_parse() -> None:
    commands = _commands(build_parser())
    assert {words[0] for words, _ in commands} >= {
        "demo",
        "chat",
        "export",
        "import",
        "forget",
        "bench",
        "train",
    }
    for words, sub in commands:
        examples = examples_of(sub)
        assert 1 <= len(examples) <= 2, f"agentmem {' '.join(words)}: {examples}"
        for line in examples:
            argv = shlex.split(line)
            argv = argv[argv.index("agentmem") + 1 :]  # after any VAR=value
            assert argv[: len(words)] == list(words), line
            if len(argv) > len(words) or not any(
                isinstance(a, argparse._SubParsersAction) for a in sub._actions
            ):
                build_parser().parse_args(argv)  # a usage error exits: the test fails
        text = sub.format_help()
        assert "examples:" in text
        defaults = [a for a in sub._actions if a.option_strings and a.default not in (None, False)]
        for action in defaults:
            if action.dest in ("help", "_command_parser") or action.default == argparse.SUPPRESS:
                continue
            assert "default" in (sub._get_formatter()._expand_help(action)), (words, action.dest)
    demo = dict(commands)[("demo",)].format_help()
    assert "(default: 3)" in demo and "(default: demo-user)" in demo


@pytest.mark.parametrize(
    "argv", [["demo", "--wrong-flag"], ["export", "--user", "a", "--out", "x", "--nope"]]
)
def test_an_unknown_flag_shows_that_commands_usage(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: agentmem {argv[0]} ")
    assert f"agentmem {argv[0]}: error: unrecognized arguments: {argv[-1]}" in err


def test_an_unknown_flag_of_a_nested_command_shows_its_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["bench", "locomo", "--data", "d.json", "--out", "o.json", "--nope"])
    assert capsys.readouterr().err.startswith("usage: agentmem bench locomo ")


@pytest.mark.parametrize("argv", [["demo", "--k", "0"], ["chat", "--k", "-1"]])
def test_arguments_are_checked_before_any_work(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("AGENTMEM_HOME", str(tmp_path / "home"))
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    out = capsys.readouterr()
    assert out.out == ""  # not one line of a session
    assert "--k: expected a whole number >= 1" in out.err
    assert not (tmp_path / "home").exists()


def test_a_relative_sqlite_path_hints_at_four_slashes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["export", "--store", "sqlite:///tmp/x.db", "--user", "a", "--out", "a.jsonl"])
    assert code == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "no store at 'tmp/x.db'" in line
    assert "relative to the current folder" in line and "sqlite:////tmp/x.db" in line
    assert not (tmp_path / "a.jsonl").exists()
    # An absolute path that is missing gets no such hint.
    assert main(["forget", "--store", f"sqlite:///{tmp_path}/no.db", "--user", "a"]) == 1
    assert "four slashes" not in capsys.readouterr().err


def test_exporting_a_user_with_no_data_says_so(
    tmp_path: Path, hash_embeddings: HashEmbeddings, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    with AgentMemory(url, embeddings=hash_embeddings) as memory:
        memory.add("I live in Lyon.", namespace="alice")
    out = tmp_path / "nobody.jsonl"
    assert main(["export", "--store", url, "--user", "nobody", "--out", str(out)]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("agentmem export: 'nobody' has no records or messages in ")
    assert line.endswith("nothing was exported")
    assert not out.exists()
    assert main(["export", "--store", url, "--user", "alice", "--out", str(out)]) == 0
    assert out.exists()
