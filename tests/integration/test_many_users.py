"""One process, many users: a bounded namespace cache, namespaces in parallel, bulk writes."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from langchain_agentmem import AgentMemory, InvalidInputError, InvalidTypeError, OpKind
from langchain_agentmem.policies import MemoryPolicy
from langchain_agentmem.types import Candidate, MemoryOp, MemoryState
from tests.stores import HashEmbeddings

TOPICS = ["coffee", "mountains", "violin", "trains", "gardening", "chess", "sushi", "rain"]


def _fill(mem: AgentMemory, namespaces: list[str], per: int) -> None:
    for n, ns in enumerate(namespaces):
        mem.add_many(
            [f"{ns} note {i} about {TOPICS[(n + i) % len(TOPICS)]}" for i in range(per)],
            namespace=ns,
            thread=f"t{n % 3}",
        )


def _answers(mem: AgentMemory, namespaces: list[str]) -> dict[str, list[tuple[str, float]]]:
    out = {}
    for ns in namespaces:
        for topic in ("coffee", "chess"):
            for mode in ("hybrid", "dense", "lexical"):
                hits = mem.search(f"note about {topic}", namespace=ns, k=4, mode=mode)
                out[f"{ns}/{topic}/{mode}"] = [(h.id, round(h.score or 0.0, 6)) for h in hits]
    return out


@pytest.mark.parametrize("bad", [0, -3, True, 2.5, "100", None])
def test_cache_records_must_be_a_positive_int(bad: Any) -> None:
    with pytest.raises((InvalidInputError, InvalidTypeError), match="cache_records"):
        AgentMemory(":memory:", embeddings=HashEmbeddings(), cache_records=bad)


@pytest.mark.parametrize("persist", [True, False])
def test_evicted_namespaces_reload_with_the_same_results(tmp_path: Path, persist: bool) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    namespaces = [f"user-{i}" for i in range(6)]
    with AgentMemory(url, embeddings=HashEmbeddings(), persist_indexes=persist) as mem:
        _fill(mem, namespaces, 20)
        expected = _answers(mem, namespaces)
    capped = AgentMemory(
        url, embeddings=HashEmbeddings(), cache_records=45, persist_indexes=persist
    )
    for _ in range(2):  # round-robin twice: every namespace is evicted and reloaded
        assert _answers(capped, namespaces) == expected
        info = capped.cache_info()
        assert info.records <= 45 and info.namespaces <= 2
    info = capped.cache_info()
    assert info.max_records == 45
    assert info.evictions >= 2 * len(namespaces) - 2
    assert info.misses >= 2 * len(namespaces)
    assert info.hits > 0  # the six searches of one namespace after its load
    # A write to an evicted namespace lands on its current state.
    capped.add("user-0 note about violin lessons", namespace="user-0", record_id="late")
    assert capped.search("violin lessons", namespace="user-0", k=1)[0].id == "late"
    capped.close()


def test_a_namespace_larger_than_the_cap_still_works() -> None:
    mem = AgentMemory(":memory:", embeddings=HashEmbeddings(), cache_records=5)
    _fill(mem, ["big", "small"], 12)
    assert mem.search("note about coffee", namespace="big", k=3)
    assert mem.cache_info().namespaces == 1
    assert len(mem.records("big")) == 12


def test_search_completes_while_its_namespace_is_evicted(tmp_path: Path) -> None:
    mem = AgentMemory(
        f"sqlite:///{tmp_path / 'store.db'}", embeddings=HashEmbeddings(), cache_records=30
    )
    others = [f"other-{i}" for i in range(8)]
    _fill(mem, ["watched", *others], 20)
    expected = _answers(mem, ["watched"])
    stop = threading.Event()
    errors: list[BaseException] = []

    def churn() -> None:
        try:
            while not stop.is_set():
                for ns in others:
                    mem.search("note about rain", namespace=ns, k=2)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=churn) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        rounds = 0
        start = mem.cache_info().evictions
        while rounds < 15 or mem.cache_info().evictions - start < 20:
            assert _answers(mem, ["watched"]) == expected
            rounds += 1
            assert rounds < 500
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors


class _Rendezvous(MemoryPolicy):
    """Decides for namespace "a" only once namespace "b" has decided: under one lock for
    every namespace the first writer would wait forever."""

    name = "rendezvous"

    def __init__(self) -> None:
        super().__init__(None)
        self.b_decided = threading.Event()

    def decide(self, candidate: Candidate, state: MemoryState) -> list[MemoryOp]:
        if candidate.namespace == "a":
            if not self.b_decided.wait(20):
                raise TimeoutError("namespace b never decided while a was deciding")
        else:
            self.b_decided.set()
        return [self.add_op(candidate, "kept")]


@pytest.mark.postgres
def test_namespaces_write_in_parallel_threads(pg_url: str) -> None:
    policy = _Rendezvous()
    mem = AgentMemory(pg_url, embeddings=HashEmbeddings(), policy=policy)
    first = threading.Thread(target=mem.add, args=("waits for b",), kwargs={"namespace": "a"})
    first.start()
    time.sleep(0.2)
    mem.add("lets a go", namespace="b")
    first.join(30)
    assert [r.text for r in mem.records("a")] == ["waits for b"]
    mem.close()


@pytest.mark.postgres
def test_namespaces_write_in_parallel_in_asyncio(pg_url: str) -> None:
    policy = _Rendezvous()
    mem = AgentMemory(pg_url, embeddings=HashEmbeddings(), policy=policy)

    async def main() -> None:
        a = asyncio.create_task(mem.aadd("waits for b", namespace="a"))
        await asyncio.sleep(0.2)
        await mem.aadd("lets a go", namespace="b")
        await asyncio.wait_for(a, 30)

    asyncio.run(main())
    assert len(mem.records("a")) == 1
    mem.close()


def _ordered_writes(mem: AgentMemory, namespaces: list[str], per: int) -> None:
    def writer(ns: str) -> None:
        for i in range(per):
            mem.add(f"{ns} step {i}", namespace=ns, record_id=f"{ns}-{i}")

    threads = [threading.Thread(target=writer, args=(ns,)) for ns in namespaces]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_each_namespace_keeps_its_order_under_threads_and_asyncio(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = (
        f"sqlite:///{tmp_path / 'store.db'}"
        if kind == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    mem = AgentMemory(url, embeddings=HashEmbeddings(), policy="fifo", capacity=5)
    namespaces = [f"ns{i}" for i in range(4)]
    _ordered_writes(mem, namespaces, 12)

    async def more() -> None:
        async def writer(ns: str) -> None:
            for i in range(12, 20):
                await mem.aadd(f"{ns} step {i}", namespace=ns, record_id=f"{ns}-{i}")

        await asyncio.gather(*(writer(ns) for ns in namespaces))

    asyncio.run(more())
    for ns in namespaces:
        adds = [d.record_ids[0] for d in mem.decisions(ns) if d.kind is OpKind.ADD]
        assert adds == [f"{ns}-{i}" for i in range(20)]
        # fifo forgot the first in: the survivors are the last five, oldest first.
        assert [r.id for r in mem.records(ns)] == [f"{ns}-{i}" for i in range(15, 20)]
        hits = mem.search(f"{ns} step 19", namespace=ns, k=5)
        assert {h.id for h in hits} == {f"{ns}-{i}" for i in range(15, 20)}
    mem.close()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
@pytest.mark.parametrize("policy", ["fifo", "importance", "learned", "novelty"])
def test_add_many_lets_the_policy_decide_inside_one_batch(
    kind: str, policy: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = (
        f"sqlite:///{tmp_path / 'store.db'}"
        if kind == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    texts = [
        f"Fact {i}: my {TOPICS[i % len(TOPICS)]} friend Anna visited on May {i + 1}, 2023"
        for i in range(25)
    ]
    batch = AgentMemory(url, embeddings=HashEmbeddings(), policy=policy, capacity=6)
    ops = batch.add_many(texts, namespace="bulk", record_ids=[f"b{i}" for i in range(25)])
    # One item at a time, on a second namespace of the same store: the same decisions.
    single = AgentMemory(url, embeddings=HashEmbeddings(), policy=policy, capacity=6)
    one_by_one = [
        single.add(t, namespace="single", record_id=f"b{i}x") for i, t in enumerate(texts)
    ]
    strip = [[(o.kind, o.record_ids) for o in item] for item in ops]
    rename = [[(o.kind, tuple(r[:-1] for r in o.record_ids)) for o in item] for item in one_by_one]
    assert strip == rename
    assert len(batch.records("bulk")) == 6
    # The cache followed the batch: searches and a fresh process agree.
    fresh = AgentMemory(url, embeddings=HashEmbeddings())
    for query in ("Anna coffee", "May 2023 chess"):
        for mode in ("hybrid", "lexical"):
            assert [
                (h.id, round(h.score or 0, 6))
                for h in batch.search(query, namespace="bulk", k=6, mode=mode)
            ] == [
                (h.id, round(h.score or 0, 6))
                for h in fresh.search(query, namespace="bulk", k=6, mode=mode)
            ]
    for m in (batch, single, fresh):
        m.close()


def test_add_many_is_one_transaction(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    mem = AgentMemory(url, embeddings=HashEmbeddings(), policy="fifo", capacity=5)
    mem.add_many(
        ["old one", "old two", "already here"], namespace="n", record_ids=["old1", "old2", "dup"]
    )
    with pytest.raises(InvalidInputError, match="dup"):
        mem.add_many(
            ["one", "two", "three", "clash"], namespace="n", record_ids=[None, None, None, "dup"]
        )
    # Nothing of the batch landed, not even the deletes fifo decided on the way.
    assert [r.id for r in mem.records("n")] == ["old1", "old2", "dup"]
    assert len(mem.decisions("n")) == 3
    assert {h.id for h in mem.search("old one", namespace="n", k=5)} == {"old1", "old2", "dup"}
    mem.close()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"text": "x" * 101}, "max_text_chars"),
        ({"text": "fine", "metadata": {"blob": "y" * 200}}, "max_metadata_bytes"),
    ],
)
def test_size_limits_refuse_and_store_nothing(kwargs: dict[str, Any], match: str) -> None:
    mem = AgentMemory(
        ":memory:", embeddings=HashEmbeddings(), max_text_chars=100, max_metadata_bytes=100
    )
    (op,) = mem.add("kept", namespace="n")
    with pytest.raises(InvalidInputError, match=match):
        mem.add(namespace="n", **kwargs)
    with pytest.raises(InvalidInputError, match=match):
        mem.add_many(
            ["short", kwargs["text"]], namespace="n", metadatas=[None, kwargs.get("metadata")]
        )
    with pytest.raises(InvalidInputError, match=match):
        mem.update(op.record_ids[0], kwargs["text"], namespace="n", metadata=kwargs.get("metadata"))
    assert [r.text for r in mem.records("n")] == ["kept"]
    assert len(mem.decisions("n")) == 1
    with pytest.raises(InvalidInputError, match="max_text_chars"):
        AgentMemory(":memory:", embeddings=HashEmbeddings(), max_text_chars=0)


def test_policy_caches_are_per_namespace_and_bounded() -> None:
    mem = AgentMemory(":memory:", embeddings=HashEmbeddings(), policy="importance", capacity=3)
    texts = [f"Anna met Bob in Paris on May {i}, 2023 at 10:{i:02d}" for i in range(1, 6)]
    mem.add_many(texts, namespace="alice")
    alice = dict(mem.policy.priorities.of("alice"))  # type: ignore[attr-defined]
    assert alice
    # Another user's writes leave alice's cached priorities alone.
    mem.add_many([f"hello {i}" for i in range(8)], namespace="bob")
    assert dict(mem.policy.priorities.of("alice")) == alice  # type: ignore[attr-defined]
    mem.policy.priorities.max_namespaces = 2  # type: ignore[attr-defined]
    for ns in ("carol", "dave"):
        mem.add("hi", namespace=ns)
    assert mem.policy.priorities.of("alice") == {}  # type: ignore[attr-defined]


def test_views_of_empty_namespaces_are_evicted_too() -> None:
    mem = AgentMemory(":memory:", embeddings=HashEmbeddings(), cache_records=50)
    mem.add("A note.", namespace="kept")
    for i in range(500):  # searches of users with nothing stored yet
        assert mem.search("anything", namespace=f"empty-{i}", k=1) == []
    info = mem.cache_info()
    assert info.namespaces <= 50 and info.evictions >= 450
    assert mem.search("note", namespace="kept", k=1)[0].text == "A note."
    mem.close()
