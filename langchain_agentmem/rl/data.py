"""Conversations in the LoCoMo format, with embeddings computed once and cached on disk."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from langchain_core.embeddings import Embeddings

from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.files import private_folders, write_file
from langchain_agentmem.index.speakers import NamedQuery, name_speakers

_EVIDENCE_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")

ANSWERABLE_CATEGORIES = (1, 2, 3, 4)
"""LoCoMo question categories scored (5 is adversarial: unanswerable)."""


@dataclass(frozen=True)
class Turn:
    """One turn of a conversation, as a memory item."""

    dia_id: str
    speaker: str
    text: str
    """The item text: ``"speaker: text"``, plus the caption of a shared image."""
    session: int
    has_image: bool
    timestamp: float = 0.0
    """When it was said (UTC epoch seconds): the session's date, one minute per turn."""


@dataclass(frozen=True)
class Question:
    """A question about a conversation, with the turns that hold its answer."""

    text: str
    category: int
    evidence: tuple[int, ...]
    """Indices (into the conversation's turns) of the evidence turns."""


@dataclass
class Conversation:
    """A conversation with its questions and (once embedded) its vectors."""

    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    turn_vectors: npt.NDArray[np.float32] = field(
        default_factory=lambda: np.zeros((0, 0), np.float32), repr=False
    )
    question_vectors: npt.NDArray[np.float32] = field(
        default_factory=lambda: np.zeros((0, 0), np.float32), repr=False
    )
    """Each question embedded as hybrid search embeds it (:func:`searched_as`)."""
    dropped_evidence: int = 0
    """Evidence ids that point to no turn (dropped)."""


def searched_as(conv: Conversation, question: str) -> NamedQuery:
    """``question`` as hybrid search reads it: the conversation's speakers it names taken out
    (:func:`~langchain_agentmem.index.speakers.name_speakers`)."""
    return name_speakers(question, {turn.speaker for turn in conv.turns})


def item_text(speaker: str, text: str, caption: str | None) -> str:
    """The text a turn is remembered as."""
    out = f"{speaker}: {text.strip()}"
    if caption:
        out += f" [shares a photo: {caption.strip()}]"
    return out


def parse_evidence(raw: object) -> list[str]:
    """Repair LoCoMo evidence ids ("D8:6; D9:17", "D:11:26", "D30:05") into ``D<s>:<t>``."""
    return [f"D{int(s)}:{int(t)}" for s, t in _EVIDENCE_ID.findall(str(raw))]


def session_time(raw: object, session: int) -> float:
    """A session's start ("1:56 pm on 8 May, 2023") in epoch seconds (else a day a session)."""
    text = re.sub(r"\s+", " ", str(raw or "")).strip()
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=timezone.utc).timestamp()
        except ValueError:
            continue
    return 1_600_000_000.0 + 86_400.0 * session


def _conversation(item: dict[str, Any]) -> Conversation:
    conv = item["conversation"]
    turns: list[Turn] = []
    sessions = sorted(
        int(key.split("_")[1])
        for key in conv
        if re.fullmatch(r"session_\d+", key) and isinstance(conv[key], list)
    )
    for s in sessions:
        start = session_time(conv.get(f"session_{s}_date_time"), s)
        for j, turn in enumerate(conv[f"session_{s}"]):
            caption = turn.get("blip_caption")
            turns.append(
                Turn(
                    dia_id=str(turn["dia_id"]),
                    speaker=str(turn["speaker"]),
                    text=item_text(str(turn["speaker"]), str(turn.get("text", "")), caption),
                    session=s,
                    has_image=bool(caption),
                    timestamp=start + 60.0 * j,
                )
            )
    index = {t.dia_id: i for i, t in enumerate(turns)}
    questions: list[Question] = []
    dropped = 0
    for qa in item.get("qa", []):
        category = int(qa.get("category", 0))
        if category not in ANSWERABLE_CATEGORIES:
            continue
        ids: list[int] = []
        for raw in qa.get("evidence", []):
            for dia in parse_evidence(raw):
                if dia in index:
                    ids.append(index[dia])
                else:
                    dropped += 1
        evidence = tuple(dict.fromkeys(ids))
        if evidence:
            questions.append(Question(str(qa["question"]), category, evidence))
    return Conversation(str(item["sample_id"]), turns, questions, dropped_evidence=dropped)


def load_locomo(path: str | os.PathLike[str]) -> list[Conversation]:
    """Read conversations in the LoCoMo JSON format (a list of samples).

    Questions of category 5 (unanswerable) and questions left without evidence are skipped.

    Raises:
        InvalidInputError: the file is missing or not in the LoCoMo format.
    """
    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(
            f"conversation file {str(p)!r} does not exist; pass a LoCoMo-format JSON file"
        )
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
        convs = [_conversation(item) for item in data]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InvalidInputError(
            f"{str(p)!r} is not a LoCoMo-format file ({type(exc).__name__}: {exc}); expected "
            "a JSON list of samples with 'sample_id', 'conversation' (session_N turns) and 'qa'"
        ) from None
    convs = [c for c in convs if c.turns]
    if not convs:
        raise InvalidInputError(f"{str(p)!r} holds no conversation with turns")
    return convs


def cache_dir() -> Path:
    """Where derived arrays are cached: ``$AGENTMEM_HOME/cache``."""
    from langchain_agentmem.files import agentmem_home

    return Path(agentmem_home()) / "cache"


def _model_key(embeddings: Embeddings) -> str:
    return str(getattr(embeddings, "model_path", type(embeddings).__name__))


_CACHE_FILE = re.compile(r"^emb-[0-9a-f]{16}-[0-9a-f]{16}\.npz$")


def cache_name(sample_id: str, key: str) -> str:
    """The cache file name of a conversation's vectors: digests of ``sample_id`` and of
    ``key``'s inputs, so a name reveals neither the conversation nor its text."""
    digest = hashlib.sha256(b"agentmem cache\0" + sample_id.encode("utf-8")).hexdigest()[:16]
    return f"emb-{digest}-{key}.npz"


def _save_cached(file: Path, vectors: npt.NDArray[np.float32]) -> None:
    """Write ``file`` atomically, owner-only (folders 0700, the file 0600); files named by
    earlier versions (after the conversation's id) are removed."""
    folder = file.parent
    private_folders(folder, own=True)
    for old in folder.glob("emb-*.npz"):
        if not _CACHE_FILE.match(old.name):
            old.unlink(missing_ok=True)
    buffer = io.BytesIO()
    np.savez(buffer, vectors=vectors)
    write_file(file, buffer.getvalue())


def _record_rule() -> bytes:
    """How turn vectors are made: the source of the sentence rule (part of the cache key,
    so changing the rule makes new files)."""
    from langchain_agentmem.text import sentences

    return b"records: whole + sentence mean\0" + Path(sentences.__file__).read_bytes()


def embed_conversations(
    convs: list[Conversation], embeddings: Embeddings | None = None, *, cache: bool = True
) -> list[Conversation]:
    """Fill each conversation's turn and question vectors (cached as ``.npz``, never pickle)."""
    from langchain_agentmem.embedding.embeddings import (
        embed_records,
        embed_texts,
        resolve_embeddings,
    )

    emb: Embeddings | None = embeddings
    rule = _record_rule()
    for conv in convs:
        n = len(conv.turns)
        texts = [t.text for t in conv.turns]
        texts += [searched_as(conv, q.text).text for q in conv.questions]
        key = hashlib.sha256()
        key.update(_model_key(embeddings).encode() if embeddings is not None else b"default")
        key.update(rule)
        for text in texts:
            key.update(text.encode("utf-8") + b"\0")
        file = cache_dir() / cache_name(conv.sample_id, key.hexdigest()[:16]) if cache else None
        vectors: npt.NDArray[np.float32] | None = None
        if file is not None and file.is_file():
            try:
                with np.load(file, allow_pickle=False) as z:
                    vectors = np.asarray(z["vectors"], dtype=np.float32)
            except (OSError, ValueError, KeyError):
                vectors = None
            if vectors is not None and vectors.shape[0] != len(texts):
                vectors = None
        if vectors is None:
            if emb is None:
                emb = resolve_embeddings(None)
            # turns are embedded as records are, questions as queries
            parts = [embed_records(emb, texts[:n])] if n else []
            if len(texts) > n:
                parts.append(embed_texts(emb, texts[n:]))
            vectors = np.vstack(parts) if parts else np.zeros((0, 0), np.float32)
            if file is not None:
                _save_cached(file, vectors)
        conv.turn_vectors = np.ascontiguousarray(vectors[:n])
        conv.question_vectors = np.ascontiguousarray(vectors[n:])
    return convs
