"""LongMemEval: a user's chats with an assistant, questions asked on a later day.

The loader reads LongMemEval's JSON (the oracle variant, or ``_s`` / ``_m``: each question
with its own haystack of sessions), and :func:`haystacks` builds what the bench stores for a
question: its own sessions plus ``distractors`` sessions of other questions, drawn with a
fixed seed, each at its own date, none dated after the question is asked.

A session's turns are keyed ``<question id>/<session id>:<turn>``: a session id may recur
in two questions at two dates (with other evidence marks), so a turn is named by the
question whose haystack it came from.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from langchain_agentmem.errors import InvalidInputError

QUESTION_TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)
"""LongMemEval's six kinds of question, in the paper's order."""

ABSTENTION = "abstention"
"""The group of the questions whose answer is "you never told me" (ids ending ``_abs``)."""

SHORT_TYPES = {
    "single-session-user": "ss-user",
    "single-session-assistant": "ss-asst",
    "single-session-preference": "ss-pref",
    "multi-session": "multi",
    "knowledge-update": "update",
    "temporal-reasoning": "temporal",
    ABSTENTION: "abstain",
}
"""How a table's header names each type."""

_DATE = re.compile(r"^(\d{4})/(\d{2})/(\d{2})(?: \(\w+\))? (\d{2}):(\d{2})$")


def parse_date(value: str) -> datetime:
    """LongMemEval's ``"2023/05/30 (Tue) 23:40"`` as a UTC datetime.

    Raises:
        InvalidInputError: the value is not such a date.
    """
    found = _DATE.match(value.strip()) if isinstance(value, str) else None
    if found is None:
        raise InvalidInputError(
            f"{value!r} is not a LongMemEval date; expected '2023/05/30 (Tue) 23:40'"
        )
    year, month, day, hour, minute = (int(g) for g in found.groups())
    try:
        return datetime(year, month, day, hour, minute, tzinfo=timezone.utc)
    except ValueError as exc:
        raise InvalidInputError(f"{value!r} is not a date ({exc})") from None


@dataclass(frozen=True)
class Turn:
    """One message of a session."""

    id: str
    """``<question id>/<session id>:<index>``."""
    role: str
    """``"user"`` or ``"assistant"``."""
    text: str


@dataclass(frozen=True)
class Session:
    """One chat between the user and the assistant, on one date."""

    key: str
    """``<question id>/<session id>``: unique in the data."""
    id: str
    """LongMemEval's session id."""
    date: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    """A question, the day it is asked, and the sessions of its own haystack."""

    id: str
    type: str
    """One of :data:`QUESTION_TYPES`."""
    question: str
    answer: str
    date: datetime
    """The day it is asked: "today" for its answer."""
    sessions: tuple[Session, ...]
    """Its own haystack, in the data's order."""
    answer_sessions: tuple[str, ...]
    """The keys of the sessions holding its evidence."""
    evidence: tuple[str, ...]
    """The ids of the turns marked ``has_answer``, in order."""

    @property
    def abstention(self) -> bool:
        """Whether the right answer says the sessions never told it."""
        return self.id.endswith("_abs")

    @property
    def group(self) -> str:
        """What the figures are split by: :data:`ABSTENTION`, else its type."""
        return ABSTENTION if self.abstention else self.type


def _session(qid: str, sid: str, date: str, turns: object) -> tuple[Session, list[str]]:
    if not isinstance(turns, list):
        raise InvalidInputError(f"question {qid!r}: session {sid!r} is not a list of turns")
    key = f"{qid}/{sid}"
    out: list[Turn] = []
    evidence: list[str] = []
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict) or turn.get("role") not in ("user", "assistant"):
            raise InvalidInputError(
                f"question {qid!r}: turn {i} of session {sid!r} is not a user or assistant turn"
            )
        out.append(Turn(f"{key}:{i}", str(turn["role"]), str(turn.get("content", ""))))
        if turn.get("has_answer"):
            evidence.append(out[-1].id)
    return Session(key, sid, parse_date(date), tuple(out)), evidence


def _question(item: object) -> Question:
    if not isinstance(item, dict) or not all(
        key in item
        for key in ("question_id", "question_type", "question", "answer", "question_date")
    ):
        raise InvalidInputError(
            "expected LongMemEval questions: objects with question_id, question_type, "
            "question, answer, question_date and haystack_sessions"
        )
    qid = str(item["question_id"])
    ids, dates, raw = (
        item.get(k) for k in ("haystack_session_ids", "haystack_dates", "haystack_sessions")
    )
    if not (isinstance(ids, list) and isinstance(dates, list) and isinstance(raw, list)) or not (
        len(ids) == len(dates) == len(raw)
    ):
        raise InvalidInputError(
            f"question {qid!r}: haystack_session_ids, haystack_dates and haystack_sessions "
            "must be lists of one length"
        )
    if item["question_type"] not in QUESTION_TYPES:
        raise InvalidInputError(
            f"question {qid!r} has type {item['question_type']!r}; expected one of "
            f"{', '.join(QUESTION_TYPES)}"
        )
    sessions: list[Session] = []
    evidence: list[str] = []
    for sid, date, turns in zip(ids, dates, raw, strict=True):
        session, marked = _session(qid, str(sid), str(date), turns)
        sessions.append(session)
        evidence += marked
    answer_ids = {str(s) for s in item.get("answer_session_ids") or ()}
    return Question(
        id=qid,
        type=str(item["question_type"]),
        question=str(item["question"]),
        answer=str(item["answer"]),  # some answers are integers: compared as text
        date=parse_date(str(item["question_date"])),
        sessions=tuple(sessions),
        answer_sessions=tuple(s.key for s in sessions if s.id in answer_ids),
        evidence=tuple(evidence),
    )


def load_longmemeval(path: str | os.PathLike[str]) -> list[Question]:
    """Read a LongMemEval JSON file (``longmemeval_oracle.json`` or its parts).

    Raises:
        InvalidInputError: the file is missing or is not LongMemEval data.
    """
    file = Path(path)
    if not file.is_file():
        raise InvalidInputError(
            f"LongMemEval data file {str(file)!r} does not exist; pass the path of "
            "longmemeval_oracle.json (or a part of it)"
        )
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInputError(f"{str(file)!r} is not a JSON file ({exc})") from None
    if not isinstance(data, list) or not data:
        raise InvalidInputError(f"{str(file)!r} is not LongMemEval data: expected a list")
    return [_question(item) for item in data]


def pick_questions(questions: Sequence[Question], n: int | None, seed: int = 0) -> list[Question]:
    """``n`` of ``questions``, every group (:attr:`Question.group`) in its share, drawn with
    ``seed``, in the data's order; all of them when ``n`` is ``None`` or not below their
    number. A smaller ``n`` asks part of what a larger one asks.

    Each group is shuffled, and its ``i``-th question of ``m`` placed at ``(i + 0.5) / m``:
    the first ``n`` of that order hold each group in proportion.
    """
    if n is None or n >= len(questions):
        return list(questions)
    groups: dict[str, list[int]] = {}
    for i, question in enumerate(questions):
        groups.setdefault(question.group, []).append(i)
    place: dict[int, tuple[float, str]] = {}
    for group, ids in groups.items():
        random.Random(f"longmemeval:{seed}:{group}").shuffle(ids)
        for rank, i in enumerate(ids):
            place[i] = ((rank + 0.5) / len(ids), group)
    keep = set(sorted(place, key=lambda i: place[i])[:n])
    return [q for i, q in enumerate(questions) if i in keep]


@dataclass(frozen=True)
class Haystack:
    """What the memory holds when one question is asked: sessions, oldest first."""

    question: Question
    sessions: tuple[Session, ...]
    distractors: int
    """How many of :attr:`sessions` came from other questions."""


def haystacks(
    questions: Sequence[Question],
    pool: Sequence[Question],
    *,
    distractors: int,
    seed: int = 0,
) -> list[Haystack]:
    """Each question's haystack: its own sessions plus ``distractors`` sessions of other
    questions of ``pool`` (drawn with ``seed``, each at its own date), never one dated after
    the question is asked nor one whose session id the question's own haystack holds; a
    question asked before enough sessions exist gets fewer."""
    every = [s for q in pool for s in q.sessions]
    out = []
    for question in questions:
        own = {s.id for s in question.sessions}
        earlier = [s for s in every if s.id not in own and s.date <= question.date]
        rng = random.Random(f"longmemeval:{seed}:{question.id}")
        drawn = rng.sample(earlier, min(distractors, len(earlier)))
        sessions = sorted([*question.sessions, *drawn], key=lambda s: (s.date, s.key))
        out.append(Haystack(question, tuple(sessions), len(drawn)))
    return out


__all__ = [
    "ABSTENTION",
    "QUESTION_TYPES",
    "SHORT_TYPES",
    "Haystack",
    "Question",
    "Session",
    "Turn",
    "haystacks",
    "load_longmemeval",
    "parse_date",
    "pick_questions",
]
