"""QuantizedEmbeddings: the bundled model exported, int8-quantised and run by ONNX Runtime.

One export per test session (into a temporary cache folder), then real ONNX Runtime runs.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import numpy as np
import pytest

from langchain_agentmem import AgentMemory, QuantizedEmbeddings, SentenceTransformerEmbeddings
from langchain_agentmem.embedding.embeddings import (
    aembed_records,
    embed_query,
    embed_records,
    embed_texts,
)
from langchain_agentmem.embedding.naming import embedding_model_name
from langchain_agentmem.embedding.packing import MAX_PACKED_TOKENS
from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.text.sentences import sentences

pytestmark = pytest.mark.slow  # the export takes several seconds

TEXTS = [
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: Wow, that's great! How did it go? Did you get to talk to anyone?",
    "Caroline: The transgender stories were so inspiring! I was so happy and thankful.",
    "Melanie: I'm thinking of painting a sunrise over the lake for my kids this summer.",
    "Caroline: I'm keen on counseling or working in mental health, to help people like me.",
    "Melanie: We went camping in the mountains last week; the kids loved roasting marshmallows.",
    "hi",
    "Caroline: My grandma gave me this necklace when I was young. It reminds me of Sweden.",
]
"""LoCoMo-like turns ('speaker: text')."""


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.fixture(scope="module")
def quantized(cache_dir: Path) -> QuantizedEmbeddings:
    """The bundled model exported once for this module."""
    return QuantizedEmbeddings(cache_dir=cache_dir).load()


def _exported(cache_dir: Path) -> Path:
    (path,) = (cache_dir / "onnx").glob("all-MiniLM-L6-v2-*/model_int8.onnx")
    return path


def test_the_export_is_one_owner_only_file(quantized: QuantizedEmbeddings, cache_dir: Path) -> None:
    path = _exported(cache_dir)
    assert sorted(p.name for p in path.parent.iterdir()) == ["model_int8.onnx"]
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert path.stat().st_mode & 0o077 == 0
    assert quantized.dimensions == 384


def test_vectors_are_close_to_the_torch_models(
    quantized: QuantizedEmbeddings, embeddings: SentenceTransformerEmbeddings
) -> None:
    mine = quantized.embed_array(TEXTS)
    theirs = embeddings.embed_array(TEXTS)
    assert mine.dtype == np.float32 and mine.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(mine, axis=1), 1.0, atol=1e-5)
    cosine = (mine * theirs).sum(axis=1)
    assert cosine.min() >= 0.975 and cosine.mean() >= 0.985, cosine
    one = np.asarray(quantized.embed_query(TEXTS[0]), dtype=np.float32)
    assert float(one @ theirs[0]) >= 0.98
    assert quantized.embed_documents([]) == []
    assert quantized.embed_array([]).shape == (0, 384)


def test_a_batch_gives_each_text_nearly_its_own_vector(quantized: QuantizedEmbeddings) -> None:
    # Activations are quantised per pass (one range for the pass): a text's vector moves a
    # little with its company. Measured on 300 LoCoMo turns: cosine 0.991 mean, 0.983 min;
    # here "hi" alone against "hi" among longer texts is the lowest, 0.978.
    alone = np.stack([quantized.embed_array([t])[0] for t in TEXTS])
    batched = quantized.embed_array(TEXTS)
    assert ((alone * batched).sum(axis=1) >= 0.97).all()
    # Batching keeps the order of the texts (they run sorted by length).
    assert np.argmax(batched @ alone.T, axis=1).tolist() == list(range(len(TEXTS)))


@pytest.mark.parametrize("text", TEXTS[:5])
def test_a_packed_record_nearly_has_its_batched_vector(
    quantized: QuantizedEmbeddings, text: str
) -> None:
    # Packed and batched passes quantise activations over different company (measured on
    # 100 LoCoMo turns and their sentences: cosine 0.988 mean, 0.979 min).
    pieces = [text, *sentences(text)]
    packed = quantized.embed_packed(pieces)
    batched = quantized.embed_array(pieces)
    assert packed.shape == batched.shape
    assert ((packed * batched).sum(axis=1) >= 0.97).all()
    record = embed_records(quantized, [text])[0]
    assert np.array_equal(asyncio.run(aembed_records(quantized, [text]))[0], record)


def test_packed_pieces_are_kept_apart(quantized: QuantizedEmbeddings) -> None:
    pieces = ["I moved to Berlin.", "The weather in Lisbon is warm.", "My dog is called Rex."]
    forward = quantized.embed_packed(pieces)
    backward = quantized.embed_packed(pieces[::-1])[::-1]
    assert ((forward * backward).sum(axis=1) >= 0.99).all()
    assert np.argmax(forward @ quantized.embed_array(pieces).T, axis=1).tolist() == [0, 1, 2]


def test_too_many_tokens_are_batched(quantized: QuantizedEmbeddings) -> None:
    long = " ".join(
        f"Sentence number {i} is about the old town of Porto, its bridges, its river, its "
        "tiled houses and the long walks we took there every summer."
        for i in range(60)
    )
    pieces = [long, *sentences(long)]
    assert sum(map(len, quantized._runtime().tokens(pieces))) > MAX_PACKED_TOKENS
    assert np.array_equal(quantized.embed_packed(pieces), quantized.embed_array(pieces))


def test_the_helpers_take_its_arrays(quantized: QuantizedEmbeddings) -> None:
    assert np.allclose(embed_texts(quantized, TEXTS[:2]), quantized.embed_array(TEXTS[:2]))
    assert np.allclose(embed_query(quantized, TEXTS[0]), quantized.embed_array(TEXTS[:1])[0])


def test_a_second_instance_loads_the_export(
    quantized: QuantizedEmbeddings, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import langchain_agentmem.embedding.quantized as module

    path = _exported(cache_dir)
    before = path.stat().st_mtime_ns
    monkeypatch.setattr(module, "_runtimes", {})  # as a new process finds it
    again = QuantizedEmbeddings(cache_dir=cache_dir, threads=1)
    assert np.allclose(again.embed_array(TEXTS), quantized.embed_array(TEXTS), atol=1e-6)
    assert path.stat().st_mtime_ns == before


def test_a_truncated_export_is_made_again(
    quantized: QuantizedEmbeddings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import langchain_agentmem.embedding.quantized as module

    source = _exported(Path(quantized.cache_dir))
    cache = tmp_path / "cache"
    target = cache / "onnx" / source.parent.name / source.name
    target.parent.mkdir(parents=True)
    target.write_bytes(source.read_bytes()[: source.stat().st_size // 2])
    monkeypatch.setattr(module, "_runtimes", {})
    fresh = QuantizedEmbeddings(cache_dir=cache)
    cosine = (fresh.embed_array(TEXTS) * quantized.embed_array(TEXTS)).sum(axis=1)
    assert cosine.min() >= 0.9999
    assert target.stat().st_size == source.stat().st_size
    assert sorted(p.name for p in target.parent.iterdir()) == ["model_int8.onnx"]


def test_the_cache_folder_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTMEM_HOME", str(tmp_path / "home"))
    assert QuantizedEmbeddings().cache_dir == str(tmp_path / "home" / "cache")
    assert QuantizedEmbeddings(cache_dir=tmp_path / "c").cache_dir == str(tmp_path / "c")


def test_a_model_of_another_shape_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"modules\.json"):
        QuantizedEmbeddings(tmp_path)
    (tmp_path / "modules.json").write_text(
        '[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},'
        ' {"idx": 1, "name": "1", "path": "1_Pooling", '
        '"type": "sentence_transformers.models.Pooling"}]',
        encoding="utf-8",
    )
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(
        '{"pooling_mode_cls_token": true}', encoding="utf-8"
    )
    (tmp_path / "config.json").write_text('{"model_type": "bert"}', encoding="utf-8")
    with pytest.raises(InvalidInputError, match="not mean pooling") as caught:
        QuantizedEmbeddings(tmp_path)
    assert str(tmp_path) in str(caught.value)
    assert "SentenceTransformerEmbeddings" in str(caught.value)
    with pytest.raises(InvalidInputError, match="not a directory"):
        QuantizedEmbeddings(tmp_path / "missing")


def test_its_model_name_is_not_the_torch_models(
    quantized: QuantizedEmbeddings, embeddings: SentenceTransformerEmbeddings
) -> None:
    assert quantized.model_name == "onnx-int8/all-MiniLM-L6-v2"
    assert embedding_model_name(quantized) == "onnx-int8/all-MiniLM-L6-v2"
    assert embedding_model_name(quantized) != embedding_model_name(embeddings)


def test_a_memory_with_it_finds_the_right_record(
    quantized: QuantizedEmbeddings, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    with AgentMemory(url, embeddings=quantized) as memory:
        for text in TEXTS:
            memory.add(text, namespace="alice")
        hits = memory.search("What did Caroline's grandmother give her?", namespace="alice", k=1)
        assert hits[0].text == TEXTS[-1]
        hits = memory.search("Where did Melanie go camping?", namespace="alice", k=1, mode="dense")
        assert hits[0].text == TEXTS[5]


def test_it_leaves_the_process_environment_alone() -> None:
    # In a fresh interpreter: importing the package does not import ONNX Runtime, and the
    # quantiser's import leaves the root logger as it was (it runs logging.basicConfig).
    import subprocess
    import sys

    code = (
        "import logging, sys, langchain_agentmem\n"
        "langchain_agentmem.QuantizedEmbeddings\n"
        "print('onnxruntime' in sys.modules)\n"
        "from langchain_agentmem.embedding.quantized import _quantiser\n"
        "_quantiser()\n"
        "print('onnxruntime.quantization' in sys.modules, logging.getLogger().handlers,"
        " logging.getLogger().level)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    )
    assert done.stdout.split("\n")[:2] == ["False", "True [] 30"]
