"""Cheap features of a memory item and of the memory it is offered to.

Everything here is plain numpy and regular expressions: no model call, no look-ahead, no
labels. The same functions feed the training environment and the shipped policy, so what
the policy saw in training is exactly what it sees in use.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Container, Iterable, Mapping, Sequence, Set
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from langchain_agentmem.text.replies import answers
from langchain_agentmem.text.sentences import strip_speaker
from langchain_agentmem.text.words import FEATURE_STOP
from langchain_agentmem.types import RecordStat

FloatArray = npt.NDArray[np.float32]

_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*|\d+(?:[.,:/]\d+)*")
_NUMBER = re.compile(
    r"\b\d+(?:[.,:/]\d+)*\b|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
    r"twelve|twenty|thirty|hundred|thousand|first|second|third|dozen|couple)\b",
    re.IGNORECASE,
)
_DATE = re.compile(
    r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday|yesterday|today|tomorrow|tonight|weekend|week|month|"
    r"year|years|ago|last|next|summer|winter|spring|autumn|fall|christmas|birthday|"
    r"(?:19|20)\d\d)\b",
    re.IGNORECASE,
)
_IMAGE = re.compile(
    r"\[shares? (?:a|an) (?:photo|image|picture)|\[image|\bphoto of\b|\bpicture of\b", re.IGNORECASE
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|our|us)\b", re.I)
_SECOND_PERSON = re.compile(r"\b(?:you|your|you're|you've|yours)\b", re.IGNORECASE)
_SMALL_TALK = re.compile(
    r"\b(?:hey|hi|hello|thanks|thank|bye|wow|awesome|cool|great|amazing|glad|sounds|nice|"
    r"haha|lol|congrats|congratulations|sure|yeah|yes|totally|agree|appreciate|take care)\b",
    re.IGNORECASE,
)
_EVENT = re.compile(
    r"\b(?:went|started|joined|got|bought|visited|made|took|finished|moved|signed|won|lost|"
    r"met|adopted|painted|wrote|read|ran|played|attended|received|decided|learned|"
    r"\w{3,}ed)\b",
    re.IGNORECASE,
)
TEXT_FEATURES = (
    "length",
    "capitalised",
    "numbers",
    "dates",
    "image",
    "question",
    "first_person",
    "second_person",
    "exclamations",
    "content_share",
    "long_words",
    "small_talk",
    "events",
    "answers",
    "importance",
)
"""Names of the per-item features, in order: read from its text, and from its metadata
whether it shares an image and whether it replies to a question (``reply_to``)."""

IMPORTANCE_WEIGHTS: dict[str, float] = {
    "length": 2.0,
    "capitalised": 2.0,
    "dates": 2.0,
    "numbers": 1.0,
    "long_words": 1.5,
    "events": 0.5,
    "first_person": 0.5,
    "image": 0.5,
    "question": -0.5,
    "small_talk": -1.0,
    "second_person": -1.5,
}
"""Weights of the hand-written importance rule over the text features."""

_IMPORTANCE = np.array(
    [IMPORTANCE_WEIGHTS.get(n, 0.0) for n in TEXT_FEATURES[:-1]], dtype=np.float32
)
IMPORTANCE_SCALE = 5.0
"""The ``importance`` feature is the rule's score divided by this (about [-1, 1])."""

CONTEXT_FEATURES = (
    "new_words",
    "new_word_count",
    "after_question",
)
"""Names of the features of the item in the memory it is offered to, in order: the share
and number of its words that no stored record holds, and whether the newest stored record
of its thread asked a question."""

MEMORY_FEATURES = (
    "fill",
    "max_similarity",
    "top3_similarity",
    "near_duplicates",
    "min_priority",
    "mean_priority",
)
"""Names of the features of the memory as the item arrives, in order."""

ITEM_FEATURES = TEXT_FEATURES + CONTEXT_FEATURES
"""Features fixed when the item arrives (its text and what came before it)."""
FEATURE_NAMES = ITEM_FEATURES + MEMORY_FEATURES
N_TEXT = len(TEXT_FEATURES)
N_ITEM = len(ITEM_FEATURES)
N_FEATURES = len(FEATURE_NAMES)

NEAR_DUPLICATE = 0.9
"""Cosine similarity above which two items count as near-duplicates."""


def text_features(text: str, metadata: Mapping[str, Any] | None = None) -> FloatArray:
    """The item's own features, each scaled to about [0, 1]."""
    body = strip_speaker(text)
    words = _WORD.findall(body)
    n = len(words)
    lower = [w.lower() for w in words]
    capitalised = 0
    sentence_start = True
    for raw in re.findall(r"[A-Za-z][A-Za-z'\-]*|[.!?]", body):
        if raw in ".!?":
            sentence_start = True
            continue
        if raw[0].isupper() and not sentence_start and raw != "I" and not raw.startswith("I'"):
            capitalised += 1
        sentence_start = False
    content = sum(1 for w in lower if w not in FEATURE_STOP)
    image = has_image(text, metadata)
    out = np.array(
        [
            min(n, 80) / 80.0,
            min(capitalised, 6) / 6.0,
            min(len(_NUMBER.findall(body)), 4) / 4.0,
            min(len(_DATE.findall(body)), 3) / 3.0,
            1.0 if image else 0.0,
            min(body.count("?"), 2) / 2.0,
            min(len(_FIRST_PERSON.findall(body)), 8) / 8.0,
            min(len(_SECOND_PERSON.findall(body)), 6) / 6.0,
            min(body.count("!"), 4) / 4.0,
            content / n if n else 0.0,
            sum(1 for w in words if len(w) >= 7) / n if n else 0.0,
            min(len(_SMALL_TALK.findall(body)), 5) / 5.0,
            min(len(_EVENT.findall(body)), 4) / 4.0,
            1.0 if answers(metadata) else 0.0,
            0.0,
        ],
        dtype=np.float32,
    )
    out[-1] = float(np.clip(importance_score(out) / IMPORTANCE_SCALE, -1.0, 1.0))
    return out


_MemoKey = tuple[str, bool, bool]
"""A text, whether it shares an image and whether it replies to a question."""


class TextMemo:
    """Recent texts' :func:`text_features` and :func:`content_words`, computed once.

    Bounded by the characters of the texts it holds; safe to share between threads.
    """

    def __init__(self, max_chars: int = 4_000_000) -> None:
        self.max_chars = max_chars
        self._held: OrderedDict[_MemoKey, tuple[FloatArray, frozenset[str]]] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(
        self, text: str, metadata: Mapping[str, Any] | None = None
    ) -> tuple[FloatArray, frozenset[str]]:
        """The text's features (a read-only array) and its content words."""
        key = (text, has_image(text, metadata), answers(metadata))
        with self._lock:
            found = self._held.get(key)
            if found is not None:
                self._held.move_to_end(key)
                return found
        features = text_features(text, metadata)
        features.setflags(write=False)
        found = (features, frozenset(content_words(text)))
        if len(text) <= self.max_chars:
            with self._lock:
                if key not in self._held:
                    self._held[key] = found
                    self._chars += len(text)
                while self._chars > self.max_chars:
                    (gone, _, _), _ = self._held.popitem(last=False)
                    self._chars -= len(gone)
        return found

    def __contains__(self, text: object) -> bool:
        with self._lock:
            return any(key[0] == text for key in self._held)

    def clear(self) -> None:
        """Forget every text held."""
        with self._lock:
            self._held.clear()
            self._chars = 0


TEXTS = TextMemo()
"""The process's memo of text features (a pure function of the text: shared by all)."""


def has_image(text: str, metadata: Mapping[str, Any] | None) -> bool:
    """Whether the item shares an image (named in the text or in its metadata)."""
    return bool(_IMAGE.search(text)) or bool(
        metadata and (metadata.get("image") or metadata.get("blip_caption"))
    )


def content_words(text: str) -> set[str]:
    """The distinct lower-cased words of ``text`` that are not stop words (speaker dropped)."""
    return {
        w for w in (m.lower() for m in _WORD.findall(strip_speaker(text))) if w not in FEATURE_STOP
    }


def question_share(text: str) -> float:
    """How much ``text`` asks (question marks, speaker dropped), in [0, 1]."""
    return min(strip_speaker(text).count("?"), 2) / 2.0


def context_features(
    words: Set[str], known: Container[str], previous_question: float
) -> FloatArray:
    """The item's :data:`CONTEXT_FEATURES`, read from the memory it is offered to.

    Args:
        words: The item's :func:`content_words`.
        known: The content words of the records the memory holds.
        previous_question: :func:`question_share` of the newest record of the item's
            thread (0 when there is none).
    """
    new = sum(1 for w in words if w not in known)
    return np.array(
        [new / len(words) if words else 0.0, min(new, 10) / 10.0, previous_question],
        dtype=np.float32,
    )


class MemoryWords:
    """How often each content word occurs in the records a memory holds.

    Derived from the records alone (:meth:`sync`), so every process that reads the same
    store counts the same words.
    """

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self._held: dict[str, tuple[datetime, frozenset[str]]] = {}
        self._last: Sequence[RecordStat] | None = None

    def sync(self, records: Sequence[RecordStat]) -> None:
        """Follow the memory's records (a record changed when its ``updated_at`` did)."""
        if records is self._last:
            return  # the same snapshot as last time: nothing changed
        self._last = records
        held = self._held
        current = {r.id: r for r in records}
        for gone in held.keys() - current.keys():
            self._count(held.pop(gone)[1], -1)
        changed = [r for r in records if (h := held.get(r.id)) is None or h[0] != r.updated_at]
        for r in changed:
            old = held.get(r.id)
            if old is not None:
                self._count(old[1], -1)
            words = TEXTS.get(r.text, r.metadata)[1]
            held[r.id] = (r.updated_at, words)
            self._count(words, 1)

    def _count(self, words: Iterable[str], delta: int) -> None:
        counts = self.counts
        for w in words:
            n = counts.get(w, 0) + delta
            if n:
                counts[w] = n
            else:
                counts.pop(w, None)


NO_CONTEXT = np.zeros(len(CONTEXT_FEATURES), dtype=np.float32)
"""Context features of an item offered to an empty memory, as stored records are scored."""


def neutral_observation(text_part: FloatArray, capacity: int) -> FloatArray:
    """What the policy sees of a stored record when scoring its priority: its text, no
    context, offered to a full memory of neutral records (the same in every process)."""
    obs = observation(
        text_part[:N_TEXT],
        NO_CONTEXT,
        memory_features(capacity, capacity, np.zeros(0, np.float32), np.zeros(1, np.float32)),
    )
    return np.clip(obs, -1.0, 1.0)


def importance_score(features: FloatArray) -> float:
    """The importance rule's score of an item from its :func:`text_features`."""
    return float(_IMPORTANCE @ features[: len(_IMPORTANCE)])


def memory_features(
    size: int,
    capacity: int,
    similarities: FloatArray,
    priorities: FloatArray,
) -> FloatArray:
    """Features of the memory as an item arrives.

    Args:
        size: Records held now.
        capacity: Most records the memory may hold.
        similarities: Cosine similarity of the item to its nearest stored records, best first.
        priorities: The priorities of the stored records (any order).
    """
    sims = np.asarray(similarities, dtype=np.float32)
    pri = np.asarray(priorities, dtype=np.float32)
    return np.array(
        [
            min(size / capacity, 1.0),
            float(sims[0]) if sims.size else 0.0,
            float(sims[:3].mean()) if sims.size else 0.0,
            min(int((sims >= NEAR_DUPLICATE).sum()), 3) / 3.0,
            float(pri.min()) if pri.size else 0.0,
            float(pri.mean()) if pri.size else 0.0,
        ],
        dtype=np.float32,
    )


BASE_INDEX = TEXT_FEATURES.index("importance")
"""The policy's output corrects this feature (the importance rule's score) to a priority."""


def priority_from(obs: FloatArray, action: float) -> float:
    """An item's priority: the importance rule's score plus the policy's correction.

    A residual policy: with a zero correction it is the importance rule, so learning
    starts from the rule and is rewarded only for doing better than it.
    """
    return float(np.clip(float(obs[BASE_INDEX]) + float(np.clip(action, -1.0, 1.0)), -1.0, 1.0))


def observation(
    text_part: FloatArray, context_part: FloatArray, memory_part: FloatArray
) -> FloatArray:
    """The policy's input: the item's text, its context, then the memory's features."""
    return np.concatenate([text_part, context_part, memory_part]).astype(np.float32, copy=False)
