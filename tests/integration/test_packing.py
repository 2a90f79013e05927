"""A record's text and sentences embedded in one packed pass get the vectors they get alone."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from sentence_transformers import SentenceTransformer
from sentence_transformers.models import Pooling

from langchain_agentmem import SentenceTransformerEmbeddings
from langchain_agentmem.embedding.embeddings import (
    PAD_SPREAD,
    _record_batch,
    _record_vectors,
    aembed_records,
    embed_records,
    embed_texts,
    length_batches,
)
from langchain_agentmem.embedding.packing import MAX_PACKED_TOKENS, packer
from langchain_agentmem.text.sentences import sentences

TEXTS = [
    "I moved to Berlin.",
    "Caroline: I went to the LGBTQ support group yesterday. It was so powerful! I met Dr. "
    "Moreau there, and we talked for hours about adoption agencies.",
    "Melanie: Wow, that's great! How did it go? Did you get to talk to anyone? Tell me more.",
    "user: My dog is called Rex.\nHe is three.\nHe likes the beach near Porto a lot.",
]


def batched(embeddings: SentenceTransformerEmbeddings, text: str) -> np.ndarray:
    """The record's vector the batched way (every piece padded in one batch)."""
    batch, counts = _record_batch([text], sentences)
    return _record_vectors(embed_texts(embeddings, batch), counts)[0]


@pytest.mark.parametrize("text", TEXTS)
def test_a_packed_record_has_the_vector_a_batch_gives_it(
    embeddings: SentenceTransformerEmbeddings, text: str
) -> None:
    assert packer(embeddings.model) is not None
    packed = embed_records(embeddings, [text])[0]
    assert np.allclose(packed, batched(embeddings, text), atol=1e-5)
    asynced = asyncio.run(aembed_records(embeddings, [text]))[0]
    assert np.array_equal(asynced, packed)


def test_pieces_are_kept_apart(embeddings: SentenceTransformerEmbeddings) -> None:
    pieces = ["I moved to Berlin.", "The weather in Lisbon is warm.", "My dog is called Rex."]
    packed = embeddings.embed_packed(pieces)
    alone = np.stack([embeddings.embed_array([p])[0] for p in pieces])
    assert np.allclose(packed, alone, atol=1e-5)
    # Reordered, each piece keeps its own vector: nothing leaks from its neighbours.
    assert np.allclose(embeddings.embed_packed(pieces[::-1]), alone[::-1], atol=1e-5)


def test_too_many_tokens_fall_back_to_a_batch(embeddings: SentenceTransformerEmbeddings) -> None:
    long = " ".join(
        f"Sentence number {i} is about the old town of Porto, its bridges, its river, its "
        "tiled houses and the long walks we took there every summer."
        for i in range(60)
    )
    packed = packer(embeddings.model)
    assert packed is not None
    assert sum(map(len, packed.tokens([long, *sentences(long)]))) > MAX_PACKED_TOKENS
    assert packed.embed([long, *sentences(long)]) is None
    assert np.allclose(embed_records(embeddings, [long])[0], batched(embeddings, long), atol=1e-6)


def test_a_model_of_another_shape_does_not_pack(embeddings: SentenceTransformerEmbeddings) -> None:
    bundled = embeddings.model
    cls_pooled = SentenceTransformer(
        modules=[bundled[0], Pooling(bundled.get_embedding_dimension(), pooling_mode="cls")],
        device="cpu",
    )
    assert packer(cls_pooled) is None


def test_batches_group_texts_of_like_length() -> None:
    lengths = [1000, 40, 45, 900, 30, 400, 410, 50]
    batches = length_batches(lengths, batch_size=3)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) <= 3
        longest = max(lengths[i] for i in batch)
        assert all(lengths[i] * PAD_SPREAD >= longest for i in batch)
    assert batches[0] == [0, 3]  # longest first; 400 would pad to 1000: a batch of its own
    assert length_batches([], batch_size=4) == []


def test_a_long_record_batched_with_short_ones_keeps_every_vector(
    embeddings: SentenceTransformerEmbeddings,
) -> None:
    # A long reply and a short message in one add_many: the reply's sentences are not
    # padded to the reply's whole text, and no vector changes for it.
    reply = " ".join(
        f"Option {i}: visit the museum of {w} in the morning."
        for i, w in enumerate(["art", "science", "history", "trains", "ships", "coins"] * 4)
    )
    texts = ["My dog is called Rex.", reply, "I moved to Berlin."]
    together = embed_records(embeddings, texts)
    alone = np.stack([embed_records(embeddings, [t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-5)
    pieces, _ = _record_batch(texts, sentences)
    assert len(length_batches([len(p) for p in pieces], embeddings.batch_size)) > 1
