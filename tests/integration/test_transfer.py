"""Export and import: JSON Lines round trips between stores, bad files refused whole."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langchain_agentmem import AgentMemory, InvalidInputError, OpKind, SentenceTransformerEmbeddings
from langchain_agentmem.backends.encoding import epoch_to_datetime
from langchain_agentmem.cli import main
from langchain_agentmem.memory.export_format import FORMAT_VERSION
from tests.stores import HashEmbeddings

FACTS = [
    ("I am allergic to peanuts.", "t1", {"role": "human", "source": "chat"}),
    ("My sister Ana lives in Porto.", "t1", {"role": "human", "tags": ["family", "é"]}),
    ("Sounds lovely.", "t2", {"role": "ai"}),
    ("I switched from tea to coffee.", None, {}),
]


def _fill(mem: AgentMemory, namespace: str = "alice") -> None:
    for i, (text, thread, meta) in enumerate(FACTS):
        when = datetime(2024, 3, 1 + i, 9, 30, 15, 123456 + i, tzinfo=timezone.utc)
        expiry = datetime(2099, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc) if i == 2 else None
        mem.add(
            text,
            namespace=namespace,
            thread=thread,
            metadata=meta,
            timestamp=when,
            expires_at=expiry,
        )
    first = mem.records(namespace)[0]
    mem.update(first.id, "I am allergic to peanuts and cashews.", namespace=namespace)
    mem.add_messages(
        [HumanMessage("I am allergic to peanuts."), AIMessage("Noted, no peanuts.")],
        namespace=namespace,
        thread="t1",
    )
    mem.add_messages([HumanMessage("Hello again")], namespace=namespace, thread="t2")
    mem.add("Someone else's note.", namespace="bob")


def _snapshot(mem: AgentMemory, namespace: str) -> tuple[object, ...]:
    records = sorted(
        (r.id, r.text, r.thread, dict(r.metadata), r.created_at, r.updated_at, r.expires_at)
        for r in mem.records(namespace)
    )
    messages = [(t, p, epoch_to_datetime(at)) for t, p, at in mem.backend.iter_messages(namespace)]
    return records, messages


def test_an_export_over_an_older_export_is_owner_only_too(
    tmp_path: Path, hash_embeddings: HashEmbeddings
) -> None:
    out = tmp_path / "alice.jsonl"
    with AgentMemory(f"sqlite:///{tmp_path / 'a.db'}", embeddings=hash_embeddings) as mem:
        mem.add("Last week's fact.", namespace="alice")
        mem.export_namespace("alice", out)
        out.chmod(0o644)
        mem.delete_namespace("alice")
        _fill(mem)
        mem.export_namespace("alice", out)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert "Last week" not in out.read_text()


def test_an_export_never_writes_over_other_files(
    tmp_path: Path, hash_embeddings: HashEmbeddings, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "memory.db"
    notes = tmp_path / "notes.txt"
    notes.write_text("my own notes\n")
    with AgentMemory(f"sqlite:///{store}", embeddings=hash_embeddings) as mem:
        _fill(mem)
        for path in (store, notes):
            with pytest.raises(InvalidInputError, match="is not an agentmem export"):
                mem.export_namespace("alice", path)
    assert notes.read_text() == "my own notes\n"
    url = f"sqlite:///{store}"
    assert main(["export", "--store", url, "--user", "alice", "--out", str(store)]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("agentmem export: ") and "nothing was written" in line
    with AgentMemory(url, embeddings=hash_embeddings) as mem:
        assert len(mem.records("alice")) == 4  # the store is whole


def test_round_trip_sqlite_postgres_sqlite(
    tmp_path: Path, pg_url: str, hash_embeddings: HashEmbeddings
) -> None:
    first, back = tmp_path / "first.jsonl", tmp_path / "back.jsonl"
    with AgentMemory(f"sqlite:///{tmp_path / 'a.db'}", embeddings=hash_embeddings) as src:
        _fill(src)
        original = _snapshot(src, "alice")
        summary = src.export_namespace("alice", first)
        assert (summary.records, summary.messages) == (4, 3)
    assert stat.S_IMODE(first.stat().st_mode) == 0o600
    with AgentMemory(pg_url, embeddings=hash_embeddings) as pg:
        result = pg.import_namespace(first, namespace="alice")
        assert (result.records, result.skipped, result.messages) == (4, 0, 3)
        assert result.reembedded == 4  # the file carries no embeddings
        assert _snapshot(pg, "alice") == original
        assert [r.expires_at is not None for r in pg.records("alice")].count(True) == 1
        assert pg.records("bob") == []
        assert {d.policy for d in pg.decisions("alice")} == {"import"}
        assert pg.search("allergic to cashews", namespace="alice", k=1, mode="lexical")[
            0
        ].text.startswith("I am allergic")
        pg.export_namespace("alice", back, embeddings=True)
    with AgentMemory(f"sqlite:///{tmp_path / 'c.db'}", embeddings=hash_embeddings) as dst:
        result = dst.import_namespace(back, namespace="alice")
        assert result.reembedded == 0  # same model, embeddings in the file
        assert _snapshot(dst, "alice") == original
        for record in dst.records("alice"):
            expected = np.asarray(hash_embeddings.embed_query(record.text), dtype=np.float32)
            assert record.embedding is not None
            assert np.allclose(record.embedding, expected / np.linalg.norm(expected), atol=1e-6)


def test_import_twice_adds_nothing(
    store_url: str, tmp_path: Path, hash_embeddings: HashEmbeddings
) -> None:
    path = tmp_path / "alice.jsonl"
    with AgentMemory(":memory:", embeddings=hash_embeddings) as src:
        _fill(src)
        src.export_namespace("alice", path)
    with AgentMemory(store_url, embeddings=hash_embeddings) as dst:
        dst.import_namespace(path, namespace="alice")
        before = _snapshot(dst, "alice"), len(dst.decisions("alice"))
        again = dst.import_namespace(path, namespace="alice")
        assert (again.records, again.skipped, again.messages) == (0, 4, 0)
        assert (again.expired, again.reembedded) == (0, 0)  # nothing embedded for nothing
        assert (_snapshot(dst, "alice"), len(dst.decisions("alice"))) == before


def test_import_into_another_namespace_and_a_longer_export(
    tmp_path: Path, hash_embeddings: HashEmbeddings
) -> None:
    early, late = tmp_path / "early.jsonl", tmp_path / "late.jsonl"
    with AgentMemory(":memory:", embeddings=hash_embeddings) as src:
        _fill(src)
        src.export_namespace("alice", early)
        src.add_messages([AIMessage("Welcome back!")], namespace="alice", thread="t2")
        src.add("I started learning Portuguese.", namespace="alice")
        src.export_namespace("alice", late)
        expected = _snapshot(src, "alice")
    with AgentMemory(":memory:", embeddings=hash_embeddings) as dst:
        dst.import_namespace(early, namespace="alice-copy")
        result = dst.import_namespace(late, namespace="alice-copy")
        assert (result.records, result.skipped, result.messages) == (1, 4, 1)
        assert _snapshot(dst, "alice-copy") == expected
        assert dst.records("alice") == []


def test_records_expired_since_the_export_are_counted_apart(
    tmp_path: Path, hash_embeddings: HashEmbeddings, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _export_lines(tmp_path, hash_embeddings)
    record = json.loads(lines[1])
    record["expires_at"] = "2001-01-01T00:00:00+00:00"  # passed since the export
    lines[1] = json.dumps(record)
    path = tmp_path / "alice.jsonl"
    path.write_text("\n".join(lines) + "\n")
    url = f"sqlite:///{tmp_path / 'dst.db'}"
    with AgentMemory(url, embeddings=hash_embeddings) as dst:
        first = dst.import_namespace(path, namespace="alice")
        assert (first.records, first.skipped, first.expired, first.reembedded) == (3, 0, 1, 3)
        assert record["id"] not in {r.id for r in dst.records("alice")}
    assert main(["import", "--store", url, "--in", str(path), "--user", "alice"]) == 0
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "imported 0 records (3 already there, 1 expired since the export, 0 re-embedded) "
        "and 0 messages into 'alice'"
    )


def test_a_different_conversation_in_the_same_thread_is_refused(
    tmp_path: Path, hash_embeddings: HashEmbeddings
) -> None:
    path = tmp_path / "alice.jsonl"
    with AgentMemory(":memory:", embeddings=hash_embeddings) as src:
        _fill(src)
        src.export_namespace("alice", path)
    with AgentMemory(":memory:", embeddings=hash_embeddings) as dst:
        dst.add_messages([HumanMessage("Something else")], namespace="alice", thread="t1")
        with pytest.raises(InvalidInputError, match=r"thread 't1'.*already holds other messages"):
            dst.import_namespace(path, namespace="alice")
        assert dst.records("alice") == [] and dst.decisions("alice") == []
        assert len(dst.messages(namespace="alice", thread="t1")) == 1


def test_reembeds_with_the_real_model_when_another_model_made_the_file(
    tmp_path: Path, hash_embeddings: HashEmbeddings, embeddings: SentenceTransformerEmbeddings
) -> None:
    path = tmp_path / "alice.jsonl"
    with AgentMemory(":memory:", embeddings=hash_embeddings) as src:
        _fill(src)
        src.export_namespace("alice", path, embeddings=True)
    header = json.loads(path.read_text().splitlines()[0])
    assert header["embedding_model"] == "tests.stores.HashEmbeddings" and header["embeddings"]
    with AgentMemory(":memory:", embeddings=embeddings) as dst:
        result = dst.import_namespace(path, namespace="alice")
        assert result.reembedded == 4
        hit = dst.search("Which relative lives in Portugal?", namespace="alice", k=1, mode="dense")
        assert hit[0].text == "My sister Ana lives in Porto."


def _export_lines(tmp_path: Path, hash_embeddings: HashEmbeddings) -> list[str]:
    path = tmp_path / "good.jsonl"
    with AgentMemory(":memory:", embeddings=hash_embeddings) as src:
        _fill(src)
        src.export_namespace("alice", path)
    return path.read_text().splitlines()


@pytest.mark.parametrize(
    ("line", "replacement", "message"),
    [
        (3, '{"type": "record", "id": "x", "text": ', "line 3: not valid JSON"),
        (2, None, "line 2: text is empty"),
        (4, '{"type": "recrod"}', "line 4: unknown line type 'recrod'"),
        (5, "DUPLICATE", "line 5: record id .* already appeared on line 4"),
        (6, '{"type": "message", "thread": "t1", "message": {"no": "type"}}', "line 6: "),
        (2, "BADTIME", "line 2: created_at 'yesterday' is not an ISO 8601 time"),
    ],
)
def test_a_malformed_line_is_named_and_nothing_is_imported(
    tmp_path: Path,
    hash_embeddings: HashEmbeddings,
    line: int,
    replacement: str | None,
    message: str,
) -> None:
    lines = _export_lines(tmp_path, hash_embeddings)
    if replacement is None:
        record = json.loads(lines[line - 1])
        record["text"] = "   "
        replacement = json.dumps(record)
    elif replacement == "DUPLICATE":
        replacement = lines[line - 2]
    elif replacement == "BADTIME":
        record = json.loads(lines[line - 1])
        record["created_at"] = "yesterday"
        replacement = json.dumps(record)
    lines[line - 1] = replacement
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with AgentMemory(f"sqlite:///{tmp_path / 'dst.db'}", embeddings=hash_embeddings) as dst:
        with pytest.raises(InvalidInputError, match=message) as info:
            dst.import_namespace(path, namespace="alice")
        assert str(path) in str(info.value) and "nothing was imported" in str(info.value)
        assert dst.namespaces() == [] and dst.decisions("alice") == []


@pytest.mark.parametrize(
    ("keep", "message"),
    [
        (3, "the header says 4 records and 3 messages, the file holds 2 records and 0 messages"),
        (7, "the header says 4 records and 3 messages, the file holds 4 records and 2 messages"),
    ],
)
def test_a_truncated_export_is_refused_whole(
    tmp_path: Path, hash_embeddings: HashEmbeddings, keep: int, message: str
) -> None:
    lines = _export_lines(tmp_path, hash_embeddings)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[:keep]) + "\n")  # cut at a line boundary (`head -n`)
    with AgentMemory(":memory:", embeddings=hash_embeddings) as dst:
        with pytest.raises(InvalidInputError, match=message) as info:
            dst.import_namespace(cut, namespace="alice")
        assert str(cut) in str(info.value) and "nothing was imported" in str(info.value)
        assert dst.namespaces() == [] and dst.decisions("alice") == []


def test_a_header_count_that_is_not_a_count_is_refused(
    tmp_path: Path, hash_embeddings: HashEmbeddings
) -> None:
    lines = _export_lines(tmp_path, hash_embeddings)
    header = json.loads(lines[0])
    header["records"] = "four"
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with AgentMemory(":memory:", embeddings=hash_embeddings) as dst:
        with pytest.raises(
            InvalidInputError, match="line 1: header records 'four' is not a count of lines"
        ):
            dst.import_namespace(path, namespace="alice")
        assert dst.namespaces() == []


def test_a_newer_format_or_no_header_is_refused(
    tmp_path: Path, hash_embeddings: HashEmbeddings
) -> None:
    lines = _export_lines(tmp_path, hash_embeddings)
    header = json.loads(lines[0])
    header["version"] = FORMAT_VERSION + 1
    newer = tmp_path / "newer.jsonl"
    newer.write_text("\n".join([json.dumps(header), *lines[1:]]))
    headless = tmp_path / "headless.jsonl"
    headless.write_text("\n".join(lines[1:]))
    with AgentMemory(":memory:", embeddings=hash_embeddings) as dst:
        with pytest.raises(InvalidInputError, match=f"format version {FORMAT_VERSION + 1}, newer"):
            dst.import_namespace(newer, namespace="alice")
        with pytest.raises(InvalidInputError, match="line 1: not an agentmem export"):
            dst.import_namespace(headless, namespace="alice")
        assert dst.namespaces() == []


# -- the command line ---------------------------------------------------------------------


def test_cli_export_import_forget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    src_url, dst_url = f"sqlite:///{tmp_path / 'src.db'}", f"sqlite:///{tmp_path / 'dst.db'}"
    with AgentMemory(src_url, embeddings=HashEmbeddings()) as src:
        _fill(src)
    out = tmp_path / "alice.jsonl"
    assert main(["export", "--store", src_url, "--user", "alice", "--out", str(out)]) == 0
    assert "exported 4 records and 3 messages" in capsys.readouterr().err
    assert main(["import", "--store", dst_url, "--in", str(out), "--user", "ana"]) == 0
    assert "imported 4 records (0 already there, 4 re-embedded)" in capsys.readouterr().err
    assert main(["import", "--store", dst_url, "--in", str(out), "--user", "ana"]) == 0
    assert "imported 0 records (4 already there, 0 re-embedded)" in capsys.readouterr().err

    assert main(["forget", "--store", dst_url, "--user", "ana", "--yes"]) == 0
    assert f"erased 'ana' from {dst_url}: 4 records, 3 messages, 4 audit entries" in (
        capsys.readouterr().out
    )
    with AgentMemory(dst_url, embeddings=HashEmbeddings()) as dst:
        assert dst.namespaces() == []

    # Nothing is created to read or erase a store that is not there.
    missing = tmp_path / "typo.db"
    assert (
        main(
            [
                "export",
                "--store",
                f"sqlite:///{missing}",
                "--user",
                "a",
                "--out",
                str(tmp_path / "x"),
            ]
        )
        == 1
    )
    assert main(["forget", "--store", f"sqlite:///{missing}", "--user", "a", "--yes"]) == 1
    assert "no store at" in capsys.readouterr().err
    assert not missing.exists() and not (tmp_path / "x").exists()

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "langchain-agentmem", "version": 1, "namespace": "a"}\n{oops\n')
    assert main(["import", "--store", dst_url, "--in", str(bad), "--user", "a"]) == 1
    assert "line 2: not valid JSON" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "user", "message"),
    [
        ("not json\n", None, "line 1: not valid JSON"),
        ("GOOD", "", "namespace is empty"),
    ],
)
def test_cli_a_failed_import_creates_no_store(
    tmp_path: Path,
    hash_embeddings: HashEmbeddings,
    capsys: pytest.CaptureFixture[str],
    content: str,
    user: str | None,
    message: str,
) -> None:
    path = tmp_path / "in.jsonl"
    if content == "GOOD":
        content = "\n".join(_export_lines(tmp_path, hash_embeddings)) + "\n"
    path.write_text(content)
    never = tmp_path / "never.db"
    args = ["import", "--store", f"sqlite:///{never}", "--in", str(path)]
    assert main([*args, *([] if user is None else ["--user", user])]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("agentmem import: ") and message in line
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("never")) == []


def test_cli_export_help_says_chat_conversations_are_not_exported(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "not `agentmem chat` conversations" in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit):
        main(["export", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "`agentmem chat` conversations (LangGraph checkpoints" in text
    assert "under $AGENTMEM_HOME) are not exported" in text


def test_cli_forget_without_yes_and_without_a_terminal_refuses(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with AgentMemory(url, embeddings=HashEmbeddings()) as mem:
        mem.add("Keep me.", namespace="alice")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "langchain_agentmem.cli",
            "forget",
            "--store",
            url,
            "--user",
            "alice",
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2
    assert "without --yes" in run.stderr and "nothing was erased" in run.stderr
    with AgentMemory(url, embeddings=HashEmbeddings()) as mem:
        assert [r.text for r in mem.records("alice")] == ["Keep me."]
        assert [d.kind for d in mem.decisions("alice")] == [OpKind.ADD]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("answer", [EOFError, KeyboardInterrupt, "n"])
def test_cli_forget_treats_ctrl_d_and_ctrl_c_at_the_prompt_as_no(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    answer: type[BaseException] | str,
) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with AgentMemory(url, embeddings=HashEmbeddings()) as mem:
        mem.add("Keep me.", namespace="alice")

    def ask(prompt: str) -> str:
        if isinstance(answer, str):
            return answer
        raise answer

    monkeypatch.setattr(sys, "stdin", _Terminal())
    monkeypatch.setattr("builtins.input", ask)
    assert main(["forget", "--store", url, "--user", "alice"]) == 1
    assert capsys.readouterr().err.strip() == "agentmem forget: nothing was erased"
    with AgentMemory(url, embeddings=HashEmbeddings()) as mem:
        assert [r.text for r in mem.records("alice")] == ["Keep me."]


def test_cli_forget_names_a_missing_store_before_asking(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def ask(prompt: str) -> str:
        raise AssertionError("asked to confirm erasing from a store that is not there")

    monkeypatch.setattr(sys, "stdin", _Terminal())
    monkeypatch.setattr("builtins.input", ask)
    missing = tmp_path / "typo.db"
    assert main(["forget", "--store", f"sqlite:///{missing}", "--user", "alice"]) == 1
    assert "no store at" in capsys.readouterr().err
    assert not missing.exists()


def test_cli_export_refuses_to_write_to_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with AgentMemory(url, embeddings=HashEmbeddings()) as mem:
        mem.add("Keep me.", namespace="alice")
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    assert main(["export", "--store", url, "--user", "alice", "--out", "-"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "agentmem export: not writing an export to a terminal; pipe --out - into a command or "
        "name a file (--out FILE); nothing was exported"
    ]
    assert terminal.getvalue() == ""


def test_progress_bar_on_request(
    tmp_path: Path, hash_embeddings: HashEmbeddings, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "a.jsonl"
    with AgentMemory(":memory:", embeddings=hash_embeddings) as src:
        _fill(src)
        src.export_namespace("alice", path, progress=True)
        assert "export" in capsys.readouterr().err
        src.export_namespace("alice", tmp_path / "quiet.jsonl")
        assert capsys.readouterr().err == ""
    with AgentMemory(":memory:", embeddings=hash_embeddings) as dst:
        dst.import_namespace(path, namespace="alice", progress=True)
        err = capsys.readouterr().err
        assert "embed" in err and "import" in err


def test_every_command_finds_the_store_that_dotenv_names(
    tmp_path: Path, hash_embeddings: HashEmbeddings
) -> None:
    home = tmp_path / "home-from-dotenv"
    work = tmp_path / "work"
    work.mkdir()
    (work / ".env").write_text(f"AGENTMEM_HOME={home}\n")
    with AgentMemory(f"sqlite:///{home / 'memory.db'}", embeddings=hash_embeddings) as mem:
        mem.add("I live in Oslo.", namespace="alice")
    env = {k: v for k, v in os.environ.items() if k != "AGENTMEM_HOME"}
    env["HOME"] = str(tmp_path / "user")  # a command that missed .env finds no real store

    def agentmem(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "langchain_agentmem.cli", *args],
            cwd=work,  # as `agentmem chat` run here would: its .env says where the store is
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    exported = agentmem("export", "--user", "alice", "--out", "alice.jsonl")
    assert exported.returncode == 0, exported.stderr
    assert "Oslo" in (work / "alice.jsonl").read_text()
    forgot = agentmem("forget", "--user", "alice", "--yes")
    assert forgot.returncode == 0, forgot.stderr
    assert "1 records" in forgot.stdout
    with AgentMemory(f"sqlite:///{home / 'memory.db'}", embeddings=hash_embeddings) as mem:
        assert mem.records("alice") == []


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "langchain_agentmem.cli", *args]


def _closed_stdout(command: list[str]) -> subprocess.CompletedProcess[str]:
    """``command`` run with a stdout whose reader has already gone (``... | true``)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            command, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=300, check=False
        )
    finally:
        os.close(write_end)


def test_cli_export_to_a_reader_that_goes_away_exits_quietly_and_changes_nothing(
    tmp_path: Path, hash_embeddings: HashEmbeddings
) -> None:
    """``agentmem export --out - | head -1``: the pipe closes after the first line, with
    far more than a pipe holds still to write."""
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with AgentMemory(url, embeddings=hash_embeddings) as mem:
        mem.add_many(
            [f"Fact {i} about Alice: " + "x" * 2000 for i in range(400)], namespace="alice"
        )
        before = _snapshot(mem, "alice"), [d.seq for d in mem.decisions("alice")]
    with subprocess.Popen(
        _cli("export", "--store", url, "--user", "alice", "--out", "-"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as reader:
        assert reader.stdout is not None and reader.stderr is not None
        first = json.loads(reader.stdout.readline())
        reader.stdout.close()  # as `head -1` does
        err = reader.stderr.read()
        code = reader.wait(timeout=300)
    assert first["format"] == "langchain-agentmem" and first["records"] == 400
    assert (code, err) == (141, "")  # no traceback, no "Broken pipe" line
    with AgentMemory(url, embeddings=hash_embeddings) as mem:
        assert (_snapshot(mem, "alice"), [d.seq for d in mem.decisions("alice")]) == before

    # Import writes nothing to stdout: a closed one changes nothing for it.
    whole = tmp_path / "alice.jsonl"
    assert main(["export", "--store", url, "--user", "alice", "--out", str(whole)]) == 0
    done = _closed_stdout(
        _cli(
            "import",
            "--store",
            f"sqlite:///{tmp_path / 'n.db'}",
            "--in",
            str(whole),
            "--user",
            "alice",
        )
    )
    assert done.returncode == 0, done.stderr
    assert "imported 400 records" in done.stderr
    with AgentMemory(f"sqlite:///{tmp_path / 'n.db'}", embeddings=hash_embeddings) as mem:
        assert len(mem.records("alice")) == 400


def test_every_command_exits_quietly_when_its_stdout_is_gone(
    tmp_path: Path, hash_embeddings: HashEmbeddings
) -> None:
    """A reader that closed before the command wrote (``agentmem forget ... | true``): what
    the command did stands, it says nothing and exits 141; the demo's second process too."""
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with AgentMemory(url, embeddings=hash_embeddings) as mem:
        mem.add("Erase me.", namespace="alice")
    commands = [
        _cli("forget", "--store", url, "--user", "alice", "--yes"),
        [sys.executable, "-m", "langchain_agentmem.cli.demo", url, "bob", "3"],
    ]
    for command in commands:
        done = _closed_stdout(command)
        assert (done.returncode, done.stderr) == (141, ""), command
    with AgentMemory(url, embeddings=hash_embeddings) as mem:
        assert mem.records("alice") == []  # the erase went through


# -- an export is input: limits, vectors and nesting are checked -------------------------------
def _hostile_export(tmp_path: Path, records: list[dict[str, object]], **header: object) -> Path:
    head = {
        "format": "langchain-agentmem",
        "version": FORMAT_VERSION,
        "namespace": "alice",
        "embedding_model": "sentence-transformers/all-MiniLM-L6-v2",
        "records": len(records),
        "messages": 0,
        **header,
    }
    stamp = {"created_at": "2024-03-01T09:30:00+00:00"}
    lines = [json.dumps(head)] + [json.dumps({"type": "record", **stamp, **r}) for r in records]
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _vector(values: list[float]) -> str:
    import base64

    return base64.b64encode(np.asarray(values, dtype="<f4").tobytes()).decode("ascii")


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (
            {"id": "big", "text": "x" * 2_000},
            "line 3: text is 2,000 characters long.*max_text_chars",
        ),
        (
            {"id": "fat", "text": "fine", "metadata": {"blob": "y" * 3_000}},
            "line 3: metadata is 3,011 bytes as JSON.*max_metadata_bytes",
        ),
    ],
)
def test_an_import_applies_the_memorys_limits(
    tmp_path: Path,
    embeddings: SentenceTransformerEmbeddings,
    record: dict[str, object],
    message: str,
) -> None:
    path = _hostile_export(tmp_path, [{"id": "ok", "text": "I like tea."}, record])
    with AgentMemory(
        ":memory:", embeddings=embeddings, max_text_chars=1_000, max_metadata_bytes=1_000
    ) as dst:
        dst.add("I already live here.", namespace="alice")
        with pytest.raises(InvalidInputError, match=message):
            dst.import_namespace(path, namespace="alice")
        assert [r.text for r in dst.records("alice")] == ["I already live here."]


def test_imported_vectors_are_normalised_and_must_have_the_models_dimensions(
    tmp_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    huge = _vector([1e18] * 384)
    path = _hostile_export(
        tmp_path,
        [
            {"id": "loud", "text": "Buy cheap watches now.", "embedding": huge},
            {"id": "cat", "text": "My cat is called Miso."},
        ],
        dimensions=384,
        embeddings=True,
    )
    with AgentMemory(":memory:", embeddings=embeddings) as dst:
        dst.import_namespace(path, namespace="alice")
        hits = dst.search("What is my cat's name?", namespace="alice", k=2, mode="dense")
        assert hits[0].id == "cat" and all(h.score <= 1.0 + 1e-5 for h in hits)
    small = _hostile_export(
        tmp_path, [{"id": "tiny", "text": "Three numbers.", "embedding": _vector([1.0, 2.0, 3.0])}]
    )  # no "dimensions" in the header
    with AgentMemory(":memory:", embeddings=embeddings) as dst:
        with pytest.raises(InvalidInputError, match=r"line 2: embedding has 3 dimensions.*384"):
            dst.import_namespace(small, namespace="alice")
        assert dst.records("alice") == []
        dst.add("My cat is called Miso.", namespace="alice")  # the user still works
        assert dst.search("cat", namespace="alice", k=1)[0].text == "My cat is called Miso."


def test_deeply_nested_json_is_refused_by_line(
    tmp_path: Path, hash_embeddings: HashEmbeddings
) -> None:
    path = _hostile_export(tmp_path, [{"id": "a", "text": "fine"}])
    deep = '{"type": "record", "id": "b", "text": "t", "metadata": {"m": ' + "[" * 100_000
    path.write_text(path.read_text() + deep + "]" * 100_000 + "}}\n")
    with AgentMemory(":memory:", embeddings=hash_embeddings) as dst:
        with pytest.raises(InvalidInputError, match=r"line 3: .*nested too deeply"):
            dst.import_namespace(path, namespace="alice")
        assert dst.namespaces() == []
