"""benchmarks/fact_change_answers.py counts an answer naming an earlier value as stale."""

from __future__ import annotations

import sys
from pathlib import Path

from langchain_agentmem.rl.synthetic_conversations import SLOT_SETS, generate

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from fact_change_answers import earlier_values, names


def test_every_changed_fact_has_its_earlier_value_to_look_for() -> None:
    for slots in SLOT_SETS.values():
        raw = generate(1, seed=3, slots=slots)[0]
        earlier = earlier_values(raw)
        changed = [qa for qa in raw["qa"] if qa["fact"]["kind"] == "current"]
        changed = [qa for qa in changed if qa["fact"]["stale"]]
        assert changed
        for qa in changed:
            # a value changed twice is asked "before" of its latest earlier value only
            values = [earlier[turn] for turn in qa["fact"]["stale"] if turn in earlier]
            assert values and all(v != qa["answer"] for v in values)


def test_an_answer_names_a_value_by_its_content_words() -> None:
    assert names("Greta is currently playing salsa dancing.", "salsa dancing")
    assert names("Atlas, her tortoise", "a tortoise named Atlas")
    assert not names("Trail running", "salsa dancing")
