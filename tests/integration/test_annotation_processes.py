"""Two processes on one namespace, both annotating with a model: each statement is labelled
once, whichever process gets to it first (a claim in the store), and none is left out."""

from __future__ import annotations

import multiprocessing as mp
import time
from collections import Counter
from pathlib import Path
from typing import Any

from langchain_openai import ChatOpenAI

from langchain_agentmem import AgentMemory
from langchain_agentmem.annotation.annotations import SYSTEM, current_annotation
from tests.openai_server import ScriptedOpenAIServer, message_text, plain_notes
from tests.stores import HashEmbeddings

ctx = mp.get_context("spawn")

NAMESPACE = "shared"
PER_PROCESS = 8


def _statements(who: str) -> list[str]:
    return [f"{who} told us about weekend number {i} at the lake." for i in range(PER_PROCESS)]


def _memory(url: str, model_url: str) -> AgentMemory:
    model = ChatOpenAI(model="scripted", base_url=model_url, api_key="test", max_retries=0)
    return AgentMemory(url, embeddings=HashEmbeddings(), model=model)


def _first(url: str, model_url: str, written: Any) -> None:
    """Stores its statements, lets the second process open the namespace, then waits."""
    with _memory(url, model_url) as memory:
        memory.add_many(_statements("Ana"), namespace=NAMESPACE, metadatas=None)
        written.set()
        assert memory.wait_annotated(timeout=120)


def _second(url: str, model_url: str, written: Any) -> None:
    """Opens the namespace while the first process's statements wait for annotation."""
    assert written.wait(60)
    with _memory(url, model_url) as memory:
        memory.search("the lake", namespace=NAMESPACE)  # loads it: the waiting ones are offered
        memory.add_many(_statements("Ben"), namespace=NAMESPACE, metadatas=None)
        assert memory.wait_annotated(timeout=120)


def _slow_notes(body: dict[str, Any]) -> str:
    time.sleep(0.15)  # long enough for both processes to hold waiting statements at once
    return plain_notes(body)


def test_each_statement_is_labelled_once_across_processes(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with ScriptedOpenAIServer(annotate=_slow_notes) as server:
        written = ctx.Event()
        procs = [
            ctx.Process(target=target, args=(url, server.url, written))
            for target in (_first, _second)
        ]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(180)
        assert [proc.exitcode for proc in procs] == [0, 0]
        labelled = Counter(
            message_text(body["messages"][-1])
            for body in server.annotations
            if message_text(body["messages"][0]) == SYSTEM
        )
    said = _statements("Ana") + _statements("Ben")
    assert labelled == Counter(said)  # each once: none twice, none left out
    with AgentMemory(url, embeddings=HashEmbeddings()) as memory:
        records = memory.records(NAMESPACE)
        assert sorted(r.text for r in records) == sorted(said)
        assert all(current_annotation(r.metadata, r.text) for r in records)
        assert memory.backend.claim(NAMESPACE, records[0].id, "x", until=2e9, now=time.time())
