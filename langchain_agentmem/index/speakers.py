"""Who a query names: a speaker's name picks whose records to search, it is not a topic.

In "What is Dmitri's job?" over a conversation between Dmitri and Tara, "Dmitri" matches
every one of Dmitri's turns alike ("Dmitri: Oh wow, tell me more."): as a BM25 term it lifts
his shortest turns, and in the query's embedding it pulls toward any turn that names him.
So hybrid search takes the names of the namespace's speakers (records'
``metadata["speaker"]``) out of the query's words and embedding ("What is their job?") and
instead adds ``HybridConfig.named_speaker`` to the base score of the named speakers'
records, and ``HybridConfig.named_mention`` to other speakers' records whose text names them
("Sounds awesome, Dmitri!", often the question his answer follows). Measured in
``benchmarks/experiments/results/named_speakers.txt`` and ``named_mentions.txt``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from langchain_agentmem.text.words import STOP_WORDS

_WORD = re.compile(r"\w")


@dataclass(frozen=True)
class NamedQuery:
    """A query with the speakers it names taken out.

    Attributes:
        text: What to embed and match words against (the query when it names nobody).
        named: The speaker names it named, as the records spell them.
    """

    text: str
    named: frozenset[str] = frozenset()


def name_speakers(
    query: str, speakers: Iterable[str], *, plain: str = "they", possessive: str = "their"
) -> NamedQuery:
    """``query`` with each of ``speakers`` it names replaced by ``plain`` ("they"), or by
    ``possessive`` ("their") where it is followed by "'s".

    A name matches as a whole word (or words), in any case, unless it is also a common
    English word ("Will", "May"): then only as written. A query that would be left with no
    word of its own ("Dmitri?") is kept as it is, naming nobody.
    """
    names = tuple(sorted({s for s in speakers if s and _WORD.search(s)}))
    if not names or not query:
        return NamedQuery(query)
    pattern, spelled = _pattern(names)
    named: set[str] = set()

    def replace(match: re.Match[str]) -> str:
        named.add(spelled[match.group("name").lower()])
        return possessive if match.group("own") else plain

    text = re.sub(r"\s+", " ", pattern.sub(replace, query)).strip()
    if not named or not _WORD.search(pattern.sub("", query)):
        return NamedQuery(query)
    return NamedQuery(text, frozenset(named))


@functools.lru_cache(maxsize=256)
def _pattern(names: tuple[str, ...]) -> tuple[re.Pattern[str], dict[str, str]]:
    """One regex for ``names`` (longest first) and each lower-cased name's spelling."""
    spelled: dict[str, str] = {}
    parts: list[str] = []
    for name in sorted(names, key=len, reverse=True):
        key = name.lower()
        spelled.setdefault(key, name)
        escaped = re.escape(name)
        parts.append(escaped if key in STOP_WORDS else f"(?i:{escaped})")
    body = "|".join(parts)
    pattern = re.compile(rf"(?<!\w)(?P<name>{body})(?P<own>['\u2019]s?)?(?!\w)")
    return pattern, spelled


def mention_pattern(named: frozenset[str]) -> re.Pattern[str]:
    """A regex finding any of ``named`` in a text, matched as :func:`name_speakers` does."""
    return _pattern(tuple(sorted(named)))[0]
