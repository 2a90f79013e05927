"""A record of several sentences is embedded as its whole text plus its sentences' mean."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np

from langchain_agentmem import AgentMemory, SentenceTransformerEmbeddings
from langchain_agentmem.embedding.embeddings import (
    aembed_records,
    embed_query,
    embed_records,
    embed_texts,
    normalize,
)
from langchain_agentmem.text.sentences import sentences

BUSY_WEEKEND = (
    "We spent the whole weekend repainting the hallway, assembling flat-pack furniture, "
    "clearing out the garage and hauling old boxes to the recycling centre. I got a "
    "promotion to team lead. Pretty tired now."
)
BUSY_WORK = (
    "Work has been a blur of late nights, product launches, endless meetings with the "
    "marketing team and a server migration that went wrong on a Sunday. My daughter broke "
    "her arm. Otherwise all good."
)


def test_a_one_sentence_record_keeps_its_texts_vector(
    embeddings: SentenceTransformerEmbeddings,
) -> None:
    texts = ["I moved to Berlin.", "Wow! I moved to Berlin.", "user: My dog is called Rex."]
    assert np.array_equal(embed_records(embeddings, texts), embed_texts(embeddings, texts))


def test_a_longer_record_is_its_text_plus_the_mean_of_its_sentences(
    embeddings: SentenceTransformerEmbeddings,
) -> None:
    whole, *parts = embed_texts(embeddings, [BUSY_WORK, *sentences(BUSY_WORK)])
    expected = normalize(whole + normalize(np.sum(parts, axis=0))[0])[0]
    got = embed_records(embeddings, ["I moved to Berlin.", BUSY_WORK])
    assert len(parts) == 3
    assert np.allclose(got[1], expected, atol=1e-6)
    assert np.isclose(np.linalg.norm(got[1]), 1.0, atol=1e-5)
    asynced = asyncio.run(aembed_records(embeddings, ["I moved to Berlin.", BUSY_WORK]))
    assert np.allclose(asynced, got, atol=1e-6)


def test_a_short_statement_in_a_long_message_is_closer_to_its_question(
    embeddings: SentenceTransformerEmbeddings,
) -> None:
    for text, question in (
        (BUSY_WORK, "What happened to my daughter?"),
        (BUSY_WEEKEND, "What did I get at work?"),
    ):
        q = embed_query(embeddings, question)
        as_text = float(embed_texts(embeddings, [text])[0] @ q)
        as_record = float(embed_records(embeddings, [text])[0] @ q)
        assert as_record > as_text + 0.02, (question, as_text, as_record)


def test_dense_search_finds_the_statement_a_long_aside_hid(
    tmp_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    other = "My boss praised the team at work."
    q = embed_query(embeddings, "What did I get at work?")
    text_vectors = embed_texts(embeddings, [BUSY_WEEKEND, other]) @ q
    assert text_vectors[1] > text_vectors[0]  # by its whole text, the long message loses
    with AgentMemory(f"sqlite:///{tmp_path / 'm.db'}", embeddings=embeddings) as memory:
        memory.add_many([BUSY_WEEKEND, other], namespace="u")
        hits = memory.search("What did I get at work?", namespace="u", k=2, mode="dense")
    assert [h.text for h in hits] == [BUSY_WEEKEND, other]


def test_every_write_path_stores_the_record_vector(
    tmp_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    expected = embed_records(embeddings, [BUSY_WORK])[0]
    with AgentMemory(f"sqlite:///{tmp_path / 'm.db'}", embeddings=embeddings) as memory:
        memory.add(BUSY_WORK, namespace="u", record_id="add")
        asyncio.run(memory.aadd(BUSY_WORK, namespace="u", record_id="aadd", thread="t2"))
        memory.add_many([BUSY_WORK], namespace="u", record_ids=["many"], thread="t3")
        memory.put("put", BUSY_WORK, namespace="u", thread="t4")
        memory.add("I moved to Berlin.", namespace="u", record_id="upd", thread="t5")
        memory.update("upd", BUSY_WORK, namespace="u")
        for rid in ("add", "aadd", "many", "put", "upd"):
            got = memory.get(rid, namespace="u").embedding
            assert got is not None and np.allclose(got, expected, atol=1e-6), rid
