"""How well the placement predicts a new model's full-suite score and rank, and whether its
intervals deserve trust (a benchmark on real and simulated data, not a test).

    python benchmarks/placement_accuracy.py [--splits 5] [--out benchmarks/results/placement_accuracy.md]

For every embedded real panel with at least 15 models (AutoJudger, M3IRT, BLINK, MATH-Vision) and
for simulated panels: per split, hold out 20 % of the models (at least 3), build the default
PRIMEBench suite on the others, place the held-out models from their real responses to the suite
items, and compare with their true full-suite score and rank among the reference models. Reports,
per panel and estimator: the suite's items (share of the panel's), the mean absolute error of the
predicted full-suite score and of the predicted rank, and the empirical coverage of the nominal
90 % and 95 % intervals (conformal, from the build's calibration with the selection inside the
cross-validation: ``primebench_tasks.evaluate.calibration``). Writes the
markdown table that the README shows (a test checks that they agree).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from primebench_tasks.data.panel import Panel
from primebench_tasks.data.simulate import simulate_panel
from primebench_tasks.evaluate.calibration import calibration_entry, suite_responses
from primebench_tasks.evaluate.placement import full_suite_scores, place_models
from primebench_tasks.pipeline.primebench import PipelineParams, run_pipeline

REAL = ("autojudger", "m3irt", "blink", "mathvision")
ESTIMATORS = ("aipw", "gpirt", "mean")


def evaluate_panel(name: str, panel: Panel, splits: int, n_boot: int) -> list[dict]:
    full = full_suite_scores(panel)
    models = [m for m in panel.model_names if np.isfinite(full[m])]
    n_held = max(3, round(0.2 * len(models)))
    rng = np.random.default_rng(0)
    n_total = sum(panel.matrix(b).shape[1] for b in panel.benchmark_names)
    out = []
    for s in range(splits):
        held = sorted(rng.choice(models, n_held, replace=False).tolist())
        ref = panel.subset_models([m for m in panel.model_names if m not in held])
        params = PipelineParams(seed=s)
        # the build's calibration: suites rebuilt without a tenth of the reference models
        manifest = run_pipeline(ref, params).manifest(
            ref, "split", calibration_entry(ref, params, seed=s)
        )
        new = suite_responses(panel, manifest, held)
        ref_full = full_suite_scores(ref).to_numpy()
        t = full[held].to_numpy()
        true_rank = np.array([1 + int((ref_full > x).sum()) for x in t])
        for est in ESTIMATORS:
            r = place_models(ref, manifest, new, est, n_boot, seed=s)
            for j in range(len(held)):
                row = r.iloc[j]
                out.append(
                    {
                        "panel": name,
                        "models": len(models),
                        "held": n_held,
                        "items": int(row.n_items),
                        "share": row.n_items / n_total,
                        "estimator": est,
                        "split": s,
                        "err": abs(row.predicted_full - t[j]),
                        "rank_err": abs(row.predicted_rank - true_rank[j]),
                        "cover95": row.predicted_full_lo <= t[j] <= row.predicted_full_hi,
                        "cover90": row.predicted_full_lo90 <= t[j] <= row.predicted_full_hi90,
                        "rank_cover95": row.predicted_rank_lo
                        <= true_rank[j]
                        <= row.predicted_rank_hi,
                    }
                )
    return out


def table(rows: list[dict], splits: int) -> str:
    df = pd.DataFrame(rows)
    g = df.groupby(["panel", "estimator"], sort=False)
    lines = [
        "| panel (models) | held out × splits | suite items (share) | estimator | "
        "full-score MAE | rank MAE | 90 % covers | 95 % covers | rank 95 % covers |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (panel, est), d in g:
        lines.append(
            f"| {panel} ({d.models.iloc[0]}) | {d.held.iloc[0]} × {splits} | "
            f"{d['items'].mean():.0f} ({100 * d.share.mean():.0f} %) | "
            f"{est}{' (default)' if est == 'aipw' else ''} | {d.err.mean():.3f} | "
            f"{d.rank_err.mean():.1f} | {100 * d.cover90.mean():.0f} % | "
            f"{100 * d.cover95.mean():.0f} % | {100 * d.rank_cover95.mean():.0f} % |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--n-boot", type=int, default=100)
    ap.add_argument("--out", default="benchmarks/results/placement_accuracy.md")
    args = ap.parse_args()
    rows: list[dict] = []
    panels = [(n, Panel.load_default(n)) for n in REAL]
    panels += [
        (f"simulated-{m}", simulate_panel(scale=0.004, n_models=m, seed=7)) for m in (40, 150)
    ]
    for name, panel in panels:
        t = time.time()
        rows += evaluate_panel(name, panel, args.splits, args.n_boot)
        print(f"{name}: done in {time.time() - t:.0f} s", flush=True)
    text = table(rows, args.splits)
    print(text)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
