"""``agentmem chat`` in a subprocess, talking to the local OpenAI-protocol server."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.openai_server import ScriptedOpenAIServer, error, plain_notes

pytestmark = pytest.mark.slow


def environment(cwd: Path, env: dict[str, str]) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENTMEM_"))}
    base.update({"AGENTMEM_HOME": str(cwd / "home"), "HF_HUB_OFFLINE": "1"}, **env)
    return base


def chat(
    cwd: Path, env: dict[str, str], stdin: str, *args: str
) -> subprocess.CompletedProcess[str]:
    base = environment(cwd, env)
    return subprocess.run(
        [sys.executable, "-m", "langchain_agentmem.cli", "chat", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=base,
        timeout=180,
    )


def test_chat_remembers_across_threads(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(
        "Nice, Miso is a lovely name. How old is she?", "Lovely.", "Your cat is Miso."
    ) as server:
        env = {"OPENAI_BASE_URL": server.url, "OPENAI_MODEL": "scripted-model"}
        first = chat(
            tmp_path,
            env,
            "My cat is called Miso.\nShe turns three.\n/memories\n",
            "--user",
            "alice",
        )
        assert first.returncode == 0, first.stderr
        assert "assistant> Nice, Miso is a lovely name. How old is she?" in first.stdout
        assert '] user: "My cat is called Miso."' in first.stdout
        # Listed as the model is told it: with the question the user answered.
        asked = (
            '] user (replying to "Nice, Miso is a lovely name. How old is she?"): '
            '"She turns three."'
        )
        assert asked in first.stdout
        assert "(2 memories)" in first.stdout  # the user's words; replies only when asked

        second = chat(
            tmp_path, env, "What is my cat's name?\n/quit\n", "--user", "alice", "--thread", "t2"
        )
        assert second.returncode == 0, second.stderr
        assert "assistant> Your cat is Miso." in second.stdout
        body = server.requests[-1]
        assert body["model"] == "scripted-model"
        assert body["stream"] is True
        assert "My cat is called Miso." in body["messages"][0]["content"]
        assert [m["role"] for m in body["messages"]] == ["system", "user"]

        # Another user recalls nothing of alice's.
        third = chat(tmp_path, env, "What is my cat's name?\n", "--user", "bob")
        assert third.returncode == 0, third.stderr
        assert "Miso" not in server.prompt_text(-1)


def _slowly(text: str) -> Callable[[dict[str, Any]], str]:
    def reply(body: dict[str, Any]) -> str:
        time.sleep(1.0)  # a local model writing its reply
        return text

    return reply


def test_no_annotation_call_is_sent_while_a_turn_waits_for_its_reply(tmp_path: Path) -> None:
    # A local server that answers one request at a time would mix them up (empty replies).
    lines = ["I moved to Porto last month.", "My new dentist is Dr. Lindqvist.", "I'm vegetarian."]

    def notes(body: dict[str, Any]) -> str:
        time.sleep(0.5)  # the same model, annotating
        return plain_notes(body)

    with ScriptedOpenAIServer(*(_slowly("Noted.") for _ in lines), annotate=notes) as server:
        env = {"OPENAI_BASE_URL": server.url, "OPENAI_MODEL": "scripted-model"}
        done = chat(tmp_path, env, "\n".join(lines) + "\n", "--user", "priya")
        assert done.returncode == 0, done.stderr
        assert done.stdout.count("assistant> Noted.") == 3
        assert len(server.requests) == 3 and len(server.annotations) >= 1
        assert server.overlapping == 0


def test_chat_reads_dotenv(tmp_path: Path) -> None:
    with ScriptedOpenAIServer("Hello from the server.") as server:
        (tmp_path / ".env").write_text(f"OPENAI_BASE_URL={server.url}\nOPENAI_MODEL=from-dotenv\n")
        done = chat(tmp_path, {}, "Hi!\n")
        assert done.returncode == 0, done.stderr
        assert "assistant> Hello from the server." in done.stdout
        assert server.requests[-1]["model"] == "from-dotenv"


def test_chat_without_a_model_says_how_to_configure_one(tmp_path: Path) -> None:
    done = chat(tmp_path, {}, "Hi!\n")
    assert done.returncode == 2
    assert (
        "no" in done.stderr and "OPENAI_BASE_URL" in done.stderr and "OPENAI_API_KEY" in done.stderr
    )
    assert done.stdout == ""


def test_local_commands_never_reach_the_model_nor_memory(tmp_path: Path) -> None:
    with ScriptedOpenAIServer("Hi Ana.", "Sure.") as server:
        env = {"OPENAI_BASE_URL": server.url}
        script = "/help\n/memories\n/forget nope\n/bogus\nI am Ana.\n/forget\n/quit\nnever\n"
        done = chat(tmp_path, env, script, "--user", "ana")
        assert done.returncode == 0, done.stderr
        assert "/memories" in done.stdout and "(0 memories)" in done.stdout
        assert "no memory 'nope'" in done.stdout
        assert "unknown command /bogus" in done.stdout
        assert "usage: /forget ID" in done.stdout
        assert len(server.requests) == 1  # only "I am Ana."; nothing after /quit
        assert "/help" not in server.prompt_text(-1)
        listed = chat(tmp_path, env, "/memories\n", "--user", "ana")
        (line,) = [x for x in listed.stdout.splitlines() if "] user: " in x]
        assert line.endswith('user: "I am Ana."')
        record_id = line.split()[0]
        forgot = chat(tmp_path, env, f"/forget {record_id}\n/memories\n", "--user", "ana")
        assert f"forgot {record_id}" in forgot.stdout and "(0 memories)" in forgot.stdout
        assert len(server.requests) == 1

        replies = chat(tmp_path, env, "I am Ana again.\n", "--user", "bo", "--remember-replies")
        assert replies.returncode == 0, replies.stderr
        listed = chat(tmp_path, env, "/memories\n", "--user", "bo")
        assert '] assistant: "Sure."' in listed.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_model_errors_are_one_line_and_exit_non_zero(tmp_path: Path) -> None:
    down = chat(tmp_path, {"OPENAI_BASE_URL": f"http://127.0.0.1:{free_port()}/v1"}, "Hi!\n")
    with ScriptedOpenAIServer(
        error(401, "Incorrect API key provided"), error(404, "The model does not exist")
    ) as server:
        env = {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-bad", "OPENAI_MODEL": "nope"}
        bad_key = chat(tmp_path, env, "Hi!\n")
        unknown = chat(tmp_path, env, "Hi!\n")
    for done, says in [
        (down, "cannot reach the model server"),
        (bad_key, "OPENAI_API_KEY"),
        (unknown, "OPENAI_MODEL"),
    ]:
        assert done.returncode == 1
        assert "Traceback" not in done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("agentmem chat: ")
        assert says in lines[0]
    assert "'nope'" in unknown.stderr


def test_ctrl_c_and_end_of_input_end_quietly(tmp_path: Path) -> None:
    with ScriptedOpenAIServer() as server:
        env = environment(tmp_path, {"OPENAI_BASE_URL": server.url})
        proc = subprocess.Popen(
            [sys.executable, "-m", "langchain_agentmem.cli", "chat"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            env=env,
            # A shell's background job ignores SIGINT, and a child inherits that: undo it.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        assert proc.stdout is not None
        assert "agentmem chat" in proc.stdout.readline()  # waiting for input now
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130
        assert "Traceback" not in err and "KeyboardInterrupt" not in err
        eof = chat(tmp_path, {"OPENAI_BASE_URL": server.url}, "")
        assert eof.returncode == 0 and eof.stderr == ""
        assert server.requests == []


def forget(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "langchain_agentmem.cli", "forget", "--yes", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment(cwd, {}),
        timeout=180,
    )


def test_another_store_is_another_conversation_and_forget_erases_only_its_own(
    tmp_path: Path,
) -> None:
    with ScriptedOpenAIServer("Miso, noted.", "I don't know.", "Miso.") as server:
        env = {"OPENAI_BASE_URL": server.url}
        work = ("--store", "sqlite:///work.db", "--user", "alice", "--thread", "t")
        personal = ("--store", str(tmp_path / "personal.db"), "--user", "alice", "--thread", "t")
        first = chat(tmp_path, env, "My cat is called Miso.\n", *work)
        assert first.returncode == 0, first.stderr
        other = chat(tmp_path, env, "What is my cat's name?\n", *personal)
        assert other.returncode == 0, other.stderr
        assert "Miso" not in server.prompt_text(-1)  # neither recalled nor replayed
        assert [m["role"] for m in server.requests[-1]["messages"]] == ["system", "user"]

        erased = forget(tmp_path, *personal[:4])
        assert erased.returncode == 0, erased.stderr
        assert "1 `agentmem chat` threads" in erased.stdout
        again = chat(tmp_path, env, "And her name?\n", *work)
        assert again.returncode == 0, again.stderr
        roles = [m["role"] for m in server.requests[-1]["messages"]]
        assert roles == ["system", "user", "assistant", "user"]  # work's thread is intact
        assert server.requests[-1]["messages"][1]["content"] == "My cat is called Miso."


def test_the_default_store_keeps_its_checkpoint_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langchain_agentmem.cli.chat.threads import CHAT_CHECKPOINTS, chat_checkpoints

    home = tmp_path / "home"
    monkeypatch.setenv("AGENTMEM_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    default = home / CHAT_CHECKPOINTS  # where earlier versions kept every conversation
    assert chat_checkpoints(None) == default
    assert chat_checkpoints(f"sqlite:///{home / 'memory.db'}") == default
    assert chat_checkpoints("home/memory.db") == default
    work = chat_checkpoints("work.db")
    assert work is not None and work != default and work.parent.parent == home
    assert chat_checkpoints(f"sqlite:///{tmp_path / 'work.db'}") == work
    assert chat_checkpoints("postgresql://u:pw1@h/db") == chat_checkpoints(
        "postgresql://u:pw2@h/db"
    )
    assert chat_checkpoints("postgresql://u@h/db") != chat_checkpoints("postgresql://u@h/other")
    assert chat_checkpoints(":memory:") is None


def test_a_failed_turn_is_not_replayed(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(
        error(400, "Bad request"), error(400, "Bad request"), "Hello."
    ) as server:
        env = {"OPENAI_BASE_URL": server.url}
        for _ in range(2):
            failed = chat(tmp_path, env, "Hi, I am Ana.\n", "--user", "ana")
            assert failed.returncode == 1 and "answered 400" in failed.stderr
        done = chat(tmp_path, env, "Hello?\n", "--user", "ana")
        assert done.returncode == 0, done.stderr
        messages = server.requests[-1]["messages"]
        assert [m["role"] for m in messages] == ["system", "user"]
        assert messages[1]["content"] == "Hello?"


def test_a_line_over_the_memory_limit_is_refused_before_it_is_sent(tmp_path: Path) -> None:
    with ScriptedOpenAIServer("Hello.") as server:
        env = {"OPENAI_BASE_URL": server.url}
        done = chat(tmp_path, env, "x" * 1_000_001 + "\nHi!\n", "--user", "ana")
        assert done.returncode == 0, done.stderr
        assert "1,000,001 characters long" in done.stdout and "at most 1,000,000" in done.stdout
        assert "assistant> Hello." in done.stdout  # the chat went on: "Hi!" was answered
        (request,) = server.requests
        assert [m["content"] for m in request["messages"][1:]] == ["Hi!"]


def test_a_server_that_stalls_is_reported_after_the_chat_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io
    import time

    from langchain_agentmem.cli.chat import session as chat_module

    def late(body: dict[str, object]) -> str:
        time.sleep(4)
        return "Too late."

    monkeypatch.setattr(chat_module, "MODEL_TIMEOUT", 1.0, raising=False)  # 120 s in use
    with ScriptedOpenAIServer(late, late) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out, err = io.StringIO(), io.StringIO()
        code = chat_module.run_chat(
            io.StringIO("Hi!\n"), out, err, store=None, user="me", thread="t", k=2
        )
    assert code == chat_module.EXIT_MODEL_ERROR, out.getvalue()
    assert "did not answer in time" in err.getvalue()


def start_chat(cwd: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    """``agentmem chat`` waiting for input (its greeting read)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "langchain_agentmem.cli", "chat", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=environment(cwd, env),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdout is not None
    assert "agentmem chat" in proc.stdout.readline()
    return proc


def test_a_second_session_on_the_same_thread_is_refused(tmp_path: Path) -> None:
    with ScriptedOpenAIServer() as server:
        env = {"OPENAI_BASE_URL": server.url}
        first = start_chat(tmp_path, env, "--user", "ana", "--thread", "t")
        try:
            second = chat(tmp_path, env, "Hi!\n", "--user", "ana", "--thread", "t")
            assert second.returncode == 2 and second.stdout == ""
            (line,) = second.stderr.splitlines()
            assert line.startswith("agentmem chat: thread 't' of user 'ana' is open in another")
            assert "--thread NAME" in line
            assert server.requests == []  # refused before anything was sent
            # Another thread, or another user's thread of that name, is another conversation.
            other = chat(tmp_path, env, "Hi!\n", "--user", "ana", "--thread", "t2")
            bo = chat(tmp_path, env, "Hi!\n", "--user", "bo", "--thread", "t")
            assert other.returncode == 0 and bo.returncode == 0, other.stderr + bo.stderr
        finally:
            first.kill()  # however it ends, the system releases its lock
            first.communicate(timeout=60)
        again = chat(tmp_path, env, "Hi again!\n", "--user", "ana", "--thread", "t")
        assert again.returncode == 0, again.stderr
        # Lock files are named by digests, and gone once their session ended.
        home = tmp_path / "home"
        assert not [p for p in home.rglob("*") if "ana" in p.name or p.suffix == ".lock"]

        killed = start_chat(tmp_path, env, "--user", "ana", "--thread", "t")
        killed.kill()
        killed.communicate(timeout=60)
        (left,) = home.rglob("*.lock")  # what a killed session leaves: forget erases it
        assert forget(tmp_path, "--user", "ana").returncode == 0
        assert not left.exists()


def checkpoint_bytes(cwd: Path) -> bytes:
    """What the default store's checkpoint file and its SQLite companions hold."""
    files = (cwd / "home").glob("chat-checkpoints.db*")
    return b"".join(p.read_bytes() for p in files if p.is_file())


def test_ctrl_c_while_the_reply_is_awaited_ends_the_chat_at_once(tmp_path: Path) -> None:
    import threading

    asked, release = threading.Event(), threading.Event()

    def stalled(body: dict[str, object]) -> str:
        asked.set()
        release.wait(120)  # longer than the test waits for the chat to end
        return "Too late."

    with ScriptedOpenAIServer(stalled, "Hello.") as server:
        env = {"OPENAI_BASE_URL": server.url}
        proc = start_chat(tmp_path, env, "--user", "ana", "--thread", "t")
        assert proc.stdin is not None
        proc.stdin.write("I am Ana, a cellist.\n")
        proc.stdin.flush()
        assert asked.wait(120)
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=60)  # the model has not answered yet
        finally:
            release.set()
        assert proc.returncode == 130
        assert "Traceback" not in err and "KeyboardInterrupt" not in err
        assert b"cellist" not in checkpoint_bytes(tmp_path)  # no trace of it in the thread

        later = chat(tmp_path, env, "Hello?\n/memories\n", "--user", "ana", "--thread", "t")
        assert later.returncode == 0, later.stderr
        messages = server.requests[-1]["messages"]
        assert [m["content"] for m in messages[1:]] == ["Hello?"]  # the turn was taken out
        assert '] user: "I am Ana, a cellist."' in later.stdout  # remembered all the same
    assert b"Hello?" in checkpoint_bytes(tmp_path)


def test_a_reply_longer_than_the_memory_keeps_stays_in_the_thread(tmp_path: Path) -> None:
    long_reply = "y" * 1_000_001
    with ScriptedOpenAIServer(long_reply, "Fine.") as server:
        env = {"OPENAI_BASE_URL": server.url}
        script = "Write a lot?\nAnd now?\n/memories\n"
        done = chat(tmp_path, env, script, "--user", "ana", "--remember-replies")
        assert done.returncode == 0, done.stderr
        (line,) = done.stderr.splitlines()
        assert line == (
            "agentmem chat: the assistant's reply (1,000,001 characters) is not remembered: "
            "this memory keeps at most 1,000,000 characters per text (max_text_chars); it "
            "stays in the conversation"
        )
        assert f"assistant> {long_reply}\n" in done.stdout  # the warning is not inside it
        messages = server.requests[-1]["messages"]
        # The thread keeps the reply; the next turn is sent only what fits --history-tokens.
        assert [m["content"] for m in messages[1:]] == ["And now?"]
        assert "(3 memories)" in done.stdout
        assert 'assistant (replying to "And now?"): "Fine."' in done.stdout


@pytest.mark.parametrize("ending", ["SIGTERM", "SIGHUP", "SIGKILL", "reader gone"])
def test_a_session_ended_during_a_reply_leaves_no_half_turn(tmp_path: Path, ending: str) -> None:
    # kill, a closed terminal, a reader of the output that went away (`| head`), or a
    # SIGKILL no handler sees (the next session takes the turn out): never replayed.
    import threading

    asked, release = threading.Event(), threading.Event()

    def stalled(body: dict[str, object]) -> str:
        asked.set()
        release.wait(120)
        return "Too late."

    with ScriptedOpenAIServer(stalled, "Hello.") as server:
        env = {"OPENAI_BASE_URL": server.url}
        proc = start_chat(tmp_path, env, "--user", "ana", "--thread", "t")
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.write("I am Ana, a cellist.\n")
        proc.stdin.flush()
        assert asked.wait(120)
        try:
            if ending == "reader gone":
                proc.stdout.close()
                release.set()  # the reply comes, and has nowhere to go
            else:
                proc.send_signal(getattr(signal, ending))
            code = proc.wait(timeout=60)  # the model has not answered yet (but: reader gone)
        finally:
            release.set()
        err = proc.stderr.read()
        expected = {"SIGKILL": -9, "reader gone": 141}.get(ending)
        assert code == (expected or 128 + getattr(signal, ending)), err
        assert "Traceback" not in err and "Segmentation" not in err, err
        if ending != "SIGKILL":  # a handler ran: the turn is already out of the file
            assert b"cellist" not in checkpoint_bytes(tmp_path)

        later = chat(tmp_path, env, "Hello?\n/memories\n", "--user", "ana", "--thread", "t")
        assert later.returncode == 0, later.stderr
        messages = server.requests[-1]["messages"]
        assert [m["content"] for m in messages[1:]] == ["Hello?"]  # the turn was taken out
        assert '] user: "I am Ana, a cellist."' in later.stdout  # remembered all the same
    assert b"cellist" not in checkpoint_bytes(tmp_path)
    assert not list((tmp_path / "home").rglob("*.lock"))


def test_forget_removes_the_lock_a_session_killed_before_its_first_turn_left(
    tmp_path: Path,
) -> None:
    with ScriptedOpenAIServer() as server:
        killed = start_chat(tmp_path, {"OPENAI_BASE_URL": server.url}, "--user", "ivy")
        killed.kill()
        killed.communicate(timeout=60)
    (left,) = (tmp_path / "home").rglob("*.lock")
    done = forget(tmp_path, "--user", "ivy")
    # Nothing of ivy's was stored (an unknown user is an error), but the lock is swept.
    assert done.returncode == 1 and "'ivy' has no records" in done.stderr, done.stderr
    assert not left.exists()


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("nul \x00 tea", "that line holds a NUL character (at 5): remove it"),
        ("caf\udce9", "that line is not valid UTF-8 (at 4): set the terminal's encoding"),
    ],
)
def test_a_line_the_memory_cannot_keep_is_not_sent(tmp_path: Path, line: str, why: str) -> None:
    with ScriptedOpenAIServer("Hello.") as server:
        env = {"OPENAI_BASE_URL": server.url}
        base = environment(tmp_path, env)
        done = subprocess.run(
            [sys.executable, "-m", "langchain_agentmem.cli", "chat", "--user", "jay"],
            input=f"{line}\nHi.\n".encode("utf-8", "surrogateescape"),
            capture_output=True,
            cwd=tmp_path,
            env=base,
            timeout=180,
        )
        out = done.stdout.decode("utf-8", "replace")
        assert done.returncode == 0, done.stderr
        assert f"{why}" in out and "(nothing was sent)" in out, out
        assert [[m["content"] for m in r["messages"][1:]] for r in server.requests] == [["Hi."]]


def test_memories_escapes_ids_and_forget_takes_them_as_shown(tmp_path: Path) -> None:
    import io

    from langchain_agentmem import AgentMemory
    from langchain_agentmem.cli.chat.commands import command as _command
    from tests.stores import HashEmbeddings

    with AgentMemory(f"sqlite:///{tmp_path / 'm.db'}", embeddings=HashEmbeddings()) as memory:
        memory.add("I like tea.", namespace="ana", record_id="\x1b]0;owned\x07\x1b[2J\u202eid")
        memory.add("I like cocoa.", namespace="ana", record_id="plain-id")
        out = io.StringIO()
        _command("/memories", memory, "ana", out)
        listed = out.getvalue()
        assert "\x1b" not in listed and "\x07" not in listed and "\u202e" not in listed
        shown = next(line for line in listed.splitlines() if "tea" in line).split("  ")[0]
        assert shown == '"\\u001b]0;owned\\u0007\\u001b[2J\\u202eid"'
        assert any(line.startswith("plain-id  [") for line in listed.splitlines())
        _command(f"/forget {shown}", memory, "ana", out)
        assert [r.id for r in memory.records("ana")] == ["plain-id"]


def test_forget_of_a_memory_deleted_meanwhile_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from langchain_agentmem import AgentMemory
    from langchain_agentmem.cli.chat.commands import command as _command
    from tests.stores import HashEmbeddings

    with AgentMemory(f"sqlite:///{tmp_path / 'm.db'}", embeddings=HashEmbeddings()) as memory:
        memory.add("I like tea.", namespace="ana", record_id="tea")
        real_get = memory.get

        def then_another_session_forgets(*args: object, **kwargs: object) -> object:
            found = real_get(*args, **kwargs)  # type: ignore[arg-type]
            memory.delete("tea", namespace="ana")
            return found

        monkeypatch.setattr(memory, "get", then_another_session_forgets)
        out = io.StringIO()
        assert _command("/forget tea", memory, "ana", out) is False  # the session goes on
        assert out.getvalue() in (
            "forgot tea\n",
            "no memory 'tea' of yours; /memories lists their ids\n",
        )
        assert memory.records("ana") == []
        out = io.StringIO()
        _command("/forget tea", memory, "ana", out)  # already gone
        assert out.getvalue().startswith("no memory 'tea' of yours")
