"""The LoCoMo retrieval bench: our search modes next to baselines, with timing ratios."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import bm25s
import faiss
import numpy as np
from tqdm import tqdm

from langchain_agentmem.bench.metrics import hit_at_k, percentile_ms, recall_at_k
from langchain_agentmem.embedding.embeddings import (
    SentenceTransformerEmbeddings,
    embed_texts,
    normalize,
)
from langchain_agentmem.index.text import reply_texts
from langchain_agentmem.locomo import CATEGORIES, Conversation, LoadReport, turn_metadata, turn_text
from langchain_agentmem.memory import AgentMemory
from langchain_agentmem.ranking import SEARCH_MODES
from langchain_agentmem.types import MemoryRecord, Vector

MemoryFactory = Callable[[], AgentMemory]
"""Makes the memory under test (fresh and empty); the bench closes it when done."""

WINDOW = 50
"""Turns kept by the window baseline (all of them count as retrieved, whatever k)."""

BARE_EMBED_EVERY = 3
"""Measure the bare embedding cost on every n-th turn (it doubles the model's work)."""


@dataclass
class Timings:
    """Durations (seconds) of one bench run: adds, bare embeddings and faiss, searches."""

    add: list[float] = field(default_factory=list)
    bare_embed_doc: list[float] = field(default_factory=list)
    bare_embed_query: list[float] = field(default_factory=list)
    bare_faiss: list[float] = field(default_factory=list)
    search: dict[str, list[float]] = field(default_factory=dict)
    turns: int = 0


def _bare_encoder(memory: AgentMemory) -> Callable[[str], Vector]:
    """The embedding model alone, as cheaply as it can be called for one text."""
    emb = memory.embeddings
    if isinstance(emb, SentenceTransformerEmbeddings):
        model = emb.model

        def encode(text: str) -> Vector:
            out: Vector = model.encode(
                [text], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
            return out

        return encode
    return lambda text: embed_texts(emb, [text])


class Scores:
    """Recall@k and hit@k sums of one method, overall and per group (a LoCoMo category,
    a LongMemEval question type), JSON-ready under ``key``."""

    def __init__(self, ks: Sequence[int], groups: Sequence[str], key: str = "categories") -> None:
        self.ks = list(ks)
        self.groups = list(groups)
        self.key = key
        self.sums: dict[str, dict[str, float]] = {}
        self.counts: dict[str, int] = {}

    def count(self, group: str) -> None:
        """Count one more question of ``group`` (its measures added with :meth:`add_measure`)."""
        for into in ("overall", group):
            self.counts[into] = self.counts.get(into, 0) + 1

    def add_measure(self, group: str, name: str, value: float) -> None:
        """Add ``value`` to measure ``name`` of ``group`` and of the whole."""
        for into in ("overall", group):
            sums = self.sums.setdefault(into, {})
            sums[name] = sums.get(name, 0.0) + value

    def add(
        self, group: str, retrieved: Sequence[str], evidence: Sequence[str], *, whole: bool
    ) -> None:
        """Score one question; ``whole``: the list counts in full at every k (the window)."""
        self.count(group)
        for cut in self.ks:
            k = len(retrieved) if whole else cut
            self.add_measure(group, f"recall@{cut}", recall_at_k(retrieved, evidence, k))
            self.add_measure(group, f"hit@{cut}", hit_at_k(retrieved, evidence, k))

    def result(self) -> dict[str, Any]:
        def mean(group: str) -> dict[str, float]:
            n = self.counts.get(group, 0)
            sums = self.sums.get(group, {})
            return {key: round(v / n, 4) for key, v in sums.items()} if n else {}

        out: dict[str, Any] = mean("overall")
        out["questions"] = self.counts.get("overall", 0)
        out[self.key] = {
            name: {**mean(name), "questions": self.counts.get(name, 0)} for name in self.groups
        }
        return out


def _rrf(rankings: Iterable[Sequence[str]], k: int, c: int = 60) -> list[str]:
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking):
            scores[key] = scores.get(key, 0.0) + 1.0 / (c + rank + 1)
    return sorted(scores, key=lambda key: -scores[key])[:k]


def run_locomo(
    conversations: Sequence[Conversation],
    *,
    memory_factory: MemoryFactory,
    ks: Sequence[int] = (1, 5, 10, 20),
    modes: Sequence[str] = SEARCH_MODES,
    baselines: bool = True,
    report: LoadReport | None = None,
    progress: bool = True,
    settle: Callable[[AgentMemory], object] | None = None,
    after: Callable[[AgentMemory, Conversation, str], object] | None = None,
) -> dict[str, Any]:
    """Ingest every conversation turn by turn, then ask its questions of categories 1-4.

    Each conversation goes to its own namespace of one memory made by ``memory_factory``,
    one ``add`` per turn (the session date as timestamp). Questions without evidence are
    left out of recall. Baselines see the same turn texts, in the same run. ``settle`` is
    called with the memory after each conversation is ingested, before its questions (a
    memory with a model: ``AgentMemory.wait_annotated``). ``after`` is called with the
    memory, the conversation and its namespace once its questions are scored (the answers
    bench, :class:`~langchain_agentmem.bench.answers.AnswerBench`).

    Returns:
        A JSON-ready dict: ``retrieval`` (method -> recall@k / hit@k, overall and per
        category), ``timing`` (p50/p95 and ratios to the bare model and bare faiss) and
        what was run.
    """
    ks = sorted(set(ks))
    depth = max(ks)
    methods = [f"agentmem-{mode}" for mode in modes]
    if baselines:
        methods += [f"window-{WINDOW}", "seed-faiss-l2", "bm25-plain", "rrf-dense-bm25"]
    groups = list(CATEGORIES.values())
    scores = {method: Scores(ks, groups) for method in methods}
    timings = Timings(search={mode: [] for mode in modes})
    total_turns = sum(len(c.turns) for c in conversations)
    total_questions = sum(sum(1 for q in c.questions if q.evidence) for c in conversations)

    memory = memory_factory()
    encode = _bare_encoder(memory)
    encode("warm up")
    bar = tqdm(
        total=total_turns + total_questions,
        desc="locomo",
        unit="step",
        disable=not progress,
        dynamic_ncols=True,
    )
    try:
        for conv in conversations:
            namespace = f"locomo-{conv.sample_id}"
            texts = _ingest_locomo(memory, conv, namespace, timings, encode, bar)
            if settle is not None:
                settle(memory)
            records = memory.records(namespace)
            window = [t.dia_id for t in conv.turns[-WINDOW:]]
            indexes = BareIndexes([dia_id(r) for r in records], records, texts, window)
            bar.set_postfix_str(f"{conv.sample_id}: questions")
            asked = Asked(
                memory, namespace, modes, depth, timings, encode, indexes, baselines, dia_id
            )
            _score_questions(asked, conv, scores, bar)
            if after is not None:
                after(memory, conv, namespace)
    finally:
        bar.close()
        memory.close()
    return {
        "conversations": [c.sample_id for c in conversations],
        "turns": total_turns,
        "questions": total_questions,
        "ks": ks,
        "load_report": report.lines() if report is not None else [],
        "retrieval": {method: scores[method].result() for method in methods},
        "timing": timing_summary(timings),
    }


def _score_questions(asked: Asked, conv: Conversation, scores: dict[str, Scores], bar: Any) -> None:
    """Ask each of ``conv``'s questions with evidence and score every method's ranking."""
    for q in conv.questions:
        if not q.evidence:
            continue
        ranked = asked.rankings(q.question)
        for method, score in scores.items():
            whole = method == f"window-{WINDOW}"
            score.add(CATEGORIES[q.category], ranked[method], q.evidence, whole=whole)
        bar.update(1)


@dataclass
class Asked:
    """How one haystack's questions are asked: of the memory in each mode, timed, and of
    the bare baselines; a hit is named by ``key_of`` (the id of the turn it holds)."""

    memory: AgentMemory
    namespace: str
    modes: Sequence[str]
    depth: int
    timings: Timings
    encode: Callable[[str], Vector]
    indexes: BareIndexes
    baselines: bool
    key_of: Callable[[MemoryRecord], str]

    def rankings(self, question: str) -> dict[str, list[str]]:
        """Each method's turn keys for ``question``, best first; the timings noted."""
        ranked: dict[str, list[str]] = {}
        for mode in self.modes:
            t0 = time.perf_counter()
            hits = self.memory.search(question, namespace=self.namespace, k=self.depth, mode=mode)
            self.timings.search[mode].append(time.perf_counter() - t0)
            ranked[f"agentmem-{mode}"] = [self.key_of(h) for h in hits]
        t0 = time.perf_counter()
        qvec = np.asarray(self.encode(question), dtype=np.float32).reshape(1, -1)
        self.timings.bare_embed_query.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        self.indexes.bare.search(qvec, self.depth)
        self.timings.bare_faiss.append(time.perf_counter() - t0)
        if self.baselines:
            ranked.update(self.indexes.rank(question, qvec, self.depth))
        return ranked


def dia_id(record: MemoryRecord) -> str:
    """The LoCoMo turn a record holds (its ``dia_id``)."""
    return str(record.metadata["dia_id"])


def turn_adds(conv: Conversation, namespace: str) -> list[dict[str, Any]]:
    """``AgentMemory.add``'s arguments for each turn of ``conv``, in order: its text, thread
    (its session), metadata (dia id, speaker, the question it replies to), date and a
    record id ``<sample id>:<dia id>``."""
    texts = [turn_text(t) for t in conv.turns]
    replies = reply_texts([t.speaker for t in conv.turns], [t.session for t in conv.turns], texts)
    return [
        {
            "text": text,
            "namespace": namespace,
            "thread": f"{conv.sample_id}-session-{turn.session}",
            "metadata": turn_metadata(turn, reply),
            "timestamp": turn.date,
            "record_id": f"{conv.sample_id}:{turn.dia_id}",
        }
        for turn, text, reply in zip(conv.turns, texts, replies, strict=True)
    ]


def _ingest_locomo(
    memory: Any,
    conv: Conversation,
    namespace: str,
    timings: Timings,
    encode: Callable[[str], Any],
    bar: Any,
) -> list[str]:
    """Add ``conv`` turn by turn, timing each add (and a bare embedding now and then);
    returns the turns' texts."""
    adds = turn_adds(conv, namespace)
    bar.set_postfix_str(f"{conv.sample_id}: ingest")
    for i, add in enumerate(adds):
        t0 = time.perf_counter()
        memory.add(**add)
        timings.add.append(time.perf_counter() - t0)
        if i % BARE_EMBED_EVERY == 0:
            t0 = time.perf_counter()
            encode(add["text"])
            timings.bare_embed_doc.append(time.perf_counter() - t0)
        bar.update(1)
    timings.turns += len(conv.turns)
    return [add["text"] for add in adds]


class BareIndexes:
    """A haystack's turns in the baselines' indexes: bare faiss (timed), the seed's L2
    index, plain BM25 and the last turns' window.

    Args:
        keys: The turn each record holds, in the order of ``records``.
        records: The stored records (their vectors).
        texts: The turns' texts, as BM25 indexes them.
        window: The turns a window of the last ones holds.
    """

    def __init__(
        self, keys: list[str], records: Sequence[MemoryRecord], texts: list[str], window: list[str]
    ) -> None:
        self.keys = keys
        self.turns = [key for key, r in zip(keys, records, strict=True) if r.embedding is not None]
        vectors = normalize(np.stack([r.embedding for r in records if r.embedding is not None]))
        self.bare = faiss.IndexFlatIP(vectors.shape[1])
        self.bare.add(vectors)
        self.seed = faiss.IndexFlatL2(vectors.shape[1])
        self.seed.add(vectors)
        self.bm25 = bm25s.BM25()
        self.bm25.index(
            bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False
        )
        self.size = len(texts)
        self.window = window

    def rank(self, question: str, qvec: np.ndarray, depth: int) -> dict[str, list[str]]:
        """Each baseline's ranking of the turns for ``question`` (embedded as ``qvec``)."""
        ranked: dict[str, list[str]] = {}
        _, idx = self.seed.search(qvec, depth)
        ranked["seed-faiss-l2"] = [self.turns[i] for i in idx[0] if i >= 0]
        tokens = bm25s.tokenize([question], stopwords="en", show_progress=False)
        docs, doc_scores = self.bm25.retrieve(tokens, k=min(depth, self.size), show_progress=False)
        ranked["bm25-plain"] = [
            self.keys[int(i)] for i, s in zip(docs[0], doc_scores[0], strict=True) if s > 0
        ]
        ranked[f"window-{WINDOW}"] = self.window
        ranked["rrf-dense-bm25"] = _rrf([ranked["seed-faiss-l2"], ranked["bm25-plain"]], depth)
        return ranked


def timing_summary(t: Timings) -> dict[str, Any]:
    add_p50 = percentile_ms(t.add, 50)
    embed_p50 = percentile_ms(t.bare_embed_doc, 50)
    bare_search = [e + f for e, f in zip(t.bare_embed_query, t.bare_faiss, strict=True)]
    out: dict[str, Any] = {
        "add_p50_ms": round(add_p50, 3),
        "add_p95_ms": round(percentile_ms(t.add, 95), 3),
        "bare_embed_p50_ms": round(embed_p50, 3),
        "bare_embed_p95_ms": round(percentile_ms(t.bare_embed_doc, 95), 3),
        "add_p50_over_bare_embed_p50": round(add_p50 / embed_p50, 3),
        "ingest_turns_per_s": round(t.turns / sum(t.add), 1) if t.add else None,
        "bare_embed_turns_per_s": round(1000.0 / embed_p50, 1),
        "bare_query_embed_p50_ms": round(percentile_ms(t.bare_embed_query, 50), 3),
        "bare_query_embed_p95_ms": round(percentile_ms(t.bare_embed_query, 95), 3),
        "bare_faiss_p50_ms": round(percentile_ms(t.bare_faiss, 50), 4),
        "bare_faiss_p95_ms": round(percentile_ms(t.bare_faiss, 95), 4),
        "bare_embed_plus_faiss_p50_ms": round(percentile_ms(bare_search, 50), 3),
        "bare_embed_plus_faiss_p95_ms": round(percentile_ms(bare_search, 95), 3),
        "search": {},
    }
    bare_p95 = percentile_ms(bare_search, 95)
    bare_p50 = percentile_ms(bare_search, 50)
    for mode, values in t.search.items():
        p50, p95 = percentile_ms(values, 50), percentile_ms(values, 95)
        out["search"][mode] = {
            "p50_ms": round(p50, 3),
            "p95_ms": round(p95, 3),
            "p50_over_bare": round(p50 / bare_p50, 3),
            "p95_over_bare": round(p95 / bare_p95, 3),
        }
    return out
