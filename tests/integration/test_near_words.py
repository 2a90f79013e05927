"""Near words through AgentMemory, and the shipped table against the bundled model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from langchain_agentmem import AgentMemory, SentenceTransformerEmbeddings
from langchain_agentmem.embedding.embeddings import embed_texts
from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.ranking.near_words import FLOOR, load_table

SAID = [
    "My husband Tomas cooks on weekends.",
    "I love my family more than anything.",
    "My best friend Ana is my rock.",
    "My sister lives in Porto.",
]


def _search(
    url: str, embeddings: SentenceTransformerEmbeddings, config: HybridConfig
) -> dict[str, Any]:
    memory = AgentMemory(url, embeddings=embeddings, hybrid=config)
    try:
        for text in SAID:
            memory.add(text, namespace="maren", metadata={"speaker": "Maren"})
        hits = memory.search("Who is Maren's spouse?", namespace="maren", k=4)
        return {"first": hits[0].text, "scores": {h.text: h.score for h in hits}}
    finally:
        memory.close()


def test_a_statement_in_other_words_is_found_by_a_near_word(
    tmp_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    # "spouse" shares no word with "My husband Tomas ..."; its near word "husband" does.
    on = _search(f"sqlite:///{tmp_path / 'on.db'}", embeddings, HybridConfig())
    off = _search(f"sqlite:///{tmp_path / 'off.db'}", embeddings, HybridConfig(near_words=0))
    assert on["first"] == SAID[0]
    assert on["scores"][SAID[0]] > off["scores"][SAID[0]]
    # Records without a near word score as they did.
    for text in SAID[1:]:
        assert on["scores"][text] == off["scores"][text]


def test_the_shipped_table_holds_what_the_bundled_model_says(
    embeddings: SentenceTransformerEmbeddings,
) -> None:
    table = load_table()
    for word in ("partner", "job", "car", "research", "vacation", "instrument"):
        near = list(table[word])
        vectors = embed_texts(embeddings, [word, *near])
        cosine = vectors[1:] @ vectors[0]
        assert (cosine >= FLOOR - 1e-3).all(), (word, near, cosine)
        assert (np.diff(cosine) <= 1e-3).all(), (word, near, cosine)  # nearest first
