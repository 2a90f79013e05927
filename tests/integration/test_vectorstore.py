"""``AgentMemoryVectorStore`` on the real model and a real SQLite file."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import BaseMessage, get_buffer_string

from langchain_agentmem import (
    AgentMemory,
    AgentMemoryVectorStore,
    InvalidInputError,
    InvalidTypeError,
    OpKind,
    RecordNotFoundError,
    SentenceTransformerEmbeddings,
)

FACTS = [
    "Alice moved to Lyon in 2021.",
    "Alice's dog is called Pixel.",
    "Alice works as a nurse at the city hospital.",
    "Alice is allergic to peanuts.",
]


@pytest.fixture
def store(memory: AgentMemory) -> AgentMemoryVectorStore:
    return AgentMemoryVectorStore(memory, namespace="alice", thread="t1")


def test_add_and_search_with_real_model(store: AgentMemoryVectorStore) -> None:
    ids = store.add_texts(FACTS, metadatas=[{"n": i} for i in range(len(FACTS))])
    assert len(ids) == len(set(ids)) == len(FACTS)
    pairs = store.similarity_search_with_score("What is the name of Alice's pet?", k=4)
    docs = [doc for doc, _ in pairs]
    assert docs[0] == Document(id=ids[1], page_content=FACTS[1], metadata={"n": 1})
    scores = [score for _, score in pairs]
    assert scores == sorted(scores, reverse=True) and 0 < scores[0] <= 1.0001
    assert store.similarity_search("Where does Alice live?", k=1)[0].page_content == FACTS[0]
    records = store.memory.records("alice")
    assert {r.id for r in records} == set(ids) and {r.thread for r in records} == {"t1"}


def test_embeddings_are_the_memorys(store: AgentMemoryVectorStore) -> None:
    assert store.embeddings is store.memory.embeddings


def test_search_by_vector_matches_search_by_text(store: AgentMemoryVectorStore) -> None:
    store.add_texts(FACTS)
    query = "Does Alice have food allergies?"
    by_vector = store.similarity_search_by_vector(store.embeddings.embed_query(query), k=2)
    assert by_vector == store.similarity_search(query, k=2)
    assert by_vector[0].page_content == FACTS[3]


def test_relevance_scores_are_in_unit_range(store: AgentMemoryVectorStore) -> None:
    store.add_texts(FACTS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # LangChain warns on relevance outside [0, 1]
        pairs = store.similarity_search_with_relevance_scores("Alice's job", k=4)
    assert pairs[0][0].page_content == FACTS[2]
    assert all(0.0 <= score <= 1.0 for _, score in pairs)


def test_upsert_updates_in_place_and_is_audited(store: AgentMemoryVectorStore) -> None:
    memory = store.memory
    (rid,) = store.add_texts(["Alice moved to Lyon in 2021."], [{"v": 1}], ids=["home"])
    created = memory.get("home", namespace="alice").created_at
    store.add_documents([Document(id="home", page_content="Alice moved to Nice.", metadata={})])
    record = memory.get("home", namespace="alice")
    assert (rid, record.text, dict(record.metadata)) == ("home", "Alice moved to Nice.", {})
    assert record.created_at == created and len(memory.records("alice")) == 1
    assert store.similarity_search("Where does Alice live now?", k=1)[0].page_content == (
        "Alice moved to Nice."
    )
    assert store.delete(["home"]) is True
    assert [d.kind for d in memory.decisions("alice")] == [OpKind.ADD, OpKind.UPDATE, OpKind.DELETE]
    with pytest.raises(RecordNotFoundError):
        memory.get("home", namespace="alice")


def test_the_memory_policy_applies(
    db_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    with AgentMemory(
        f"sqlite:///{db_path}", embeddings=embeddings, policy="fifo", capacity=2
    ) as memory:
        store = AgentMemoryVectorStore(memory, namespace="alice")
        store.add_texts(FACTS[:3], ids=["a", "b", "c"])
        assert store.get_by_ids(["a", "b", "c"]) == [
            Document(id="b", page_content=FACTS[1]),
            Document(id="c", page_content=FACTS[2]),
        ]
        deleted = [d for d in memory.decisions("alice") if d.kind is OpKind.DELETE]
        assert [(d.record_ids, d.policy) for d in deleted] == [(("a",), "fifo")]


def test_namespaces_are_hard_partitions(memory: AgentMemory) -> None:
    alice = AgentMemoryVectorStore(memory, namespace="alice")
    bob = AgentMemoryVectorStore(memory, namespace="bob")
    alice.add_texts(FACTS, ids=["a0", "a1", "a2", "a3"])
    bob.add_texts(["Bob's dog is called Rex."], ids=["b0"])
    assert [d.id for d in bob.similarity_search("Alice's dog Pixel", k=10)] == ["b0"]
    assert bob.get_by_ids(["a1", "b0"]) == [
        Document(id="b0", page_content="Bob's dog is called Rex.")
    ]
    # Deleting or writing the same id in another namespace never touches it: ids are
    # unique per namespace, and nothing tells Bob that Alice holds "a1".
    assert bob.delete(["a1"]) is False
    bob.add_texts(["Bob's dog is called Pixel."], ids=["a1"])
    assert memory.get("a1", namespace="alice").text == FACTS[1]
    assert memory.get("a1", namespace="bob").text == "Bob's dog is called Pixel."
    assert len(memory.records("alice")) == 4 and len(memory.records("bob")) == 2


def test_delete_and_get_by_ids(store: AgentMemoryVectorStore) -> None:
    store.add_texts(FACTS, ids=["0", "1", "2", "3"])
    assert store.delete(["1", "missing"]) is False
    assert store.delete(["2"]) is True
    assert [d.id for d in store.get_by_ids(["3", "2", "1", "0", "3"])] == ["3", "0"]
    assert {d.id for d in store.similarity_search("Alice", k=10)} == {"0", "3"}


def test_mmr_prefers_diverse_results(store: AgentMemoryVectorStore) -> None:
    store.add_texts(
        ["Alice has a dog named Pixel.", "Alice's dog is named Pixel.", "Alice lives in Lyon."],
        ids=["dog1", "dog2", "home"],
    )
    query = "Tell me about Alice's dog Pixel"
    assert {d.id for d in store.similarity_search(query, k=2)} == {"dog1", "dog2"}
    mmr = store.max_marginal_relevance_search(query, k=2, fetch_k=3, lambda_mult=0.3)
    assert len(mmr) == 2 and mmr[0].id in {"dog1", "dog2"} and mmr[1].id == "home"
    retriever = store.as_retriever(search_type="mmr", search_kwargs={"k": 2, "lambda_mult": 0.3})
    assert [d.id for d in retriever.invoke(query)] == [d.id for d in mmr]


def test_as_retriever(store: AgentMemoryVectorStore) -> None:
    store.add_texts(FACTS)
    retriever = store.as_retriever(search_kwargs={"k": 1})
    assert [d.page_content for d in retriever.invoke("Alice's occupation")] == [FACTS[2]]
    threshold = store.as_retriever(
        search_type="similarity_score_threshold", search_kwargs={"score_threshold": 0.99}
    )
    assert threshold.invoke("Alice's occupation") == []


def test_from_texts_and_reopen(db_path: Path, embeddings: SentenceTransformerEmbeddings) -> None:
    url = f"sqlite:///{db_path}"
    store = AgentMemoryVectorStore.from_texts(
        FACTS, embeddings, [{"n": i} for i in range(4)], namespace="alice", url=url
    )
    store.memory.close()
    with AgentMemory(url, embeddings=embeddings) as memory:
        again = AgentMemoryVectorStore(memory, namespace="alice")
        (doc,) = again.similarity_search("Alice's dog", k=1)
        assert (doc.page_content, doc.metadata) == (FACTS[1], {"n": 1})
    with pytest.raises(InvalidInputError, match="needs namespace"):
        AgentMemoryVectorStore.from_texts(FACTS, embeddings, url=url)


async def test_async_api(store: AgentMemoryVectorStore) -> None:
    ids = await store.aadd_texts(FACTS, ids=["0", "1", "2", "3"])
    assert ids == ["0", "1", "2", "3"]
    pairs = await store.asimilarity_search_with_score("Where does Alice work?", k=1)
    assert pairs[0][0].page_content == FACTS[2]
    assert await store.asimilarity_search("Where does Alice work?", k=1) == [pairs[0][0]]
    vector = await store.embeddings.aembed_query("Alice's dog")
    assert (await store.asimilarity_search_by_vector(vector, k=1))[0].id == "1"
    await store.aadd_texts(["Alice's cat is called Momo."], ids=["1"])
    assert (await store.aget_by_ids(["1"]))[0].page_content == "Alice's cat is called Momo."
    assert await store.adelete(["0", "9"]) is False
    assert [d.id for d in await store.aget_by_ids(["0", "1"])] == ["1"]
    mmr = await store.amax_marginal_relevance_search("Alice", k=2)
    assert len(mmr) == 2
    other = await AgentMemoryVectorStore.afrom_texts(
        ["x marks the spot"], store.embeddings, namespace="carol", memory=store.memory
    )
    assert [d.page_content for d in await other.asimilarity_search("x", k=5)] == [
        "x marks the spot"
    ]


def test_bad_input_is_rejected_and_nothing_is_lost(store: AgentMemoryVectorStore) -> None:
    store.add_texts(FACTS, ids=["0", "1", "2", "3"])
    with pytest.raises(InvalidInputError, match="query is empty"):
        store.similarity_search("")
    with pytest.raises(InvalidTypeError, match="query must be a str"):
        store.similarity_search(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="k must be >= 1"):
        store.similarity_search("Alice", k=0)
    with pytest.raises(InvalidInputError, match=r"^k must be >= 1"):
        store.max_marginal_relevance_search("Alice", k=0)
    with pytest.raises(InvalidInputError, match=r"^fetch_k must be >= 1, got 0"):
        store.max_marginal_relevance_search("Alice", k=2, fetch_k=0)
    with pytest.raises(InvalidTypeError, match=r"^fetch_k must be an int"):
        store.max_marginal_relevance_search_by_vector([0.1] * 384, fetch_k="5")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="6 dimensions"):
        store.similarity_search_by_vector([0.1] * 6)
    with pytest.raises(InvalidInputError, match="unsupported arguments \\['where'\\]"):
        store.similarity_search("Alice", where={"n": 1})
    with pytest.raises(InvalidInputError, match="unsupported filter operator '\\$in'"):
        store.similarity_search("Alice", filter={"n": {"$in": [1]}})
    # A batch with one bad text stores none of it.
    with pytest.raises(InvalidInputError, match="text is empty"):
        store.add_texts(["Alice likes tea.", " "])
    with pytest.raises(InvalidTypeError, match="text must be a str"):
        store.add_texts(["Alice likes tea.", 3])  # type: ignore[list-item]
    with pytest.raises(InvalidTypeError, match="not one str"):
        store.add_texts("Alice likes tea.")
    with pytest.raises(InvalidInputError, match="2 ids for 1 texts"):
        store.add_texts(["Alice likes tea."], ids=["a", "b"])
    with pytest.raises(InvalidInputError, match="repeat an id"):
        store.add_texts(["Alice likes tea.", "Alice likes coffee."], ids=["a", "a"])
    with pytest.raises(InvalidInputError, match="never acts on a whole namespace"):
        store.delete()
    with pytest.raises(InvalidTypeError, match="ids must be a list"):
        store.delete("0")  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="memory must be an AgentMemory"):
        AgentMemoryVectorStore("sqlite:///x.db", namespace="alice")  # type: ignore[arg-type]
    assert sorted(r.text for r in store.memory.records("alice")) == sorted(FACTS)
    assert [d.id for d in store.get_by_ids(["0", "1", "2", "3"])] == ["0", "1", "2", "3"]


class _PromptRecorder(BaseCallbackHandler):
    """Keeps every prompt sent to a chat model."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        **kwargs: Any,
    ) -> None:
        self.prompts.extend(get_buffer_string(m) for m in messages)


@pytest.mark.filterwarnings("ignore:The class .* was deprecated:DeprecationWarning")
def test_vector_store_retriever_memory_in_a_conversation_chain(
    db_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    from langchain_classic.chains import ConversationChain
    from langchain_classic.memory import VectorStoreRetrieverMemory

    url = f"sqlite:///{db_path}"

    def chain_on(memory: AgentMemory, recorder: _PromptRecorder) -> Any:
        store = AgentMemoryVectorStore(memory, namespace="alice")
        llm = FakeListChatModel(responses=["Noted."], callbacks=[recorder])
        history = VectorStoreRetrieverMemory(retriever=store.as_retriever(search_kwargs={"k": 1}))
        return ConversationChain(llm=llm, memory=history)

    recorder = _PromptRecorder()
    with AgentMemory(url, embeddings=embeddings) as memory:
        chain = chain_on(memory, recorder)
        chain.invoke({"input": "My favourite sport is badminton."})
        chain.invoke({"input": "I am reading a novel about whales."})
        chain.invoke({"input": "The weather in Lyon is rainy today."})
        chain.invoke({"input": "Which sport do I like best?"})
        assert "My favourite sport is badminton." in recorder.prompts[-1]
        assert "whales" not in recorder.prompts[-1]
        assert len(memory.records("alice")) == 4  # every exchange was stored

    # A restarted process recalls it too.
    recorder = _PromptRecorder()
    with AgentMemory(url, embeddings=embeddings) as memory:
        chain_on(memory, recorder).invoke({"input": "What book am I reading?"})
        assert "I am reading a novel about whales." in recorder.prompts[-1]
        assert "badminton" not in recorder.prompts[-1]


def test_memory_batch_add_and_vector_search_check_input(memory: AgentMemory) -> None:
    ops = memory.add_many(FACTS[:2], namespace="alice", record_ids=["x", None])
    assert [op.kind for (op,) in ops] == [OpKind.ADD, OpKind.ADD] and ops[0][0].record_ids == ("x",)
    with pytest.raises(InvalidTypeError, match="texts must be a list of str"):
        memory.add_many("Alice", namespace="alice")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="metadatas must be a list with one entry"):
        memory.add_many(["a", "b"], namespace="alice", metadatas=[{}])
    with pytest.raises(InvalidInputError, match="'y' appears twice"):
        memory.add_many(["a", "b"], namespace="alice", record_ids=["y", "y"])
    with pytest.raises(InvalidInputError, match="text is empty"):
        memory.add_many(["a", ""], namespace="alice")
    assert memory.add_many([], namespace="alice") == []
    assert len(memory.records("alice")) == 2
    good = memory.embeddings.embed_query("Which city did Alice move to?")
    assert memory.search_by_vector(good, namespace="alice", k=1)[0].text == FACTS[0]
    assert memory.search_by_vector(good, namespace="nobody") == []
    with pytest.raises(InvalidInputError, match="one finite vector"):
        memory.search_by_vector([float("nan")] * len(good), namespace="alice")
    with pytest.raises(InvalidInputError, match="one finite vector"):
        memory.search_by_vector([good, good], namespace="alice")  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="embedding must be a list of floats"):
        memory.search_by_vector("Alice", namespace="alice")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="k must be >= 1"):
        memory.search_by_vector(good, namespace="alice", k=0)
