"""The recall results of ``agentmem bench locomo`` as a plain-text table and a plot."""

from __future__ import annotations

from typing import Any

from langchain_agentmem.errors import missing_extra
from langchain_agentmem.files import write_figure


def _cell(scores: dict[str, Any], key: str, width: int) -> str:
    """A figure of the table, or ``n/a`` where no question was asked (a category the data
    leaves out)."""
    value = scores.get(key)
    return f"{value:>{width}.3f}" if isinstance(value, float | int) else f"{'n/a':>{width}}"


def format_summary(result: dict[str, Any]) -> str:
    """Recall table (overall and per category) and timing ratios as plain text; ``n/a``
    for a category without questions."""
    ks = result["ks"]
    k = 10 if 10 in ks else ks[-1]
    cats = list(next(iter(result["retrieval"].values()))["categories"])
    head = f"{'method':<20}" + "".join(f"{'R@' + str(x):>8}" for x in ks)
    head += "".join(f"{c[:11]:>12}" for c in cats) + f"{'hit@' + str(k):>8}"
    lines = [f"evidence recall@k; per category: recall@{k}", head]
    for method, r in result["retrieval"].items():
        row = f"{method:<20}" + "".join(_cell(r, f"recall@{x}", 8) for x in ks)
        row += "".join(_cell(r["categories"][c], f"recall@{k}", 12) for c in cats)
        lines.append(row + _cell(r, f"hit@{k}", 8))
    t = result["timing"]
    lines += [
        "",
        f"add p50 {t['add_p50_ms']:.1f} ms, p95 {t['add_p95_ms']:.1f} ms; bare embedding p50 "
        f"{t['bare_embed_p50_ms']:.1f} ms -> add/bare {t['add_p50_over_bare_embed_p50']:.2f}x",
        f"ingest {t['ingest_turns_per_s']} turns/s (bare embedding {t['bare_embed_turns_per_s']}"
        " turns/s)",
        f"bare query embedding + bare faiss: p50 {t['bare_embed_plus_faiss_p50_ms']:.1f} ms, "
        f"p95 {t['bare_embed_plus_faiss_p95_ms']:.1f} ms",
    ]
    for mode, s in t["search"].items():
        lines.append(
            f"search {mode:<8} p50 {s['p50_ms']:.1f} ms ({s['p50_over_bare']:.2f}x), "
            f"p95 {s['p95_ms']:.1f} ms ({s['p95_over_bare']:.2f}x)"
        )
    return "\n".join(lines)


METHOD_NAMES = {
    "agentmem-hybrid": "agentmem hybrid (default)",
    "agentmem-dense": "agentmem dense",
    "agentmem-lexical": "agentmem lexical",
    "seed-faiss-l2": "plain faiss (plain RAG)",
    "bm25-plain": "plain bm25s",
    "rrf-dense-bm25": "reciprocal-rank fusion of the two",
    "window-50": "last 50 turns (a window)",
}
"""How the plot (and the benchmarks page's table) names each method of the results."""


def curves(result: dict[str, Any]) -> list[tuple[str, list[float]]]:
    """Each method's recall@k curve with its name; methods whose curves are the same are
    one curve named ``a = b`` (so no line hides another)."""
    ks = result["ks"]
    named: dict[tuple[float, ...], list[str]] = {}
    for method, r in result["retrieval"].items():
        points = tuple(r.get(f"recall@{k}", float("nan")) for k in ks)
        named.setdefault(points, []).append(METHOD_NAMES.get(method, method))
    return [(" = ".join(names), list(points)) for points, names in named.items()]


def plot_recall(result: dict[str, Any], path: str) -> None:
    """Recall@k curves of every method, to a PNG (:func:`curves`)."""
    try:
        import matplotlib
    except ModuleNotFoundError as exc:  # the rl extra brings it
        raise missing_extra("rl", "A plot (--plot)", exc) from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = result["ks"]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for name, points in curves(result):
        ax.plot(ks, points, marker="o", label=name)
    ax.set_xlabel("k")
    ax.set_ylabel("evidence recall@k")
    ax.set_title("LoCoMo, categories 1-4")
    ax.set_xticks(ks)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside, not over
    fig.tight_layout()
    write_figure(fig, path, dpi=120)
    plt.close(fig)
