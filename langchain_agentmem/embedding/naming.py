"""The name of the model behind an ``Embeddings``: stores and exports compare it."""

from __future__ import annotations

from pathlib import Path

from langchain_core.embeddings import Embeddings

from langchain_agentmem.embedding.embeddings import (
    SentenceTransformerEmbeddings,
    default_model_path,
)
from langchain_agentmem.embedding.quantized import QuantizedEmbeddings


def embedding_model_name(embeddings: Embeddings) -> str:
    """A name for the model behind ``embeddings``: equal names mean comparable vectors.

    The bundled model is ``sentence-transformers/all-MiniLM-L6-v2``; another local model is
    named by its folder; ``QuantizedEmbeddings`` by its ``model_name``
    (``onnx-int8/all-MiniLM-L6-v2``: its vectors are close to the torch model's, not equal);
    any other ``Embeddings`` by its class and its ``model`` (or ``model_name``) attribute.
    """
    if isinstance(embeddings, SentenceTransformerEmbeddings):
        path = Path(embeddings.model_path)
        if path == default_model_path():
            return "sentence-transformers/all-MiniLM-L6-v2"
        return f"sentence-transformers/{path.name}"
    if isinstance(embeddings, QuantizedEmbeddings):
        return embeddings.model_name
    cls = type(embeddings)
    name = f"{cls.__module__}.{cls.__qualname__}"
    model = getattr(embeddings, "model", None) or getattr(embeddings, "model_name", None)
    return f"{name}:{model}" if isinstance(model, str) else name
