"""The released flagship's benchmarks, each on its own source panel: how well a held-out model is
placed, and whether the suite's items rank held-out models better than random items of the same
count (a benchmark, not a test).

    python benchmarks/flagship_placement.py [--splits 3] [--out benchmarks/results/flagship_placement.md]

For every flagship benchmark whose source panel holds at least 80 models (the goal's panels:
MMMU among the merged 185, BLINK 86, AI2D 169, OCRBench 188 and RealWorldQA 172 — the last two
the items their text tells apart), with the default estimator:

- placement: random hold-outs (20 %, ``--splits`` seeded splits), the strongest 15 % held out
  (``frontier``), and the newest 15 % of the dated models (``chronological``, dates from the panel
  or the shipped table, :mod:`primebench_tasks.data.model_dates`) where at least 20 are dated.
  The benchmark's suite is rebuilt on the remaining models with its placement calibration, as the
  release builds it; held-out models are placed from their recorded answers to the suite's items.
  Reported: suite items, full-score MAE, bias (predicted − true), 90 % coverage;
- ranking: per random split, Spearman ρ between the held-out models' mean on the suite's items
  and their full-benchmark score, beside the mean ρ of 20 random item sets of the same count.

The suite-level ρ over all seven benchmarks needs models with every benchmark: the table says how
many there are (none); ``benchmarks/suite_rank_imputation.py`` measures it on the five whose
scores impute.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from primebench_tasks.data.model_dates import release_dates
from primebench_tasks.data.panel import Panel
from primebench_tasks.evaluate.splits import frontier_split, newest_split
from primebench_tasks.pipeline.primebench import PipelineParams, run_pipeline
from primebench_tasks.place.benchmark import full_suite_scores, place_models
from primebench_tasks.place.calibration import calibration_entry, suite_responses
from primebench_tasks.place.defaults import DEFAULT_ESTIMATOR

MIN_MODELS = 80
MIN_DATED = 20
FLAGSHIP = Path("task_configs/suites/primebench.json")
RESULTS = Path("benchmarks/results")


def flagship_panels() -> dict[str, tuple[str, Panel]]:
    """Benchmark → (source panel name, that panel restricted to the benchmark), for the
    flagship's panels of ≥ 80 models."""
    from primebench_tasks.data.importers import panel_with_benchmarks

    m = json.loads(FLAGSHIP.read_text("utf-8"))
    out = {}
    for c in m["categories"].values():
        for b, e in c["benchmarks"].items():
            if len(e["source"]["models"]) >= MIN_MODELS:
                name = e["source"]["panel"]
                out[b] = (name, panel_with_benchmarks(Panel.load_default(name), [b]))
    return out


def splits_of(panel: Panel, protocol: str, n: int) -> list[tuple[list[str], list[str]]]:
    full = full_suite_scores(panel)
    names = panel.model_names
    if protocol == "random":
        rng = np.random.default_rng(0)
        k = max(3, round(0.2 * len(names)))
        out = []
        for _ in range(n):
            held = sorted(rng.choice(names, k, replace=False).tolist())
            out.append(([m for m in names if m not in held], held))
        return out
    if protocol == "frontier":
        _, h = frontier_split(full.reindex(names).to_numpy(float), 0.15)
        held = [names[i] for i in h]
        return [([m for m in names if m not in held], held)]
    dates = release_dates(panel)
    if len(dates) < MIN_DATED:
        return []
    table = pd.DataFrame({"model": names, "release_date": [dates.get(m) for m in names]})
    b, h = newest_split(table, 0.15)
    return [([names[i] for i in b], [names[i] for i in h])]


def evaluate(
    bench: str, source: str, panel: Panel, protocol: str, n: int, n_boot: int
) -> list[dict]:
    full = full_suite_scores(panel)
    X = panel.matrix(bench)
    rows = []
    for s, (build, held) in enumerate(splits_of(panel, protocol, n)):
        ref = panel.subset_models(build)
        params = PipelineParams(until="stage2", seed=s)
        res = run_pipeline(ref, params)
        cal = calibration_entry(ref, params, DEFAULT_ESTIMATOR, seed=s)
        manifest = res.manifest(ref, "split", cal)
        new = suite_responses(panel, manifest, held)
        r = place_models(ref, manifest, new, DEFAULT_ESTIMATOR, n_boot, seed=s)
        t = full[held].to_numpy()
        rho = rho_random = np.nan
        if protocol == "random":
            rows_h = [panel.model_names.index(m) for m in held]
            rho = spearmanr(np.nanmean(new.to_numpy(float), axis=1), t).statistic
            rng = np.random.default_rng(s)
            k = new.shape[1]
            rho_random = float(
                np.mean(
                    [
                        spearmanr(
                            np.nanmean(X[rows_h][:, rng.choice(X.shape[1], k, replace=False)], 1),
                            t,
                        ).statistic
                        for _ in range(20)
                    ]
                )
            )
        for j in range(len(held)):
            row = r.iloc[j]
            rows.append(
                {
                    "benchmark": bench,
                    "panel": source,
                    "models": len(panel.model_names),
                    "protocol": protocol,
                    "split": s,
                    "held": len(held),
                    "items": int(row.n_items),
                    "share": row.n_items / X.shape[1],
                    "error": row.predicted_full - t[j],
                    "cover90": row.predicted_full_lo90 <= t[j] <= row.predicted_full_hi90,
                    "rho": rho,
                    "rho_random": rho_random,
                }
            )
    return rows


def table(df: pd.DataFrame, n_all: int) -> str:
    lines = [
        "| benchmark (panel, models) | protocol | held out × splits | suite items (share) | "
        "full-score MAE | bias | 90 % covers | ρ held out: suite · random items |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (b, proto), d in df.groupby(["benchmark", "protocol"], sort=False):
        mae, bias, cov = d.error.abs().mean(), d.error.mean(), 100 * d.cover90.mean()
        ok = mae <= 0.025 and abs(bias) <= 0.01 and 85 <= cov <= 95
        mark = (lambda v: f"**{v}**") if ok else (lambda v: v)
        rho = (
            f"{d.groupby('split').rho.first().mean():.3f} · "
            f"{d.groupby('split').rho_random.first().mean():.3f}"
            if proto == "random"
            else "—"
        )
        lines.append(
            f"| {b} ({d.panel.iloc[0]}, {d.models.iloc[0]}) | {proto} | {d.held.iloc[0]} × "
            f"{d.split.nunique()} | {d['items'].mean():.0f} ({100 * d.share.mean():.0f} %) | "
            f"{mark(f'{mae:.3f}')} | {mark(f'{bias:+.3f}')} | {mark(f'{cov:.0f} %')} | {rho} |"
        )
    lines += [
        "",
        f"Goal per cell: MAE ≤ 0.025, |bias| ≤ 0.01, 90 % coverage 85–95 % (bold: all three met). "
        f"Models with all seven flagship benchmarks: {n_all} (MathVista's and MATH-Vision's "
        "panels share no model with the others): the suite rank and suite-level ρ are measured "
        "on the five benchmarks whose scores impute (`benchmarks/suite_rank_imputation.py`).",
    ]
    return "\n".join(lines) + "\n"


def models_with_every_benchmark() -> int:
    m = json.loads(FLAGSHIP.read_text("utf-8"))
    sets = [
        set(e["source"]["models"])
        for c in m["categories"].values()
        for e in c["benchmarks"].values()
    ]
    return len(set.intersection(*sets))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=3)
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--out", default=str(RESULTS / "flagship_placement.md"))
    args = ap.parse_args()
    t0 = time.time()
    rows: list[dict] = []
    for b, (source, panel) in flagship_panels().items():
        for proto in ("random", "frontier", "chronological"):
            rows += evaluate(b, source, panel, proto, args.splits, args.n_boot)
            print(f"{b} {proto}: {time.time() - t0:.0f} s", flush=True)
    df = pd.DataFrame(rows)
    out = Path(args.out)
    df.to_csv(out.with_suffix(".csv"), index=False, float_format="%.6f")
    text = table(df, models_with_every_benchmark())
    out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
