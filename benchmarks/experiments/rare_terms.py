"""Rare-term lookups in a real vocabulary: what the cosine weight costs a record found by one word.

``test_a_rare_word_finds_a_record_beyond_the_dense_candidates`` holds a record that shares
only a rare word ("Quaxley") with the question among 300 records on the question's subject.
Its corpus holds none of the question's function words, so each of them counts at full IDF
in the BM25 ceiling. Here the same kind of lookup is planted in each LoCoMo conversation, whose
turns use everyday words: ten records of the conversation's first speaker, each naming an
invented word in a mundane aside ("The plumber said the boiler part is a Quaxley valve."),
each in a session of its own (no thread neighbours), searched with every turn kept by:

- ``word only``: "What about the Quaxley?";
- ``+ a question``: one of the conversation's own questions with the word added ("When did
  Caroline go to the LGBTQ support group, and the Quaxley?"): the rare word beside words that
  match many turns, as in the test;

at each cosine weight, against LoCoMo evidence recall@10 at that weight (the same
conversations, without the planted records).

Usage::

    PYTHONPATH=$PWD python benchmarks/experiments/rare_terms.py \
        --data ../shared/datasets/locomo/locomo_dev.json \
        --out benchmarks/experiments/results/rare_terms.txt
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from langchain_agentmem.embedding.embeddings import embed_query, embed_records, resolve_embeddings
from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.rl.data import (
    Conversation,
    Question,
    Turn,
    embed_conversations,
    load_locomo,
)
from langchain_agentmem.rl.evaluate import per_question, summarise

WEIGHTS = (0.1, 0.2, 0.25, 0.3, 0.4)
NEEDLES = (
    ("Quaxley", "The plumber said the boiler part is a Quaxley valve."),
    ("Brimwort", "My new router is a Brimwort X2 and it keeps dropping."),
    ("Zentrova", "The vet prescribed Zentrova drops for the cat's ears."),
    ("Ostrander", "We parked on Ostrander Lane behind the bakery."),
    ("Vellmar", "The dentist's office moved to the Vellmar building."),
    ("Caspiel", "I ordered a Caspiel lamp for the hallway."),
    ("Tormund", "My gym locker code is written on the Tormund card."),
    ("Pelliwick", "The landlord takes the rent through Pelliwick now."),
    ("Fennick", "The wifi password is on the Fennick box in the closet."),
    ("Drovac", "The garage fixed the car with a Drovac belt."),
)
SHAPES = ("word only", "+ a question")


def planted(conv: Conversation, embeddings: object, shape: str) -> Conversation:
    """``conv`` with the needles after its turns and their lookups as its questions."""
    speaker = conv.turns[0].speaker
    last = max(t.session for t in conv.turns)
    when = max(t.timestamp for t in conv.turns) + 60.0
    needles = [
        Turn(f"N{j}", speaker, f"{speaker}: {text}", last + 1 + j, False, when + j)
        for j, (_, text) in enumerate(NEEDLES)
    ]
    n = len(conv.turns)
    asked = []
    for j, (word, _) in enumerate(NEEDLES):
        if shape == "word only":
            text = f"What about the {word}?"
        else:
            q = conv.questions[(7 * j) % len(conv.questions)].text.rstrip(" ?")
            text = f"{q}, and the {word}?"
        asked.append(Question(text, 4, (n + j,)))
    vectors = embed_records(embeddings, [t.text for t in needles])  # type: ignore[arg-type]
    queries = np.stack([embed_query(embeddings, q.text) for q in asked])  # type: ignore[arg-type]
    return replace(
        conv,
        turns=[*conv.turns, *needles],
        questions=asked,
        turn_vectors=np.vstack([conv.turn_vectors, vectors]).astype(np.float32),
        question_vectors=queries.astype(np.float32),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", default="../shared/datasets/locomo/locomo_dev.json")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    started = time.perf_counter()
    embeddings = resolve_embeddings(None)
    convs = embed_conversations(load_locomo(args.data))
    sets = {s: [planted(c, embeddings, s) for c in convs] for s in SHAPES}
    head = f"{'dense_weight':<14}" + "".join(f"{s + ' @1':>17}{'@5':>6}" for s in SHAPES)
    head += f"{'LoCoMo R@10':>13}"
    lines = [head, "-" * len(head)]
    print(head, flush=True)
    for w in WEIGHTS:
        cfg = HybridConfig(dense_weight=w)
        row = f"{w:<14g}"
        for shape in SHAPES:
            for k, width in ((1, 17), (5, 6)):
                found = [
                    r
                    for c in sets[shape]
                    for r in per_question(c, range(len(c.turns)), k, config=cfg)
                ]
                row += f"{summarise(found, k)[f'recall@{k}']:>{width}.3f}"
        locomo = [r for c in convs for r in per_question(c, range(len(c.turns)), 10, config=cfg)]
        mark = "  (shipped)" if w == HybridConfig().dense_weight else ""
        row += f"{summarise(locomo, 10)['recall@10']:>13.4f}{mark}"
        lines.append(row)
        print(row, flush=True)
    if args.out:
        Path(args.out).write_text(
            "command: PYTHONPATH=$PWD python benchmarks/experiments/rare_terms.py --data "
            "../shared/datasets/locomo/locomo_dev.json "
            "--out benchmarks/experiments/results/rare_terms.txt\n"
            f"{len(convs)} conversations, every turn kept, {len(NEEDLES)} planted records each "
            "(an invented word in a mundane aside, a session of its own); @1 / @5: share of the "
            "lookups that find their record first / in the top 5; LoCoMo R@10 without the "
            "planted records.\n\n"
            + "\n".join(lines)
            + f"\n\nran in {time.perf_counter() - started:.0f} s\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
