"""A chat model's annotations, measured: facts that change, with and without the model.

The conversations of ``benchmarks/fact_change.py`` (``--n`` of each generated set, both
hand-written sets), ingested turn by turn as ``agentmem bench`` does into two SQLite
memories side by side: one bare, one with ``AgentMemory(model=...)``, which labels each
stored statement and links it to the earlier statements of its speaker it makes out of date
(annotation runs off the write path; ``wait_annotated`` after each conversation). Each
question is searched with k=5 and scored as ``fact_change.py`` scores it (cur@1, cur@5,
stale>cur, before@5). Also: the model's cost per stored statement (calls, tokens, seconds
for a call not answered from the cache), write p50 and search p95 of both memories, and the
links it made, right and wrong (a link is right when the later statement is the current one
of a changed fact and the earlier one its stale one, as the generator labelled them).

The model is the one the environment names (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``,
``OPENAI_MODEL``; ``../shared/llm/serve-model`` prints them for a local one), asked at
temperature 0; its answers are cached in ``--cache`` keyed by the request, so a rerun asks
only what it has not asked before.

Usage::

    eval "$(../shared/llm/serve-model)"
    PYTHONPATH=$PWD python benchmarks/annotations.py --n 1 --out benchmarks/results/annotations.txt
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from langchain_openai import ChatOpenAI

import langchain_agentmem.annotation.annotator as annotator_module
from langchain_agentmem import AgentMemory, HybridConfig
from langchain_agentmem.annotation.annotations import ANNOTATION, replaces_of
from langchain_agentmem.bench.metrics import percentile_ms
from langchain_agentmem.rl.synthetic_conversations import SLOT_SETS, generate, write

sys.path.insert(0, str(Path(__file__).resolve().parent))
from answer_cache import JsonFileCache
from fact_change import HAND, NEWS, SETS, Counts, ingest, score

CACHE = Path(__file__).resolve().parent / ".cache" / "annotation_answers.json"

VARIANTS = {
    "links only (label_weight 0)": HybridConfig(label_weight=0.0),
    "label_weight 1.0, label_match 0.4 (before)": HybridConfig(label_weight=1.0, label_match=0.4),
    "label_weight 0.5, label_match 0.5": HybridConfig(label_weight=0.5, label_match=0.5),
    "label_weight 0.25, label_match 0.5 (shipped)": HybridConfig(),
}
"""How the model's annotations are searched, over every set: the same stored annotations
(the grid, chosen inside folds: ``benchmarks/experiments/label_weights.py``)."""


def model_from_env(cache: JsonFileCache | None) -> ChatOpenAI:
    """The environment's chat model at temperature 0, answers cached (``None``: asked
    afresh every time)."""
    return ChatOpenAI(
        base_url=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ.get("OPENAI_API_KEY", "local"),  # type: ignore[arg-type]
        model=os.environ.get("OPENAI_MODEL", "qwen"),
        temperature=0,
        extra_body={"max_tokens": 120},
        cache=cache,
    )


def conversations(n: int) -> dict[str, list[dict[str, Any]]]:
    """``n`` conversations of each generated set, and both hand-written sets."""
    raws = {name: generate(n, seed=seed, slots=SLOT_SETS[slots]) for name, slots, seed in SETS}
    raws["hand"] = json.loads(HAND.read_text())
    raws["news"] = json.loads(NEWS.read_text())
    for name, raw in raws.items():
        for conv in raw:
            conv["sample_id"] = f"{name.replace(' ', '-')}-{conv['sample_id']}"
    return raws


def links(
    memory: AgentMemory, conv: dict[str, Any], dump: list[dict[str, Any]] | None = None
) -> tuple[int, int, int]:
    """The model's replaces links in ``conv``'s namespace: how many, how many right, and
    how many changed facts there are to link (each link appended to ``dump`` with both
    texts when given)."""
    ns = f"facts-{conv['sample_id']}"
    records = {r.id: r for r in memory.records(ns)}
    dia = {rid: str(r.metadata.get("dia_id")) for rid, r in records.items()}
    changed = {
        (str(qa["evidence"][0]), str(stale))
        for qa in conv["qa"]
        if qa["fact"]["kind"] != "before"
        for stale in qa["fact"]["stale"] or ()
    }
    made = right = 0
    for record in records.values():
        note = record.metadata.get(ANNOTATION) or {}
        for old in replaces_of(note):
            is_right = (str(record.metadata.get("dia_id")), dia.get(old, "")) in changed
            made, right = made + 1, right + is_right
            if dump is not None and old in records:
                why = [link.get("why") for link in note["replaces"] if link.get("id") == old]
                dump.append(
                    {"new": record.text, "old": records[old].text, "why": why, "right": is_right}
                )
    missed = changed - {
        (str(r.metadata.get("dia_id")), dia.get(old, ""))
        for r in records.values()
        for old in replaces_of(r.metadata.get(ANNOTATION) or {})
    }
    if dump is not None:
        text = {dia[rid]: r.text for rid, r in records.items()}
        dump.extend({"new": text.get(n), "old": text.get(o), "missed": True} for n, o in missed)
    return made, right, len(changed)


def timed_search(memory: AgentMemory, conv: dict[str, Any], out: list[float]) -> None:
    """Search every question of ``conv`` once more, timing each call."""
    for qa in conv["qa"]:
        t0 = time.perf_counter()
        memory.search(qa["question"], namespace=f"facts-{conv['sample_id']}", k=5)
        out.append(time.perf_counter() - t0)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1, help="conversations per generated set")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--links", type=Path, help="write every link made and missed (JSONL)")
    parser.add_argument("--keep", type=Path, help="copy the annotated store here (SQLite)")
    parser.add_argument(
        "--sets", help="measure only these sets, comma-separated (default: every set)"
    )
    args = parser.parse_args(argv)
    # A failed answer is cached like any other: trying it again here would read it again.
    annotator_module.RETRY_WAITS = ()
    start = time.perf_counter()
    cache = JsonFileCache(args.cache)
    model = model_from_env(cache)
    raws = conversations(args.n)
    hand = raws["hand"]  # the cost of a call is timed on it, whichever sets are measured
    if args.sets:
        asked = [name.strip() for name in args.sets.split(",")]
        unknown = sorted(set(asked) - set(raws))
        if unknown:
            parser.error(f"unknown set(s) {', '.join(unknown)}; use {', '.join(raws)}")
        raws = {name: raws[name] for name in asked}
    rows: dict[str, dict[str, Counts]] = {}
    made = right = changes = 0
    dump: list[dict[str, Any]] = []
    adds: dict[str, list[float]] = {"bare": [], "model": []}
    searches: dict[str, list[float]] = {"bare": [], "model": []}
    with tempfile.TemporaryDirectory() as tmp:
        memories = {
            "bare": AgentMemory(f"sqlite:///{tmp}/bare.db", hybrid=HybridConfig()),
            "model": AgentMemory(f"sqlite:///{tmp}/model.db", model=model),
        }
        try:
            for name, raw in raws.items():
                path = write(Path(tmp) / f"{name}.json", raw)
                rows[name] = {}
                for kind, memory in memories.items():
                    t0 = time.perf_counter()
                    ingest(memory, path)
                    adds[kind].append((time.perf_counter() - t0) / _turns(raw))
                    memory.wait_annotated()
                    rows[name][kind] = sum((score(memory, conv) for conv in raw), Counts())
                    for conv in raw:
                        timed_search(memory, conv, searches[kind])
                for conv in raw:
                    m, r, c = links(memories["model"], conv, dump)
                    made, right, changes = made + m, right + r, changes + c
                print(name, {k: c.figures() for k, c in rows[name].items()}, flush=True)
            annotator = memories["model"].annotator
            assert annotator is not None
            calls, failures = annotator.calls, annotator.failures
            judged = annotator.judgements
        finally:
            for memory in memories.values():
                memory.close()
        variants = {"bare (no model)": sum((c["bare"] for c in rows.values()), Counts())}
        for label, config in VARIANTS.items():
            with AgentMemory(f"sqlite:///{tmp}/model.db", hybrid=config) as reread:
                variants[label] = sum(
                    (score(reread, conv) for raw in raws.values() for conv in raw), Counts()
                )
        if args.keep:
            shutil.copyfile(f"{tmp}/model.db", args.keep)
        asked = f"{LABELLED_QUERIES} (label_queries=True)"
        with AgentMemory(f"sqlite:///{tmp}/model.db", model=model, label_queries=True) as m:
            variants[asked] = sum(
                (score(m, conv) for raw in raws.values() for conv in raw), Counts()
            )
    if args.links:
        args.links.write_text("".join(json.dumps(d) + "\n" for d in dump))
    tokens = _tokens(cache)
    head = (
        f"{'set':<10}{'convs':>6}  {'':<6}{'cur@1':>8}{'cur@5':>8}{'stale>cur':>11}{'before@5':>10}"
    )
    lines = [head, "-" * len(head)]
    for name, kinds in rows.items():
        for kind, counts in kinds.items():
            f = counts.figures()
            lines.append(
                f"{name if kind == 'bare' else '':<10}"
                f"{len(raws[name]) if kind == 'bare' else '':>6}  {kind:<6}"
                f"{f[0]:>8.3f}{f[1]:>8.3f}{f[2]:>11.3f}{f[3]:>10.3f}"
            )
    bare95, labelled95 = percentile_ms(searches["bare"], 95), percentile_ms(searches["model"], 95)
    lines += ["", "the sets measured together, the same annotations searched with other weights:"]
    lines += [f"{'':<46}{'cur@1':>8}{'cur@5':>8}{'stale>cur':>11}{'before@5':>10}"]
    for label, counts in variants.items():
        f = counts.figures()
        lines.append(f"{label:<46}{f[0]:>8.3f}{f[1]:>8.3f}{f[2]:>11.3f}{f[3]:>10.3f}")
    stored = sum(_turns(raw) for raw in raws.values())
    per_call = _seconds_per_call(hand)
    per_query = _seconds_per_query(hand)
    lines += [
        "",
        f"model: {model.model_name} at {os.environ['OPENAI_BASE_URL']}, temperature 0",
        f"statements stored {stored}; model calls {calls} ({calls / stored:.2f} per stored "
        f"statement; questions and small talk are not sent): labelling {calls - judged}, "
        f"judging {judged} (an earlier statement each); failed {failures}; answered "
        f"from the cache {cache.hits}, asked {cache.misses}",
        f"tokens per call: {tokens}",
        f"seconds per call, asked afresh in this run (no cache), the first {COST_PROBES} "
        f"statements of the first hand-written set: p50 {per_call[0]:.2f}, p95 "
        f"{per_call[1]:.2f}",
        f"replaces links made {made}, right {right} of {changes} changed facts (a changed "
        "fact's current statement linked to its stale one)",
        "write, median over sets of the mean add per turn: bare "
        f"{percentile_ms(adds['bare'], 50):.1f} ms, with the model "
        f"{percentile_ms(adds['model'], 50):.1f} ms (a turn; annotation is off the write path)",
        f"search p95: bare {bare95:.1f} ms, with the model's labels {labelled95:.1f} ms "
        f"({labelled95 / bare95:.2f}x; no model call); with label_queries=True each new query "
        f"waits for a model call first: p50 {per_query[0]:.2f} s, p95 {per_query[1]:.2f} s "
        f"(the first {COST_PROBES} questions of the first hand-written set, asked afresh)",
    ]
    command = f"PYTHONPATH=$PWD python benchmarks/annotations.py --n {args.n} --out {args.out}"
    which = "each generated fact-change set and both hand-written sets"
    if args.sets:
        command += f" --sets {args.sets}"
        which = f"these sets only: {', '.join(raws)}"
    intro = (
        f"{args.n} conversation(s) of {which} "
        "(fact_change.py's), every turn kept, k=5; bare: AgentMemory's defaults; model: "
        "the same with model= (labels, replaces links). Ran in "
        f"{time.perf_counter() - start:.0f} s."
    )
    text = "\n".join([command, "", intro, "", *lines]) + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)


LABELLED_QUERIES = "shipped, and the model labels each query"

COST_PROBES = 20
"""Statements asked of the model afresh to time a call."""


def _seconds_per_call(raw: list[dict[str, Any]]) -> tuple[float, float]:
    """p50 and p95 seconds of one labelling call, uncached."""
    from langchain_agentmem.annotation.annotations import worth_annotating
    from langchain_agentmem.annotation.annotator import messages

    fresh = model_from_env(None)
    texts = [
        turn["text"]
        for conv in raw
        for turns in conv["conversation"].values()
        if isinstance(turns, list)
        for turn in turns
        if worth_annotating(turn["text"], None)
    ][:COST_PROBES]
    took = []
    for text in texts:
        t0 = time.perf_counter()
        fresh.invoke(messages(text))
        took.append(time.perf_counter() - t0)
    return percentile_ms(took, 50) / 1000, percentile_ms(took, 95) / 1000


def _seconds_per_query(raw: list[dict[str, Any]]) -> tuple[float, float]:
    """p50 and p95 seconds of one query labelling call, uncached."""
    from langchain_agentmem.annotation.annotations import query_request
    from langchain_agentmem.annotation.annotator import as_messages

    fresh = model_from_env(None)
    took = []
    for qa in [qa for conv in raw for qa in conv["qa"]][:COST_PROBES]:
        request = as_messages(query_request(qa["question"]))
        t0 = time.perf_counter()
        fresh.invoke(request)
        took.append(time.perf_counter() - t0)
    return percentile_ms(took, 50) / 1000, percentile_ms(took, 95) / 1000


def _turns(raw: list[dict[str, Any]]) -> int:
    return sum(len(t) for c in raw for t in c["conversation"].values() if isinstance(t, list))


def _tokens(cache: JsonFileCache) -> str:
    """Mean prompt and answer tokens over the cached answers."""
    ins, outs = [], []
    for answer in cache.answers():
        for generation in json.loads(answer):
            usage = generation.get("kwargs", {}).get("message", {}).get("kwargs", {})
            meta = usage.get("usage_metadata") or {}
            if meta:
                ins.append(meta.get("input_tokens", 0))
                outs.append(meta.get("output_tokens", 0))
    if not ins:
        return "n/a"
    return f"{statistics.mean(ins):.0f} in, {statistics.mean(outs):.0f} out (mean)"


if __name__ == "__main__":
    main()
