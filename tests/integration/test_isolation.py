"""Namespaces are hard partitions, under random add / update / delete / search sequences.

A hypothesis state machine drives two ``AgentMemory`` objects on one store (so every step
also exercises catching up with the other object's writes) and checks each step against a
plain model of the store: no result crosses a namespace, ids of another namespace are
refused on update / delete, and a search asking for everything returns exactly the model.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    invariant,
    rule,
    run_state_machine_as_test,
)

from langchain_agentmem import AgentMemory, RecordNotFoundError, SentenceTransformerEmbeddings
from tests.stores import HashEmbeddings, create_pg_schema_url, drop_pg_schema

NAMESPACES = [f"user-{i}" for i in range(8)] + ["user-1 ", "USER-1", "user-1/..", "user'1"]
WORDS = ["coffee", "mountain", "violin", "train", "garden", "chess", "sushi", "rain", "paris"]
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
namespaces = st.sampled_from(NAMESPACES)
STATEFUL = settings(
    max_examples=25,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def make_machine(open_store: Callable[[], tuple[str, Callable[[], None]]]) -> type:
    """A state machine class whose every run gets a fresh store from ``open_store``."""

    class Isolation(RuleBasedStateMachine):
        records = Bundle("records")

        def __init__(self) -> None:
            super().__init__()
            self.url, self._cleanup = open_store()
            emb = HashEmbeddings()
            self.mems = [AgentMemory(self.url, embeddings=emb) for _ in range(2)]
            self.model: dict[str, tuple[str, str]] = {}  # id -> (namespace, text)

        def teardown(self) -> None:
            for mem in self.mems:
                mem.close()
            self._cleanup()

        def _in(self, namespace: str) -> dict[str, str]:
            return {rid: text for rid, (ns, text) in self.model.items() if ns == namespace}

        @rule(target=records, who=st.integers(0, 1), namespace=namespaces, text=texts)
        def add(self, who: int, namespace: str, text: str) -> str:
            (op,) = self.mems[who].add(text, namespace=namespace)
            rid = op.record_ids[0]
            self.model[rid] = (namespace, text)
            return rid

        def _guess(self, rid: str, guess: str, right: bool) -> str:
            owner = self.model.get(rid)
            return owner[0] if right and owner is not None else guess

        @rule(rid=records, who=st.integers(0, 1), guess=namespaces, right=st.booleans(), text=texts)
        def update(self, rid: str, who: int, guess: str, right: bool, text: str) -> None:
            guess = self._guess(rid, guess, right)
            owner = self.model.get(rid)
            if owner is None or owner[0] != guess:
                with pytest.raises(RecordNotFoundError):
                    self.mems[who].update(rid, text, namespace=guess)
                return
            self.mems[who].update(rid, text, namespace=guess)
            self.model[rid] = (guess, text)

        @rule(rid=consumes(records), who=st.integers(0, 1), guess=namespaces, right=st.booleans())
        def delete(self, rid: str, who: int, guess: str, right: bool) -> None:
            guess = self._guess(rid, guess, right)
            owner = self.model.get(rid)
            if owner is None or owner[0] != guess:
                with pytest.raises(RecordNotFoundError):
                    self.mems[who].delete(rid, namespace=guess)
                return
            self.mems[who].delete(rid, namespace=guess)
            del self.model[rid]

        @rule(
            who=st.integers(0, 1),
            namespace=namespaces,
            query=texts,
            k=st.integers(1, 40),
            mode=st.sampled_from(["dense", "hybrid", "lexical"]),
        )
        def search(self, who: int, namespace: str, query: str, k: int, mode: str) -> None:
            hits = self.mems[who].search(query, namespace=namespace, k=k, mode=mode)
            mine = self._in(namespace)
            assert all(h.namespace == namespace for h in hits)
            assert {h.id for h in hits} <= set(mine)
            assert all(h.text == mine[h.id] for h in hits)
            if mode == "dense":
                assert len(hits) == min(k, len(mine))

        @invariant()
        def every_namespace_matches_the_model(self) -> None:
            # Checked through the second object: it saw none of the writes directly.
            mem = self.mems[1]
            for namespace in NAMESPACES:
                mine = self._in(namespace)
                stored = {r.id: r.text for r in mem.records(namespace)}
                assert stored == mine
                hits = mem.search("coffee rain", namespace=namespace, k=1000, mode="dense")
                assert sorted(h.id for h in hits) == sorted(mine)

    return Isolation


def _sqlite_store() -> tuple[str, Callable[[], None]]:
    folder = tempfile.mkdtemp(prefix="agentmem-iso-")
    return f"sqlite:///{folder}/store.db", lambda: shutil.rmtree(folder, ignore_errors=True)


def _pg_store() -> tuple[str, Callable[[], None]]:
    url, schema = create_pg_schema_url()
    return url, lambda: drop_pg_schema(schema)


@pytest.mark.slow
def test_isolation_state_machine_sqlite() -> None:
    run_state_machine_as_test(make_machine(_sqlite_store), settings=STATEFUL)


@pytest.mark.slow
@pytest.mark.postgres
def test_isolation_state_machine_postgres() -> None:
    create_pg_schema_url()  # skips locally / fails in CI when the server is unreachable
    run_state_machine_as_test(make_machine(_pg_store), settings=STATEFUL)


FACTS = [
    "My name is {n}.",
    "{n} loves playing chess on Sundays.",
    "{n} lives in a small flat in Paris.",
    "{n}'s password hint is the name of a cat.",
    "{n} is allergic to peanuts.",
]


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    plan=st.lists(
        st.tuples(st.sampled_from(["ann", "bob", "cem", "dia"]), st.integers(0, len(FACTS) - 1)),
        min_size=1,
        max_size=10,
    ),
    query=st.sampled_from(["What is my name?", "Any allergies?", "Where do I live?"]),
)
def test_real_model_results_never_cross_namespaces(
    embeddings: SentenceTransformerEmbeddings,
    plan: list[tuple[str, int]],
    query: str,
) -> None:
    with AgentMemory(":memory:", embeddings=embeddings) as mem:
        owned: dict[str, set[str]] = {}
        for user, fact in plan:
            (op,) = mem.add(FACTS[fact].format(n=user.title()), namespace=user)
            owned.setdefault(user, set()).add(op.record_ids[0])
        for user in ["ann", "bob", "cem", "dia"]:
            hits = mem.search(query, namespace=user, k=50)
            assert {h.id for h in hits} == owned.get(user, set())
            assert all(user.title() in h.text for h in hits)
            for other, ids in owned.items():
                if other != user:
                    for rid in ids:
                        with pytest.raises(RecordNotFoundError):
                            mem.delete(rid, namespace=user)
