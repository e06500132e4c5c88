"""The README's one figure: placement accuracy of the default estimator on the real panels, from
the committed ``benchmarks/results/placement_accuracy.csv`` (``benchmarks/placement_accuracy.py``).

    python tools/readme_figure.py [OUT.png]     # default docs/img/placement_accuracy.png

Left: mean absolute error of the predicted full score per panel and hold-out (random,
frontier = the strongest 15 % held out, chronological = the newest); right: how often the 90 %
interval covered the truth, with the nominal 90 % marked. A test re-renders it and compares the
pixels.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CSV = ROOT / "benchmarks" / "results" / "placement_accuracy.csv"
OUT = ROOT / "docs" / "img" / "placement_accuracy.png"
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

    from primebench_tasks.evaluate.defaults import DEFAULT_ESTIMATOR

    d = pd.read_csv(CSV)
    d = d[d["panel"].isin(PANELS) & (d["estimator"] == DEFAULT_ESTIMATOR)]
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


if __name__ == "__main__":
    print(render(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
