"""A search's query as ranking reads it: one :class:`Query`, built in one place.

A query reaches ranking as its words with the speakers it names taken out
(:func:`named_query`, :mod:`langchain_agentmem.index.speakers`), their embedding, the
speakers it named, and the words of the namespace's labels it matched
(:mod:`langchain_agentmem.ranking.labels`, and, with ``label_queries``, the labels a model
named for it: :func:`labels_named`). :func:`query_of` puts them together; a new signal of
the query's side joins :class:`Query` there.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from langchain_agentmem.annotation.annotations import SAME_ATTRIBUTE, label_words
from langchain_agentmem.index.speakers import NamedQuery, name_speakers
from langchain_agentmem.ranking.config import HybridConfig
from langchain_agentmem.ranking.labels import NO_LABELS, QueryLabels, query_labels
from langchain_agentmem.ranking.roles import USER, asked_role
from langchain_agentmem.types import Vector


@dataclass(frozen=True)
class Query:
    """What ranking reads of a query."""

    text: str
    """The words to match (BM25) and embed: the query, the speakers it names taken out."""
    vector: Vector | None = None
    """The normalised embedding of :attr:`text` (``None`` for a lexical search)."""
    named: frozenset[str] = frozenset()
    """The speakers it named, as the records spell them: their records gain
    ``HybridConfig.named_speaker``, others' records naming them ``named_mention``."""
    labels: QueryLabels = NO_LABELS
    """The words of the namespace's labels it matched."""
    asked: str = USER
    """Whose words it asks for, the user's or the assistant's
    (:func:`~langchain_agentmem.ranking.roles.asked_role`)."""


Speakers = tuple[str, ...]
"""The speaker names a hybrid search reads in its query, sorted."""


def speakers_read(speakers: Collection[str], config: HybridConfig) -> Speakers:
    """The names of ``speakers`` a hybrid search takes out of a query (none where
    ``named_speaker`` is 0)."""
    return () if config.named_speaker <= 0 else tuple(sorted(speakers))


def named_query(text: str, speakers: Speakers | None) -> NamedQuery:
    """``text`` with the names of ``speakers`` taken out (:func:`name_speakers`)."""
    return name_speakers(text, speakers) if speakers else NamedQuery(text)


def labels_named(said: Sequence[str], labels: Sequence[str], vectors: Mapping[str, Vector]) -> str:
    """The words of the namespace's ``labels`` that one of a model's labels of a query
    (``said``) names: the same, or at cosine :data:`SAME_ATTRIBUTE` or closer (``vectors``:
    each label's normalised embedding; labels without one match by spelling only)."""
    said_vectors = [vectors[label] for label in said if label in vectors]
    named = [
        label
        for label in labels
        if label in said
        or (
            label in vectors
            and any(float(v @ vectors[label]) >= SAME_ATTRIBUTE for v in said_vectors)
        )
    ]
    return label_words(named)


def query_of(
    asked: NamedQuery | str,
    vector: Vector | None = None,
    *,
    labels: Sequence[str] = (),
    vectors: Mapping[str, Vector] | None = None,
    config: HybridConfig | None = None,
    named_labels: str = "",
) -> Query:
    """The :class:`Query` ranking reads.

    Args:
        asked: The query's words, the speakers it names taken out (:func:`named_query`;
            a str names nobody).
        vector: The embedding of ``asked.text`` (``None``: a lexical search).
        labels: The namespace's labels the query may match (by embedding).
        vectors: Each label's normalised embedding.
        config: ``label_weight``, ``label_match``, ``link_match`` and ``label_terms``
            (default: :class:`HybridConfig`'s).
        named_labels: Words of the labels a model named for the query
            (:func:`labels_named`); they join both the terms and the topics.
    """
    if isinstance(asked, str):
        asked = NamedQuery(asked)
    if vector is None or not labels:
        matched = QueryLabels(named_labels, named_labels)
    else:
        matched = query_labels(
            vector, labels, vectors or {}, config or HybridConfig(), named_labels
        )
    return Query(asked.text, vector, asked.named, matched, asked_role(asked.text))
