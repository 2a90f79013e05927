"""How the stores hold values: embeddings as float32 blobs, JSON as ASCII, times as epochs.

Shared by both SQL backends and by the modules above them that read or write stored values.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import numpy as np

from langchain_agentmem.types import Vector, from_epoch


def to_blob(vector: Vector) -> bytes:
    """Serialise an embedding (float32, little-endian)."""
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes | memoryview) -> Vector:
    """Deserialise an embedding written by :func:`to_blob`."""
    return np.frombuffer(bytes(blob), dtype="<f4").astype(np.float32)


def dump_json(value: Any) -> str:
    """JSON for storage, ASCII-escaped so lone surrogates round-trip (a high and a low
    surrogate held as two code points come back as one character; metadata refuses them)."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), sort_keys=True)


def epoch_to_datetime(value: float) -> datetime:
    """UTC epoch seconds to an aware datetime (out of range: the nearest end,
    :func:`~langchain_agentmem.types.from_epoch`)."""
    return from_epoch(value)
