"""``agentmem train``: learn a memory policy from your own conversations."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from langchain_agentmem.cli.args import add_command, positive_int
from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.rl.budget import parse_budgets


def run_train(args: argparse.Namespace) -> int:
    """Train, validate on held-out conversations, write the policy and its learning curve."""
    from langchain_agentmem.rl.data import embed_conversations, load_locomo
    from langchain_agentmem.rl.train import check_extra_share, score_layers, train, write_result

    budgets = parse_budgets(args.budget)
    if args.steps < 1:
        raise InvalidInputError(f"--steps must be >= 1, got {args.steps}")
    if args.extra_share is not None and not args.extra:
        raise InvalidInputError(
            "--extra-share is the share of training on --extra's conversations; pass --extra "
            "FILE too, or leave --extra-share out"
        )
    if args.extra_share is not None:  # before anything is embedded
        check_extra_share(args.extra_share)
    convs = [c for c in load_locomo(args.data) if c.questions]
    if not convs:
        raise InvalidInputError(f"{args.data!r} holds no conversation with answerable questions")
    holdout = max(0, min(args.holdout, len(convs) - 1))
    train_convs, val_convs = convs[: len(convs) - holdout], convs[len(convs) - holdout :]
    extra = [c for c in load_locomo(args.extra) if c.questions] if args.extra else []
    shared = {c.sample_id for c in convs} & {c.sample_id for c in extra}
    if shared:
        raise InvalidInputError(
            f"conversations {sorted(shared)} are in both --data and --extra; pass each once"
        )
    print(
        f"embedding {len(convs) + len(extra)} conversation(s) (cached under "
        "$AGENTMEM_HOME/cache)...",
        file=sys.stderr,
    )
    embed_conversations([*convs, *extra])
    result = train(
        train_convs,
        val_convs=val_convs,
        budgets=budgets,
        steps=args.steps,
        seed=args.seed,
        progress=not args.no_progress,
        tensorboard=args.tensorboard,
        eval_every=max(args.steps // 10, 2048),
        warm_start=not args.no_warm_start,
        extra=extra,
        extra_share=args.extra_share,
    )
    summary: dict[str, Any] = {"trained_on": result.config["trained_on"]}
    if val_convs:
        summary["held_out"] = [c.sample_id for c in val_convs]
        summary["held_out_recall@10"] = score_layers(result.layers, val_convs, budgets)
        result.config.update(summary)
    else:
        print("warning: one conversation only; nothing held out to validate on", file=sys.stderr)
    files = write_result(result, args.out, f"PPO memory policy, budgets {args.budget}")
    summary["files"] = files
    summary["train_seconds"] = result.config["train_seconds"]
    print(json.dumps(summary, indent=2))
    print(
        f"use it with AgentMemory(policy=LearnedPolicy(capacity, path={args.out!r}))",
        file=sys.stderr,
    )
    return 0


def add_parsers(sub: Any) -> None:
    """Register ``agentmem train`` on the main parser's subcommands."""
    p = add_command(
        sub,
        "train",
        help="train the memory policy (PPO) on conversations in the LoCoMo format",
        description=(
            "Train a retain/forget policy on your conversations (LoCoMo JSON format). The "
            "last --holdout conversations are kept out of training and score the policy."
        ),
        examples=[
            "agentmem train --data convs.json --out my-policy",
            "agentmem train --data convs.json --budget 0.1 --steps 150000 --out my-policy",
        ],
    )
    p.add_argument("--data", required=True, help="LoCoMo-format JSON file of conversations")
    p.add_argument("--out", required=True, help="folder for policy.npz, policy.json, the curve")
    p.add_argument("--budget", default="0.1", help="share(s) of turns kept, e.g. 0.1 or 0.1,0.25")
    p.add_argument(
        "--steps", type=positive_int, default=200_000, help="environment steps of training"
    )
    p.add_argument("--seed", type=int, default=0, help="random seed")
    p.add_argument("--holdout", type=int, default=1, help="conversations held out to validate")
    p.add_argument("--tensorboard", default=None, help="folder for TensorBoard logs")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--no-warm-start",
        action="store_true",
        help="start PPO from the importance rule, not from a supervised fit of the evidence",
    )
    p.add_argument(
        "--extra",
        default=None,
        help="more LoCoMo-format conversations to learn from (synthetic fact-change ones, "
        "say: python -m langchain_agentmem.rl.synthetic --write F); never held out or used "
        "to choose the checkpoint",
    )
    p.add_argument(
        "--extra-share",
        type=float,
        default=None,
        help="expected share of training steps on --extra's conversations, in (0, 1) "
        "(default: every conversation drawn alike)",
    )
    p.set_defaults(func=run_train)
