"""The README's figures, drawn from committed results only; a test re-renders each and compares
the pixels.

    python tools/readme_figure.py [OUT.png]     # default docs/img/placement_accuracy.png
    python tools/readme_figure.py --adaptive [OUT.png]   # default docs/img/adaptive_replay.png

Placement accuracy (:func:`render`) of the default estimator on the real panels, from
``benchmarks/results/placement_accuracy.csv`` (``benchmarks/placement_accuracy.py``). Left: mean
absolute error of the predicted full score per panel and hold-out (random, frontier = the
strongest 15 % held out, chronological = the newest); right: how often the 90 % interval covered
the truth, with the nominal 90 % marked.

Adaptive evaluation against the static suite (:func:`render_adaptive`), from
``benchmarks/results/adaptive_items_needed.csv`` (``benchmarks/adaptive_items_needed.py``: the
adaptive test's MAE after every round count, per hold-out) and
``benchmarks/results/adaptive_replay.csv`` (``benchmarks/adaptive_replay.py``: the static default
suite's errors at 25 / 50 / 100 items): per panel and hold-out, the full-score MAE against the
items asked per benchmark, pooled over the random splits' held-out models; the static suite's MAE
at its sizes, and the issue's goal, 0.7 × the static MAE at 50 and 100 items.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CSV = ROOT / "benchmarks" / "results" / "placement_accuracy.csv"
OUT = ROOT / "docs" / "img" / "placement_accuracy.png"
RESULTS = ROOT / "benchmarks" / "results"
ADAPTIVE_OUT = ROOT / "docs" / "img" / "adaptive_replay.png"
ADAPTIVE_PANELS = [
    "autojudger MMMU_DEV_VAL",
    "autojudger AI2D_TEST",
    "OCRBench records (held out)",
    "RealWorldQA records (held out)",
    "BLINK records (held out)",
]
PANELS = [
    "autojudger",
    "OCRBench records (held out)",
    "RealWorldQA records (held out)",
    "BLINK records (held out)",
]
PROTOCOLS = ["random", "frontier", "chronological"]
COLORS = {"random": "#4C72B0", "frontier": "#DD8452", "chronological": "#55A868"}


def render(out: Path = OUT) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    d = pd.read_csv(CSV)
    # the previous default's figures (chosen items + p-IRT: benchmarks/placement_accuracy.py's
    # CHOSEN_ITEMS_ESTIMATOR), as the README's caption says
    d = d[d["panel"].isin(PANELS) & (d["estimator"] == "pirt")]
    g = d.groupby(["panel", "protocol"]).agg(
        mae=("error", lambda e: float(np.abs(e).mean())),
        cover=("cover90", "mean"),
        n=("error", "size"),
        models=("models", "first"),
    )
    plt.rcParams.update({"font.size": 9, "svg.hashsalt": "primebench"})
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.4), dpi=100, sharey=True)
    y = np.arange(len(PANELS))
    h = 0.26
    for k, proto in enumerate(PROTOCOLS):
        for i, panel in enumerate(PANELS):
            if (panel, proto) not in g.index:
                continue
            r = g.loc[(panel, proto)]
            yy = y[i] + (k - 1) * h
            label = proto if i == 0 else None
            axes[0].barh(yy, r["mae"], h, color=COLORS[proto], label=label)
            axes[1].barh(yy, 100 * r["cover"], h, color=COLORS[proto])
            axes[1].text(100 * r["cover"] + 1, yy, f"n={int(r['n'])}", va="center", fontsize=7)
    names = [f"{p.replace(' (held out)', '*')} ({int(g.loc[p]['models'].iloc[0])})" for p in PANELS]
    axes[0].set_yticks(y, names)
    axes[0].invert_yaxis()
    axes[0].set_xlabel("MAE of the predicted full score")
    axes[1].set_xlabel("90 % interval covers the truth (%)")
    axes[1].axvline(90, color="black", linestyle="--", linewidth=1)
    axes[1].set_xlim(0, 115)
    fig.legend(loc="upper right", ncol=3, frameon=False, title=None, bbox_to_anchor=(0.99, 0.93))
    fig.suptitle(
        "Held-out models placed by the default suite and estimator "
        "(* = panel used to choose nothing)",
        fontsize=9,
        x=0.01,
        ha="left",
    )
    fig.tight_layout(rect=(0, 0, 1, 0.88))
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, metadata={"Software": None})
    plt.close(fig)
    return out


def adaptive_curves() -> dict[tuple[str, str], tuple[dict[int, float], dict[int, float]]]:
    """(adaptive, static) MAE per (panel, protocol): ``adaptive`` {items: MAE} pooled over the
    hold-outs' held-out models (each split's MAE weighted by its held-out count — the replay's
    MAE at 25 / 50 / 100 items), ``static`` {items: MAE} at 25 / 50 / 100 items and at the static
    suite's own size."""
    import pandas as pd

    need = pd.read_csv(RESULTS / "adaptive_items_needed.csv")
    rep = pd.read_csv(RESULTS / "adaptive_replay.csv")
    held = rep.groupby(["benchmark", "protocol", "split", "items"]).size()
    out = {}
    for (panel, protocol), d in need.groupby(["benchmark", "protocol"], sort=False):
        total: dict[int, float] = {}
        count: dict[int, int] = {}
        for r in d.itertuples():
            v = int(held[(panel, protocol, r.split, 25)])
            for pair in str(r.curve).split(";"):
                k, mae = pair.split(":")
                total[int(k)] = total.get(int(k), 0.0) + float(mae) * v
                count[int(k)] = count.get(int(k), 0) + v
        adaptive = {k: total[k] / count[k] for k in sorted(total)}
        e = rep[(rep.benchmark == panel) & (rep.protocol == protocol)]
        static = {int(k): float(x) for k, x in e.groupby("items").static_err.mean().items()}
        size = int(d.static_items.iloc[0])
        if size not in static:  # the suite's own size: every split's held-out models, pooled
            w = [int(held[(panel, protocol, s, 25)]) for s in d.split]
            static[size] = float((d.static_mae * w).sum() / sum(w))
        out[(panel, protocol)] = (adaptive, dict(sorted(static.items())))
    return out


def render_adaptive(out: Path = ADAPTIVE_OUT) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import adaptive_replay as replay  # the goal: ≤ GOAL_RATIO × static at GOAL_ITEMS items

    curves = adaptive_curves()
    models = pd.read_csv(RESULTS / "adaptive_replay.csv").groupby("benchmark").models.first()
    plt.rcParams.update({"font.size": 8, "svg.hashsalt": "primebench"})
    fig, axes = plt.subplots(2, len(ADAPTIVE_PANELS), figsize=(11.0, 4.8), dpi=100, sharex=True)
    for j, panel in enumerate(ADAPTIVE_PANELS):
        for i, protocol in enumerate(("random", "frontier")):
            ax = axes[i, j]
            adaptive, static = curves[(panel, protocol)]
            first = i == 0 and j == 0
            ax.plot(
                list(adaptive),
                list(adaptive.values()),
                color=COLORS["random"],
                marker=".",
                markersize=3,
                label="adaptive (the library's default policy)" if first else None,
            )
            ax.plot(
                list(static),
                list(static.values()),
                color="black",
                marker="s",
                markersize=3,
                linestyle=":",
                label="static default suite, same items per benchmark" if first else None,
            )
            # the goal is set for the panels with ≥ 100 models (BLINK's records have 86)
            goal = [
                k for k in replay.GOAL_ITEMS if k in static and models[panel] >= replay.GOAL_MODELS
            ]
            ax.scatter(
                goal,
                [replay.GOAL_RATIO * static[k] for k in goal],
                marker="_",
                s=120,
                color=COLORS["frontier"],
                label=f"goal: {replay.GOAL_RATIO:g} × static (panels of ≥ {replay.GOAL_MODELS} models)"
                if first
                else None,
                zorder=3,
            )
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3, linewidth=0.5)
            if i == 0:
                name = panel.replace(" (held out)", "").replace("autojudger ", "")
                ax.set_title(f"{name} ({int(models[panel])} models)", fontsize=8)
            else:
                ax.set_xlabel("items asked per benchmark")
            if j == 0:
                ax.set_ylabel(f"{protocol}: full-score MAE")
    fig.suptitle(
        "Adaptive evaluation replayed: held-out models' full-score MAE against the items asked "
        "(random: 20 % held out, 10 splits pooled; frontier: the strongest 15 % held out)",
        fontsize=8,
        x=0.01,
        y=0.99,
        ha="left",
    )
    fig.legend(loc="upper left", ncol=3, frameon=False, bbox_to_anchor=(0.0, 0.955))
    fig.tight_layout(rect=(0, 0, 1, 0.9))
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, metadata={"Software": None})
    plt.close(fig)
    return out


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--adaptive"]:
        print(render_adaptive(Path(args[1]) if len(args) > 1 else ADAPTIVE_OUT))
    else:
        print(render(Path(args[0]) if args else OUT))
