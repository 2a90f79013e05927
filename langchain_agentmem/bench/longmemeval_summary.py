"""The results of ``agentmem bench longmemeval`` as plain-text tables: recall per thing kept
and per question type, knowledge updates, what was stored, the answers."""

from __future__ import annotations

from typing import Any

from langchain_agentmem.bench.longmemeval import SHORT_TYPES


def _cell(value: Any, width: int) -> str:
    return f"{value:>{width}.3f}" if isinstance(value, float | int) else f"{'n/a':>{width}}"


def recall_table(run: dict[str, Any]) -> list[str]:
    """One run's recall: a line a method, overall then recall@10 (or the largest k) per type."""
    ks = run["ks"]
    k = 10 if 10 in ks else ks[-1]
    k5 = 5 if 5 in ks else ks[0]
    methods = run["retrieval"]
    groups = [g for g, v in next(iter(methods.values()))["types"].items() if v["questions"]]
    head = f"{'method':<18}" + "".join(f"{'R@' + str(x):>7}" for x in ks)
    head += f"{'hit@' + str(k5):>7}{'sess@' + str(k5):>8}"
    head += "".join(f"{SHORT_TYPES.get(g, g)[:8]:>9}" for g in groups)
    lines = [
        f"kept: {run['keep']} ({run['questions']} questions with evidence, "
        f"{run['haystacks']} haystacks, {run['distractors_mean']} distractor sessions each "
        f"on average); evidence recall@k; hit@{k5}: some evidence in the top {k5}; "
        f"sess@{k5}: an answer session among the top {k5}'s; per type: recall@{k}",
        head,
    ]
    for method, r in methods.items():
        row = f"{method:<18}" + "".join(_cell(r.get(f"recall@{x}"), 7) for x in ks)
        row += _cell(r.get(f"hit@{k5}"), 7) + _cell(r.get(f"session@{k5}"), 8)
        row += "".join(_cell(r["types"][g].get(f"recall@{k}"), 9) for g in groups)
        lines.append(row)
    counts = ", ".join(
        f"{SHORT_TYPES.get(g, g)} {next(iter(methods.values()))['types'][g]['questions']}"
        for g in groups
    )
    lines.append(f"questions per type: {counts}")
    return lines


def updates_line(run: dict[str, Any]) -> list[str]:
    """Knowledge updates: how often the latest statement ranks above the earlier ones."""
    lines = []
    for method, t in run["updates"].items():
        n = t["questions"]
        if n:
            lines.append(
                f"  {method:<18} latest first {t['latest_first'] / n:.3f}, earlier first "
                f"{t['earlier_first'] / n:.3f}, neither found {t['neither'] / n:.3f} (n={n})"
            )
    if lines:
        lines.insert(0, "knowledge updates (evidence in sessions of two dates), in the ranking:")
    return lines


def stored_line(run: dict[str, Any]) -> str:
    """What the haystacks stored."""
    s = run["stored"]
    per = max(run["haystacks"], 1)
    return (
        f"stored: {s['records'] / per:.1f} records a haystack, {s['chars'] / per / 1000:.1f} k "
        f"characters ({s['assistant_records'] / per:.1f} records and "
        f"{s['assistant_chars'] / per / 1000:.1f} k characters the assistant's)"
    )


def ingest_lines(ingest: dict[str, dict[str, float]]) -> list[str]:
    """Cold ingest per thing kept, beside a bare embedding of the same texts."""
    lines = ["ingest, cold (the model embeds every text; a bare embedding: one pass a text):"]
    for keep, c in ingest.items():
        lines.append(
            f"  {keep:<15} {c['records']:.0f} records of {c['sessions']:.0f} sessions in "
            f"{c['ingest_s']:.1f} s: {c['records_per_s']:.1f} records/s (bare embedding "
            f"{c['bare_records_per_s']:.1f}/s, {c['ingest_over_bare']:.2f}x its time); store "
            f"{c['store_bytes'] / 1e6:.2f} MB"
        )
    if {"user", "user+assistant"} <= set(ingest):
        user, both = ingest["user"], ingest["user+assistant"]
        replies = both["records"] - user["records"]
        if replies > 0:
            each = (both["ingest_s"] - user["ingest_s"]) / replies * 1000
            lines.append(
                f"  keeping the assistant's replies: {replies:.0f} more records, {each:.0f} ms "
                f"an add each, {both['store_bytes'] / max(user['store_bytes'], 1):.1f}x the store"
            )
    return lines


def format_lme_summary(result: dict[str, Any]) -> str:
    """Every run's tables, then the answers of each, then the cold ingest."""
    from langchain_agentmem.bench.longmemeval_answers import format_lme_answers

    lines: list[str] = []
    for run in result["runs"].values():
        lines += [*recall_table(run), *updates_line(run), stored_line(run)]
        search = run["timing"].get("search", {})
        if search:
            lines.append(
                "search p50: "
                + ", ".join(f"{mode} {s['p50_ms']:.1f} ms" for mode, s in search.items())
            )
        if "answers" in run:
            model = result.get("answers_setup", {}).get("model", "?")
            lines += ["", format_lme_answers(run["answers"], model=model)]
        lines.append("")
    if "ingest" in result:
        lines += ingest_lines(result["ingest"])
    return "\n".join(lines).rstrip()


__all__ = ["format_lme_summary", "ingest_lines", "recall_table", "stored_line", "updates_line"]
