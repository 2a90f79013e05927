"""Hostile input on every store: a clear error or an exact round-trip, never a partial write.

Fuzzed with hypothesis (text with control characters, NUL, lone surrogates, SQL
metacharacters; names with quotes, slashes and path segments; message contents; metadata
trees), plus fixed cases for megabyte strings. Writes use the deterministic test embedder
(the store is under test); one test runs a megabyte text through the real model.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langchain_agentmem import (
    AgentMemory,
    AgentMemoryError,
    InvalidInputError,
    InvalidTypeError,
    OpKind,
    SentenceTransformerEmbeddings,
    StoreError,
)
from langchain_agentmem.text.replies import only_asks
from langchain_agentmem.text.sentences import MAX_SENTENCES
from langchain_agentmem.validation import MAX_NAME_LENGTH, STORE_MARK, SURROGATE_PAIR
from tests.stores import HashEmbeddings

FUZZ = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
MB = 1_000_000

NASTY = [
    "'; DROP TABLE agentmem_records; --",
    'he said "hi"',
    "../../etc/passwd",
    "..",
    "/",
    "a/b\\c",
    "%s",
    "%(x)s",
    "?",
    "$1",
    ":memory:",
    "sqlite:///x.db",
    "\\x00",
    "ns\n\r\t",
    "\x1b[31mred",
    "\u202eevil",
    "😀" * 10,
    "ﬁ",
    " padded ",
]
# Every code point class, lone surrogates and NUL included.
ANY_CHAR = st.characters(codec=None, categories=None)
any_text = st.one_of(
    st.text(ANY_CHAR, max_size=200),
    st.sampled_from(NASTY),
    st.lists(st.sampled_from([*NASTY, "\x00", "\ud800", " ", "word"]), max_size=6).map("".join),
)


@pytest.fixture
def mem(store_url: str) -> Iterator[AgentMemory]:
    """An AgentMemory with the test embedder on a fresh store of each kind."""
    memory = AgentMemory(store_url, embeddings=HashEmbeddings())
    memory.add("control record", namespace="control", record_id="control-1")
    memory.add_messages([HumanMessage("control message")], namespace="control", thread="t")
    yield memory
    memory.close()


def _valid_text(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return bool(text.strip()) and "\x00" not in text


def _valid_name(name: str) -> bool:
    return _valid_text(name) and len(name) <= MAX_NAME_LENGTH


def _snapshot(mem: AgentMemory, namespace: str) -> tuple[Any, ...]:
    return (
        [(r.id, r.text) for r in mem.records(namespace)],
        [d.seq for d in mem.decisions(namespace)],
        [(r.id, r.text) for r in mem.records("control")],
        [m.content for m in mem.messages(namespace="control", thread="t")],
    )


@FUZZ
@given(text=any_text)
def test_fuzzed_text_round_trips_or_is_refused_whole(mem: AgentMemory, text: str) -> None:
    before = _snapshot(mem, "u")
    if not _valid_text(text):
        with pytest.raises(InvalidInputError):
            mem.add(text, namespace="u")
        assert _snapshot(mem, "u") == before
        return
    (op,) = mem.add(text, namespace="u", metadata={"echo": text})
    if op.kind is OpKind.NOOP:  # a question drawn twice: the policy keeps it once
        assert "asked before" in op.reason and only_asks(text)
        assert _snapshot(mem, "u")[0] == before[0]  # nothing stored, nothing lost
        return
    record = mem.get(op.record_ids[0], namespace="u")
    assert record.text == text and record.metadata == {"echo": text}
    assert mem.decisions("u")[-1].text == text
    hits = mem.search(text, namespace="u", k=3)
    assert hits and all(h.namespace == "u" for h in hits)
    assert len(mem.records("u")) == len(before[0]) + 1
    assert _snapshot(mem, "u")[2:] == before[2:]


names = st.one_of(
    st.sampled_from(NASTY),
    st.text(ANY_CHAR, min_size=0, max_size=30),
    st.just("x" * (MAX_NAME_LENGTH + 1)),
)


@FUZZ
@given(name=names)
@example(name="\x1flg/memories/bob")
def test_fuzzed_names_are_exact_partitions_or_refused(mem: AgentMemory, name: str) -> None:
    control = _snapshot(mem, "control")
    if not _valid_name(name):
        for call in (
            lambda: mem.add("fact", namespace=name),
            lambda: mem.add("fact", namespace="ok", record_id=name),
            lambda: mem.add("fact", namespace="ok", thread=name),
            lambda: mem.add_messages([HumanMessage("m")], namespace=name, thread="t"),
            lambda: mem.add_messages([HumanMessage("m")], namespace="ok", thread=name),
        ):
            with pytest.raises(AgentMemoryError) as info:
                call()
            assert isinstance(info.value, (ValueError, TypeError))
        assert mem.records("ok") == [] and _snapshot(mem, "control") == control
        return
    if name.startswith(STORE_MARK):
        # Reserved for AgentMemoryStore's namespaces: refused as a namespace, fine elsewhere.
        for call in (
            lambda: mem.add("fact", namespace=name),
            lambda: mem.search("fact", namespace=name),
            lambda: mem.add_messages([HumanMessage("m")], namespace=name, thread="t"),
        ):
            with pytest.raises(InvalidInputError, match="reserved"):
                call()
        if name not in {r.id for r in mem.records("marked")}:
            mem.add("fact", namespace="marked", thread=name, record_id=name)
        assert mem.get(name, namespace="marked").thread == name
        assert _snapshot(mem, "control") == control
        return
    rid = "id:" + name
    if rid in {r.id for r in mem.records(name)}:
        return  # this name was drawn before; ids are unique per namespace
    mem.add(f"fact of {name}", namespace=name, thread=name, record_id=rid)
    got = mem.get(rid, namespace=name)
    assert (got.id, got.namespace, got.thread) == (rid, name, name)
    assert name in mem.namespaces()
    assert rid in [h.id for h in mem.search("fact", namespace=name, k=50)]
    assert rid not in [h.id for h in mem.search("fact", namespace="control", k=50)]
    mem.add_messages([HumanMessage(name)], namespace=name, thread=name)
    assert mem.messages(namespace=name, thread=name, last=1)[0].content == name
    assert name in mem.threads(name)
    assert _snapshot(mem, "control") == control


@FUZZ
@given(contents=st.lists(st.text(ANY_CHAR, max_size=80), min_size=1, max_size=4))
def test_fuzzed_message_content_round_trips(mem: AgentMemory, contents: list[str]) -> None:
    batch: list[BaseMessage] = []
    for i, content in enumerate(contents):
        if i % 3 == 0:
            batch.append(HumanMessage(content))
        elif i % 3 == 1:
            batch.append(AIMessage([{"type": "text", "text": content}], name="bot"))
        else:
            batch.append(ToolMessage(content, tool_call_id=content or "call"))
    before = len(mem.messages(namespace="chat", thread="t"))
    mem.add_messages(batch, namespace="chat", thread="t")
    got = mem.messages(namespace="chat", thread="t", last=len(batch))
    assert [type(m) for m in got] == [type(m) for m in batch]
    assert [m.content for m in got] == [m.content for m in batch]
    assert len(mem.messages(namespace="chat", thread="t")) == before + len(batch)


json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(ANY_CHAR, max_size=20),
)
json_tree = st.recursive(
    json_leaf,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4), st.dictionaries(st.text(ANY_CHAR, max_size=8), kids)
    ),
    max_leaves=20,
)
bad_leaf = st.sampled_from([{1, 2}, b"bytes", object(), {1: "int key"}, 1j, range(3)])


@FUZZ
@given(tree=st.dictionaries(st.text(ANY_CHAR, max_size=8), json_tree), bad=bad_leaf)
def test_fuzzed_metadata_round_trips_and_bad_leaves_are_refused(
    mem: AgentMemory, tree: dict[str, Any], bad: Any
) -> None:
    if SURROGATE_PAIR.search(json.dumps(tree, ensure_ascii=False)):
        # A high + low surrogate held as two code points would come back as one character.
        before = _snapshot(mem, "m")
        with pytest.raises(InvalidInputError, match="surrogate pair"):
            mem.add("never stored", namespace="m", metadata=tree)
        assert _snapshot(mem, "m") == before
        return
    (op,) = mem.add("with metadata", namespace="m", metadata=tree)
    assert dict(mem.get(op.record_ids[0], namespace="m").metadata) == _canonical(tree)
    before = _snapshot(mem, "m")
    spoiled = {**tree, "bad": [tree, {"deeper": bad}]}
    with pytest.raises(InvalidTypeError, match="metadata"):
        mem.add("never stored", namespace="m", metadata=spoiled)
    rid = op.record_ids[0]
    with pytest.raises(InvalidTypeError, match="metadata"):
        mem.update(rid, "never stored", namespace="m", metadata=spoiled)
    assert _snapshot(mem, "m") == before
    assert mem.get(rid, namespace="m").text == "with metadata"


def _canonical(value: Any) -> Any:
    """What JSON gives back: tuples as lists (floats, ints, strings unchanged)."""
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


def test_surrogates_in_metadata(mem: AgentMemory) -> None:
    lone = {"high": "a\ud800b", "low\udc00": ["\udfff"], "astral": "\U0001f600"}
    (op,) = mem.add("lone surrogates round-trip", namespace="s", metadata=lone)
    assert dict(mem.get(op.record_ids[0], namespace="s").metadata) == _canonical(lone)
    for bad in ({"k": "x\ud83d\ude00"}, {"k\ud800\udc00": 1}, {"k": [{"d": "\udbff\udfff"}]}):
        with pytest.raises(InvalidInputError, match="surrogate pair"):
            mem.add("never stored", namespace="s", metadata=bad)
        with pytest.raises(InvalidInputError, match="surrogate pair"):
            mem.update(op.record_ids[0], "never stored", namespace="s", metadata=bad)
    assert [r.text for r in mem.records("s")] == ["lone surrogates round-trip"]


def test_megabyte_strings_round_trip(mem: AgentMemory) -> None:
    huge = ("SELECT * FROM agentmem_records; -- é 😀 \x01\t" * (MB // 40))[:MB]
    (op,) = mem.add(huge, namespace="big", metadata={"copy": huge})
    record = mem.get(op.record_ids[0], namespace="big")
    assert record.text == huge and record.metadata["copy"] == huge
    mem.update(op.record_ids[0], huge[::-1], namespace="big")
    assert mem.get(op.record_ids[0], namespace="big").text == huge[::-1]
    mem.add_messages([HumanMessage(huge + "\x00\ud800")], namespace="big", thread="t")
    assert mem.messages(namespace="big", thread="t")[0].content == huge + "\x00\ud800"
    assert mem.search(huge[:1000], namespace="big", k=1)[0].id == op.record_ids[0]
    with pytest.raises(InvalidInputError, match="NUL"):
        mem.add(huge + "\x00", namespace="big")
    assert len(mem.records("big")) == 1


def test_malformed_messages_write_nothing(mem: AgentMemory) -> None:
    mem.add_messages([HumanMessage("kept")], namespace="chat", thread="t")
    malformed: list[Any] = [
        None,
        "plain text",
        b"bytes",
        {"role": "user", "content": "hi"},
        [HumanMessage("good"), {"role": "user", "content": "bad"}],
        [HumanMessage("good"), AIMessage("x", additional_kwargs={"blob": b"\x00"})],
        [HumanMessage("good"), AIMessage("x", response_metadata={"obj": object()})],
        [HumanMessage("good"), 42],
    ]
    for bad in malformed:
        with pytest.raises(AgentMemoryError):
            mem.add_messages(bad, namespace="chat", thread="t")
    assert [m.content for m in mem.messages(namespace="chat", thread="t")] == ["kept"]


class _BreakableEmbeddings(HashEmbeddings):
    """Hashed embeddings, or ``bad`` for every text while it is set."""

    def __init__(self) -> None:
        super().__init__()
        self.bad: list[float] | None = None

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.bad is None:
            return super().embed_documents(texts)
        return [self.bad for _ in texts]


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize(
    ("vector", "fragment"),
    [([1.0] * 5, "5 dimensions"), ([math.nan] * 384, "NaN"), ([math.inf] * 384, "NaN")],
)
def test_bad_embeddings_never_poison_a_namespace(
    mem: AgentMemory, store_url: str, vector: list[float], fragment: str
) -> None:
    embedder = _BreakableEmbeddings()
    own = store_url == ":memory:"  # a private store: the broken embedder meets its own data
    writer = AgentMemory(":memory:", embeddings=embedder) if own else mem
    (op,) = writer.add("good record", namespace="u")
    broken = writer if own else AgentMemory(store_url, embeddings=embedder)
    embedder.bad = vector
    try:
        with pytest.raises(InvalidInputError, match=fragment):
            broken.add("bad vector", namespace="u")
        with pytest.raises(InvalidInputError, match=fragment):
            broken.update(op.record_ids[0], "bad vector", namespace="u")
    finally:
        embedder.bad = None
        if broken is not writer:
            broken.close()
    assert [r.text for r in writer.records("u")] == ["good record"]
    assert [h.id for h in writer.search("good", namespace="u")] == list(op.record_ids)
    if own:
        writer.close()


def test_what_a_memory_is_made_with_is_read_only(mem: AgentMemory) -> None:
    """Its parts were built with them: a swapped embedder would reach none of them."""
    for name in ("embeddings", "policy", "hybrid", "limits", "backend", "clock", "annotator"):
        with pytest.raises(AttributeError):
            setattr(mem, name, getattr(mem, name))


def test_huge_limits_mean_everything(mem: AgentMemory) -> None:
    mem.add("one", namespace="u")
    assert len(mem.search("one", namespace="u", k=10**20)) == 1
    assert len(mem.decisions("u", limit=10**20)) == 1
    assert len(mem.messages(namespace="control", thread="t", last=10**20)) == 1
    with pytest.raises(InvalidTypeError):
        mem.search("one", namespace="u", k=True)
    with pytest.raises(InvalidInputError):
        mem.messages(namespace="u", thread="t", last=-1)


def test_words_the_lexical_index_drops_still_search(mem: AgentMemory) -> None:
    """Texts with no BM25 tokens (one letter, stop words, symbols) must not break search."""
    for text in ["x", "the of and", "!!!", "\x01"]:
        mem.add(text, namespace="u")
    for mode in ("hybrid", "dense", "lexical"):
        mem.search("x", namespace="u", k=10, mode=mode)
    assert len(mem.search("the", namespace="u", k=10)) == 4


@pytest.mark.slow
def test_megabyte_text_with_the_real_model(
    store_url: str, embeddings: SentenceTransformerEmbeddings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ~23,000 distinct sentences: the record's vector reads MAX_SENTENCES of them, not all.
    huge = "".join(f"My name is Alice and game {i} was chess. " for i in range(MB // 30))[:MB]
    sent: list[int] = []
    embed_array, embed_packed = embeddings.embed_array, embeddings.embed_packed

    def counted(texts: list[str]) -> Any:
        sent.append(len(texts))
        return embed_array(texts)

    def counted_packed(texts: list[str]) -> Any:
        sent.append(len(texts))
        return embed_packed(texts)  # packed in one pass, or (too many tokens) batched

    monkeypatch.setattr(embeddings, "embed_array", counted)
    monkeypatch.setattr(embeddings, "embed_packed", counted_packed)
    with AgentMemory(store_url, embeddings=embeddings) as mem:
        (op,) = mem.add(huge, namespace="alice")
        assert sent and all(n == 1 + MAX_SENTENCES for n in sent)
        mem.add("I live in Paris.", namespace="alice")
        assert mem.get(op.record_ids[0], namespace="alice").text == huge
        assert mem.search("What is my name?", namespace="alice", k=1)[0].id == op.record_ids[0]


def test_a_file_that_is_no_database_is_named_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"my notes, not a database\n")
    with pytest.raises(StoreError, match=r"cannot open SQLite store '.*notes\.db': file is not"):
        AgentMemory(f"sqlite:///{path}", embeddings=HashEmbeddings())
    assert path.read_bytes() == b"my notes, not a database\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]


async def test_async_writes_split_long_texts_off_the_event_loop(
    tmp_path: Path, embeddings: SentenceTransformerEmbeddings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Splitting a long text into sentences is CPU work: on the event loop it stalls every
    # other request of an async server (the MCP server over HTTP) for as long as it takes.
    from langchain_agentmem.embedding import embeddings as embedding_module

    batch = embedding_module._record_batch
    threads: list[threading.Thread] = []

    def spied(texts: list[str], split: Any) -> Any:
        threads.append(threading.current_thread())
        return batch(texts, split)

    monkeypatch.setattr(embedding_module, "_record_batch", spied)
    text = "Dr. " * 2_000 + "I saw Dr. Moreau today. She was kind."
    with AgentMemory(f"sqlite:///{tmp_path / 'm.db'}", embeddings=embeddings) as mem:
        (added,) = await mem.aadd(text, namespace="alice")
        await mem.aadd_many([text, "I live in Lyon."], namespace="alice")
        await mem.aput("note", text, namespace="alice")
        await mem.aput_many([text], namespace="alice", record_ids=["note2"])
        await mem.aupdate(added.record_ids[0], text + " Later.", namespace="alice")
    assert len(threads) == 5
    assert threading.main_thread() not in threads


@pytest.mark.slow
def test_a_megabyte_of_abbreviations_is_stored_and_loaded_in_linear_time(
    tmp_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    # Once quadratic: two hours to store, and as long again on each cold load of its user.
    url = f"sqlite:///{tmp_path / 'm.db'}"
    text = ("Dr. " * (MB // 4))[: MB - 40] + "I saw Dr. Moreau today."
    with AgentMemory(url, embeddings=embeddings) as mem:
        (op,) = mem.add(text, namespace="alice")
        mem.add("I live in Lyon.", namespace="alice")
    with AgentMemory(url, embeddings=embeddings) as mem:  # a cold load reads it again
        assert {r.id for r in mem.search("Moreau", namespace="alice", k=2)} >= set(op.record_ids)
