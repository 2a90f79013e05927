"""A chat model's labels against a reader's: are they about what the statement is about?

``data/labelled_statements.json`` holds 24 statements written by hand, each with the labels a
reader would accept for what it gives facts about, written before any model was asked. Each
statement goes through the labelling request ``AgentMemory(model=...)`` sends
(:func:`langchain_agentmem.annotation.annotator.messages`) and its answer through the same parser.
A model label is right when it is one of the accepted labels, or its cosine to one (the
bundled embedding model) is at least ``--match``; reported: statements with at least one
right label, right labels among all the model's, statements whose answer could not be read,
and the facts the model stated.

The model is the environment's (as ``benchmarks/annotations.py``), at temperature 0, its
answers cached by request in ``--cache``.

Usage::

    eval "$(../shared/llm/serve-model)"
    PYTHONPATH=$PWD python benchmarks/annotation_labels.py \\
        --out benchmarks/results/annotation_labels.txt
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

from langchain_agentmem.annotation.annotations import parse
from langchain_agentmem.annotation.annotator import messages
from langchain_agentmem.embedding.embeddings import embed_records, resolve_embeddings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from annotations import CACHE, model_from_env
from answer_cache import JsonFileCache

DATA = Path(__file__).resolve().parent / "data" / "labelled_statements.json"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--match", type=float, default=0.7, help="least cosine of a match")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    model = model_from_env(JsonFileCache(args.cache))
    embeddings = resolve_embeddings(None)
    statements = json.loads(DATA.read_text(encoding="utf-8"))["statements"]
    lines = []
    hit = unread = right = given = 0
    for item in statements:
        answer = model.invoke(messages(item["text"]))
        notes = parse(str(answer.content), item["text"])
        if notes is None:
            unread += 1
            lines.append(f"  unread  {item['text']}  <- {str(answer.content)[:60]!r}")
            continue
        accepted = item["labels"]
        vectors = embed_records(embeddings, [*notes.about, *accepted])
        ours, theirs = vectors[: len(notes.about)], vectors[len(notes.about) :]
        sims = ours @ theirs.T if len(notes.about) else np.zeros((0, len(accepted)))
        good = [
            label
            for i, label in enumerate(notes.about)
            if label in accepted or float(sims[i].max()) >= args.match
        ]
        hit += bool(good)
        right += len(good)
        given += len(notes.about)
        mark = "right" if good else "wrong"
        lines.append(f"  {mark:<6}  {item['text']}  -> {list(notes.about)} facts {notes.facts}")
    n = len(statements)
    text = "\n".join(
        [
            "PYTHONPATH=$PWD python benchmarks/annotation_labels.py --out "
            f"{args.out} (match cosine {args.match})",
            "",
            f"{n} hand-labelled statements ({DATA.name}); model {model.model_name} at "
            f"{os.environ['OPENAI_BASE_URL']}, temperature 0. Ran in "
            f"{time.perf_counter() - start:.0f} s.",
            "",
            f"statements with a right label: {hit}/{n} ({hit / n:.3f})",
            f"right labels among the model's: {right}/{given} ({right / max(given, 1):.3f})",
            f"answers that could not be read: {unread}/{n}",
            "",
            *lines,
        ]
    )
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
