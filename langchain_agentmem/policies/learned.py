"""The learned policy: a small network trained with PPO, run in plain numpy.

The weights ship inside the package as ``policies/data/policy.npz`` (loaded with
``allow_pickle=False``, so loading never runs code from the file) next to
``policy.json``, which names the features, the layer shapes and the digest of the weights.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from langchain_agentmem.errors import AgentMemoryError, InvalidInputError
from langchain_agentmem.files import write_file, write_text
from langchain_agentmem.policies.features import (
    FEATURE_NAMES,
    TEXTS,
    MemoryWords,
    context_features,
    memory_features,
    neutral_observation,
    observation,
    priority_from,
    question_share,
)
from langchain_agentmem.policies.heuristics import PerNamespace, PriorityPolicy
from langchain_agentmem.types import Candidate, MemoryOp, MemoryState

FORMAT = "agentmem-policy"
FORMAT_VERSION = 2
WEIGHTS_FILE = "policy.npz"
CONFIG_FILE = "policy.json"

FloatArray = npt.NDArray[np.float32]


class PolicyFileError(AgentMemoryError, ValueError):
    """A policy file is missing, damaged or from an incompatible version."""


def shipped_policy_dir() -> Path:
    """Folder of the policy that ships with the package."""
    return Path(__file__).resolve().parent / "data"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def save_policy(
    directory: str | os.PathLike[str],
    layers: list[tuple[FloatArray, FloatArray]],
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Write a policy (``policy.npz`` + ``policy.json``) to ``directory``.

    Args:
        directory: Where to write (created if needed).
        layers: ``(weight, bias)`` of each dense layer, input first; weight is (out, in).
        extra: More JSON-serialisable facts for the config (how it was trained, scores).
    """
    out = Path(directory)
    arrays = {}
    for i, (w, b) in enumerate(layers):
        arrays[f"layer{i}.weight"] = np.asarray(w, dtype=np.float32)
        arrays[f"layer{i}.bias"] = np.asarray(b, dtype=np.float32)
    weights = out / WEIGHTS_FILE
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    write_file(weights, buffer.getvalue(), private=False)
    config = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "features": list(FEATURE_NAMES),
        "activation": "tanh",
        "layers": [list(np.asarray(w).shape) for w, _ in layers],
        "weights_sha256": _digest(weights),
        **dict(extra or {}),
    }
    write_text(out / CONFIG_FILE, json.dumps(config, indent=2) + "\n", private=False)
    return out


def load_policy(
    directory: str | os.PathLike[str] | None = None,
) -> tuple[list[tuple[FloatArray, FloatArray]], dict[str, Any]]:
    """Read and check a policy written by :func:`save_policy` (default: the shipped one).

    Raises:
        PolicyFileError: a file is missing, truncated, altered or from another version.
    """
    folder = shipped_policy_dir() if directory is None else Path(directory)
    fix = (
        "reinstall langchain-agentmem to restore the shipped policy"
        if directory is None
        else "retrain it with `agentmem train --data FILE --out DIR` or pass another folder"
    )
    config_path, weights_path = folder / CONFIG_FILE, folder / WEIGHTS_FILE
    for path in (config_path, weights_path):
        if not path.is_file():
            raise PolicyFileError(f"policy file {str(path)!r} is missing; {fix}")
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PolicyFileError(
            f"policy config {str(config_path)!r} is unreadable ({exc}); {fix}"
        ) from None
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        raise PolicyFileError(f"{str(config_path)!r} is not an agentmem policy config; {fix}")
    if config.get("version") != FORMAT_VERSION or config.get("features") != list(FEATURE_NAMES):
        raise PolicyFileError(
            f"policy {str(folder)!r} has format version {config.get('version')!r} and "
            f"features {config.get('features')!r}; this langchain-agentmem reads version "
            f"{FORMAT_VERSION} with features {list(FEATURE_NAMES)}; {fix}"
        )
    if _digest(weights_path) != config.get("weights_sha256"):
        raise PolicyFileError(
            f"policy weights {str(weights_path)!r} do not match their config (truncated or "
            f"altered); {fix}"
        )
    try:
        with np.load(weights_path, allow_pickle=False) as z:
            arrays = {name: np.asarray(z[name], dtype=np.float32) for name in z.files}
    except (OSError, ValueError, EOFError) as exc:
        raise PolicyFileError(
            f"policy weights {str(weights_path)!r} are unreadable ({exc}); {fix}"
        ) from None
    layers: list[tuple[FloatArray, FloatArray]] = []
    width = len(FEATURE_NAMES)
    for i, shape in enumerate(config.get("layers", [])):
        w, b = arrays.get(f"layer{i}.weight"), arrays.get(f"layer{i}.bias")
        if w is None or b is None or list(w.shape) != list(shape) or b.shape != (w.shape[0],):
            raise PolicyFileError(
                f"policy weights {str(weights_path)!r} lack layer {i} {shape}; {fix}"
            )
        if w.shape[1] != width:
            raise PolicyFileError(
                f"layer {i} of {str(weights_path)!r} takes {w.shape[1]} inputs, expected "
                f"{width}; {fix}"
            )
        layers.append((w, b))
        width = w.shape[0]
    if not layers or width != 1:
        raise PolicyFileError(f"policy {str(folder)!r} must end in one output; {fix}")
    return layers, config


def forward(layers: list[tuple[FloatArray, FloatArray]], obs: FloatArray) -> float:
    """The network's action (a priority in [-1, 1]) for one observation."""
    h = obs
    last = len(layers) - 1
    for i, (w, b) in enumerate(layers):
        h = w @ h + b
        if i < last:
            h = np.tanh(h)
    return float(np.clip(h[0], -1.0, 1.0))


class LearnedPolicy(PriorityPolicy):
    """Keep what a network trained with PPO scores highest; no LLM call, no torch.

    The network reads cheap features of the item (names, numbers, dates, length, whether
    it replies to a question, ...), of its place in the memory (how many of its words no
    stored record holds, whether the newest stored record of its thread asked a question)
    and of the memory (how full, how close the item is to what it holds, the priorities it
    holds) and corrects the importance rule's score of the item into its priority. A stored
    record's priority is the network's score of the record alone (no context, a neutral
    full memory), so every process ranks the records of a store alike.
    While there is room the item is added; when full it replaces the record of lowest
    priority if its own is higher (DELETE + ADD) and is skipped (NOOP) otherwise.

    Args:
        capacity: Most records to keep.
        path: Folder with ``policy.npz`` and ``policy.json`` (default: the shipped policy).
    """

    name = "learned"
    needs_neighbours = 3

    def __init__(
        self,
        capacity: int | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        layers: list[tuple[FloatArray, FloatArray]] | None = None,
    ) -> None:
        super().__init__(capacity)
        if layers is None:
            layers, self.config = load_policy(path)
        else:
            self.config = {}
        if not layers or layers[0][0].shape[1] != len(FEATURE_NAMES):
            raise InvalidInputError(f"layers must take {len(FEATURE_NAMES)} features")
        self.layers = [(np.ascontiguousarray(w), np.ascontiguousarray(b)) for w, b in layers]
        self.words: PerNamespace[MemoryWords] = PerNamespace(MemoryWords)

    def forget_namespace(self, namespace: str) -> None:
        super().forget_namespace(namespace)
        self.words.drop(namespace)

    def features(
        self,
        candidate: Candidate,
        state: MemoryState,
        priorities: npt.NDArray[np.float64] | None = None,
    ) -> FloatArray:
        """The observation the network sees for ``candidate`` (read from ``state`` alone)."""
        assert self.capacity is not None
        sims = np.array([s for _, s in state.neighbours[:3]], dtype=np.float32)
        pri = self.stored_priorities(state) if priorities is None else priorities
        obs = observation(
            TEXTS.get(candidate.text, candidate.metadata)[0],
            self.context(candidate, state),
            memory_features(state.size, self.capacity, sims, pri.astype(np.float32)),
        )
        return np.clip(obs, -1.0, 1.0)

    def context(self, candidate: Candidate, state: MemoryState) -> FloatArray:
        """The candidate's :data:`CONTEXT_FEATURES`, from the records the memory holds."""
        words = self.words.of(state.namespace)
        words.sync(state.records)
        previous = 0.0
        if candidate.thread is not None:
            for r in reversed(state.records):  # oldest first: the newest of the thread
                if r.thread == candidate.thread:
                    previous = question_share(r.text)
                    break
        return context_features(
            TEXTS.get(candidate.text, candidate.metadata)[1], words.counts, previous
        )

    def priority(
        self,
        candidate: Candidate,
        state: MemoryState,
        priorities: npt.NDArray[np.float64] | None = None,
    ) -> float:
        obs = self.features(candidate, state, priorities)
        return priority_from(obs, forward(self.layers, obs))

    def record_priority(self, text: str, metadata: Mapping[str, Any]) -> float:
        """A stored record's priority: its text scored with no context, as if offered to a
        full memory of neutral records (the same in every process)."""
        assert self.capacity is not None
        obs = neutral_observation(TEXTS.get(text, metadata)[0], self.capacity)
        return priority_from(obs, forward(self.layers, obs))

    def decide(self, candidate: Candidate, state: MemoryState) -> list[MemoryOp]:
        pri = self.stored_priorities(state)
        return self.keep_or_skip(candidate, state, self.priority(candidate, state, pri), pri)
