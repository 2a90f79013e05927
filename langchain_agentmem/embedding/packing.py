"""Several short texts through a BERT encoder in one pass, each text attending to itself only.

A record of several sentences is embedded as its whole text and each of its sentences
(:mod:`langchain_agentmem.text.sentences`). Batched, every sentence is padded to the whole text's
length, so a record of four sentences costs five whole-text passes. Packed, the pieces sit
side by side in one sequence: each piece's positions start at 0 and the attention mask keeps
it to its own tokens, so each piece's mean-pooled vector is the one it gets alone (the model
does the same arithmetic on the same tokens), and the pass costs the tokens it holds.

Packing applies to sentence-transformers models of the shape the bundled MiniLM has (a BERT
encoder, mean pooling, optionally normalised); :func:`packer` checks the shape and, once
per model, that packed vectors match the model's own ``encode`` on a probe. Anything else
is embedded the usual way.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from langchain_agentmem.types import Vector

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

MAX_PACKED_TOKENS = 1024
"""Most tokens one packed pass holds (its attention is square in them); more: batched."""

PROBE = (
    "Caroline: I went to a support group yesterday. It was so powerful, I cried. Then we ate.",
    "Caroline: I went to a support group yesterday.",
    "Caroline: It was so powerful, I cried.",
)
"""Texts a model's packed vectors are checked on before it packs."""

MATCH = 1e-4
"""Largest difference, in any coordinate of a unit vector, that counts as the same vector."""

_checked: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def packed_layout(
    pieces: list[list[int]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[int, int]]]:
    """One sequence holding every piece (token ids): its ids and position ids (from 0 in
    each piece), shape (1, total); its attention mask, True where a token may attend, block
    diagonal, shape (1, 1, total, total); and each piece's span in it."""
    total = sum(map(len, pieces))
    ids = np.asarray([[t for p in pieces for t in p]], dtype=np.int64)
    positions = np.asarray([[i for p in pieces for i in range(len(p))]], dtype=np.int64)
    mask = np.zeros((1, 1, total, total), dtype=bool)
    bounds: list[tuple[int, int]] = []
    at = 0
    for piece in pieces:
        mask[0, 0, at : at + len(piece), at : at + len(piece)] = True
        bounds.append((at, at + len(piece)))
        at += len(piece)
    return ids, positions, mask, bounds


class Packer:
    """Packed passes of one model (see the module); build with :func:`packer`."""

    def __init__(self, model: SentenceTransformer) -> None:
        self._model = model
        self._encoder: Any = model[0].auto_model
        self._tokenizer = model.tokenizer
        self._max_length = model.max_seq_length
        self._normalise = len(model) == 3

    def tokens(self, texts: list[str]) -> list[list[int]]:
        """Each text's token ids, truncated as the model's ``encode`` truncates them."""
        encoded = self._tokenizer(list(texts), truncation=True, max_length=self._max_length)
        return [list(ids) for ids in encoded["input_ids"]]

    def encode(self, pieces: list[list[int]]) -> Vector:
        """The mean-pooled vector of each piece (token ids), all in one pass."""
        import torch

        ids_, positions_, mask_, bounds = packed_layout(pieces)
        ids, positions = torch.from_numpy(ids_), torch.from_numpy(positions_)
        device = self._encoder.device
        with torch.inference_mode():
            out = self._encoder(
                input_ids=ids.to(device),
                attention_mask=torch.from_numpy(mask_).to(device),
                position_ids=positions.to(device),
                token_type_ids=torch.zeros_like(ids).to(device),
            ).last_hidden_state[0]
            pooled = torch.stack([out[a:b].mean(dim=0) for a, b in bounds])
            if self._normalise:
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
        return np.ascontiguousarray(pooled.float().cpu().numpy(), dtype=np.float32)

    def embed(self, texts: list[str]) -> Vector | None:
        """``texts`` embedded as the model's ``encode`` embeds them, in one pass; ``None``
        when they hold more than :data:`MAX_PACKED_TOKENS` tokens."""
        pieces = self.tokens(texts)
        if sum(map(len, pieces)) > MAX_PACKED_TOKENS:
            return None
        return self.encode(pieces)


def _shaped(model: SentenceTransformer) -> bool:
    """Whether ``model`` is a BERT encoder, mean pooling, and optionally a normalisation."""
    names = [type(module).__name__ for module in model]
    if names not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        return False
    pooling: Any = model[1]
    config = pooling.get_config_dict() if hasattr(pooling, "get_config_dict") else {}
    mean = config.get("pooling_mode") == "mean" or config.get("pooling_mode_mean_tokens") is True
    encoder = getattr(model[0], "auto_model", None)
    kind = getattr(getattr(encoder, "config", None), "model_type", None)
    return bool(mean) and kind == "bert"


def packer(model: SentenceTransformer) -> Packer | None:
    """A :class:`Packer` for ``model``, or ``None`` when its vectors could differ."""
    with _lock:
        known = _checked.get(model)
        if known is None:
            known = _shaped(model) and _matches(Packer(model), model)
            _checked[model] = known
    return Packer(model) if known else None


def _matches(packed: Packer, model: SentenceTransformer) -> bool:
    """Whether packed vectors of :data:`PROBE` are the model's own."""
    try:
        mine = packed.embed(list(PROBE))
    except Exception:  # an encoder that refuses the mask or positions: it does not pack
        return False
    theirs = np.asarray(
        model.encode(list(PROBE), convert_to_numpy=True, show_progress_bar=False),
        dtype=np.float32,
    )
    return mine is not None and bool(np.abs(mine - theirs).max() <= MATCH)
