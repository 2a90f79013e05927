"""With the assistant's replies kept, a user's question about themselves finds their own
words, and a question about what the assistant said finds its reply (real model, SQLite)."""

from __future__ import annotations

from dataclasses import replace

from langchain_core.messages import AIMessage, HumanMessage

from langchain_agentmem import (
    AgentMemory,
    BufferChatMessageHistory,
    HybridConfig,
    SentenceTransformerEmbeddings,
)

SAID = "I'm a 32-year-old data scientist and I just started my green card application."
REPLY = (
    "Many people who moved to the United States for work ask about the interview. When you "
    "moved to the United States, the officer may ask why you moved and what you plan to do in "
    "the United States. Answer honestly: say when you moved, where you live in the United "
    "States and how your job keeps you there. Bring your passport and your employment letter."
)
OTHER = [
    (
        "Can you suggest a good book about American history?",
        "Try 'A People's History of the United States'.",
    ),
    ("I started learning the guitar last month.", "That's wonderful! Practice daily."),
]


def stored(memory: AgentMemory) -> None:
    for thread, (said, reply) in enumerate([(SAID, REPLY), *OTHER]):
        history = BufferChatMessageHistory(
            memory,
            namespace="ana",
            thread=f"t{thread}",
            remember=True,
            remember_roles=("human", "ai"),
        )
        history.add_messages([HumanMessage(said), AIMessage(reply)])


def test_the_users_question_finds_the_users_words(
    embeddings: SentenceTransformerEmbeddings,
) -> None:
    question = "How old was I when I moved to the United States?"
    shipped = AgentMemory(":memory:", embeddings=embeddings)
    stored(shipped)
    assert shipped.search(question, namespace="ana", k=1)[0].text == SAID
    # Weighed alike (the release before), the reply that says "moved to the United States"
    # over and over comes first.
    alike = AgentMemory(
        ":memory:", embeddings=embeddings, hybrid=replace(HybridConfig(), role_weight=1.0)
    )
    stored(alike)
    assert alike.search(question, namespace="ana", k=1)[0].text == REPLY
    shipped.close()
    alike.close()


def test_a_question_about_the_assistants_words_finds_its_reply(
    embeddings: SentenceTransformerEmbeddings,
) -> None:
    memory = AgentMemory(":memory:", embeddings=embeddings)
    stored(memory)
    question = "What did you tell me to bring to the interview?"
    (best,) = memory.search(question, namespace="ana", k=1)
    assert best.text == REPLY and best.metadata["role"] == "ai"
    memory.close()


def test_a_memory_of_the_users_words_alone_is_ranked_as_before(
    embeddings: SentenceTransformerEmbeddings,
) -> None:
    texts = [SAID, "I started learning the guitar last month.", "My sister lives in Porto."]
    ranked = {}
    for weight in (0.2, 1.0):
        memory = AgentMemory(
            ":memory:", embeddings=embeddings, hybrid=replace(HybridConfig(), role_weight=weight)
        )
        memory.add_many(texts, namespace="ana", metadatas=[{"role": "human"}] * 3)
        for question in ("What did you recommend for my green card?", "When did I start guitar?"):
            hits = memory.search(question, namespace="ana", k=3)
            ranked[weight, question] = [(h.text, round(h.score or 0, 6)) for h in hits]
        memory.close()
    for question in ("What did you recommend for my green card?", "When did I start guitar?"):
        assert ranked[0.2, question] == ranked[1.0, question]  # scores too: nothing weighed


TRIP = "I'm planning a trip to Japan next spring and I really want to see the cherry blossoms."
TRIP_REPLY = (
    "Japan in spring is wonderful! For the cherry blossoms, plan your trip to Japan for late "
    "March or early April. Book flights to Japan early, since spring is the busiest season."
)
BOOKED = "I finally booked my flights, we leave on April 3rd."
CHEER = "Exciting! Have a great trip."


def test_a_reply_does_not_ride_on_the_users_turn_beside_it(
    embeddings: SentenceTransformerEmbeddings,
) -> None:
    question = "When did I book my flights to Japan?"
    found = {}
    for lift in (HybridConfig().neighbour_lift, 0.0):
        memory = AgentMemory(
            ":memory:", embeddings=embeddings, hybrid=replace(HybridConfig(), neighbour_lift=lift)
        )
        for thread, (said, reply) in enumerate([(TRIP, TRIP_REPLY), (BOOKED, CHEER), *OTHER]):
            BufferChatMessageHistory(
                memory,
                namespace="ana",
                thread=f"t{thread}",
                remember=True,
                remember_roles=("human", "ai"),
            ).add_messages([HumanMessage(said), AIMessage(reply)])
        found[lift] = {h.text: h.score for h in memory.search(question, namespace="ana", k=6)}
        memory.close()
    shipped = found[HybridConfig().neighbour_lift]
    # The user's two turns first: the short cheer after the answer, which matches nothing,
    # is not lifted toward it (lifted, it came second, above the user's plan of the trip).
    assert list(shipped)[:2] == [BOOKED, TRIP]
    # Each reply keeps its own (weighed) score, as with no lift at all.
    for reply in (TRIP_REPLY, CHEER):
        assert shipped.get(reply) == found[0.0].get(reply)
