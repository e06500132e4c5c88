"""The README's figures, drawn from committed results only; a test re-renders each and compares
the pixels.

    python tools/readme_figure.py [OUT.png]     # default docs/img/placement_accuracy.png
    python tools/readme_figure.py --adaptive [OUT.png]   # default docs/img/adaptive_replay.png

Placement accuracy (:func:`render`) of the shipped default (the probability design and the
model-assisted estimate) on the flagship's benchmarks, from
``benchmarks/results/default_accuracy.csv`` (``benchmarks/placement_design.py``). Left: mean
absolute error of the predicted full score at 100 items per benchmark, per hold-out (random,
frontier = the strongest 15 % held out, chronological = the newest, gap = models clearly above
every build model); right: how often the 95 % interval — the level reports show — held the true
score, with the nominal 95 % marked.

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
CSV = ROOT / "benchmarks" / "results" / "default_accuracy.csv"
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
BENCHMARKS = [
    ("mmmu_merged", "MMMU_DEV_VAL"),
    ("autojudger", "AI2D_TEST"),
    ("openvlm_ocrbench_text", "OCRBench"),
    ("openvlm_realworldqa_text", "RealWorldQA"),
    ("openvlm_blink", "BLINK"),
    ("m3irt", "MathVista_MINI"),
    ("mathvision", "MATH-Vision_MINI"),
]
"""The released flagship's seven benchmarks, each on the panel it is placed among."""
PROTOCOLS = ["random", "frontier", "chronological", "gap"]
COLORS = {
    "random": "#4C72B0",
    "frontier": "#DD8452",
    "chronological": "#55A868",
    "gap": "#C44E52",
}
ITEMS = 100
"""The flagship's items per benchmark."""


def render(out: Path = OUT) -> Path:
    """The shipped default (probability design + model-assisted estimate) at the flagship's 100
    items per benchmark: per benchmark and hold-out, the MAE of the predicted full score and how
    often the 95 % interval (what reports show) held the true score."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    d = pd.read_csv(CSV)
    d = d[(d["k"] == ITEMS) & (d["selector"] == "stratified") & (d["estimator"] == "greg")]
    g = d.groupby(["panel", "benchmark", "protocol"]).agg(
        mae=("mae", "mean"), cover=("cover95", "mean"), n=("n_held", "first")
    )
    plt.rcParams.update({"font.size": 9, "svg.hashsalt": "primebench"})
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 4.2), dpi=100, sharey=True)
    y = np.arange(len(BENCHMARKS))
    h = 0.2
    for k, proto in enumerate(PROTOCOLS):
        for i, key in enumerate(BENCHMARKS):
            if (*key, proto) not in g.index:
                continue
            r = g.loc[(*key, proto)]
            yy = y[i] + (k - 1.5) * h
            label = proto if i == 0 else None
            axes[0].barh(yy, r["mae"], h, color=COLORS[proto], label=label)
            axes[1].plot(100 * r["cover"], yy, "o", color=COLORS[proto], markersize=4)
            axes[1].text(100 * r["cover"] + 0.6, yy, f"n={int(r['n'])}", va="center", fontsize=6)
    axes[0].set_yticks(y, [f"{b} ({p})" for p, b in BENCHMARKS])
    axes[0].invert_yaxis()
    axes[0].set_xlabel(f"MAE of the predicted full score ({ITEMS} items)")
    axes[1].set_xlabel("95 % interval holds the true score (%)")
    axes[1].axvline(95, color="black", linestyle="--", linewidth=1)
    axes[1].set_xlim(80, 102)
    axes[1].grid(axis="x", alpha=0.3)
    fig.legend(loc="upper right", ncol=4, frameon=False, title=None, bbox_to_anchor=(0.99, 0.92))
    fig.suptitle(
        "The shipped default (drawn items + model-assisted estimate) on held-out models; "
        "n = models held out, 20 draws each",
        fontsize=9,
        x=0.01,
        ha="left",
    )
    fig.tight_layout(rect=(0, 0, 1, 0.86))
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
