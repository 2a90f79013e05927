"""LoCoMo conversations: their loader (turns as they arrive, questions with evidence turn
ids) and how a turn is remembered (its text and metadata), shared by ``bench`` and ``rl``."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.text.replies import REPLY_TO, asks

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
"""The question categories a retrieval memory is measured on (5, adversarial, is skipped)."""

_SESSION = re.compile(r"session_(\d+)")
_EVIDENCE = re.compile(r"D:?0*(\d+):0*(\d+)")
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"


@dataclass(frozen=True)
class Turn:
    """One turn of a conversation."""

    dia_id: str
    """LoCoMo's id, ``D<session>:<turn>``."""
    session: int
    speaker: str
    text: str
    date: datetime | None
    """The session's date and time (UTC), when the data has one."""
    caption: str | None = None
    """Caption of the image shared in the turn, if any."""


@dataclass(frozen=True)
class Question:
    """A question of categories 1-4 with the turns that hold its answer."""

    question: str
    answer: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    """One LoCoMo conversation: turns in order and its questions."""

    sample_id: str
    speakers: tuple[str, str]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


@dataclass
class LoadReport:
    """What the loader repaired or dropped, to print next to the results."""

    repaired: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    no_evidence: int = 0
    skipped_category_5: int = 0

    def lines(self) -> list[str]:
        """Human-readable summary."""
        out = []
        if self.repaired:
            out.append(
                f"repaired {len(self.repaired)} malformed evidence ids: " + "; ".join(self.repaired)
            )
        if self.dropped:
            out.append(
                f"dropped {len(self.dropped)} evidence ids of turns that do not exist: "
                + "; ".join(self.dropped)
            )
        if self.no_evidence:
            out.append(f"{self.no_evidence} questions have no evidence (left out of recall)")
        return out


def parse_date(value: str) -> datetime | None:
    """Parse LoCoMo's ``"1:56 pm on 8 May, 2023"`` (as UTC); ``None`` if it does not parse."""
    try:
        return datetime.strptime(value.strip(), _DATE_FORMAT).replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def repair_evidence(raw: str) -> list[str]:
    """Well-formed ``D<s>:<t>`` ids in a possibly malformed evidence entry.

    ``"D8:6; D9:17"`` -> ``["D8:6", "D9:17"]``; ``"D:11:26"`` -> ``["D11:26"]``;
    ``"D30:05"`` -> ``["D30:5"]``; text without an id -> ``[]``.
    """
    return [f"D{s}:{t}" for s, t in _EVIDENCE.findall(raw)]


def _turns(conversation: dict[str, object]) -> list[Turn]:
    sessions = sorted(
        (int(m.group(1)), key)
        for key in conversation
        if (m := _SESSION.fullmatch(key)) and isinstance(conversation[key], list)
    )
    turns: list[Turn] = []
    for number, key in sessions:
        raw_date = conversation.get(f"{key}_date_time")
        date = parse_date(raw_date) if isinstance(raw_date, str) else None
        for item in conversation[key]:  # type: ignore[attr-defined]
            caption = item.get("blip_caption")
            turns.append(
                Turn(
                    dia_id=str(item["dia_id"]),
                    session=number,
                    speaker=str(item["speaker"]),
                    text=str(item.get("text", "")),
                    date=date,
                    caption=str(caption) if caption else None,
                )
            )
    return turns


def load_locomo(path: str | os.PathLike[str]) -> tuple[list[Conversation], LoadReport]:
    """Read a LoCoMo JSON file (such as ``locomo_dev.json`` or ``locomo10.json``).

    Malformed evidence ids are repaired, ids of turns that do not exist are dropped, and
    category-5 (adversarial) questions are skipped; the report says what was done.

    Raises:
        InvalidInputError: the file is missing or is not LoCoMo data.
    """
    file = Path(path)
    if not file.is_file():
        raise InvalidInputError(
            f"LoCoMo data file {str(file)!r} does not exist; pass the path of locomo_dev.json"
        )
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInputError(f"{str(file)!r} is not a JSON file ({exc})") from None
    if not isinstance(data, list) or not all(
        isinstance(s, dict) and "conversation" in s and "qa" in s for s in data
    ):
        raise InvalidInputError(
            f"{str(file)!r} is not LoCoMo data: expected a list of samples with "
            "'conversation' and 'qa'"
        )
    report = LoadReport()
    conversations: list[Conversation] = []
    for sample in data:
        sample_id = str(sample.get("sample_id", f"conv-{len(conversations)}"))
        conv = sample["conversation"]
        turns = _turns(conv)
        known = {t.dia_id for t in turns}
        questions = []
        for qa in sample["qa"]:
            category = int(qa.get("category", 0))
            if category not in CATEGORIES:
                report.skipped_category_5 += 1
                continue
            evidence: list[str] = []
            for raw in qa.get("evidence", []):
                fixed = repair_evidence(str(raw))
                if not fixed:
                    report.dropped.append(f"{sample_id} {raw!r} (no turn id)")
                elif fixed != [raw]:
                    report.repaired.append(f"{sample_id} {raw!r} -> {', '.join(fixed)}")
                for dia_id in fixed:
                    if dia_id not in known:
                        report.dropped.append(f"{sample_id} {dia_id}")
                    elif dia_id not in evidence:
                        evidence.append(dia_id)
            if not evidence:
                report.no_evidence += 1
            questions.append(
                Question(
                    question=str(qa["question"]),
                    answer=str(qa.get("answer", "")),
                    category=category,
                    evidence=tuple(evidence),
                )
            )
        speakers = (str(conv.get("speaker_a", "")), str(conv.get("speaker_b", "")))
        conversations.append(Conversation(sample_id, speakers, tuple(turns), tuple(questions)))
    return conversations, report


def turn_text(turn: Turn) -> str:
    """What one turn is remembered as: ``"speaker: text"`` plus the shared image's caption."""
    text = f"{turn.speaker}: {turn.text}"
    if turn.caption:
        text += f" [shares an image: {turn.caption}]"
    return text


def turn_metadata(turn: Turn, reply_to: str = "") -> dict[str, Any]:
    """Metadata stored with a turn (the id lets the bench score what comes back) and, when
    another speaker's turn just before in the session asked something, that question."""
    meta: dict[str, Any] = {"dia_id": turn.dia_id, "speaker": turn.speaker, "session": turn.session}
    if asks(reply_to):
        meta[REPLY_TO] = reply_to
    return meta
