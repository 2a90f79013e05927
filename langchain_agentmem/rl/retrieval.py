"""Retrieval over the turns a policy kept: the shipped hybrid search, exact and static.

:func:`hybrid_orders` runs ``AgentMemory``'s own hybrid search (the same dense, BM25 and
thread-order indexes and :func:`~langchain_agentmem.ranking.search.hybrid_search`) over the
kept turns, with no store in between: what a policy is scored on is what users get.

:func:`static_scores` is its cheap stand-in for the training reward: each question's hybrid
score of every turn computed once, with BM25 statistics and thread neighbours taken from the
whole conversation instead of from what memory holds at each step. Ranking the kept columns
of that table costs microseconds, so an episode still runs at thousands of steps a second.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from langchain_agentmem.index.dense import DenseIndex
from langchain_agentmem.index.lexical import LexicalIndex
from langchain_agentmem.index.speakers import NamedQuery
from langchain_agentmem.index.text import reply_texts
from langchain_agentmem.ranking import HybridConfig, hybrid_search, query_of
from langchain_agentmem.ranking.corpus import Indexed
from langchain_agentmem.ranking.near_words import near_words
from langchain_agentmem.rl.data import Conversation, searched_as
from langchain_agentmem.text.replies import REPLY_TO, asks, only_asks

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]


def _thread(conv: Conversation, i: int) -> str:
    return f"session-{conv.turns[i].session}"


def replies(conv: Conversation) -> list[str]:
    """What each turn replies to (its ``reply_to``, as ``agentmem bench`` stores it)."""
    turns = conv.turns
    return reply_texts(
        [t.speaker for t in turns], [t.session for t in turns], [t.text for t in turns]
    )


def turn_metadata(conv: Conversation) -> list[dict[str, Any]]:
    """Each turn's metadata as a policy reads it: whether it shares an image and, when the
    other speaker's turn before it asked something, that question (as ``agentmem bench``
    stores it)."""
    out: list[dict[str, Any]] = []
    for turn, reply in zip(conv.turns, replies(conv), strict=True):
        meta: dict[str, Any] = {"image": True} if turn.has_image else {}
        if asks(reply):
            meta[REPLY_TO] = reply
        out.append(meta)
    return out


def turn_counts(
    conv: Conversation, kept: Sequence[int], config: HybridConfig
) -> list[Counter[str]]:
    """Each kept turn's terms as ``AgentMemory``'s lexical index counts them (its text,
    date and the question it answers, as ``config`` says)."""
    corpus = kept_turns(conv, kept, config)
    return [corpus.lexical.counts(i) for i in kept]


@dataclass
class KeptTurns(Indexed):
    """A conversation's kept turns as a search corpus, indexed as ``AgentMemory`` indexes
    the records ``agentmem bench`` stores for them."""

    vectors: FloatArray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    """Every turn's embedding (rows are turn indices)."""
    dense: DenseIndex = field(default_factory=lambda: DenseIndex(1))

    def embeddings(self, rids: list[int]) -> np.ndarray:
        """The kept turns' embeddings, one row each."""
        return self.vectors[rids]


def kept_turns(
    conv: Conversation, kept: Sequence[int], config: HybridConfig | None = None
) -> KeptTurns:
    """The corpus of ``conv``'s ``kept`` turns."""
    vectors = conv.turn_vectors
    ids = [int(i) for i in kept]
    corpus = KeptTurns(config=config or HybridConfig(), vectors=vectors)
    corpus.dense = DenseIndex(vectors.shape[1])
    if ids:
        corpus.dense.add(ids, vectors[ids])
    reply = replies(conv)
    for i in ids:
        turn = conv.turns[i]
        corpus.index_text(
            i,
            turn.text,
            turn.timestamp,
            thread=_thread(conv, i),
            speaker=turn.speaker,
            reply_to=reply[i],
        )
    return corpus


def hybrid_results(
    conv: Conversation,
    kept: Sequence[int] | IntArray,
    k: int,
    config: HybridConfig | None = None,
    queries: Sequence[NamedQuery] | None = None,
    lexical: LexicalIndex | None = None,
) -> list[list[tuple[int, float]]]:
    """Per question, ``(turn index, score)`` of what hybrid search returns, best first.

    Args:
        conv: An embedded conversation.
        kept: Turn indices memory holds.
        k: Results per question.
        config: Hybrid weights (default: what ``AgentMemory`` uses).
        queries: Each question as searched, matching ``conv.question_vectors`` (default:
            :func:`~langchain_agentmem.rl.data.searched_as`, or the question as written
            when ``config.named_speaker`` is 0).
        lexical: The kept turns' lexical index (default: as ``AgentMemory`` indexes them;
            an experiment passes one that reads other terms).
    """
    cfg = config or HybridConfig()
    ids = [int(i) for i in np.asarray(kept, dtype=np.int64).tolist()]
    if not ids:
        return [[] for _ in conv.questions]
    corpus = kept_turns(conv, ids, cfg)
    if lexical is not None:
        corpus.lexical = lexical
    asked = (
        list(queries)
        if queries is not None
        else [
            searched_as(conv, q.text) if cfg.named_speaker > 0 else NamedQuery(q.text)
            for q in conv.questions
        ]
    )
    return [
        hybrid_search(query_of(query, conv.question_vectors[qi]), k, corpus)
        for qi, query in enumerate(asked)
    ]


def hybrid_orders(
    conv: Conversation,
    kept: Sequence[int] | IntArray,
    k: int,
    config: HybridConfig | None = None,
) -> list[list[int]]:
    """Per question, the turns (indices into ``conv.turns``) hybrid search returns, best first.

    Arguments as :func:`hybrid_results`.
    """
    return [[rid for rid, _ in found] for found in hybrid_results(conv, kept, k, config)]


def static_scores(conv: Conversation, config: HybridConfig | None = None) -> FloatArray:
    """Each question's hybrid score of every turn, ``(questions, turns)``.

    BM25 statistics and neighbours come from the whole conversation, so a score does not
    depend on what else memory holds: the reward's approximation of :func:`hybrid_orders`,
    without its newer-first reordering.
    """
    cfg = config or HybridConfig()
    n = len(conv.turns)
    if not conv.questions or n == 0:
        return np.zeros((len(conv.questions), n), dtype=np.float32)
    cos = np.clip(conv.question_vectors @ conv.turn_vectors.T, 0.0, 1.0)
    lexical = kept_turns(conv, range(n), cfg).lexical
    bm = np.zeros_like(cos)
    for qi, q in enumerate(conv.questions):
        near = near_words(q.text) if cfg.near_words > 0 else ""
        rids, scores = lexical.normalised(q.text, near, cfg.near_words)
        if len(rids):
            bm[qi, rids] = scores
    w = cfg.dense_weight
    base: FloatArray = (w * cos + (1.0 - w) * bm).astype(np.float32)
    if cfg.neighbour_lift <= 0:
        return base
    sessions = np.array([t.session for t in conv.turns])
    speakers = np.array([t.speaker for t in conv.turns])
    best = base.copy()
    same_prev = np.flatnonzero(sessions[1:] == sessions[:-1])  # turn i+1 follows turn i
    # A turn is lifted by the one after it unless that one asks, and by the one before it
    # unless that one asks and the same speaker said both (see ``ThreadOrder.lifters``).
    asking = np.array([asks(t.text) or only_asks(t.text) for t in conv.turns], dtype=bool)
    own = asking[same_prev] & (speakers[same_prev] == speakers[same_prev + 1])
    lifted_by = same_prev[~own]
    best[:, lifted_by + 1] = np.maximum(best[:, lifted_by + 1], base[:, lifted_by])
    answered = same_prev[~asking[same_prev + 1]]
    best[:, answered] = np.maximum(best[:, answered], base[:, answered + 1])
    lifted: FloatArray = (base + cfg.neighbour_lift * (best - base)).astype(np.float32)
    return lifted
