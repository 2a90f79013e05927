"""Turns indexed with the turn before them, on top of the shipped hybrid search, on LoCoMo.

A reply often says little on its own ("Yes! A sunrise."): what it is about sits in the turn
it answers ("What did you paint?"). Contextual retrieval indexes each turn together with
that context. Here the context is the previous turn of the same session (none for a
session's first turn), and:

- ``dense ctx``: the cosine is taken on the embedding of ``"previous\\nturn"`` instead of
  the turn's own;
- ``dense mix``: ``(1 - m) * cosine(turn) + m * cosine(previous + turn)``;
- ``dense max``: the larger of the two cosines;
- ``bm25 ctx``: BM25 on the dated turn text with the previous turn's text appended (its
  words count as the turn's), the cosine unchanged;
- ``both``: ``dense mix`` and ``bm25 ctx`` together;
- ``if it asks``: ``bm25 ctx`` only where the previous turn asks something (holds a "?"):
  a comment on a statement ("Really? I didn't see that coming.") then does not take the
  statement's words.

The neighbour lift stays on in every row.

A second table asks the question a memory of the user's words asks: only one speaker's turns
are stored (each speaker in turn, as if they were the user, scored on the questions whose
evidence they said), and the context is either that speaker's own previous turn or the
other speaker's turn just before (what an assistant said before the user answered).

Every hyper-parameter, the shipped ``w`` and
``a`` included, is chosen per held-out conversation on the other five (leave one
conversation out), as ``locomo_prf.py`` does.

Usage::

    PYTHONPATH=$PWD python benchmarks/experiments/locomo_context.py \
        --data ../shared/datasets/locomo/locomo_dev.json \
        --out benchmarks/experiments/results/locomo_context.txt
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.experiments.locomo_ablation import (
    Conv,
    Matrix,
    Variant,
    bm25_matrix,
    dated_text,
    embed_cached,
    held_out,
    prepare,
    recall,
)
from benchmarks.experiments.locomo_prf import (
    A_NEAR,
    B_SHIPPED,
    LEX,
    W_NEAR,
    held_out_rows,
    options,
    shipped,
    write,
)
from langchain_agentmem.index.lexical import tokenize
from langchain_agentmem.locomo import Conversation, load_locomo, turn_text


@dataclass
class Context:
    """Scores of one conversation's turns indexed with their previous turn."""

    cos: Matrix  # questions x turns: cosine on "previous\nturn"
    bm: Matrix  # BM25 of the dated turn plus the previous turn, over its ceiling
    bm2: Matrix  # the same with the two previous turns
    bm_next: Matrix  # the same with the previous and the next turn
    bm_ask: Matrix  # the previous turn appended only when it asks something ("?")


CONTEXT: dict[str, Context] = {}


def prepare_context(conversations: list[Conversation], convs: list[Conv], cache: Path) -> None:
    """Embed and score every turn with the turn before it (same session)."""
    from langchain_agentmem.embedding.embeddings import SentenceTransformerEmbeddings

    model = SentenceTransformerEmbeddings().model
    for conv, c in zip(conversations, convs, strict=True):
        qs = [q for q in conv.questions if q.evidence]
        turns = conv.turns
        prev = [
            turn_text(turns[i - 1]) if i and c.session[i - 1] == c.session[i] else ""
            for i in range(len(turns))
        ]
        dense_texts = [f"{p}\n{turn_text(t)}".strip() for p, t in zip(prev, turns, strict=True)]
        lex_texts = [f"{dated_text(t)} {p}".strip() for p, t in zip(prev, turns, strict=True)]
        same = c.session
        prev2 = [
            f"{prev[i - 1]} {prev[i]}" if i and same[i - 1] == same[i] else prev[i]
            for i in range(len(turns))
        ]
        nxt = [
            turn_text(turns[i + 1]) if i + 1 < len(turns) and same[i + 1] == same[i] else ""
            for i in range(len(turns))
        ]
        qvec = embed_cached([q.question for q in qs], cache, model, "all-MiniLM-L6-v2")
        dvec = embed_cached(dense_texts, cache, model, "all-MiniLM-L6-v2")
        qtok = [tokenize(q.question) for q in qs]
        bm, ceiling, _ = bm25_matrix([tokenize(t) for t in lex_texts], qtok, B_SHIPPED)
        toks2 = [tokenize(f"{dated_text(t)} {p}") for p, t in zip(prev2, turns, strict=True)]
        bm2, ceiling2, _ = bm25_matrix(toks2, qtok, B_SHIPPED)
        toks3 = [
            tokenize(f"{dated_text(t)} {p} {n}") for p, t, n in zip(prev, turns, nxt, strict=True)
        ]
        bm3, ceiling3, _ = bm25_matrix(toks3, qtok, B_SHIPPED)
        asks = [
            f"{dated_text(t)} {p if '?' in p else ''}" for p, t in zip(prev, turns, strict=True)
        ]
        bm4, ceiling4, _ = bm25_matrix([tokenize(x) for x in asks], qtok, B_SHIPPED)
        CONTEXT[c.cid] = Context(
            cos=qvec @ dvec.T,
            bm=bm / ceiling,
            bm2=bm2 / ceiling2,
            bm_next=bm3 / ceiling3,
            bm_ask=bm4 / ceiling4,
        )


def contextual(c: Conv, p: tuple[Any, ...]) -> Matrix:
    """The shipped score with the contextual cosine and / or BM25 (module docstring)."""
    w, a, how, m = p
    ctx = CONTEXT[c.cid]
    cos = c.cos["speaker"]
    bm = None
    if how in ("mix", "both"):
        cos = (1 - m) * cos + m * ctx.cos
    elif how == "ctx":
        cos = ctx.cos
    elif how == "max":
        cos = np.maximum(cos, ctx.cos)
    if how in ("bm25", "both"):
        bm = ctx.bm
    elif how == "bm25 lam":
        bm = (1 - m) * c.bm25[LEX] / c.ceiling[LEX] + m * ctx.bm
    elif how == "bm25 two":
        bm = ctx.bm2
    elif how == "bm25 next":
        bm = ctx.bm_next
    elif how == "bm25 ask":
        bm = ctx.bm_ask
    return shipped(c, w, a, cos=cos, bm=bm)


def variants() -> list[Variant]:
    """The baseline row and one row per way of using the context."""
    base = list(itertools.product(W_NEAR, A_NEAR))
    mixes = (0.25, 0.5, 0.75)
    return [
        Variant("shipped: lift bm25[dated b=0.3] (w, a)", base, lambda c, p: shipped(c, *p)),
        Variant("dense ctx (w, a)", [(*wa, "ctx", 1.0) for wa in base], contextual),
        Variant("dense mix (w, a, m)", [(*wa, "mix", m) for wa in base for m in mixes], contextual),
        Variant("dense max (w, a)", [(*wa, "max", 0.0) for wa in base], contextual),
        Variant("bm25 ctx (w, a)", [(*wa, "bm25", 0.0) for wa in base], contextual),
        Variant("both (w, a, m)", [(*wa, "both", m) for wa in base for m in mixes], contextual),
        Variant(
            "bm25 own/ctx mix (w, a, lam)",
            [(*wa, "bm25 lam", m) for wa in base for m in mixes],
            contextual,
        ),
        Variant("bm25 two previous (w, a)", [(*wa, "bm25 two", 0.0) for wa in base], contextual),
        Variant(
            "bm25 previous + next (w, a)", [(*wa, "bm25 next", 0.0) for wa in base], contextual
        ),
        Variant("bm25 ctx if it asks (w, a)", [(*wa, "bm25 ask", 0.0) for wa in base], contextual),
        Variant(
            "bm25 ctx, wider (w, a)",
            [(w, a, "bm25", 0.0) for w in (0.2, 0.3, 0.4, 0.5) for a in (0.2, 0.3, 0.4, 0.5)],
            contextual,
        ),
    ]


def one_speaker(conversations: list[Conversation], cache: Path) -> dict[str, list[Conv]]:
    """Per context kind, one score matrix per memory (one speaker's turns of a conversation)."""
    from langchain_agentmem.embedding.embeddings import SentenceTransformerEmbeddings

    model = SentenceTransformerEmbeddings().model
    tag = "all-MiniLM-L6-v2"
    out: dict[str, list[Conv]] = {}
    for conv in conversations:
        for who in sorted({t.speaker for t in conv.turns}):
            idx = [i for i, t in enumerate(conv.turns) if t.speaker == who]
            pos = {conv.turns[i].dia_id: j for j, i in enumerate(idx)}
            qs = [q for q in conv.questions if q.evidence and all(e in pos for e in q.evidence)]
            if not qs:
                continue
            turns = [conv.turns[i] for i in idx]
            session = np.array([t.session for t in turns])
            own = [
                turn_text(turns[j - 1]) if j and session[j - 1] == session[j] else ""
                for j in range(len(turns))
            ]
            other = [
                turn_text(conv.turns[i - 1])
                if i
                and conv.turns[i - 1].speaker != who
                and conv.turns[i - 1].session == conv.turns[i].session
                else ""
                for i in idx
            ]
            qvec = embed_cached([q.question for q in qs], cache, model, tag)
            dvec = embed_cached([turn_text(t) for t in turns], cache, model, tag)
            qtok = [tokenize(q.question) for q in qs]
            for kind, ctx in (
                ("none", [""] * len(turns)),
                ("own previous", own),
                ("other's previous", other),
                ("other's, if it asks", [x if "?" in x else "" for x in other]),
            ):
                texts = [f"{dated_text(t)} {x}".strip() for t, x in zip(turns, ctx, strict=True)]
                bm, ceiling, _ = bm25_matrix([tokenize(x) for x in texts], qtok, B_SHIPPED)
                out.setdefault(kind, []).append(
                    Conv(
                        cid=f"{conv.sample_id}/{who}",
                        cos={"speaker": qvec @ dvec.T},
                        bm25={LEX: bm},
                        ceiling={LEX: ceiling},
                        ceiling_vocab={},
                        evidence=[np.array([pos[e] for e in q.evidence]) for q in qs],
                        categories=np.array([q.category for q in qs]),
                        when=np.zeros(len(qs), dtype=bool),
                        session=session,
                    )
                )
    return out


def main() -> None:
    args = options(__doc__.splitlines()[0])
    conversations, _ = load_locomo(args.data)
    t0 = time.perf_counter()
    convs = prepare(conversations, Path(args.cache))
    prepare_context(conversations, convs, Path(args.cache))
    lines = [
        "command: PYTHONPATH=$PWD python benchmarks/experiments/locomo_context.py --data "
        "../shared/datasets/locomo/locomo_dev.json "
        "--out benchmarks/experiments/results/locomo_context.txt",
        "recall@10, categories 1-4, 885 questions; leave-one-conversation-out over the whole "
        "grid (w, a and m chosen on 5 conversations, scored on the 6th); in-sample = best "
        "single grid point on all 6; module docstring for the rows.",
        f"prepared {len(convs)} conversations in {time.perf_counter() - t0:.1f} s",
    ]
    held_out_rows(convs, variants(), lines, args.only)
    lines += [
        "",
        "one speaker's turns stored (12 memories, 840 questions): recall@10 at the shipped "
        "(w, a) = (0.2, 0.5), at (0.3, 0.4), and held out per memory (w, a chosen on the "
        "other 11)",
        f"{'context':<20}{'(0.2, 0.5)':>11}{'(0.3, 0.4)':>11}{'held out':>10}",
    ]
    print("\n".join(lines[-3:]), flush=True)
    base = Variant("shipped", list(itertools.product(W_NEAR, A_NEAR)), lambda c, p: shipped(c, *p))
    for kind, memories in one_speaker(conversations, Path(args.cache)).items():
        pooled = [
            np.concatenate([recall(c, shipped(c, w, a)) for c in memories]).mean()
            for w, a in ((0.2, 0.5), (0.3, 0.4))
        ]
        lines.append(
            f"{kind:<20}{pooled[0]:>11.3f}{pooled[1]:>11.3f}"
            f"{held_out(memories, base)['held_out']:>10.3f}"
        )
        print(lines[-1], flush=True)
    write(args.out, lines)


if __name__ == "__main__":
    main()
