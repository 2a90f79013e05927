"""Each record's row keeps the terms the lexical index reads of its text, and a load reads
them there instead of tokenising every text again (most of what loading a namespace cost).

What a load builds from stored terms must be what it builds from the text; rows written
before the column existed, or in another format, are read from their text; a record whose
text changes keeps the terms of its new text.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator

import pytest

from langchain_agentmem import AgentMemory
from langchain_agentmem.backends import open_backend
from langchain_agentmem.index.lexical import tokenize
from langchain_agentmem.index.text import (
    TERMS_FORMAT,
    read_stored_terms,
    stored_terms,
    text_terms,
)
from langchain_agentmem.namespace.view import NamespaceView
from langchain_agentmem.text.replies import only_asks
from tests.stores import HashEmbeddings

SAMPLES = (
    "I adopted a cat named Miso last Tuesday.",
    "Where do I live?",
    "where do i live",
    "Mel: What did you paint?",
    "I moved to Porto. Where do you live?",
    "Dr. Moreau painted the sunrise over the lake!",
    "Running, runners and ran: the planned plans were planning.",
    "Thanks",
    "",
    "Caf\u00e9 na\u00efve \u00fcber 2023-05-08 at 10:30, price $4.50",
    "Can you recommend a book?  I loved 'Dune' and The Left Hand of Darkness.",
    "What's my dog's name",
    "lists:\n- one item\n- another item here",
)

RULES_DIGEST = "08bd8e3848b8eca2aa78c3ebe0fa5b46aed8be35329bc5fa6e65ad3e085f1fb0"
"""sha256 of what :func:`stored_terms` writes of :data:`SAMPLES` in format ``t1``."""


def test_the_rules_the_stored_terms_follow_are_pinned() -> None:
    # Stored terms are what tokenize and only_asks read when the record was written: if
    # either now reads a text otherwise, rows of this format hold stale terms. Bump
    # TERMS_FORMAT (old rows are then read from their text) and record the new digest.
    written = "\n".join(stored_terms(text) for text in SAMPLES)
    digest = hashlib.sha256(written.encode()).hexdigest()
    assert (TERMS_FORMAT, digest) == ("t1", RULES_DIGEST), (
        "tokenize or only_asks read the sample texts otherwise: bump TERMS_FORMAT in "
        "langchain_agentmem/index/text.py and set RULES_DIGEST to the new digest"
    )


@pytest.mark.parametrize("text", SAMPLES)
def test_stored_terms_read_back_as_the_text_reads(text: str) -> None:
    read = (Counter(tokenize(text)), only_asks(text))
    assert read_stored_terms(stored_terms(text)) == read
    # Written from what an add read before it took the lock: the same terms.
    assert read_stored_terms(stored_terms(text, text_terms(text))) == read


@pytest.mark.parametrize("stored", [None, "", "t0 1 cat", "t1", "t10 0 cat", "cat dog"])
def test_other_formats_are_read_from_the_text(stored: str | None) -> None:
    assert read_stored_terms(stored) is None


@pytest.fixture
def url(shared_store_url: str) -> Iterator[str]:
    with AgentMemory(shared_store_url, embeddings=HashEmbeddings()) as memory:
        for i, text in enumerate(SAMPLES):
            memory.add(
                text or "(nothing)",
                namespace="u",
                thread="t",
                metadata={"reply_to": "What did you do?"} if i % 3 == 0 else None,
            )
    yield shared_store_url


def _loaded(url: str) -> NamespaceView:
    """The view of namespace ``u`` as a fresh process loads it."""
    with AgentMemory(url, embeddings=HashEmbeddings(), persist_indexes=False) as memory:
        memory.search("cat", namespace="u", k=1)
        view = memory._access.cache.peek("u")
        assert view is not None
        return view


def _text_side(view: NamespaceView) -> dict[str, tuple[Counter[str], bool]]:
    return {
        row.id: (view.lexical.counts(rid), rid in view.questions) for rid, row in view.rows.items()
    }


def _set_terms(url: str, value: str | None) -> None:
    backend = open_backend(url)
    try:
        with backend._write() as cur:  # type: ignore[attr-defined]
            cur.execute(backend.q("UPDATE agentmem_records SET terms = ?"), (value,))  # type: ignore[attr-defined]
    finally:
        backend.close()


def test_a_load_reads_the_stored_terms_and_builds_what_the_text_builds(url: str) -> None:
    backend = open_backend(url)
    try:
        rows = list(backend.iter_records("u"))
    finally:
        backend.close()
    assert [read_stored_terms(r.terms) for r in rows] == [
        read_stored_terms(stored_terms(r.text)) for r in rows
    ]
    from_terms = _text_side(_loaded(url))
    _set_terms(url, None)  # as rows written before the column existed
    from_text = _text_side(_loaded(url))
    assert from_terms == from_text
    assert any(asks for _, asks in from_text.values())
    # The load reads the column, not the text: terms planted there are what it indexes.
    _set_terms(url, "t1 1 planted")
    planted = _text_side(_loaded(url))
    assert all(counts["planted"] == 1 and asks for counts, asks in planted.values())
    # A row of another format is read from its text again.
    _set_terms(url, "t0 1 planted")
    assert _text_side(_loaded(url)) == from_text


def test_a_record_whose_text_changes_keeps_the_new_texts_terms(url: str) -> None:
    with AgentMemory(url, embeddings=HashEmbeddings()) as memory:
        record = memory.add("I live in Lisbon.", namespace="u")[0].record_ids[0]
        memory.update(record, "Where is the harbour?", namespace="u")
    backend = open_backend(url)
    try:
        row = backend.get_record("u", record)
    finally:
        backend.close()
    assert row is not None
    assert read_stored_terms(row.terms) == read_stored_terms(stored_terms("Where is the harbour?"))
    assert "lisbon" not in _loaded(url).lexical.counts(row.rid)
