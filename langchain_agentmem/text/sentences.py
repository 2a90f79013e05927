"""The sentences of a record, as its vector reads them.

A mean-pooled embedding of a long message weighs its sentences by their length, so one long
aside can drown the short statement a question asks about. A record of two or more sentences
is therefore embedded as its whole text plus the mean of its sentences, each sentence weighed
alike (:func:`~langchain_agentmem.embedding.embeddings.embed_records`).
"""

from __future__ import annotations

import re

SPEAKER = re.compile(r"^\s*[^:\n]{1,40}:\s+")
"""A leading ``"speaker: "`` label (how a conversation's turns are stored)."""
_BOUNDARY = re.compile(r"(?<=[.!?])\s+|\n+")
_ABBREVIATION = re.compile(
    r"(?:^|\s)(?:mr|mrs|ms|dr|prof|st|jr|sr|vs|etc|e\.g|i\.e|no|mt|ft|approx)\.$", re.IGNORECASE
)
"""A part that ends like this ("I saw Dr.") runs on into the next ("Moreau today.")."""
MIN_WORDS = 2
"""Words a sentence needs to count ("Wow!" does not)."""
MAX_SENTENCES = 32
"""Sentences a record's vector reads at most. A longer text is read at this many, spread
evenly from its first sentence to its last, so one write costs at most 33 embeddings however
long the text (a conversation's turn has far fewer: 8 at most on LoCoMo)."""


def strip_speaker(text: str) -> str:
    """Drop a leading ``"speaker: "`` label."""
    return SPEAKER.sub("", text, count=1)


def pieces(text: str) -> tuple[str, list[str]]:
    """``text``'s speaker label (``""`` when none) and the parts of the rest, split at
    sentence ends and line breaks, run on past abbreviations, fragments included.

    Linear in the text: whether a part runs on is read from that part alone (its end), and
    each sentence is joined once, so a text of nothing but abbreviations costs no more than
    any other of its length.
    """
    label = SPEAKER.match(text)
    head = label.group(0) if label else ""
    sentences: list[list[str]] = []
    run_on = False
    for part in _BOUNDARY.split(text[len(head) :]):
        if run_on:
            sentences[-1].append(part)
        else:
            sentences.append([part])
        run_on = bool(_ABBREVIATION.search(part))
    joined = (" ".join(parts).strip() for parts in sentences)
    return head, [s for s in joined if s]


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` that count, each with the text's speaker label in front;
    :data:`MAX_SENTENCES` of them, evenly spread, when more count.

    Returns ``[]`` when fewer than two count: the whole text is then its only sentence.
    """
    head, parts = pieces(text)
    counted = [s for s in parts if len(s.split()) >= MIN_WORDS]
    if len(counted) > MAX_SENTENCES:
        last = len(counted) - 1
        step = last / (MAX_SENTENCES - 1)
        counted = [counted[round(i * step)] for i in range(MAX_SENTENCES)]
    return [head + s for s in counted] if len(counted) >= 2 else []
