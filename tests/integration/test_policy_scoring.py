"""Policies are scored with the search users get: replayed retrieval equals AgentMemory's."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from langchain_agentmem import AgentMemory, HybridConfig
from langchain_agentmem.rl.data import embed_conversations, load_locomo
from langchain_agentmem.rl.retrieval import hybrid_orders, hybrid_results, replies, static_scores
from langchain_agentmem.text.replies import asks

SESSIONS = [
    [
        "I started a pottery class last Tuesday and made a blue bowl.",
        "That sounds fun! Did you keep the bowl?",
        "Yes, it sits on my desk now. My sister Maria loved it.",
        "We adopted a rescue dog named Pepper in March.",
        "Pepper is a great name. What breed is she?",
        "A beagle mix, she is three years old.",
    ],
    [
        "I ran my first half marathon in Porto on 12 October.",
        "Wow, congrats! How long did it take?",
        "Two hours and five minutes, slower than planned.",
        "My brother Tom moved to Berlin for a job at Siemens.",
        "Berlin is lovely in summer. Will you visit him?",
        "Next spring, we booked the train already.",
    ],
]
QUESTIONS = [
    ("What did I make in pottery class?", ["D1:1"]),
    ("What is the name of the rescue dog?", ["D1:4"]),
    ("Where did I run a half marathon?", ["D2:1"]),
    ("Where does Tom work?", ["D2:4"]),
    ("When will we visit Berlin?", ["D2:6"]),
    ("How old is Pepper?", ["D1:6"]),
]


def _file(path: Path) -> Path:
    conv: dict[str, object] = {"speaker_a": "Ann", "speaker_b": "Ben"}
    for s, turns in enumerate(SESSIONS, start=1):
        conv[f"session_{s}_date_time"] = f"1:56 pm on {8 + s} May, 2023"
        conv[f"session_{s}"] = [
            {"speaker": "Ann" if i % 2 == 0 else "Ben", "dia_id": f"D{s}:{i + 1}", "text": t}
            for i, t in enumerate(turns)
        ]
    qa = [{"question": q, "answer": "x", "evidence": ev, "category": 4} for q, ev in QUESTIONS]
    path.write_text(json.dumps([{"sample_id": "c", "conversation": conv, "qa": qa}]))
    return path


def test_replayed_hybrid_search_is_agentmemorys_search(tmp_path: Path, embeddings: object) -> None:
    [conv] = embed_conversations(load_locomo(_file(tmp_path / "c.json")), embeddings, cache=False)  # type: ignore[arg-type]
    kept = [0, 2, 3, 5, 6, 8, 9, 11]  # what some policy kept
    mem = AgentMemory("sqlite:///:memory:", embeddings=embeddings)  # type: ignore[arg-type]
    # As the bench stores them: who said each turn (newer-first compares a speaker's own
    # records), and a turn that follows the other speaker's question keeps it.
    reply = replies(conv)
    assert sum(asks(r) for r in reply) == 4  # the four questions of the sessions above
    with mem:
        for i in kept:
            turn = conv.turns[i]
            mem.add(
                turn.text,
                namespace="u",
                thread=f"session-{turn.session}",
                timestamp=datetime.fromtimestamp(turn.timestamp, tz=timezone.utc),
                metadata={
                    "turn": i,
                    "speaker": turn.speaker,
                    **({"reply_to": reply[i]} if asks(reply[i]) else {}),
                },
            )
        for k in (3, 5):
            expected = [
                [int(r.metadata["turn"]) for r in mem.search(q.text, namespace="u", k=k)]
                for q in conv.questions
            ]
            assert hybrid_orders(conv, kept, k) == expected


def test_static_scores_rank_like_the_search_when_everything_is_kept(
    tmp_path: Path, embeddings: object
) -> None:
    [conv] = embed_conversations(load_locomo(_file(tmp_path / "c.json")), embeddings, cache=False)  # type: ignore[arg-type]
    everything = list(range(len(conv.turns)))
    scores = static_scores(conv)
    assert scores.shape == (len(conv.questions), len(conv.turns))
    # Newer-first reorders per question ("What is the name of the rescue dog?" here) and is
    # not part of the static approximation.
    exact = hybrid_orders(conv, everything, 4, HybridConfig(newer_first=False))
    static = np.argsort(-scores, axis=1, kind="stable")[:, :4].tolist()
    assert static == exact
    # Each question's evidence turn is among the four best matches: the scores carry signal.
    assert all(q.evidence[0] in row for q, row in zip(conv.questions, exact, strict=True))
    # Not only the order: every turn's static score is the one the search gives it, the
    # neighbour lift included (a question lifts the turn after it, never the one before).
    full = hybrid_results(conv, everything, len(everything), HybridConfig(newer_first=False))
    for qi, found in enumerate(full):
        assert len(found) == len(everything)
        for rid, score in found:
            assert scores[qi, rid] == pytest.approx(score, abs=1e-5)
