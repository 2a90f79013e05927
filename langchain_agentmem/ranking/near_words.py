"""Near words: a question's words widened by the words nearest them in embedding space.

Evidence is often phrased apart from the question ("What does Caroline research?" ...
"I've been studying adoption agencies"). The package ships a table, built once from the
bundled all-MiniLM-L6-v2: each whole word of its tokenizer's vocabulary (three letters or
more, not a stop word), embedded on its own, with its :data:`PER_WORD` nearest words at
cosine :data:`FLOOR` or more, other forms of the word itself left out
(``partner``: partnership, relationship, lover, ...). A query's content words (stop words
and capitalised names out) bring their near words; hybrid search counts their BM25 at
``HybridConfig.near_words`` of what they would count as words of the query, over the
ceiling of the query's own words (which they do not raise), on the candidates the query's
own words and embedding found (they bring none of their own). The table is plain text (no
pickle); words outside it bring nothing. Chosen leave-one-conversation-out in
``benchmarks/experiments/results/term_expansion.txt``.

Rebuild the table (for the bundled model, or another one's vocabulary)::

    python -m langchain_agentmem.ranking.near_words [--model PATH] [--out FILE]
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from langchain_agentmem.embedding.embeddings import SentenceTransformerEmbeddings, embed_texts
from langchain_agentmem.files import write_text
from langchain_agentmem.index.lexical import tokenize
from langchain_agentmem.text.words import STOP_WORDS, question_words

TABLE = Path(__file__).resolve().parent / "data" / "near_words.tsv"
"""The shipped table: one line a word, ``word<TAB>near near ...``, nearest first."""

PER_WORD = 8
"""Most near words a word brings."""

FLOOR = 0.6
"""Least cosine between a word and a near word."""

_WORD = re.compile(r"[a-z]{3,}")


@lru_cache(maxsize=4)
def load_table(path: str = str(TABLE)) -> dict[str, tuple[str, ...]]:
    """The near-word table at ``path`` (the shipped one by default), read once."""
    table: dict[str, tuple[str, ...]] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            word, _, near = line.rstrip("\n").partition("\t")
            if word and near:
                table[word] = tuple(near.split(" "))
    return table


def near_words(query: str, table: dict[str, tuple[str, ...]] | None = None) -> str:
    """The near words of ``query``'s content words, space-separated ("" when none).

    Args:
        query: The query as searched (names of speakers already taken out).
        table: The near-word table (default: the shipped one, :func:`load_table`).
    """
    words = question_words(query)
    if not words:
        return ""
    table = load_table() if table is None else table
    out: list[str] = []
    for word in words:
        for near in table.get(word.lower(), ()):
            if near not in out:
                out.append(near)
    return " ".join(out)


def build_table(model_path: str | None = None) -> dict[str, tuple[str, ...]]:
    """Each vocabulary word's near words under the model at ``model_path`` (default: the
    bundled one): :data:`PER_WORD` at most, cosine :data:`FLOOR` or more, nearest first."""
    emb = SentenceTransformerEmbeddings(model_path)
    vocab = sorted(
        w for w in emb.model.tokenizer.vocab if _WORD.fullmatch(w) and w not in STOP_WORDS
    )
    vectors = np.asarray(embed_texts(emb, vocab), dtype=np.float32)
    stems = [frozenset(tokenize(w)) for w in vocab]
    table: dict[str, tuple[str, ...]] = {}
    for start in range(0, len(vocab), 2048):
        sims = vectors[start : start + 2048] @ vectors.T
        for row, i in zip(sims, range(start, start + len(sims)), strict=True):
            top = np.argpartition(-row, 48)[:48]
            near = [
                vocab[j]
                for j in top[np.argsort(-row[top], kind="stable")]
                if row[j] >= FLOOR and j != i and not stems[i] & stems[j]
            ]
            if near:
                table[vocab[i]] = tuple(near[:PER_WORD])
    return table


def main(argv: Sequence[str] | None = None) -> None:
    """Build the near-word table and write it as text."""
    parser = argparse.ArgumentParser(description="Build the near-word table.")
    parser.add_argument("--model", help="a sentence-transformers model folder (default: bundled)")
    parser.add_argument("--out", default=str(TABLE), help=f"where to write it (default {TABLE})")
    args = parser.parse_args(argv)
    table = build_table(args.model)
    text = "".join(f"{w}\t{' '.join(near)}\n" for w, near in table.items())
    write_text(args.out, text, private=False)
    print(f"{len(table)} words with near words -> {args.out}")


if __name__ == "__main__":
    main()
