"""A chat model's annotations on LoCoMo: evidence recall with and without the model.

LoCoMo conversations (``--conversations``, a subset: the model labels every statement, one
call each, and judges up to two earlier statements of its speaker for each) are ingested
turn by turn as ``agentmem bench locomo`` does, into two memories side by side: one bare,
one with ``AgentMemory(model=...)``, whose annotation is waited for before the questions.
Each question of categories 1-4 is searched in hybrid mode; evidence recall@k per memory,
overall and per category, and what the model was asked and what it linked.

The model is the one the environment names (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``,
``OPENAI_MODEL``), at temperature 0, its answers cached by request (``--cache``, shared
with ``annotations.py``).

Usage::

    eval "$(../shared/llm/serve-model)"
    PYTHONPATH=$PWD python benchmarks/annotations_locomo.py \\
        --data ../shared/datasets/locomo/locomo_dev.json --conversations conv-30 \\
        --out benchmarks/results/annotations_locomo.txt
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import langchain_agentmem.annotation.annotator as annotator_module
from langchain_agentmem import AgentMemory
from langchain_agentmem.annotation.annotations import ANNOTATION, links_of
from langchain_agentmem.bench.runner import run_locomo
from langchain_agentmem.locomo import CATEGORIES, load_locomo

sys.path.insert(0, str(Path(__file__).resolve().parent))
from annotations import CACHE, model_from_env
from answer_cache import JsonFileCache

KS = (1, 5, 10, 20)


def measure(conversations: Sequence[Any], factory: Any, settle: Any = None) -> dict[str, Any]:
    """Hybrid evidence recall of one memory kind."""
    result = run_locomo(
        conversations,
        memory_factory=factory,
        ks=KS,
        modes=("hybrid",),
        baselines=False,
        progress=False,
        settle=settle,
    )
    scores: dict[str, Any] = result["retrieval"]["agentmem-hybrid"]
    return scores


def row(label: str, scores: dict[str, Any]) -> str:
    cats = [scores["categories"][name].get("recall@10") for name in CATEGORIES.values()]
    cells = [f"{scores[f'recall@{k}']:7.3f}" for k in KS]
    cells += [f"{c:11.3f}" if c is not None else f"{'-':>11}" for c in cats]
    return f"{label:<8}" + " ".join(cells)


def link_counts(memory: AgentMemory, namespaces: Sequence[str]) -> tuple[int, int, int]:
    """Statements annotated, links made, and links whose two records were said by one
    speaker in one session (most of LoCoMo's 'changes' are a day's news, not a new value)."""
    annotated = linked = same_session = 0
    for namespace in namespaces:
        records = {r.id: r for r in memory.records(namespace)}
        for record in records.values():
            note = record.metadata.get(ANNOTATION)
            if not isinstance(note, dict):
                continue
            annotated += 1
            for old, _ in links_of(note):
                linked += 1
                if old in records and records[old].thread == record.thread:
                    same_session += 1
    return annotated, linked, same_session


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--conversations", default="conv-30", help="sample ids, comma-separated")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--cache", type=Path, default=CACHE)
    args = parser.parse_args(argv)
    annotator_module.RETRY_WAITS = ()  # a failed answer is cached: asking again reads it again
    start = time.perf_counter()
    wanted = [s.strip() for s in args.conversations.split(",")]
    loaded, _ = load_locomo(args.data)
    conversations = [c for c in loaded if c.sample_id in wanted]
    if len(conversations) != len(wanted):
        parser.error(f"unknown conversation(s) in {args.conversations!r}")
    cache = JsonFileCache(args.cache)
    model = model_from_env(cache)
    seen: dict[str, Any] = {}

    def settle(memory: AgentMemory) -> None:
        """Wait for the model, then note what it did (the memory is still open)."""
        memory.wait_annotated()
        assert memory.annotator is not None
        seen["calls"] = memory.annotator.calls
        seen["judged"] = memory.annotator.judgements
        seen["failed"] = memory.annotator.failures
        seen["counts"] = link_counts(memory, [f"locomo-{c.sample_id}" for c in conversations])

    with tempfile.TemporaryDirectory() as tmp:
        bare = measure(conversations, lambda: AgentMemory(f"sqlite:///{tmp}/bare.db"))
        annotated = measure(
            conversations,
            lambda: AgentMemory(f"sqlite:///{tmp}/model.db", model=model),
            settle=settle,
        )
    calls, judged, failed, counts = (seen[k] for k in ("calls", "judged", "failed", "counts"))
    turns = sum(len(c.turns) for c in conversations)
    questions = sum(sum(1 for q in c.questions if q.evidence) for c in conversations)
    head = f"{'':<8}" + " ".join(f"{f'R@{k}':>7}" for k in KS)
    head += " " + " ".join(f"{name:>11}" for name in CATEGORIES.values())
    lines = [
        "PYTHONPATH=$PWD python benchmarks/annotations_locomo.py --data "
        f"{args.data} --conversations {args.conversations}"
        + (f" --out {args.out}" if args.out else ""),
        "",
        f"LoCoMo {', '.join(wanted)}: {turns} turns, {questions} questions of categories 1-4, "
        "every turn kept, hybrid search (AgentMemory's defaults); bare beside the same with "
        f"model= (qwen at {os.environ['OPENAI_BASE_URL']}, temperature 0). "
        f"Ran in {time.perf_counter() - start:.0f} s.",
        "",
        "evidence recall@k; per category: recall@10",
        head,
        row("bare", bare),
        row("model", annotated),
        "",
        f"model calls {calls} (labelling {calls - judged}, judging {judged}), failed {failed}; "
        f"statements annotated {counts[0]} of {turns} turns; replaces links made {counts[1]}, "
        f"{counts[2]} of them within one session; answered from the cache {cache.hits}, "
        f"asked {cache.misses}",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
