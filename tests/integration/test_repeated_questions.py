"""Questions asked again and again do not crowd out the facts they ask about.

Real embeddings, real SQLite, the real middleware in ``create_agent``; the chat model is a
recording fake (its words do not matter here).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from langchain_agentmem import AgentMemory, AgentMemoryMiddleware, OpKind
from langchain_agentmem.text.replies import _sentences_ask, only_asks
from tests.fakes import RecordingChatModel

USER = {"role": "human", "source": "agent"}


def cfg(user: str, thread: str) -> RunnableConfig:
    return {"configurable": {"user_id": user, "thread_id": thread}}


@pytest.mark.parametrize(
    ("text", "asks_only"),
    [
        ("Where do I live?", True),
        ("where do i live", True),
        ("what's my dog's name", True),
        ("Mel: What did you paint?", True),
        ("I moved to Porto. Where do you live?", False),
        ("Hey Mel! How are you?", False),
        ("I live in Porto", False),
        ("Do it now.", False),
        ("thanks", False),
    ],
)
def test_only_asks(text: str, asks_only: bool) -> None:
    assert only_asks(text) is asks_only


_PARTS = st.sampled_from(
    [
        "where",
        "What's",
        "(how",
        "do",
        "WILL",
        "Mel:",
        "i",
        "live",
        "moved",
        "Porto",
        "dr.",
        "?",
        ".",
        "!",
        "'",
        "\u2019s",
        '"',
        "\n",
        " ",
        "  ",
        "x",
        "may",
        "is,",
        "_what",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PARTS, max_size=12).map("".join))
def test_only_asks_shortcut_agrees_with_reading_each_sentence(text: str) -> None:
    # A load reads only_asks of every record: texts with no "?" and no question word skip
    # the sentence split. The shortcut must never change the answer.
    assert only_asks(text) is _sentences_ask(text)


def test_a_question_asked_again_is_not_stored_again(memory: AgentMemory) -> None:
    first = memory.add("Where do I live?", namespace="u", thread="t1", metadata=dict(USER))
    assert [op.kind for op in first] == [OpKind.ADD]
    for again in ("where do i live", "WHERE DO I LIVE?"):
        ops = memory.add(again, namespace="u", thread="t2", metadata=dict(USER))
        assert [op.kind for op in ops] == [OpKind.NOOP]
        assert f"asked before, as {first[0].record_ids[0]}" in ops[0].reason
    assert [r.text for r in memory.records("u")] == ["Where do I live?"]
    assert [d.kind for d in memory.decisions("u")] == [OpKind.ADD, OpKind.NOOP, OpKind.NOOP]


def test_close_questions_in_other_words_and_other_speakers_are_stored(
    memory: AgentMemory,
) -> None:
    memory.add("What did I eat yesterday?", namespace="u", metadata=dict(USER))
    # Embedded close (cosine 0.97), but "today" is not in the first question.
    memory.add("What did I eat today?", namespace="u", metadata=dict(USER))
    # The same question from the assistant is another speaker's.
    memory.add("What did I eat yesterday?", namespace="u", metadata={"role": "ai"})
    # A statement said twice stays twice: newer-first needs the later date.
    memory.add("I live in Porto.", namespace="u", metadata=dict(USER))
    memory.add("I live in Porto.", namespace="u", metadata=dict(USER))
    assert len(memory.records("u")) == 5
    assert {d.kind for d in memory.decisions("u")} == {OpKind.ADD}


def test_repeats_are_kept_when_the_policy_says_so(memory: AgentMemory) -> None:
    memory.policy.repeated_question = None
    memory.add("Where do I live?", namespace="u", metadata=dict(USER))
    memory.add("Where do I live?", namespace="u", metadata=dict(USER))
    assert len(memory.records("u")) == 2


def test_a_record_that_only_asks_scores_question_weight_times(
    memory: AgentMemory, db_path: Path
) -> None:
    memory.add("Which city am I in now?", namespace="u", metadata=dict(USER))
    memory.add("I moved to Porto last month.", namespace="u", metadata=dict(USER))
    plain = AgentMemory(
        f"sqlite:///{db_path}",
        embeddings=memory.embeddings,
        hybrid=replace(memory.hybrid, question_weight=1.0),
    )
    try:
        weighed = {r.text: r.score for r in memory.search("Which city am I in?", namespace="u")}
        unweighed = {r.text: r.score for r in plain.search("Which city am I in?", namespace="u")}
    finally:
        plain.close()
    assert memory.hybrid.question_weight == 0.7
    question = "Which city am I in now?"
    assert weighed[question] == pytest.approx(0.7 * unweighed[question], rel=1e-5)
    statement = "I moved to Porto last month."
    assert weighed[statement] == pytest.approx(unweighed[statement], rel=1e-5)


def test_a_question_lifts_another_speakers_reply_not_the_askers_next_words(
    memory: AgentMemory,
) -> None:
    # Named speakers (no roles: a user's chat with an assistant also weighs the side a
    # question does not ask about, and does not lift it; tests/integration/test_whose_words.py)
    for ns, who in (("own", "Ana"), ("other", "Ben")):
        memory.add("Where do I live?", namespace=ns, thread="t", metadata={"speaker": "Ana"})
        memory.add("Thanks a lot.", namespace=ns, thread="t", metadata={"speaker": who})
    own = {r.text: r.score for r in memory.search("Where do I live?", namespace="own")}
    other = {r.text: r.score for r in memory.search("Where do I live?", namespace="other")}
    # Another speaker's words after the question are lifted halfway toward it; the asker's
    # are not: their score is their own.
    assert other["Thanks a lot."] > own["Thanks a lot."] + 0.1
    assert own["Thanks a lot."] < 0.15


def _shown(llm: RecordingChatModel, call: int) -> str:
    system = llm.prompts[call][0]
    return str(system.text)


def test_the_fact_is_shown_after_the_same_questions_in_four_threads(memory: AgentMemory) -> None:
    llm = RecordingChatModel.replying(*["I am not sure."] * 20)
    agent = create_agent(
        llm,
        system_prompt="You are a helpful assistant.",
        middleware=[AgentMemoryMiddleware(memory, k=4)],
        checkpointer=InMemorySaver(),
    )

    def say(text: str, thread: str) -> None:
        agent.invoke({"messages": [HumanMessage(text)]}, cfg("priya", thread))

    say("I moved to Porto last month.", "facts")
    for n in range(4):
        say("Which city am I in now?", f"ask-{n}")
        say("where do i live", f"ask-{n}")
    say("Where do I live?", "last")
    prompt = _shown(llm, len(llm.prompts) - 1)
    assert '"I moved to Porto last month."' in prompt
    stored: list[Any] = [r.text for r in memory.records("priya")]
    assert stored.count("Which city am I in now?") == 1
    assert stored.count("where do i live") == 1
