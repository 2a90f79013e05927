"""Word lists in one place: the words that say nothing of what a text is about."""

from __future__ import annotations

import re

from bm25s.stopwords import STOPWORDS_EN

STOP_WORDS = frozenset(STOPWORDS_EN)
"""bm25s's English stop words: left out of BM25 terms, of the near-word table, and matched
case-sensitively in a speaker's name ("Will", "May")."""

QUESTION_STOP = STOP_WORDS | {
    "what", "which", "who", "whom", "whose", "where", "how", "does", "do", "is", "s", "am",
    "have", "i", "me", "my", "mine", "your", "yours", "his", "her", "hers", "our", "ours",
    "their", "theirs", "now", "currently", "today", "usually",
}  # fmt: skip
"""Words that say nothing of what a question is about: bm25s's English stop words, question
words, pronouns and words for "at present"."""
_QUESTION_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


_FEATURE_STOP_WORDS = (
    "a an the and or but so of to in on at for with from by as is are was were be been "
    "being it its this that these those i you he she we they me him her us them my your "
    "his our their what which who whom do does did have has had not no yes just really "
    "very too also can could would should will shall may might must about up out if then "
    "than there here how when where why all any some more most such only own same into "
    "over again once i'm you're it's that's don't"
)
FEATURE_STOP = frozenset(_FEATURE_STOP_WORDS.split())
"""Stop words of the policies' text features (``policies/features.py``): the shipped
learned policy was trained on features read with this list; changing it changes them."""


def question_words(query: str) -> list[str]:
    """The words of ``query`` that are neither stop words nor capitalised names."""
    words = _QUESTION_WORD.findall(query)
    return [
        word
        for i, word in enumerate(words)
        if word.lower().split("'")[0] not in QUESTION_STOP and not (i and word[0].isupper())
    ]
