"""#80's check before shipping ``rank-variants --adaptive``'s placement: does each variant's
per-benchmark placement from the race's draws (:func:`~primebench_tasks.adaptive.placement.race_benchmark`:
the Hansen–Hurwitz estimate, mean of y/(N·q) over the draws, its 95 % interval the bootstrap over
the draws) hold the variant's true full-benchmark score, and how does its error compare with a
uniform random sample of as many distinct items (the plain baseline, same run)?

    python research/adaptive/race_placement_coverage.py [--splits 4] [--variants 4]

Panels: ``autojudger`` (AI2D_TEST, MMMU_DEV_VAL; 169 models), ``m3irt`` (MathVista_MINI,
MMMU_DEV_VAL; 24 models). Per split and benchmark, ``--variants`` models held out at random race
one another (:func:`~primebench_tasks.adaptive.race.race_variants`, rounds of 10 draws, up to 100
items, the rest the reference panel); each is placed from the race's draws. Per panel: 95 %
coverage, MAE, bias, mean width, and the MAE of the mean over as many random items →
``results/race_placement_coverage.{csv,md}``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from primebench_tasks.adaptive.benchmark import AdaptiveBenchmark
from primebench_tasks.adaptive.placement import race_benchmark
from primebench_tasks.adaptive.race import race_variants
from primebench_tasks.data.panel import Panel
from primebench_tasks.metrics import nanmean_rows
from primebench_tasks.progress import progress_bar
from primebench_tasks.report.tables import markdown_table

RESULTS = Path(__file__).resolve().parent / "results"
PANELS = {"autojudger": ("AI2D_TEST", "MMMU_DEV_VAL"), "m3irt": ("MathVista_MINI", "MMMU_DEV_VAL")}
MAX_ITEMS, BATCH, N_BOOT = 100, 10, 1000


def run(splits: int, n_variants: int) -> pd.DataFrame:
    rows = []
    bar = progress_bar(splits * sum(len(b) for b in PANELS.values()), "races", unit="race")
    for name, benches in PANELS.items():
        panel = Panel.load_default(name)
        M = len(panel.model_names)
        for split in range(splits):
            rng = np.random.default_rng([split, M, 7])
            out = np.sort(rng.choice(M, n_variants, replace=False))
            ref = np.setdiff1d(np.arange(M), out)
            for b in benches:
                Y = panel.matrix(b).astype(float)
                keep = np.isfinite(Y[out]).all(axis=0)  # items every variant answered
                Y = Y[:, keep]
                truth = nanmean_rows(Y[out])
                bench = AdaptiveBenchmark(Y[ref], max_items=MAX_ITEMS, batch=BATCH, seed=split)
                res = race_variants(
                    [bench],
                    ["c"],
                    [f"v{v}" for v in range(n_variants)],
                    lambda picks, Yo=Y[out]: {k: Yo[:, ks] for k, ks in picks.items()},
                    max_items=MAX_ITEMS,
                    batch=BATCH,
                    seed=split,
                )
                items = res.asked[0]
                for v in range(n_variants):
                    g = race_benchmark(
                        res.draws[0],
                        source=name,
                        answers={i: float(Y[out[v], i]) for i in items},
                        reference_on_items=Y[ref][:, items],
                        reference_full=nanmean_rows(Y[ref]),
                        n_reference=len(ref),
                        n_boot=N_BOOT,
                        seed=[split, v],
                    )
                    f = g.placement.predicted_full
                    pick = np.random.default_rng([split, v, 1]).choice(
                        Y.shape[1], len(items), replace=False
                    )
                    rows.append(
                        {
                            "panel": name,
                            "benchmark": b,
                            "split": split,
                            "items": len(items),
                            "draws": len(res.draws[0]),
                            "error": f.value - truth[v],
                            "covered": bool(f.lo <= truth[v] <= f.hi),
                            "width": f.hi - f.lo,
                            "random_error": float(Y[out[v], pick].mean() - truth[v]),
                        }
                    )
                bar.update(1)
    bar.close()
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby("panel")
    return pd.DataFrame(
        {
            "placements": g.size(),
            "items": g["items"].mean().round(1),
            "cover95": g["covered"].mean().round(3),
            "mae": g["error"].apply(lambda e: e.abs().mean()).round(4),
            "bias": g["error"].mean().round(4),
            "width": g["width"].mean().round(3),
            "random_mae": g["random_error"].apply(lambda e: e.abs().mean()).round(4),
        }
    ).reset_index()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--splits", type=int, default=4)
    ap.add_argument("--variants", type=int, default=4)
    a = ap.parse_args()
    df = run(a.splits, a.variants)
    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / "race_placement_coverage.csv", index=False)
    md = markdown_table(summary(df))
    (RESULTS / "race_placement_coverage.md").write_text(md)
    print(md)
    print(
        f"wrote {RESULTS / 'race_placement_coverage.csv'}, {RESULTS / 'race_placement_coverage.md'}"
    )


if __name__ == "__main__":
    main()
