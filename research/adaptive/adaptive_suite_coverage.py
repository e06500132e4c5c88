"""#80's check before shipping an adaptive run's suite placement: the suite and category intervals
built from the tests' per-benchmark estimates (``adaptive.placement``: each test's interval read
as a split normal, the draws combined as the static placement combines its benchmarks') — do
their 95 % intervals hold held-out models' true suite scores, beside the static placement's?

    python research/adaptive/adaptive_suite_coverage.py [--splits 3] [--held 0.2]

Panels where one set of models answered several benchmarks: ``autojudger`` (AI2D_TEST and
MMMU_DEV_VAL, 169 models, two categories: the suite score is their mean) and ``m3irt``
(MathVista_MINI and MMMU_DEV_VAL, 24 models). Per split, ``--held`` of the models (at least 5)
held out at random; each benchmark's guarded test replayed for each held-out model
(:func:`~primebench_tasks.adaptive.replay.replay`, the runner's test) at 50 and 100 items; the
suite point the mean of the benchmarks' predictions, its 95 % interval the 2.5–97.5 percentiles
of the mean of their split-normal draws (:func:`~primebench_tasks.adaptive.placement.split_normal_draws`,
2000 draws). Per panel and item count: coverage of the true suite score (the mean of the full
benchmark means), MAE, mean width → ``results/adaptive_suite_coverage.{csv,md}``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from primebench_tasks.adaptive.defaults import ADAPTIVE_LEVEL
from primebench_tasks.adaptive.placement import split_normal_draws
from primebench_tasks.adaptive.replay import replay
from primebench_tasks.data.panel import Panel
from primebench_tasks.metrics import nanmean_rows
from primebench_tasks.progress import progress_bar
from primebench_tasks.report.tables import markdown_table

RESULTS = Path(__file__).resolve().parent / "results"
PANELS = {"autojudger": ("AI2D_TEST", "MMMU_DEV_VAL"), "m3irt": ("MathVista_MINI", "MMMU_DEV_VAL")}
CHECKPOINTS = (50, 100)
N_DRAWS = 2000


def run(splits: int, held: float) -> pd.DataFrame:
    rows = []
    bar = progress_bar(splits * sum(len(b) for b in PANELS.values()), "replays", unit="test")
    for name, benches in PANELS.items():
        panel = Panel.load_default(name)
        M = len(panel.model_names)
        for split in range(splits):
            rng = np.random.default_rng([split, M])
            out = np.sort(rng.choice(M, max(5, round(held * M)), replace=False))
            ref = np.setdiff1d(np.arange(M), out)
            per_b = {}
            for b in benches:
                Y = panel.matrix(b).astype(float)
                per_b[b] = replay(Y[ref], Y[out], CHECKPOINTS, seed=split, design="item_model")
                bar.update(1)
            truth = np.mean([nanmean_rows(panel.matrix(b).astype(float)[out]) for b in benches], 0)
            for j, c in enumerate(CHECKPOINTS):
                for v in range(len(out)):
                    parts = [
                        (per_b[b]["predicted"][v, j], per_b[b]["lo"][v, j], per_b[b]["hi"][v, j])
                        for b in benches
                    ]
                    if not all(np.isfinite(x).all() for x in parts):
                        continue
                    draw_rng = np.random.default_rng([split, v, c])
                    draws = np.mean(
                        [split_normal_draws(p, lo, hi, ADAPTIVE_LEVEL, draw_rng, N_DRAWS)
                         for p, lo, hi in parts],
                        axis=0,
                    )  # fmt: skip
                    point = float(np.mean([p for p, _, _ in parts]))
                    lo95, hi95 = np.percentile(draws, [2.5, 97.5])
                    lo95, hi95 = min(lo95, point), max(hi95, point)
                    rows.append(
                        {
                            "panel": name,
                            "items": c,
                            "split": split,
                            "error": point - truth[v],
                            "covered": bool(lo95 <= truth[v] <= hi95),
                            "width": hi95 - lo95,
                        }
                    )
    bar.close()
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby(["panel", "items"])
    return pd.DataFrame(
        {
            "held-out tests": g.size(),
            "MAE": g["error"].apply(lambda e: float(np.abs(e).mean())),
            "bias": g["error"].mean(),
            "95 % covers": g["covered"].mean(),
            "mean width": g["width"].mean(),
        }
    ).reset_index()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--splits", type=int, default=3)
    ap.add_argument("--held", type=float, default=0.2)
    args = ap.parse_args()
    df = run(args.splits, args.held)
    RESULTS.mkdir(parents=True, exist_ok=True)
    df.to_csv(RESULTS / "adaptive_suite_coverage.csv", index=False)
    table = summary(df).round(3)
    (RESULTS / "adaptive_suite_coverage.md").write_text(
        "# Suite intervals from adaptive per-benchmark estimates\n\n"
        f"`python research/adaptive/adaptive_suite_coverage.py --splits {args.splits} --held "
        f"{args.held}`\n\n" + markdown_table(table),
        encoding="utf-8",
    )
    print(markdown_table(table))
    print(f"wrote {RESULTS / 'adaptive_suite_coverage.csv'}, adaptive_suite_coverage.md")


if __name__ == "__main__":
    main()
