"""Cross-validate the learned policy against the heuristics and (optionally) ship it.

Usage::

    python -m langchain_agentmem.rl.report --data locomo_dev.json --out benchmarks/results \
        [--ship langchain_agentmem/policies/data] [--steps 150000] [--folds 3]

Writes ``policy_locomo.json`` (every policy at every budget, on held-out conversations),
``policy_locomo.md`` (the same as a table) and ``policy_learning_curve.png``.
:func:`decision_latency` times one ``decide`` call of each policy
(``benchmarks/results/policy_latency.txt`` names the command).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_agentmem.files import write_figure, write_text


def markdown(table: dict[str, dict[str, dict[str, float]]], k: int = 10) -> str:
    """The comparison as a Markdown table per budget."""
    lines: list[str] = []
    for budget, rows in table.items():
        lines.append(f"\n### budget {budget} (memory holds {float(budget):.0%} of the turns)\n")
        cats = sorted({key for r in rows.values() for key in r if key.startswith(f"recall@{k}/")})
        head = [
            "policy",
            f"recall@{k}",
            *[c.split("/")[1] for c in cats],
            "retained",
            f"dense recall@{k}",
            "decide p95 µs",
        ]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for name, r in sorted(rows.items(), key=lambda kv: -kv[1].get(f"recall@{k}", 0.0)):
            cells = [name, f"{r.get(f'recall@{k}', 0):.3f}"]
            cells += [f"{r.get(c, 0):.3f}" for c in cats]
            cells.append(f"{r.get('retained', 0):.3f}")
            cells.append(f"{r.get(f'dense/recall@{k}', 0):.3f}")
            p95 = r.get("decide_p95_us")
            cells.append("-" if p95 is None else f"{p95:.0f}")
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot_runs(runs: list[dict[str, Any]], path: Path) -> Path | None:
    """Held-out recall@10 against training steps, one line per fold and budget."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for run in runs:
        curve = run["curve"]
        steps = [row["steps"] for row in curve]
        for key in sorted(k for k in curve[-1] if k.startswith("heldout_")):
            label = f"held out {','.join(run['held_out'])} @ {key.rsplit('/', 1)[1]}"
            ax.plot(steps, [row[key] for row in curve], marker="o", ms=3, label=label)
    ax.set_xlabel("PPO environment steps")
    ax.set_ylabel("evidence recall@10 (held-out conversations)")
    ax.set_title("Learned memory policy: learning curve on conversations left out")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    write_figure(fig, path, dpi=110)
    plt.close(fig)
    return path


def plot_budgets(
    table: dict[str, dict[str, dict[str, float]]],
    path: Path,
    k: int = 10,
    *,
    held_out: bool = True,
) -> Path | None:
    """Recall@k against budget, one line per policy (``None`` without matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    budgets = sorted(table, key=float)
    # Policies that score alike at every budget are one line named "a = b": none hides another.
    lines: dict[tuple[float, ...], list[str]] = {}
    for name in next(iter(table.values())):
        values = tuple(table[b][name].get(f"recall@{k}", float("nan")) for b in budgets)
        lines.setdefault(values, []).append(name)
    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    for values, names in lines.items():
        style = "--" if names[0].startswith("oracle") else "-"
        ax.plot([float(b) for b in budgets], values, style, marker="o", label=" = ".join(names))
    ax.set_xlabel("budget (share of a conversation's turns kept)")
    ax.set_ylabel(f"evidence recall@{k}" + (" (held-out)" if held_out else ""))
    ax.set_xticks([float(b) for b in budgets])
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    write_figure(fig, path, dpi=110)
    plt.close(fig)
    return path


def compare_kept(
    convs: Sequence[Any], learned: dict[str, Any], budget: float, rival: str = "importance"
) -> dict[str, Any]:
    """What the learned policy keeps that ``rival`` does not, and the other way round.

    Args:
        convs: Embedded conversations.
        learned: ``sample_id -> layers`` of the model that did not see that conversation.
        budget: Share of turns kept.
        rival: The heuristic to compare with.
    """
    import numpy as np

    from langchain_agentmem.policies import make_policy
    from langchain_agentmem.policies.features import TEXT_FEATURES
    from langchain_agentmem.policies.learned import LearnedPolicy
    from langchain_agentmem.rl.budget import capacity_for
    from langchain_agentmem.rl.env import item_features
    from langchain_agentmem.rl.evaluate import replay

    only: dict[str, list[Any]] = {"learned": [], rival: []}
    evidence_share: dict[str, list[float]] = {"learned": [], rival: []}
    redundancy: dict[str, list[float]] = {"learned": [], rival: []}
    jaccard: list[float] = []
    for conv in convs:
        item = item_features(conv)
        cap = capacity_for(budget, len(conv.turns))
        a = set(replay(LearnedPolicy(cap, layers=learned[conv.sample_id]), conv).kept.tolist())
        b = set(replay(make_policy(rival, cap), conv).kept.tolist())
        jaccard.append(len(a & b) / max(len(a | b), 1))
        evidence = {e for q in conv.questions for e in q.evidence}
        for name, mine, other in (("learned", a, b), (rival, b, a)):
            idx = sorted(mine - other)
            only[name].extend(item[i] for i in idx)
            evidence_share[name].extend(float(i in evidence) for i in idx)
            kept = np.array(sorted(mine))
            sims = conv.turn_vectors[kept] @ conv.turn_vectors[kept].T
            np.fill_diagonal(sims, -1.0)
            redundancy[name].append(float(sims.max(axis=1).mean()))
    out: dict[str, Any] = {"budget": budget, "jaccard_kept": float(np.mean(jaccard))}
    for name in only:
        feats = np.array(only[name]) if only[name] else np.zeros((1, len(TEXT_FEATURES)))
        out[f"kept_only_by_{name}"] = {
            "turns": len(only[name]),
            "share_that_is_evidence": float(np.mean(evidence_share[name]))
            if evidence_share[name]
            else 0.0,
            "mean_features": {
                n: round(float(v), 3)
                for n, v in zip(
                    TEXT_FEATURES, feats.mean(axis=0) if len(feats) else [], strict=False
                )
            },
        }
        out[f"mean_nearest_neighbour_similarity_in_memory/{name}"] = float(
            np.mean(redundancy[name])
        )
    return out


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m langchain_agentmem.rl.report")
    parser.add_argument("--data", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--ship", default=None, help="also train on all data, save here")
    parser.add_argument("--steps", type=int, default=150_000)
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--no-warm-start", action="store_true", help="PPO from the importance rule, no fit first"
    )
    parser.add_argument(
        "--extra",
        default=None,
        help="LoCoMo-format conversations added to every training fold and to --ship's "
        "training, never scored (e.g. python -m langchain_agentmem.rl.synthetic output)",
    )
    parser.add_argument(
        "--extra-share",
        type=float,
        default=None,
        help="expected share of training steps spent on --extra's conversations, in (0, 1) "
        "(default: every conversation drawn alike)",
    )
    return parser


def _protocol(args: argparse.Namespace, extra_convs: Sequence[Any]) -> str:
    """How the report's figures were made, in words."""
    warm = (
        " (PPO from the importance rule, no warm start)"
        if args.no_warm_start
        else " (its warm start, a ridge fit of the turns' evidence, is fitted on the "
        "training folds too)"
    )
    extra = ""
    if extra_convs:
        share = (
            f" ({args.extra_share:g} of its expected steps)" if args.extra_share is not None else ""
        )
        extra = (
            f"; {len(extra_convs)} extra conversations from {Path(args.extra).name} join every "
            f"training fold{share} and are never scored or used to choose a checkpoint"
        )
    return (
        f"{args.folds}-fold cross-validation: the learned policy is scored only on "
        "conversations left out of its training"
        + warm
        + extra
        + "; heuristics need no training. Items are turns ('speaker: text' + image "
        "caption), capacity = round(budget x turns), "
        "questions of categories 1-4. recall@10 and cat1-cat4 search the kept turns with "
        "AgentMemory's own hybrid search (cosine of all-MiniLM-L6-v2 and BM25 on absolute "
        "scales, thread-neighbour lift); 'dense' searches the same kept turns by cosine "
        "only. Decision latency: one decide() call, in-process, on a 2-core machine shared "
        "with other jobs."
    )


def _ship(
    args: argparse.Namespace,
    convs: Sequence[Any],
    extra_convs: Sequence[Any],
    budgets: Sequence[float],
    table: dict[Any, Any],
) -> dict[str, Any]:
    """Train on every conversation and save the policy at ``--ship``."""
    from langchain_agentmem.policies.learned import save_policy
    from langchain_agentmem.rl.train import train

    result = train(
        convs,
        budgets=budgets,
        steps=args.steps,
        seed=args.seed,
        warm_start=not args.no_warm_start,
        extra=extra_convs,
        extra_share=args.extra_share,
    )
    extra = dict(result.config)
    extra["cross_validation"] = {b: {"learned": table[b]["learned"]["recall@10"]} for b in table}
    save_policy(args.ship, result.layers, extra)
    return {"dir": str(args.ship), "train_seconds": result.config["train_seconds"]}


def _write(out: Path, report: dict[str, Any], runs: Any, table: dict[Any, Any]) -> None:
    """The report's files: JSON, markdown, learning curves and their plots."""
    write_text(out / "policy_locomo.json", json.dumps(report, indent=1) + "\n", private=False)
    write_text(
        out / "policy_locomo.md",
        f"# Memory policies on LoCoMo dev (held-out)\n\n`{report['command']}`\n\n"
        f"{report['protocol']}\n" + markdown(table),
        private=False,
    )
    write_text(
        out / "policy_learning_curves.json", json.dumps(runs, indent=1) + "\n", private=False
    )
    plot_runs(runs, out / "policy_learning_curve.png")
    plot_budgets(table, out / "policy_recall_vs_budget.png")


LATENCY_POLICIES = ("fifo", "lru", "importance", "novelty", "forgetting_curve", "learned")


def decision_latency(
    capacities: Sequence[int] = (100, 1_000, 10_000),
    policies: Sequence[str] = LATENCY_POLICIES,
    calls: int = 300,
) -> list[dict[str, Any]]:
    """p50 / p95 of one ``decide`` call on a full memory of each capacity (pure, no store).

    The state is what ``AgentMemory`` hands a policy: every record's stats (oldest first)
    and the candidate's nearest neighbours; building it is the memory's cost, not counted.
    """
    from datetime import datetime, timedelta, timezone

    import numpy as np

    from langchain_agentmem.policies import make_policy
    from langchain_agentmem.types import Candidate, MemoryState, RecordStat

    rng = np.random.default_rng(0)
    sentence = "I moved to Lisbon in May and my sister Anna visited us last weekend haha ok"
    words = sentence.split(" ")
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    out: list[dict[str, Any]] = []
    for cap in capacities:
        texts = [" ".join(rng.choice(words, size=int(rng.integers(3, 25)))) for _ in range(cap)]
        records = tuple(
            RecordStat(f"r{i}", t0 + timedelta(minutes=i), t0 + timedelta(minutes=i), text=t)
            for i, t in enumerate(texts)
        )
        for name in policies:
            policy = make_policy(name, cap)
            vec = np.zeros(384, dtype=np.float32)
            vec[0] = 1.0
            state = MemoryState("u", cap, cap, records, (("r1", 0.7), ("r2", 0.6), ("r3", 0.5)))
            times: list[float] = []
            for j in range(calls + 20):
                cand = Candidate(f"c{j}", "u", texts[j % cap] + " on 3 June", vec)
                start = time.perf_counter()
                policy.decide(cand, state)
                if j >= 20:  # the first calls fill caches
                    times.append((time.perf_counter() - start) * 1e6)
            out.append(
                {
                    "capacity": cap,
                    "policy": name,
                    "p50_us": round(float(np.percentile(times, 50)), 1),
                    "p95_us": round(float(np.percentile(times, 95)), 1),
                }
            )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run the cross-validation; write results; optionally train on everything and ship."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.extra_share is not None and not args.extra:
        parser.error("--extra-share needs --extra")

    from langchain_agentmem.rl.data import embed_conversations, load_locomo
    from langchain_agentmem.rl.train import cross_validate

    convs = embed_conversations(load_locomo(args.data))
    extra_convs = embed_conversations(load_locomo(args.extra)) if args.extra else []
    budgets = (0.1, 0.25)
    started = time.perf_counter()
    table, runs, models = cross_validate(
        convs,
        folds=args.folds,
        budgets=budgets,
        steps=args.steps,
        seed=args.seed,
        warm_start=not args.no_warm_start,
        extra=extra_convs,
        extra_share=args.extra_share,
    )
    command = "python -m langchain_agentmem.rl.report " + " ".join(
        sys.argv[1:] if argv is None else list(argv)
    )
    report: dict[str, Any] = {
        "command": command,
        "data": Path(args.data).name,
        "conversations": [c.sample_id for c in convs],
        "extra_training": [c.sample_id for c in extra_convs],
        "protocol": _protocol(args, extra_convs),
        "machine": f"{platform.machine()}, {platform.python_version()}, shared 2-core",
        "folds": [{k: v for k, v in run.items() if k != "curve"} for run in runs],
        "budget": table,
        "seconds": round(time.perf_counter() - started, 1),
        "learned_vs_importance": [compare_kept(convs, models, b) for b in budgets],
    }
    if args.ship:
        report["shipped"] = _ship(args, convs, extra_convs, budgets, table)
    _write(Path(args.out), report, runs, table)
    print(markdown(table))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
