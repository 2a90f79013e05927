"""Search modes and hybrid search: dense and BM25 scores on absolute scales, plus context.

A hybrid score is, for a record with cosine similarity ``cos`` to the query and BM25 score
``bm25``::

    base  = w * clip(cos, 0, 1) + (1 - w) * bm25 / ceiling(query)
    score = base + lift * max(0, best_neighbour_base - base)

``ceiling(query)`` is the most BM25 any record could score for the query (the sum over its
terms of ``idf * (k1 + 1)``, unseen terms included), so both parts are absolute: the same
match scores the same in every search, whatever else the namespace holds, and the score is
in [0, 1]. Neighbours are the records just before and after in the same thread (by creation
time, :class:`~langchain_agentmem.index.threads.ThreadOrder`): a turn that answers a
matching turn ("Yes! A sunrise.") is lifted toward it. A record that asks something lifts
only the record after it, and not when its own speaker said that one: "What happened to my
daughter?" is about its answer, not about what was said before it nor the asker's own next
words. Records without a thread have no neighbours. Each weight is a field of
:class:`~langchain_agentmem.ranking.config.HybridConfig`, which names the file it was
chosen in. BM25 also reads, at ``reply_weight``, the
question a record answers (``metadata["reply_to"]``), so "A sunrise!" is found by "What
did I paint?" even where the question itself is not stored
(``benchmarks/experiments/locomo_context.py``).

Questions last among equals: a record that only asks ("Where do I live?") scores
``question_weight`` times its score. It shows what the user cares about but is rarely the
answer, and a question matches a later question better than the statement that answers it
does (``benchmarks/repeated_questions.py``); the record after it is still lifted by its
full score.

Newer first: a later restatement of the same speaker's fact is placed just above the older
record it restates, whether worded as a change, standing out as an answer, or told as news
that mirrors the older statement (:mod:`langchain_agentmem.ranking.newer_first`).

Whose words: where the user's words and the assistant's replies are both remembered, the
records of the side a query does not ask about have ``role_weight`` times their base score,
before the neighbour lift (so a reply that matches well lifts the user's turns beside it no
more than it ranks itself), and are not lifted themselves (a long reply beside the user's
well-matched turn would otherwise ride on it into the top): a user's question about
themselves asks for what they said, not for the assistant's long replies on the subject
(:mod:`langchain_agentmem.ranking.roles`; ``benchmarks/experiments/results/lme_roles.txt``).

Near words: the query's content words bring their nearest words in the bundled model's
embedding space, whose BM25 counts ``HybridConfig.near_words`` of the query's own
(:mod:`langchain_agentmem.ranking.near_words`). They rescore the candidates the query's own
words and embedding found and bring none of their own (as many records are scored as
without them).

Named speakers: a query that names a speaker of the namespace ("What is Dmitri's job?") is
searched without the name, in its words and its embedding ("What is their job?"), and that
speaker's records gain ``named_speaker`` in base score, and another speaker's records that
name them gain ``named_mention`` (:mod:`langchain_agentmem.index.speakers`; the query
comes rewritten, :class:`~langchain_agentmem.ranking.query.Query`).
"""

from __future__ import annotations

import langchain_agentmem.ranking.stages as stages
from langchain_agentmem.errors import InvalidInputError, InvalidTypeError
from langchain_agentmem.ranking.corpus import Corpus
from langchain_agentmem.ranking.newer_first import newer_first
from langchain_agentmem.ranking.query import Query

SEARCH_MODES = ("hybrid", "dense", "lexical")
"""The modes ``AgentMemory.search`` accepts."""


def check_mode(mode: object) -> str:
    """Validate a search mode name."""
    if not isinstance(mode, str):
        raise InvalidTypeError(
            f"mode must be a str, got {type(mode).__name__} {mode!r}; "
            f"use one of {', '.join(SEARCH_MODES)}"
        )
    if mode not in SEARCH_MODES:
        raise InvalidInputError(
            f"unknown search mode {mode!r}; use one of {', '.join(SEARCH_MODES)}"
        )
    return mode


def hybrid_search(query: Query, k: int, corpus: Corpus) -> list[tuple[int, float]]:
    """The ``k`` best keys of ``corpus`` by hybrid score (see the module docstring).

    Args:
        query: The query (:func:`~langchain_agentmem.ranking.query.query_of`): its text for
            BM25, its normalised embedding, the speakers it named (already taken out of
            its text and embedding; their records gain ``config.named_speaker``) and the
            words of the namespace's labels it matched (``terms`` searched as its own,
            ``topics`` what a model's links are read against).
        k: How many to return.
        corpus: The records, their indexes and the weights (``corpus.config``).

    Returns:
        ``(key, score)`` pairs, best first, score in [0, 1], ties broken by the lower key.
    """
    if query.vector is None:
        raise InvalidInputError("a hybrid search needs the query's embedding (Query.vector)")
    text, vector, named, labels = query.text, query.vector, query.named, query.labels
    config = corpus.config
    pool = stages.gather(text, vector, k, corpus, labels.terms)
    match_arr = stages.base_scores(pool, config)
    base_arr = match_arr
    if named and (config.named_speaker > 0 or config.named_mention > 0):
        base_arr = base_arr + stages.named_gain(pool.keys, corpus.said, named, config)
    base = dict(zip(pool.keys, base_arr.tolist(), strict=True))
    other = stages.other_side(pool.keys, corpus.said, query.asked, config.role_weight)
    base = stages.weigh(base, other, config.role_weight)
    match = dict(zip(pool.keys, match_arr.tolist(), strict=True))
    scores = stages.neighbour_lift(base, pool, corpus.order, config.neighbour_lift, other)
    if config.newer_first:
        scores = newer_first(
            text,
            vector,
            scores,
            said_of=corpus.said,
            embeddings_of=corpus.embeddings,
            config=config,
            match=match,
        )
    scores = stages.question_weight(scores, corpus.questions, config.question_weight)
    if config.statement_first:
        scores = stages.statement_first(scores, corpus.questions, pool)
    # Last: a statement lifted above a question is still placed below its successor.
    scores = stages.replaced_below(
        scores, corpus, text, config.restatement_relevance, labels.topics, match
    )
    return stages.best(scores, k)
