"""Seeded LoCoMo-format conversations in which facts change, and writing them to a file.

:func:`generate` writes seeded LoCoMo-format conversations: two speakers chat over dated
sessions; mixed with small talk, each speaker states facts about themselves (city, job,
pet, partner, hobby, phone number, car) and later changes some of them ("I moved to
Lisbon" ... "we moved to Berlin"). Questions ask for the *current* fact, with the latest
statement as evidence; where a fact changed, a question phrased "before ..." asks for the
earlier one with the earlier statement as evidence.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.files import write_text
from langchain_agentmem.rl.synthetic_check_slots import (
    CHECK_SLOTS,
    FRESH_SLOTS,
    SEALED_SLOTS,
    UNSEEN_SLOTS,
)
from langchain_agentmem.rl.synthetic_slots import HELDOUT_SLOTS, SLOTS, Slot

NAMES = (
    "Alice", "Bruno", "Chiara", "Dmitri", "Elena", "Farid", "Greta", "Hiro", "Ines", "Jonas",
    "Kemal", "Lena", "Marco", "Nadia", "Omar", "Priya", "Quentin", "Rosa", "Sven", "Tara",
)  # fmt: skip

SLOT_SETS = {
    "tuned": SLOTS,
    "heldout": HELDOUT_SLOTS,
    "check": CHECK_SLOTS,
    "fresh": FRESH_SLOTS,
    "unseen": UNSEEN_SLOTS,
    "sealed": SEALED_SLOTS,
}
"""Each set of facts and phrasings by the name ``--slots`` takes."""

FILLER = (
    "How was your weekend?",
    "Pretty relaxed, I mostly stayed in and read.",
    "The weather has been so grey lately.",
    "I tried that new noodle place downtown, not bad at all.",
    "Have you watched anything good recently?",
    "I binged a detective series, couldn't stop.",
    "Work has been hectic but I'm managing.",
    "That sounds lovely, I'm glad you had a good time.",
    "Haha, that's so typical!",
    "I've been trying to sleep earlier, with mixed results.",
    "My sister visited and we cooked all day.",
    "I need a holiday soon, honestly.",
    "Did you see the game last night?",
    "No, I missed it, was it any good?",
    "I'm reading a novel about a lighthouse keeper.",
    "Let's grab coffee next time you're free.",
    "The traffic this morning was unbelievable.",
    "I finally cleaned out my closet.",
    "That's great to hear!",
    "Oh wow, tell me more.",
    "I'm so happy for you.",
    "We should plan a picnic when it's warmer.",
    "I've been listening to a lot of jazz.",
    "My neighbour's garden looks amazing this year.",
)

REPLIES = (
    "Oh wow, that's a big change!",
    "Nice, good for you.",
    "Really? I didn't see that coming.",
    "That sounds exciting, congrats!",
    "How do you feel about it?",
)

_DATE_FORMAT = "%I:%M %p on %d %B, %Y"


def _fact_plan(
    rng: random.Random,
    speakers: tuple[str, str],
    sessions: int,
    facts: int,
    slots: Sequence[Slot] = SLOTS,
) -> list[tuple[int, str, Slot, list[str]]]:
    """``(session, speaker, slot, values in order)`` for each fact a speaker has."""
    plan = []
    pairs = [(sp, slot) for sp in speakers for slot in slots]
    for speaker, slot in rng.sample(pairs, min(facts, len(pairs))):
        n_values = rng.choice((1, 2, 2, 3))
        plan.append((rng.randrange(sessions), speaker, slot, rng.sample(slot.values, n_values)))
    return plan


def generate_one(
    rng: random.Random,
    sample_id: str,
    *,
    turns: int = 150,
    sessions: int = 6,
    facts: int = 8,
    slots: Sequence[Slot] = SLOTS,
) -> dict[str, Any]:
    """One conversation in the LoCoMo format (see :func:`generate`)."""
    speakers = (rng.choice(NAMES[:10]), rng.choice(NAMES[10:]))
    per_session = [turns // sessions + (1 if s < turns % sessions else 0) for s in range(sessions)]
    # Each value of each fact goes to a session (non-decreasing), then to a turn slot.
    events: dict[int, list[tuple[str, Slot, int, list[str]]]] = {s: [] for s in range(sessions)}
    for start, speaker, slot, values in _fact_plan(rng, speakers, sessions, facts, slots):
        session = min(start, sessions - len(values))
        for i in range(len(values)):
            events[session].append((speaker, slot, i, values))
            if i + 1 < len(values):  # leave a later session for each value still to come
                session = rng.randrange(session + 1, sessions - (len(values) - i - 2))
    # (speaker, slot name) -> (slot, [(dia_id, value), ...] in the order they were said)
    statements: dict[tuple[str, str], tuple[Slot, list[tuple[str, str]]]] = {}
    conversation: dict[str, Any] = {"speaker_a": speakers[0], "speaker_b": speakers[1]}
    date = datetime(2023, 1, 1, 9, 0, tzinfo=timezone.utc) + timedelta(days=rng.randrange(60))
    for s in range(sessions):
        n = per_session[s]
        todo = sorted(events[s], key=lambda e: e[2])  # first statements before changes
        # A fact takes two turns (statement + reply); spread them over the session.
        starts = sorted(rng.sample(range(0, max(1, n - 1), 2), min(len(todo), n // 2)))
        at = dict(zip(starts, todo, strict=False))
        session_turns: list[dict[str, str]] = []
        j = 0
        while j < n:
            dia = f"D{s + 1}:{j + 1}"
            if j in at and j + 1 < n:
                speaker, slot, i, values = at[j]
                if i == 0:
                    text = rng.choice(slot.first).format(v=values[0])
                else:
                    text = rng.choice(slot.change).format(v=values[i], old=values[i - 1])
                said = statements.setdefault((speaker, slot.name), (slot, []))[1]
                said.append((dia, values[i]))
                other = speakers[1] if speaker == speakers[0] else speakers[0]
                session_turns.append({"speaker": speaker, "dia_id": dia, "text": text})
                session_turns.append(
                    {"speaker": other, "dia_id": f"D{s + 1}:{j + 2}", "text": rng.choice(REPLIES)}
                )
                j += 2
                continue
            speaker = speakers[j % 2]
            session_turns.append({"speaker": speaker, "dia_id": dia, "text": rng.choice(FILLER)})
            j += 1
        conversation[f"session_{s + 1}_date_time"] = date.strftime(_DATE_FORMAT)
        conversation[f"session_{s + 1}"] = session_turns
        date += timedelta(days=rng.randint(5, 40), minutes=rng.randrange(600))
    qa: list[dict[str, Any]] = []
    for (speaker, _), (slot, said) in statements.items():
        dias = [d for d, _ in said]
        qa.append(
            {
                "question": rng.choice(slot.current).format(s=speaker),
                "answer": said[-1][1],
                "evidence": [dias[-1]],
                "category": 4,
                "fact": {"kind": "current", "slot": slot.name, "stale": dias[:-1]},
            }
        )
        if len(dias) > 1:
            qa.append(
                {
                    "question": rng.choice(slot.before).format(s=speaker, v=said[-1][1]),
                    "answer": said[-2][1],
                    "evidence": [dias[-2]],
                    "category": 2,
                    "fact": {"kind": "before", "slot": slot.name, "stale": []},
                }
            )
    return {"sample_id": sample_id, "conversation": conversation, "qa": qa}


def generate(
    n: int = 3,
    *,
    seed: int = 0,
    turns: int = 150,
    sessions: int = 6,
    facts: int = 8,
    slots: Sequence[Slot] = SLOTS,
) -> list[dict[str, Any]]:
    """Seeded LoCoMo-format conversations in which speakers' facts change.

    Args:
        n: How many conversations.
        seed: Same seed, same conversations.
        turns: Turns per conversation.
        sessions: Dated sessions per conversation.
        facts: Facts (speaker, slot) per conversation; about half change once or twice.
        slots: The kinds of facts and their phrasings (:data:`HELDOUT_SLOTS`,
            :data:`CHECK_SLOTS`, :data:`FRESH_SLOTS`, :data:`UNSEEN_SLOTS` or
            :data:`SEALED_SLOTS` for a check apart from the ones a ranking was tuned on).

    Each ``qa`` entry has LoCoMo's keys plus ``fact``: ``kind`` (``"current"`` or
    ``"before"``), ``slot`` and ``stale`` (ids of earlier statements of the same fact).
    """
    for name, value, low in (("n", n, 1), ("turns", turns, 20), ("sessions", sessions, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise InvalidInputError(f"{name} must be an int >= {low}, got {value!r}")
    if turns < 8 * sessions:
        raise InvalidInputError(
            f"turns ({turns}) must be at least 8 per session ({sessions} sessions); "
            "pass more turns or fewer sessions"
        )
    rng = random.Random(seed)
    return [
        generate_one(
            rng, f"facts-{seed}-{i}", turns=turns, sessions=sessions, facts=facts, slots=slots
        )
        for i in range(n)
    ]


def write(path: str | os.PathLike[str], data: Sequence[dict[str, Any]]) -> Path:
    """Write conversations as a LoCoMo JSON file."""
    out = Path(path)
    write_text(out, json.dumps(list(data), indent=1), private=False)
    return out
