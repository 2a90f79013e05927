"""langchain-classic ``ConversationChain`` with our histories and ``AgentMemoryRecall``.

The chat model is a recording fake (its words do not matter); the store, the embedding
model and the search are real.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from langchain_classic.chains import ConversationChain
from langchain_classic.memory import CombinedMemory, ConversationBufferMemory
from langchain_core.messages import SystemMessage
from langchain_core.prompts import PromptTemplate

from langchain_agentmem import (
    AgentMemory,
    AgentMemoryRecall,
    BufferChatMessageHistory,
    InvalidInputError,
    InvalidTypeError,
    OpKind,
    SentenceTransformerEmbeddings,
    TokenBufferChatMessageHistory,
    WindowChatMessageHistory,
)
from tests.fakes import RecordingChatModel

pytestmark = pytest.mark.filterwarnings(
    "ignore:The class `Conversation.*:DeprecationWarning",
    "ignore:The class `CombinedMemory.*:DeprecationWarning",
)

XIAOMING = ["你好，我叫小明，以后请记住我的名字。", "我刚才说我叫什么名字？"]
ALICE_QUESTIONS = [
    "Hi, my name is Alice.",
    "I love playing Stardew Valley.",
    "I really hate mosquitoes.",
    "What do I hate?",
    "What is my name?",
]


def open_memory(db_path: Path, embeddings: SentenceTransformerEmbeddings) -> AgentMemory:
    return AgentMemory(f"sqlite:///{db_path}", embeddings=embeddings)


def buffer_chain(llm: RecordingChatModel, history: BufferChatMessageHistory) -> ConversationChain:
    return ConversationChain(llm=llm, memory=ConversationBufferMemory(chat_memory=history))


# -- short-term: the seed's examples -------------------------------------------------------
def test_full_buffer_remembers_the_name(memory: AgentMemory) -> None:
    llm = RecordingChatModel.replying("你好小明！我会记住的。", "你叫小明。")
    history = BufferChatMessageHistory(memory, namespace="xiaoming", thread="s1")
    chain = buffer_chain(llm, history)
    first = chain.invoke({"input": XIAOMING[0]})
    chain.invoke({"input": XIAOMING[1]})
    assert first["response"] == "你好小明！我会记住的。"
    assert "小明" not in llm.prompt_text(0).split("Current conversation:")[1].split(XIAOMING[0])[0]
    second = llm.prompt_text(1)
    assert XIAOMING[0] in second and "你好小明！我会记住的。" in second
    assert len(history.messages) == 4


def test_window_of_three_forgets_the_name(memory: AgentMemory) -> None:
    llm = RecordingChatModel.replying("Noted.")
    history = WindowChatMessageHistory(memory, namespace="alice", thread="s1", k=3)
    chain = buffer_chain(llm, history)
    for question in ALICE_QUESTIONS:
        chain.invoke({"input": question})
    fourth, fifth = llm.prompt_text(3), llm.prompt_text(4)
    assert "mosquitoes" in fourth and "Alice" in fourth
    assert "Alice" not in fifth
    assert "mosquitoes" in fifth and "Stardew Valley" in fifth
    # The window only narrows the view: every turn is still stored.
    assert len(history.all_messages) == 10


def test_token_buffer_in_a_conversation_chain(memory: AgentMemory) -> None:
    llm = RecordingChatModel.replying("Noted.")
    history = TokenBufferChatMessageHistory(memory, namespace="alice", thread="s1", max_tokens=30)
    chain = buffer_chain(llm, history)
    for question in ALICE_QUESTIONS:
        chain.invoke({"input": question})
    assert "Alice" not in llm.prompt_text(4)
    assert "What do I hate?" in llm.prompt_text(4)
    assert len(history.all_messages) == 10


async def test_async_conversation_chain(memory: AgentMemory) -> None:
    llm = RecordingChatModel.replying("Noted.")
    history = WindowChatMessageHistory(memory, namespace="alice", thread="s1", k=3)
    chain = buffer_chain(llm, history)
    for question in ALICE_QUESTIONS:
        await chain.ainvoke({"input": question})
    assert "mosquitoes" in llm.prompt_text(3) and "Alice" in llm.prompt_text(3)
    assert "Alice" not in llm.prompt_text(4)
    assert len(await history.aget_messages()) == 6
    assert len(history.all_messages) == 10


def test_conversation_continues_after_restart(
    db_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    first = open_memory(db_path, embeddings)
    llm = RecordingChatModel.replying("好的。")
    buffer_chain(llm, BufferChatMessageHistory(first, namespace="xiaoming", thread="s1")).invoke(
        {"input": XIAOMING[0]}
    )
    first.close()

    second = open_memory(db_path, embeddings)
    try:
        llm2 = RecordingChatModel.replying("你叫小明。")
        chain = buffer_chain(
            llm2, BufferChatMessageHistory(second, namespace="xiaoming", thread="s1")
        )
        chain.invoke({"input": XIAOMING[1]})
        assert "小明" in llm2.prompt_text(0)
        # Another thread of the same user starts empty: short-term memory is per thread.
        llm3 = RecordingChatModel.replying("我不知道。")
        other = buffer_chain(
            llm3, BufferChatMessageHistory(second, namespace="xiaoming", thread="s2")
        )
        other.invoke({"input": XIAOMING[1]})
        assert XIAOMING[0] not in llm3.prompt_text(0)
    finally:
        second.close()


# -- long-term: AgentMemoryRecall ----------------------------------------------------------
def test_recall_carries_a_fact_to_another_thread_after_restart(
    db_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    with open_memory(db_path, embeddings) as mem:
        recall_a = AgentMemoryRecall(
            mem, namespace="alice", thread="A", remember_roles=("human", "ai")
        )
        chain_a = ConversationChain(llm=RecordingChatModel.replying("Got it."), memory=recall_a)
        chain_a.invoke({"input": "I am allergic to peanuts."})
        chain_a.invoke({"input": "My favourite board game is Carcassonne."})
        assert [op.kind for op in recall_a.last_ops] == [OpKind.ADD, OpKind.ADD]
        texts = [(r.text, r.thread, r.metadata["role"]) for r in mem.records("alice")]
        assert ("I am allergic to peanuts.", "A", "human") in texts
        assert ("Got it.", "A", "ai") in texts
        mem.add("I am allergic to cats.", namespace="bob")

    with open_memory(db_path, embeddings) as mem:
        llm = RecordingChatModel.replying("You are allergic to peanuts.")
        recall_b = AgentMemoryRecall(mem, namespace="alice", thread="B", k=2)
        ConversationChain(llm=llm, memory=recall_b).invoke({"input": "What am I allergic to?"})
        prompt = llm.prompt_text(0)
        assert "I am allergic to peanuts." in prompt
        assert recall_b.last_recalled[0].text == "I am allergic to peanuts."
        assert "cats" not in prompt  # bob's memories stay bob's

        other_llm = RecordingChatModel.replying("I don't know.")
        recall_c = AgentMemoryRecall(mem, namespace="carol", thread="C")
        ConversationChain(llm=other_llm, memory=recall_c).invoke(
            {"input": "What am I allergic to?"}
        )
        assert "peanuts" not in other_llm.prompt_text(0)
        assert recall_c.last_recalled == []


async def test_recall_async_and_as_messages(memory: AgentMemory) -> None:
    recall_a = AgentMemoryRecall(memory, namespace="alice", thread="A", remember_roles=("human",))
    chain_a = ConversationChain(llm=RecordingChatModel.replying("Sure."), memory=recall_a)
    await chain_a.ainvoke({"input": "My sister Lena lives in Oslo."})
    assert [r.text for r in memory.records("alice")] == ["My sister Lena lives in Oslo."]

    recall_b = AgentMemoryRecall(memory, namespace="alice", thread="B", return_messages=True)
    found = await recall_b.aload_memory_variables({"input": "Where does my sister live?"})
    (message,) = found["history"]
    assert isinstance(message, SystemMessage)
    assert "Lena lives in Oslo" in message.text
    assert await recall_b.aload_memory_variables({"input": "   "}) == {"history": []}


def test_recall_combined_with_the_thread_buffer(memory: AgentMemory) -> None:
    memory.add("My dog is called Biscuit.", namespace="alice", thread="old")
    memory.add("I work as a nurse.", namespace="alice", thread="old")
    prompt = PromptTemplate.from_template(
        "{long_term}\n\nCurrent conversation:\n{history}\nHuman: {input}\nAI:"
    )
    both = CombinedMemory(
        memories=[
            ConversationBufferMemory(
                chat_memory=BufferChatMessageHistory(memory, namespace="alice", thread="new"),
                input_key="input",
            ),
            AgentMemoryRecall(
                memory,
                namespace="alice",
                thread="new",
                memory_key="long_term",
                input_key="input",
                k=1,
            ),
        ]
    )
    llm = RecordingChatModel.replying("Hello!", "Biscuit.")
    chain = ConversationChain(llm=llm, prompt=prompt, memory=both)
    chain.invoke({"input": "Hi, it is me again."})
    chain.invoke({"input": "What is my dog's name?"})
    second = llm.prompt_text(1)
    assert "My dog is called Biscuit." in second
    assert "Hi, it is me again." in second  # the thread's own turns
    assert "nurse" not in second  # k=1: only the best match


def test_recall_min_score_and_clear(memory: AgentMemory) -> None:
    recall = AgentMemoryRecall(
        memory, namespace="u", thread="t", k=3, remember_roles=("human", "ai")
    )
    recall.save_context({"input": "My car is a blue Volvo."}, {"response": "Nice car."})
    memory.add("I was born in Lyon.", namespace="u", thread="elsewhere")
    question = {"input": "What colour is my Volvo?"}
    assert "blue Volvo" in recall.load_memory_variables(question)["history"]
    scores = [r.score for r in recall.last_recalled]
    assert len(scores) == 3 and all(s is not None for s in scores)
    top, second = scores[0], scores[1]
    assert top is not None and second is not None and top > second

    strict = AgentMemoryRecall(memory, namespace="u", min_score=(top + second) / 2)
    found = strict.load_memory_variables(question)["history"]
    assert [r.score for r in strict.last_recalled] == [top]
    assert found.count("\n- ") == 1
    too_strict = AgentMemoryRecall(memory, namespace="u", min_score=top + 1)
    assert too_strict.load_memory_variables(question) == {"history": ""}

    recall.clear()  # forgets what thread "t" saved, nothing else
    assert [r.text for r in memory.records("u")] == ["I was born in Lyon."]
    kinds = [d.kind for d in memory.decisions("u")]
    assert kinds.count(OpKind.DELETE) == 2


@pytest.mark.parametrize(
    ("kwargs", "error", "names"),
    [
        ({"namespace": ""}, InvalidInputError, "namespace"),
        ({"namespace": None}, InvalidTypeError, "namespace"),
        ({"namespace": "u", "thread": ""}, InvalidInputError, "thread"),
        ({"namespace": "u", "k": 0}, InvalidInputError, "k"),
        ({"namespace": "u", "k": "2"}, InvalidTypeError, "k"),
        ({"namespace": "u", "min_score": "high"}, InvalidTypeError, "min_score"),
        ({"namespace": "u", "remember_roles": ("tool",)}, InvalidInputError, "tool"),
        ({"namespace": "u", "memory_key": ""}, InvalidInputError, "memory_key"),
    ],
)
def test_recall_bad_construction(
    kwargs: dict[str, object], error: type[Exception], names: str, memory: AgentMemory
) -> None:
    with pytest.raises(error, match=names):
        AgentMemoryRecall(memory, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="AgentMemory"):
        AgentMemoryRecall("memory.db", namespace="u")  # type: ignore[arg-type]


def test_recall_bad_chain_io_loses_nothing(memory: AgentMemory) -> None:
    recall = AgentMemoryRecall(memory, namespace="u", thread="t")
    recall.save_context({"input": "I like tea."}, {"response": "Noted."})
    before = memory.records("u")
    with pytest.raises(InvalidInputError, match="input_key"):
        recall.load_memory_variables({"question": "a", "context": "b"})
    with pytest.raises(InvalidInputError, match="output_key"):
        recall.save_context({"input": "x"}, {"a": "1", "b": "2"})
    with pytest.raises(InvalidTypeError, match="str"):
        recall.save_context({"input": 42}, {"response": "ok"})
    assert memory.records("u") == before


def test_recall_raises_no_deprecation_warning(memory: AgentMemory) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        recall = AgentMemoryRecall(memory, namespace="u")
        recall.load_memory_variables({"input": "hello"})
    assert [w for w in caught if issubclass(w.category, DeprecationWarning)] == []
