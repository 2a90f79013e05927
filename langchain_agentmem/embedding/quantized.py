"""The bundled embedding model int8-quantised and run by ONNX Runtime (the ``onnx`` extra).

:class:`QuantizedEmbeddings` exports a sentence-transformers model of the bundled model's
shape (a BERT encoder, mean pooling, optionally normalised) to ONNX once, from its own
weights and offline, checks the export against torch, quantises its weights to int8
(dynamic quantisation: activations are quantised on the fly) and keeps only the quantised
file, in a cache folder. Its vectors are close to the torch model's, not equal to them:
a store keeps one embedder from its first record on.

The graph takes a ready attention mask of shape (batch, 1, length, length), so one graph
serves padded batches and the packed layout of :mod:`langchain_agentmem.embedding.packing` (a
record's text and its sentences side by side in one sequence).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import tempfile
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_agentmem.embedding.embeddings import (
    default_model_path,
    length_batches,
    no_progress_bars,
    normalize,
)
from langchain_agentmem.embedding.packing import MAX_PACKED_TOKENS, packed_layout
from langchain_agentmem.errors import InvalidInputError, missing_extra
from langchain_agentmem.files import agentmem_home, private_folders, private_temp
from langchain_agentmem.types import Vector

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
"""Version of the exported graph's layout (inputs, mask, quantisation): part of the cache key."""

INPUTS = ("input_ids", "position_ids", "attention_mask")
OUTPUT = "last_hidden_state"

EXPORT_CHECK = 1e-3
"""Largest difference in any hidden state of a real token, ONNX (fp32) against torch."""

QUANTISED_CHECK = 0.95
"""Smallest cosine, on the probe, between a quantised vector and torch's of the same text
(the bundled model's lowest is about 0.98, on "hi")."""

QUANTISATION: dict[str, Any] = {
    "op_types_to_quantize": ["MatMul"],
    "per_channel": True,
    "reduce_range": False,
}
"""How the weights are quantised (``onnxruntime.quantization.quantize_dynamic``, int8
weights): the encoder's linear layers, a scale per output channel, the full 8 bits. On
the first 300 LoCoMo turns the vectors' cosine to torch's is 0.992 on average, 0.985 at
least; one scale per tensor gives 0.956 on average, and quantising the word embeddings
too (a 23 MB file, not 59 MB) 0.981 at least."""

PROBE = (
    "Caroline: I went to a support group yesterday. It was so powerful, I cried. Then we ate.",
    "Caroline: I went to a support group yesterday.",
    "Melanie: Wow, that's great! How did it go?",
    "hi",
)
"""Texts the export is checked on, padded in a batch and packed in one sequence."""

_MODEL_FILE = "model_int8.onnx"
_KEY_PROP = "langchain_agentmem.key"
_BUNDLED_NAME = "all-MiniLM-L6-v2"


def _require() -> Any:
    """``onnxruntime``, or the error that names the ``onnx`` extra."""
    try:
        import onnx  # noqa: F401
        import onnxruntime
    except ImportError as exc:
        feature = "QuantizedEmbeddings (int8 embeddings through ONNX Runtime)"
        raise missing_extra("onnx", feature, exc) from None
    return onnxruntime


def default_cache_dir() -> Path:
    """``$AGENTMEM_HOME/cache`` (default ``~/.agentmem/cache``), where the package keeps
    what it derives and can make again."""
    return agentmem_home() / "cache"


@dataclass(frozen=True)
class _Shape:
    """What the model folder holds, as far as the export needs it."""

    encoder: Path  # the transformers model's folder (config, weights, tokenizer)
    weights: Path
    dimensions: int
    max_length: int
    lower_case: bool


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _shape(folder: Path) -> _Shape:
    """The model's layout, or :class:`InvalidInputError` when it is not one this exports."""

    def refuse(why: str) -> InvalidInputError:
        return InvalidInputError(
            f"QuantizedEmbeddings cannot run the model in {str(folder)!r}: {why}. It runs "
            "sentence-transformers folders of the bundled model's shape (a BERT encoder with "
            "model.safetensors, mean pooling, optionally Normalize); use "
            "SentenceTransformerEmbeddings for this model, or leave model_path out for the "
            "bundled all-MiniLM-L6-v2"
        )

    if not folder.is_dir():
        raise refuse("it is not a directory")
    try:
        modules = _read_json(folder / "modules.json")
        kinds = [str(m["type"]).rsplit(".", 1)[-1] for m in modules]
        paths = [str(m.get("path", "")) for m in modules]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise refuse(f"no readable modules.json ({exc})") from None
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise refuse(f"its modules are {kinds}")
    encoder = folder / paths[0]
    try:
        pooling = _read_json(folder / paths[1] / "config.json")
        config = _read_json(encoder / "config.json")
    except (OSError, ValueError) as exc:
        raise refuse(f"its pooling or encoder config does not read ({exc})") from None
    modes = {k for k, v in pooling.items() if k.startswith("pooling_mode_") and v is True}
    mean = pooling.get("pooling_mode") == "mean" or modes == {"pooling_mode_mean_tokens"}
    if not mean:
        raise refuse(f"its pooling is not mean pooling ({pooling})")
    if config.get("model_type") != "bert":
        raise refuse(f"its encoder is {config.get('model_type')!r}, not 'bert'")
    weights = encoder / "model.safetensors"
    if not weights.is_file():
        raise refuse("it has no model.safetensors")
    try:
        st_config = _read_json(encoder / "sentence_bert_config.json")
    except (OSError, ValueError):
        st_config = {}
    positions = int(config.get("max_position_embeddings", 512))
    max_length = int(st_config.get("max_seq_length") or positions)
    return _Shape(
        encoder=encoder,
        weights=weights,
        dimensions=int(config["hidden_size"]),
        max_length=min(max_length, positions),
        lower_case=bool(st_config.get("do_lower_case", False)),
    )


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def _cache_key(weights: Path, ort_version: str) -> str:
    parts = [str(FORMAT_VERSION), _digest(weights), ort_version, json.dumps(QUANTISATION)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _private_folder(root: Path, *names: str) -> Path:
    """``root/names...``: every folder this creates 0700, and each of ``names`` this user's
    own that nobody else can write in (``root`` may be shared, ``/tmp`` say: a folder or a
    model another account put in it is never used, so a model loaded from here is one this
    user exported)."""
    private_folders(root)
    path = root
    for name in names:
        path = path / name
        private_folders(path, own=True)
    return path


def _tokens(tokenizer: Any, texts: list[str], shape: _Shape) -> list[list[int]]:
    if shape.lower_case:
        texts = [t.lower() for t in texts]
    encoded = tokenizer(list(texts), truncation=True, max_length=shape.max_length)
    return [list(ids) for ids in encoded["input_ids"]]


def _batch_inputs(pieces: list[list[int]]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Padded-batch inputs for ``pieces`` and which tokens are real (batch, length)."""
    length = max(map(len, pieces))
    ids = np.zeros((len(pieces), length), dtype=np.int64)
    real = np.zeros((len(pieces), length), dtype=bool)
    for row, piece in enumerate(pieces):
        ids[row, : len(piece)] = piece
        real[row, : len(piece)] = True
    positions = np.broadcast_to(np.arange(length, dtype=np.int64), ids.shape).copy()
    mask = np.ascontiguousarray(
        np.broadcast_to(real[:, None, None, :], (len(pieces), 1, length, length))
    )
    return {"input_ids": ids, "position_ids": positions, "attention_mask": mask}, real


def _packed_inputs(pieces: list[list[int]]) -> tuple[dict[str, np.ndarray], list[tuple[int, int]]]:
    """The inputs of :func:`~langchain_agentmem.embedding.packing.packed_layout`'s one sequence and
    each piece's span in it."""
    ids, positions, mask, bounds = packed_layout(pieces)
    return {"input_ids": ids, "position_ids": positions, "attention_mask": mask}, bounds


def _pool_batch(hidden: np.ndarray, real: np.ndarray) -> np.ndarray:
    weights = real[..., None].astype(np.float32)
    pooled: np.ndarray = (hidden * weights).sum(axis=1) / weights.sum(axis=1)
    return pooled


def _pool_packed(hidden: np.ndarray, bounds: list[tuple[int, int]]) -> np.ndarray:
    return np.stack([hidden[0, a:b].mean(axis=0) for a, b in bounds])


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    with no_progress_bars(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _quantiser() -> tuple[Any, Any]:
    """``QuantType`` and ``quantize_dynamic``, imported without the ``logging.basicConfig``
    that ONNX Runtime's quantisation package runs on import (the host's logging stays)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    finally:
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
        root.setLevel(level)
    return QuantType, quantize_dynamic


class _DropQuantisationLogs(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "onnxruntime" not in record.pathname.replace(os.sep, "/")


@contextlib.contextmanager
def _quiet_quantisation() -> Iterator[None]:
    """Without the notes ONNX Runtime's quantiser logs to the root logger."""
    drop = _DropQuantisationLogs()
    root = logging.getLogger()
    root.addFilter(drop)
    try:
        yield
    finally:
        root.removeFilter(drop)


def _session(path: str | Path, threads: int | None) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    if threads is not None:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _encoder(bert: Any) -> Any:
    """``bert`` as a module of ``(input_ids, position_ids, attention_mask)``, the mask 4-D."""
    import torch

    class Encoder(torch.nn.Module):
        # The mask goes in ready (4-D, True where a token may attend) and is made additive
        # here: transformers passes a 4-D mask through as it is, where its 2-D path branches
        # in Python and a trace would freeze one branch.
        def __init__(self, bert: Any) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, position_ids: Any, attention_mask: Any) -> Any:
            keep = attention_mask.to(torch.float32)
            additive = (1.0 - keep) * torch.finfo(torch.float32).min
            out = self.bert(
                input_ids=input_ids,
                position_ids=position_ids,
                attention_mask=additive,
                token_type_ids=torch.zeros_like(input_ids),
            )
            return out.last_hidden_state

    return Encoder(bert)


def _to_onnx(encoder: Any, trace: dict[str, np.ndarray], fp32: Path) -> None:
    """Trace ``encoder`` on ``trace`` into ``fp32``, batch and length left free."""
    import torch

    dynamic = {0: "batch", 1: "length"}
    torch.onnx.export(
        encoder,
        tuple(torch.from_numpy(trace[n]) for n in INPUTS),
        str(fp32),
        dynamo=False,
        input_names=list(INPUTS),
        output_names=[OUTPUT],
        dynamic_axes={
            "input_ids": dynamic,
            "position_ids": dynamic,
            "attention_mask": {0: "batch", 2: "length", 3: "length"},
            OUTPUT: dynamic,
        },
        opset_version=17,
    )


def _checked_export(
    folder: Path,
    fp32: Path,
    inputs: list[dict[str, np.ndarray]],
    wants: list[np.ndarray],
    real: np.ndarray,
) -> float:
    """The largest difference of the ONNX export's hidden states from torch's (padding aside);
    an ``InvalidInputError`` past :data:`EXPORT_CHECK`."""
    session = _session(fp32, 1)
    (batch, packed), (want_batch, want_packed) = inputs, wants
    got_batch = session.run([OUTPUT], batch)[0]
    got_packed = session.run([OUTPUT], packed)[0]
    diff = max(
        float(np.abs((got_batch - want_batch) * real[..., None]).max()),
        float(np.abs(got_packed - want_packed).max()),
    )
    if not diff <= EXPORT_CHECK:
        raise InvalidInputError(
            f"QuantizedEmbeddings: the ONNX export of {str(folder)!r} differs from "
            f"torch by {diff:.3g} in a hidden state (more than {EXPORT_CHECK}); "
            "use SentenceTransformerEmbeddings for this model"
        )
    return diff


def _checked_quantisation(
    folder: Path,
    fp32: Path,
    int8: Path,
    batch: dict[str, np.ndarray],
    want: np.ndarray,
    real: np.ndarray,
) -> float:
    """Quantise ``fp32`` into ``int8``; the least cosine of its vectors to torch's, an
    ``InvalidInputError`` under :data:`QUANTISED_CHECK`."""
    QuantType, quantize_dynamic = _quantiser()
    with _quiet_quantisation():
        quantize_dynamic(fp32, int8, weight_type=QuantType.QInt8, **QUANTISATION)
    torch_vectors = normalize(_pool_batch(want, real))
    int8_vectors = normalize(_pool_batch(_session(int8, 1).run([OUTPUT], batch)[0], real))
    cosine = float((torch_vectors * int8_vectors).sum(axis=1).min())
    if not cosine >= QUANTISED_CHECK:
        raise InvalidInputError(
            f"QuantizedEmbeddings: int8 vectors of {str(folder)!r} are too far from "
            f"torch's (cosine {cosine:.4f} < {QUANTISED_CHECK}); use "
            "SentenceTransformerEmbeddings for this model"
        )
    return cosine


def _write_keyed(onnx: Any, int8: Path, target: Path, key: str) -> None:
    """Write the model at ``int8`` to ``target`` with its cache key in its metadata (``onnx``:
    the module), through a private temporary file."""
    model = onnx.load(str(int8))
    entry = model.metadata_props.add()
    entry.key, entry.value = _KEY_PROP, key
    fd, part = private_temp(target.parent, prefix=".model_int8-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(model.SerializeToString())
            f.flush()
            os.fsync(f.fileno())
        os.replace(part, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(part)
        raise


def _export(folder: Path, shape: _Shape, tokenizer: Any, target: Path, key: str) -> None:
    """Export, check, quantise and write ``target`` (through a temporary file)."""
    import onnx
    import torch
    from transformers import AutoModel

    _quantiser()  # the extra's quantiser, before any work
    pieces = _tokens(tokenizer, list(PROBE), shape)
    batch, real = _batch_inputs(pieces)
    packed, _ = _packed_inputs(pieces)
    trace, _ = _batch_inputs(_tokens(tokenizer, ["I moved to Berlin last spring.", "hi"], shape))
    with _quiet_transformers():
        # A fresh model, used for this export only: the traced instance is not used again.
        bert = AutoModel.from_pretrained(
            shape.encoder, local_files_only=True, attn_implementation="eager"
        ).eval()
        encoder = _encoder(bert)
        with torch.no_grad():
            want_batch = encoder(*(torch.from_numpy(batch[n]) for n in INPUTS)).numpy()
            want_packed = encoder(*(torch.from_numpy(packed[n]) for n in INPUTS)).numpy()
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".export-") as tmp:
            fp32 = Path(tmp) / "model.onnx"
            int8 = Path(tmp) / _MODEL_FILE
            _to_onnx(encoder, trace, fp32)
            diff = _checked_export(folder, fp32, [batch, packed], [want_batch, want_packed], real)
            cosine = _checked_quantisation(folder, fp32, int8, batch, want_batch, real)
            _write_keyed(onnx, int8, target, key)
    log.info("exported %s (max |ONNX - torch| %.2g, min cosine int8 %.4f)", target, diff, cosine)


class _Runtime:
    """One loaded model: its tokenizer and ONNX Runtime session (shared by instances)."""

    def __init__(self, shape: _Shape, tokenizer: Any, session: Any) -> None:
        self.shape = shape
        self.session = session
        self._tokenizer = tokenizer
        self._lock = threading.Lock()  # a fast tokenizer's settings are not thread-safe

    def tokens(self, texts: list[str]) -> list[list[int]]:
        with self._lock:
            return _tokens(self._tokenizer, texts, self.shape)

    def run(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        out: np.ndarray = self.session.run([OUTPUT], inputs)[0]
        return out


_runtimes: dict[tuple[str, str, int | None], _Runtime] = {}
_locks: dict[tuple[str, str, int | None], threading.Lock] = {}
_locks_lock = threading.Lock()


def _valid(session: Any, key: str, dimensions: int) -> bool:
    meta = session.get_modelmeta().custom_metadata_map
    if meta.get(_KEY_PROP) != key:
        return False
    probe, _ = _batch_inputs([[0, 1, 2]])
    out = session.run([OUTPUT], probe)[0]
    return bool(out.shape == (1, 3, dimensions) and np.isfinite(out).all())


def _load(folder: Path, cache_dir: Path, threads: int | None) -> _Runtime:
    """The runtime of the model in ``folder``: exported into ``cache_dir`` unless a valid
    export is there."""
    ort = _require()
    shape = _shape(folder)
    from transformers import AutoTokenizer

    with _quiet_transformers():
        tokenizer = AutoTokenizer.from_pretrained(shape.encoder, local_files_only=True)
    key = _cache_key(shape.weights, ort.__version__)
    name = _BUNDLED_NAME if folder == default_model_path() else folder.name
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name) or "model"
    target = _private_folder(cache_dir, "onnx", f"{safe}-{key}") / _MODEL_FILE
    if target.is_file():
        try:
            session = _session(target, threads)
            if _valid(session, key, shape.dimensions):
                return _Runtime(shape, tokenizer, session)
            log.warning("%s is not this model's export: exporting it again", target)
        except Exception as exc:  # a truncated or corrupt file: export it again
            log.warning("%s does not load (%s): exporting it again", target, exc)
    _export(folder, shape, tokenizer, target, key)
    return _Runtime(shape, tokenizer, _session(target, threads))


def _runtime(folder: Path, cache_dir: Path, threads: int | None) -> _Runtime:
    ident = (str(folder), str(cache_dir), threads)
    found = _runtimes.get(ident)
    if found is not None:
        return found
    with _locks_lock:
        lock = _locks.setdefault(ident, threading.Lock())
    with lock:
        found = _runtimes.get(ident)
        if found is None:
            found = _runtimes[ident] = _load(folder, cache_dir, threads)
        return found


class QuantizedEmbeddings(Embeddings):
    """The bundled all-MiniLM-L6-v2 (or another sentence-transformers folder of the same
    shape: BERT + mean pooling [+ Normalize]) int8-quantised, run by ONNX Runtime.

    Setup:
        Needs the ``onnx`` extra: ``pip install 'langchain-agentmem[onnx]'``. On first use
        the model is exported to ONNX from its own weights (offline), checked against
        torch, quantised to int8 and kept in ``cache_dir`` (default ``$AGENTMEM_HOME/cache``,
        ``~/.agentmem/cache``): later uses, in any process, load that file.

    Instantiate:
        .. code-block:: python

            from langchain_agentmem import AgentMemory, QuantizedEmbeddings

            memory = AgentMemory("sqlite:///memory.db", embeddings=QuantizedEmbeddings())

    Its vectors are close to the torch model's (cosine about 0.99), not equal to them: a
    store keeps one embedder from its first record on; ``model_name`` tells them apart
    (``"onnx-int8/all-MiniLM-L6-v2"``), and an import re-embeds records from the other.

    Args:
        model_path: a sentence-transformers model folder; default the bundled model.
        cache_dir: where exports are kept (a folder per model, weights and runtime version).
        batch_size: texts per pass of :meth:`embed_array`.
        threads: ONNX Runtime's intra-op threads (default: its own choice, the cores).
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        batch_size: int = 64,
        threads: int | None = None,
    ) -> None:
        _require()
        if batch_size < 1:
            raise InvalidInputError(f"batch_size must be at least 1, got {batch_size}")
        if threads is not None and threads < 1:
            raise InvalidInputError(f"threads must be at least 1 (or None), got {threads}")
        path = Path(model_path) if model_path is not None else default_model_path()
        self._shape = _shape(path)
        self.model_path = str(path)
        self.cache_dir = str(Path(cache_dir) if cache_dir is not None else default_cache_dir())
        self.batch_size = batch_size
        self.threads = threads
        name = _BUNDLED_NAME if path == default_model_path() else path.name
        self.model_name = f"onnx-int8/{name}"

    def _runtime(self) -> _Runtime:
        return _runtime(Path(self.model_path), Path(self.cache_dir), self.threads)

    def load(self) -> QuantizedEmbeddings:
        """Export (or load) the model now rather than on first use; returns ``self``."""
        self._runtime()
        return self

    @property
    def dimensions(self) -> int:
        """Length of the vectors this model returns."""
        return self._shape.dimensions

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed texts to store."""
        return [list(map(float, row)) for row in self.embed_array(list(texts))]

    def embed_query(self, text: str) -> list[float]:
        """Embed a query."""
        return [float(x) for x in self.embed_array([text])[0]]

    def embed_array(self, texts: list[str]) -> Vector:
        """Embed texts to a float32 matrix of unit rows, in padded batches of similar
        lengths."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        runtime = self._runtime()
        pieces = runtime.tokens(list(texts))
        out = np.empty((len(pieces), self.dimensions), dtype=np.float32)
        for rows in length_batches([len(p) for p in pieces], self.batch_size):
            inputs, real = _batch_inputs([pieces[i] for i in rows])
            out[rows] = _pool_batch(runtime.run(inputs), real)
        return normalize(out)

    def embed_packed(self, texts: list[str]) -> Vector:
        """Embed a few short texts (a record's text and its sentences) in one pass, packed
        (see :mod:`langchain_agentmem.embedding.packing`); as :meth:`embed_array` past
        ``packing.MAX_PACKED_TOKENS`` tokens."""
        if not texts:
            return self.embed_array([])
        runtime = self._runtime()
        pieces = runtime.tokens(list(texts))
        if sum(map(len, pieces)) > MAX_PACKED_TOKENS:
            return self.embed_array(list(texts))
        inputs, bounds = _packed_inputs(pieces)
        return normalize(_pool_packed(runtime.run(inputs), bounds))
