"""Current before stale: a later restatement of a fact ranks above what it replaces.

Real model, real SQLite, default settings. The older statement stays findable, and
questions about what was true before keep the plain ranking.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

import pytest
from langchain.agents import create_agent
from langchain_core.embeddings import Embeddings
from langchain_core.messages import HumanMessage

from langchain_agentmem import AgentMemory, AgentMemoryMiddleware, HybridConfig
from langchain_agentmem.ranking.newer_first import asks_current_value, is_restatement
from tests.fakes import RecordingChatModel

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)

CASES = [
    (
        "I live in Lisbon, the trams are lovely.",
        "Big news: I moved to Berlin last month, no more Lisbon for me.",
        "Which city do I live in?",
        "Where did I live before Berlin?",
    ),
    (
        "I work as a nurse at the city hospital.",
        "I quit nursing; I'm a software engineer now.",
        "What is my job?",
        "What did I work as before?",
    ),
    (
        "I have a beagle named Pepper.",
        "My dog now is a greyhound called Rex; Pepper died last winter.",
        "What dog do I have?",
        "What dog did I have before Rex?",
    ),
]

LOOSE = (
    "I play tennis every Saturday morning.",
    "I gave up tennis, these days I go bouldering instead.",
    "Which sport do I do on weekends?",
)
"""A change whose two statements are 0.476 closer than to the rest (cosine 0.597)."""

CHAIN = (
    "My instrument is the violin, I practise every evening.",
    "I switched from the violin to the drums, practising them now.",
    "These days it's the harp I practise, the drums were too loud.",
    "Which instrument do I practise?",
)
"""A fact changed twice. The plain ranking puts the first statement first and the second
last; the latest is close to the second (cosine 0.69) but not to the first (0.47)."""


UNWORDED = [
    (
        "My doctor is Dr. Patel at the Elm Street clinic.",
        "Had my first check-up with Dr. Nguyen today, she was lovely.",
        "Who is my doctor?",
    ),
    (
        "I support Arsenal, I never miss a match.",
        "Got my Celtic season ticket in the post today!",
        "Which football team do I support?",
    ),
    (
        "My phone is an old Samsung Galaxy.",
        "Unboxed my shiny new iPhone this afternoon.",
        "What phone do I have?",
    ),
]
"""Changes worded without a change word: the later statement only implies the new value."""

NEWS = (
    "I'm seeing Alex, we met at a friend's party.",
    "Sam asked me out and I said yes.",
    "Who is my partner?",
)
"""A change told as news: no change word, an ordinary cosine to the question, but the two
statements are each other's nearest among the user's records."""

DAYS = [
    "The weather was grey all week.",
    "I watched a documentary about octopuses.",
    "My sister visited and we cooked dumplings.",
    "Work has been hectic but I'm managing.",
    "I finally cleaned out my closet.",
    "I've been listening to a lot of jazz.",
    "The traffic this morning was unbelievable.",
    "I tried the new noodle place, not bad at all.",
    "I need a holiday soon, honestly.",
    "My neighbour's garden looks amazing this year.",
    "I'm reading a novel about a lighthouse keeper.",
    "We should plan a picnic when it's warmer.",
]
"""A dozen turns about other things: what a user's memory holds around a fact."""


def remember_in_order(memory: AgentMemory, texts: list[str]) -> None:
    """The user's turns of one thread, 20 days apart."""
    day = T0
    for text in texts:
        memory.add(text, namespace="u", thread="t", metadata={"role": "human"}, timestamp=day)
        day += timedelta(days=20)


def remember(memory: AgentMemory, old: str, new: str) -> None:
    filler = [
        "The weather was grey all week.",
        "I watched a documentary about octopuses.",
        "My sister visited and we cooked dumplings.",
    ]
    remember_in_order(memory, [old, *filler, new])


def remember_chain(memory: AgentMemory) -> None:
    first, second, latest, _ = CHAIN
    remember_in_order(
        memory, [first, "The weather was grey all week.", second, "I read a novel.", latest]
    )


def plain_and_ranked(
    embeddings: Embeddings, fill: Callable[[AgentMemory], None]
) -> tuple[AgentMemory, AgentMemory]:
    """The same records without and with newer-first ranking."""
    plain = AgentMemory(":memory:", embeddings=embeddings, hybrid=HybridConfig(newer_first=False))
    ranked = AgentMemory(":memory:", embeddings=embeddings)
    for mem in (plain, ranked):
        fill(mem)
    return plain, ranked


@pytest.mark.parametrize(("old", "new", "now", "before"), CASES)
def test_the_current_fact_ranks_first_and_the_old_one_stays_findable(
    memory: AgentMemory, old: str, new: str, now: str, before: str
) -> None:
    remember(memory, old, new)
    found = [r.text for r in memory.search(now, namespace="u", k=5)]
    assert new in found and old in found
    assert found.index(new) < found.index(old)
    back = [r.text for r in memory.search(before, namespace="u", k=5)]
    assert old in back


def test_without_newer_first_the_stale_fact_can_win(embeddings: Embeddings) -> None:
    """The ranking step is what puts the move first (so the test above can fail)."""
    old, new, now, _ = CASES[0]
    plain, ranked = plain_and_ranked(embeddings, lambda mem: remember(mem, old, new))
    plain_found = [r.text for r in plain.search(now, namespace="u", k=5)]
    ranked_found = [r.text for r in ranked.search(now, namespace="u", k=5)]
    assert plain_found.index(old) < plain_found.index(new)
    assert ranked_found.index(new) < ranked_found.index(old)


def test_a_question_or_another_speaker_does_not_supersede(memory: AgentMemory) -> None:
    assert is_restatement("I moved to Berlin.")
    assert not is_restatement("Did you move to Berlin now?")
    assert not is_restatement("I live in Lisbon.")
    memory.add("I live in Lisbon.", namespace="u", metadata={"role": "human"}, timestamp=T0)
    memory.add(
        "You moved to Berlin now, right.",
        namespace="u",
        metadata={"role": "ai"},
        timestamp=T0 + timedelta(days=9),
    )
    found = [r.text for r in memory.search("Where do I live?", namespace="u", k=2)]
    assert found[0] == "I live in Lisbon."  # the assistant's words never replace the user's


@pytest.mark.parametrize(
    ("question", "one_value"),
    [
        ("Where does Ana work?", True),
        ("What pet does Rosa have now?", True),
        ("Which team does Farid support?", True),
        ("What does Sven drink in the morning?", True),
        ("Where did Ana work before?", False),
        ("What books has Melanie read?", False),
        ("What are Nate's favorite desserts?", False),
        ("Which places does Ana like?", False),
        ("What kind of places have they checked out?", False),
        ("How many games has John won?", False),
        ("Who is my doctor?", True),
        ("What phone do I have now?", True),
        ("When is Melanie going camping?", False),
        ("Why does Audrey make jewelry out of recycled objects?", False),
        ("What might John's degree be in?", False),
        ("What event is Maria getting ready for on May 25, 2023?", False),
        ("What does John write on the whiteboard to stay motivated?", False),
    ],
)
def test_which_questions_ask_for_one_present_value(question: str, one_value: bool) -> None:
    assert asks_current_value(question) is one_value


def test_the_prompt_shows_the_current_fact_first_with_dates(memory: AgentMemory) -> None:
    remember(memory, CASES[0][0], CASES[0][1])
    llm = RecordingChatModel.replying("Berlin.")
    agent = create_agent(llm, middleware=[AgentMemoryMiddleware(memory, k=3)])
    agent.invoke(
        {"messages": [HumanMessage("Which city do I live in?")]},
        {"configurable": {"user_id": "u", "thread_id": "new"}},
    )
    prompt = llm.prompt_text(-1)
    new_line = f'- [20 May 2026] user: "{CASES[0][1]}"'
    old_line = f'- [1 March 2026] user: "{CASES[0][0]}"'
    assert new_line in prompt and old_line in prompt
    assert prompt.index(new_line) < prompt.index(old_line)


def test_a_larger_margin_misses_restatements_further_apart(embeddings: Embeddings) -> None:
    old, new, now = LOOSE
    default = AgentMemory(":memory:", embeddings=embeddings)
    strict = AgentMemory(
        ":memory:", embeddings=embeddings, hybrid=HybridConfig(restatement_margin=0.5)
    )
    for mem in (default, strict):
        remember(mem, old, new)
    found = [r.text for r in default.search(now, namespace="u", k=5)]
    assert found.index(new) < found.index(old)
    found = [r.text for r in strict.search(now, namespace="u", k=5)]
    assert found.index(old) < found.index(new)  # a margin of 0.476 is under 0.5, measured


def test_a_fact_changed_twice_ends_with_its_latest_statement_first(
    embeddings: Embeddings,
) -> None:
    first, second, latest, now = CHAIN
    plain, ranked = plain_and_ranked(embeddings, remember_chain)
    found = [r.text for r in plain.search(now, namespace="u", k=5)]
    assert found.index(first) < min(found.index(second), found.index(latest))  # oldest first
    found = [r.text for r in ranked.search(now, namespace="u", k=5)]
    assert found.index(latest) < found.index(second) < found.index(first)


@pytest.mark.parametrize(
    "question",
    [
        "Which instruments do I practise?",
        "What are my instruments?",
        "How many instruments do I practise?",
    ],
)
def test_a_question_for_a_list_keeps_the_plain_ranking(
    embeddings: Embeddings, question: str
) -> None:
    first, _, latest, now = CHAIN
    plain, ranked = plain_and_ranked(embeddings, remember_chain)
    found = [r.text for r in plain.search(question, namespace="u", k=5)]
    assert found.index(first) < found.index(latest)  # what a one-value question reorders
    assert [r.text for r in ranked.search(question, namespace="u", k=5)] == found
    one = [r.text for r in ranked.search(now, namespace="u", k=5)]
    assert one.index(latest) < one.index(first)


def test_a_change_of_something_else_does_not_pass_over_the_fact(embeddings: Embeddings) -> None:
    """Turns that share the speaker's name are alike (cosine 0.35 here) whatever they say."""
    memory = AgentMemory(":memory:", embeddings=embeddings)
    texts = [
        "Ana: I live in Lisbon, the trams are lovely.",
        "Ana: The weather was grey all week.",
        "Ana: I watched a documentary about octopuses.",
        "Ana: My sister visited and we cooked dumplings.",
        "Ana: I switched to oat milk in my coffee now.",
    ]
    remember_in_order(memory, texts)
    found = [r.text for r in memory.search("Where does Ana live?", namespace="u", k=5)]
    assert found[0] == texts[0]


@pytest.mark.parametrize(("old", "new", "now"), UNWORDED)
def test_a_change_without_a_change_word_ranks_first(
    embeddings: Embeddings, old: str, new: str, now: str
) -> None:
    """It stands out among the user's other records as an answer, and is close to the old."""
    worded_only = AgentMemory(
        ":memory:",
        embeddings=embeddings,
        hybrid=HybridConfig(unmarked_standing=math.inf, pair_margin=math.inf),
    )
    ranked = AgentMemory(":memory:", embeddings=embeddings)
    for mem in (worded_only, ranked):
        remember_in_order(mem, [old, *DAYS[:6], new, *DAYS[6:]])
    found = [r.text for r in worded_only.search(now, namespace="u", k=5)]
    assert found.index(old) < found.index(new)  # what the unworded rule changes
    found = [r.text for r in ranked.search(now, namespace="u", k=5)]
    assert found.index(new) < found.index(old)
    before = now.replace(" do I ", " did I ").replace("Who is", "Who was")[:-1] + " before?"
    assert not asks_current_value(before)
    back = [r.text for r in ranked.search(before, namespace="u", k=5)]
    assert old in back
    assert back == [r.text for r in worded_only.search(before, namespace="u", k=5)]


def test_an_unworded_statement_about_something_else_does_not_pass_over_the_fact(
    memory: AgentMemory,
) -> None:
    old, _, now = UNWORDED[0]
    remember_in_order(memory, [old, *DAYS])
    assert memory.search(now, namespace="u", k=1)[0].text == old


def test_a_change_told_as_news_passes_over_the_statement_it_mirrors(
    embeddings: Embeddings,
) -> None:
    old, new, now = NEWS
    unpaired = AgentMemory(
        ":memory:", embeddings=embeddings, hybrid=HybridConfig(pair_margin=math.inf)
    )
    ranked = AgentMemory(":memory:", embeddings=embeddings)
    long_only = AgentMemory(":memory:", embeddings=embeddings, hybrid=HybridConfig(pair_words=5))
    for mem in (unpaired, ranked, long_only):
        remember_in_order(mem, [old, *DAYS[:6], new, *DAYS[6:]])
    found = [r.text for r in unpaired.search(now, namespace="u", k=5)]
    assert found[0] == old and new not in found  # what pairing changes
    found = [r.text for r in ranked.search(now, namespace="u", k=5)]
    assert found[:2] == [new, old]  # the older statement stays, just below
    # News that matches the question far less than the older statement stays below
    # (restatement_relevance): "seeing" is the older statement's word, not the news's.
    found = [r.text for r in ranked.search("Who am I seeing?", namespace="u", k=5)]
    assert found[0] == old and new not in found
    found = [r.text for r in long_only.search(now, namespace="u", k=5)]
    assert found[0] == old and new not in found  # statements over pair_words never pair
    before = "Who was my partner before Sam?"
    assert not asks_current_value(before)
    back = [r.text for r in ranked.search(before, namespace="u", k=5)]
    assert back == [r.text for r in unpaired.search(before, namespace="u", k=5)]


def test_a_small_memory_has_too_few_records_to_tell_an_unworded_change(
    embeddings: Embeddings,
) -> None:
    """Standing and pairing measure against other records: with three, only worded changes
    count."""
    old, new, now = UNWORDED[2]
    plain, ranked = plain_and_ranked(
        embeddings, lambda mem: remember_in_order(mem, [old, DAYS[0], new])
    )
    assert [r.text for r in ranked.search(now, namespace="u", k=3)] == [
        r.text for r in plain.search(now, namespace="u", k=3)
    ]
