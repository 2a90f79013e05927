"""Policies are pure: candidate and state in, ops out. Built by hand here, no store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np
import pytest

from langchain_agentmem.errors import InvalidInputError, InvalidTypeError, UnknownPolicyError
from langchain_agentmem.policies import (
    FifoPolicy,
    ForgettingCurvePolicy,
    ImportancePolicy,
    KeepAllPolicy,
    LruPolicy,
    MemoryPolicy,
    NoveltyPolicy,
    RandomPolicy,
    available_policies,
    make_policy,
)
from langchain_agentmem.policies.heuristics import importance
from langchain_agentmem.rl.budget import check_budget
from langchain_agentmem.types import Candidate, MemoryState, OpKind, RecordStat

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def cand(text: str, cid: str = "new", at: datetime | None = None) -> Candidate:
    vec = np.zeros(4, dtype=np.float32)
    vec[0] = 1.0
    return Candidate(id=cid, namespace="u", text=text, embedding=vec, timestamp=at)


def stat(rid: str, text: str = "ok", minutes: int = 0, **kw: object) -> RecordStat:
    at = T0 + timedelta(minutes=minutes)
    return RecordStat(rid, at, at, text=text, **kw)  # type: ignore[arg-type]


def state(records: list[RecordStat], capacity: int | None, **kw: object) -> MemoryState:
    return MemoryState("u", len(records), capacity, tuple(records), **kw)  # type: ignore[arg-type]


def kinds(ops: list) -> list[OpKind]:  # type: ignore[type-arg]
    return [op.kind for op in ops]


IMPORTANT = "I moved to Lisbon on 3 March 2023 and started working at Siemens as an engineer."
TRIVIAL = "haha thanks, you too!"


def test_available_policies_lists_every_policy() -> None:
    assert set(available_policies()) >= {
        "keep_all",
        "fifo",
        "lru",
        "random",
        "importance",
        "novelty",
        "forgetting_curve",
        "learned",
    }


@pytest.mark.parametrize(
    "name", ["fifo", "lru", "random", "importance", "novelty", "forgetting_curve"]
)
def test_forgetting_policies_need_a_capacity(name: str) -> None:
    with pytest.raises(InvalidInputError, match="needs a capacity"):
        make_policy(name)
    with pytest.raises(InvalidInputError, match="capacity must be >= 1"):
        make_policy(name, 0)
    with pytest.raises(InvalidTypeError):
        make_policy(name, 2.5)  # type: ignore[arg-type]
    assert make_policy(name, 3).capacity == 3


def test_unknown_name_lists_the_choices() -> None:
    with pytest.raises(UnknownPolicyError, match="importance"):
        make_policy("smart")


@pytest.mark.parametrize("budget", [0, -0.1, 1.5, float("nan"), "0.1", True])
def test_budget_outside_0_1_is_refused(budget: object) -> None:
    with pytest.raises(InvalidInputError, match=r"budget"):
        check_budget(budget)
    assert check_budget(1) == 1.0


def test_keep_all_and_fifo_keep_their_behaviour() -> None:
    assert kinds(KeepAllPolicy().decide(cand("x"), state([], None))) == [OpKind.ADD]
    with pytest.raises(InvalidInputError, match="no capacity"):
        KeepAllPolicy(3)
    fifo = FifoPolicy(2)
    ops = fifo.decide(cand("x"), state([stat("a"), stat("b", minutes=1)], 2))
    assert kinds(ops) == [OpKind.DELETE, OpKind.ADD]
    assert ops[0].record_ids == ("a",)


def test_lru_forgets_the_least_recently_used() -> None:
    recs = [
        stat(
            "old-but-recalled", minutes=0, last_accessed_at=T0 + timedelta(hours=5), access_count=2
        ),
        stat("newer-never-recalled", minutes=60),
        stat("newest", minutes=120),
    ]
    ops = LruPolicy(3).decide(cand("x"), state(recs, 3))
    assert kinds(ops) == [OpKind.DELETE, OpKind.ADD]
    assert ops[0].record_ids == ("newer-never-recalled",)
    assert "lru" in ops[0].reason
    assert kinds(LruPolicy(4).decide(cand("x"), state(recs, 4))) == [OpKind.ADD]


def test_random_is_seeded() -> None:
    recs = [stat(str(i), minutes=i) for i in range(20)]
    picks = [
        RandomPolicy(20, seed=7).decide(cand("x"), state(recs, 20))[0].record_ids for _ in range(2)
    ]
    assert picks[0] == picks[1]
    other = [
        RandomPolicy(20, seed=s).decide(cand("x"), state(recs, 20))[0].record_ids for s in range(5)
    ]
    assert len(set(other)) > 1


def test_importance_scores_facts_above_small_talk() -> None:
    assert importance(IMPORTANT) > importance(TRIVIAL) + 1.0
    assert importance("Look [shares a photo: a dog on a beach]") > importance("Look")


def test_importance_skips_a_weak_item_and_evicts_for_a_strong_one() -> None:
    pol = ImportancePolicy(2)
    recs = [stat("fact", IMPORTANT), stat("chat", "ok cool!", minutes=1)]
    weak = pol.decide(cand(TRIVIAL), state(recs, 2))
    assert kinds(weak) == [OpKind.NOOP]
    assert "skipped" in weak[0].reason
    strong = pol.decide(
        cand("On Saturday 12 May my sister Anna ran the Boston marathon in 3 hours."),
        state(recs, 2),
    )
    assert kinds(strong) == [OpKind.DELETE, OpKind.ADD]
    assert strong[0].record_ids == ("chat",)
    assert kinds(pol.decide(cand("ok"), state(recs[:1], 2))) == [OpKind.ADD]


def test_novelty_skips_copies_updates_paraphrases() -> None:
    pol = NoveltyPolicy(5)
    recs = [stat("a", IMPORTANT)]
    copy = pol.decide(cand(IMPORTANT), state(recs, 5, neighbours=(("a", 0.99),)))
    assert kinds(copy) == [OpKind.NOOP]
    para = pol.decide(cand("We moved to Berlin."), state(recs, 5, neighbours=(("a", 0.9),)))
    assert kinds(para) == [OpKind.UPDATE]
    assert para[0].record_ids == ("a",) and para[0].text == "We moved to Berlin."
    assert para[0].embedding is not None
    fresh = pol.decide(cand(TRIVIAL), state(recs, 5, neighbours=(("a", 0.2),)))
    assert kinds(fresh) == [OpKind.ADD]


def test_novelty_lowers_priority_of_redundant_items() -> None:
    recs = [
        stat("a", IMPORTANT),
        stat("b", "My brother Tom lives in Paris with two cats.", minutes=1),
    ]
    text = "My brother Tom lives in Paris with his two cats."
    fresh = NoveltyPolicy(2).decide(cand(text), state(recs, 2, neighbours=(("a", 0.1),)))
    close = NoveltyPolicy(2).decide(cand(text), state(recs, 2, neighbours=(("b", 0.84),)))
    assert kinds(fresh) == [OpKind.DELETE, OpKind.ADD]
    assert kinds(close) == [OpKind.NOOP]


def test_forgetting_curve_keeps_recalled_memories() -> None:
    same = "I adopted a dog named Rex."
    recs = [
        stat("recalled", same, minutes=0, last_accessed_at=T0 + timedelta(days=2), access_count=3),
        stat("forgotten", same, minutes=60),
    ]
    pol = ForgettingCurvePolicy(2)
    now = T0 + timedelta(days=3)
    ops = pol.decide(cand("x", at=now), state(recs, 2))
    assert kinds(ops) == [OpKind.DELETE, OpKind.ADD]
    assert ops[0].record_ids == ("forgotten",)
    assert pol.retention(recs[0], now.timestamp()) > pol.retention(recs[1], now.timestamp())
    later = (now + timedelta(days=30)).timestamp()
    assert pol.retention(recs[0], later) < pol.retention(recs[0], now.timestamp())
    with pytest.raises(InvalidInputError, match="half_life_s"):
        ForgettingCurvePolicy(2, half_life_s=0)


@pytest.mark.parametrize(
    "name", ["fifo", "lru", "random", "importance", "novelty", "forgetting_curve", "learned"]
)
def test_every_policy_respects_capacity_and_gives_reasons(name: str) -> None:
    pol: MemoryPolicy = make_policy(name, 3)
    held: list[RecordStat] = []
    texts = [
        IMPORTANT,
        TRIVIAL,
        "We went hiking on Mount Fuji in July 2022.",
        "lol",
        "ok!",
        IMPORTANT + " Yes.",
    ]
    for i, text in enumerate(texts * 2):
        c = cand(text, cid=f"c{i}", at=T0 + timedelta(minutes=i))
        ops = pol.decide(c, state(held, 3))
        assert ops and all(op.reason and op.policy == name for op in ops)
        for op in ops:
            if op.kind is OpKind.DELETE:
                held = [r for r in held if r.id not in op.record_ids]
            elif op.kind is OpKind.ADD:
                held.append(stat(c.id, text, minutes=i))
        assert len(held) <= 3


def test_context_reads_new_words_and_questions_from_the_stored_records() -> None:
    from langchain_agentmem.policies.features import CONTEXT_FEATURES
    from langchain_agentmem.policies.learned import LearnedPolicy

    pol = LearnedPolicy(5)
    new, count, after_q = (CONTEXT_FEATURES.index(n) for n in CONTEXT_FEATURES)

    def held(*items: tuple[str, str, str | None]) -> MemoryState:
        recs = [
            RecordStat(rid, T0, T0 + timedelta(minutes=i), text=text, thread=thread)
            for i, (rid, text, thread) in enumerate(items)
        ]
        return MemoryState("u", len(recs), 5, tuple(recs))

    def ctx(text: str, thread: str | None, st: MemoryState) -> Any:
        return pol.context(Candidate("c", st.namespace, text, np.zeros(3), thread), st)

    empty = held()
    first = ctx("A: Did you adopt the beagle?", "t1", empty)
    assert first[new] == 1.0 and first[after_q] == 0.0
    asked = held(("q", "A: Did you adopt the beagle?", "t1"))
    again = ctx("B: Yes, we adopted the beagle.", "t1", asked)
    assert again[after_q] > 0.0  # the newest record of its thread asked a question
    assert 0.0 < again[new] < 1.0  # "beagle" is stored; "adopted", "yes" are not
    assert ctx("A: Beagle walks are long.", "t2", asked)[after_q] == 0.0  # other thread
    answered = held(("q", "A: Did you adopt the beagle?", "t1"), ("a", "B: yes", "t1"))
    assert ctx("more", "t1", answered)[after_q] == 0.0  # the newest of t1 asked nothing
    # Derived from the records alone: a record gone, or its text changed, counts no more.
    assert ctx("beagle", None, held(("x", "A: the beagle", None)))[count] == 0.0
    assert ctx("beagle", None, empty)[count] > 0.0
    changed = MemoryState(
        "u", 1, 5, (RecordStat("x", T0, T0 + timedelta(days=1), text="A: a cat", thread=None),)
    )
    assert ctx("beagle", None, changed)[count] > 0.0
    # Another process, with nothing cached, sees the same context.
    other = LearnedPolicy(5)
    same = other.context(
        Candidate("c", "u", "B: Yes, we adopted the beagle.", np.zeros(3), "t1"), asked
    )
    assert np.array_equal(same, again)


def test_learned_policy_starts_a_namespace_from_its_stored_records() -> None:
    from langchain_agentmem.policies.features import FEATURE_NAMES
    from langchain_agentmem.policies.learned import LearnedPolicy

    fresh, restarted = LearnedPolicy(3), LearnedPolicy(3)
    held = [stat("r1", "We went hiking on Mount Fuji in July 2022.")]
    c = cand("Mount Fuji hiking in July", cid="c1")
    seen = restarted.features(c, state(held, 3))
    unseen = fresh.features(c, state([], 3))
    new = FEATURE_NAMES.index("new_words")
    assert unseen[new] == 1.0 and seen[new] == 0.0


def test_text_features_read_whether_an_item_answers_a_question() -> None:
    from langchain_agentmem.policies.features import TEXT_FEATURES, TEXTS, text_features

    at = TEXT_FEATURES.index("answers")
    text = "B: A sunrise over the lake!"
    asked = {"reply_to": "A: What did you paint last weekend?"}
    assert text_features(text, asked)[at] == 1.0
    assert text_features(text)[at] == 0.0
    assert text_features(text, {"reply_to": "A: I painted too."})[at] == 0.0  # asks nothing
    assert text_features(text, {"reply_to": ["a?", "b?"]})[at] == 0.0  # not a str: not read
    # The memo keeps the two apart: the same words, with and without the question.
    assert TEXTS.get(text, asked)[0][at] == 1.0
    assert TEXTS.get(text, {})[0][at] == 0.0
    assert TEXTS.get(text, asked)[0][at] == 1.0


def test_stored_records_keep_their_answer_flag_in_the_learned_priority() -> None:
    from langchain_agentmem.policies.learned import LearnedPolicy

    pol = LearnedPolicy(5)
    text = "B: A sunrise over the lake!"
    asked = {"reply_to": "A: What did you paint last weekend?"}
    # Read from the record's metadata, so every process scores the stored record alike.
    assert pol.record_priority(text, asked) == LearnedPolicy(5).record_priority(text, asked)
    assert pol.record_priority(text, asked) != pol.record_priority(text, {})
