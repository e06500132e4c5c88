"""How well the placement predicts a new model's full-suite score and rank, and whether its
intervals deserve trust — for models like the reference ones and for models beyond them (a
benchmark on real and simulated data, not a test).

    python benchmarks/placement_accuracy.py [--splits 5] [--out benchmarks/results/placement_accuracy.md]

Hold-out protocols (``primebench_tasks.evaluate.splits``):

- ``random``: per split, a seeded random 20 % of the models (at least 3) is held out — on every
  embedded real panel with at least 15 models (AutoJudger, M3IRT, BLINK, MATH-Vision) and on two
  simulated panels;
- ``frontier``: the strongest 15 % by full-suite score is held out (a new model stronger than
  every reference model), and ``chronological``: the newest 15 % of the dated models, built on
  the dated models released before them — on every panel with at least 40 models (AutoJudger: 76
  models with release dates; the simulated panels, where ability grows with release date).

The previous default PRIMEBench suite (chosen items: ``CHOSEN_ITEMS``) is built on the remaining
models with its placement calibration
(``primebench_tasks.place.calibration``: random folds and nested frontier folds, the selection
redone in each), and the held-out models are placed from their real responses to the suite items.
Reported per panel, protocol and estimator: suite items, full-score MAE and bias (predicted −
true), rank MAE, coverage of the 90 % and 95 % intervals and their mean width. ``pirt`` and
``aipw`` get their own build calibration; ``gpirt`` and ``mean`` fall back to cross-fitted
residuals on the fixed suite (their intervals are not comparable).

The default estimator is chosen on all hold-outs together: in every (panel, protocol) cell of the
panels with ≥ 40 models each estimator's MAE is divided by the cell's best; the estimator with the
lowest mean ratio is the choice. Leave-one-panel-out: the choice made without a panel, and its
MAE on that panel. Writes the markdown (docs/results.md, checked by a test) and the rows as CSV.

Panels never used to choose anything: VLMEvalKit's published records of BLINK (86 models),
OCRBench (188) and RealWorldQA (172) — the embedded ``openvlm_blink``, ``openvlm_ocrbench`` and
``openvlm_realworldqa`` panels (imported with ``primebench ingest vlmeval-records``; the same
content hashes as the import of the shared records these rows were first measured on) — random and
frontier hold-outs, and chronological ones on the models the OpenVLM leaderboard dates (its
release dates joined on the VLMEvalKit model id: 30, 55 and 54 models), marked "held out" in
the table and left out of the choice.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from primebench_tasks.data.panel import Panel
from primebench_tasks.data.simulate import simulate_panel
from primebench_tasks.evaluate.splits import frontier_split, newest_split
from primebench_tasks.pipeline.primebench import PipelineParams, run_pipeline
from primebench_tasks.place.benchmark import full_suite_scores, place_models
from primebench_tasks.place.calibration import calibration_entry, suite_responses

REAL = ("autojudger", "m3irt", "blink", "mathvision")
CHOSEN_ITEMS = {"selector": "cross_validated", "top_share": 0.25}
"""The suite this measures: the previous default, items *chosen* by the cross-validated selector
with a quarter reserved for the strongest models' items. Suites are now drawn by a probability
design (``research/placement/design_comparison.py``, docs/results.md "Never worse than a random
sample"); these figures stay as the previous default's, beside the new ones."""
CHOSEN_ITEMS_ESTIMATOR = "pirt"
"""The estimator this measurement chose for suites of chosen items (the default before the
probability design; the table marks it)."""
ESTIMATORS = ("pirt", "aipw", "gpirt", "mean")
CALIBRATED = ("pirt", "aipw")
MIN_MODELS_BEYOND = 40
HELD_OUT_RECORDS = ("BLINK", "OCRBench", "RealWorldQA")
RESULTS = Path("benchmarks/results")


def held_sets(
    panel: Panel, full: pd.Series, protocol: str, splits: int
) -> list[tuple[list[str], list[str]]]:
    """(build models, held-out models) per split of ``protocol``."""
    models = [m for m in panel.model_names if np.isfinite(full[m])]
    if protocol == "random":
        n_held = max(3, round(0.2 * len(models)))
        rng = np.random.default_rng(0)
        out = []
        for _ in range(splits):
            held = sorted(rng.choice(models, n_held, replace=False).tolist())
            out.append(([m for m in panel.model_names if m not in held], held))
        return out
    if protocol == "frontier":
        _, h = frontier_split(full.reindex(panel.model_names).to_numpy(float), 0.15)
        held = [panel.model_names[i] for i in h]
        return [([m for m in panel.model_names if m not in held], held)]
    b, h = newest_split(panel.model_table, 0.15)
    names = panel.model_table["model"].astype(str).tolist()
    return [([names[i] for i in b], [names[i] for i in h if np.isfinite(full[names[i]])])]


def evaluate_panel(name: str, panel: Panel, protocol: str, splits: int, n_boot: int) -> list[dict]:
    full = full_suite_scores(panel)
    n_total = sum(panel.matrix(b).shape[1] for b in panel.benchmark_names)
    out = []
    for s, (build, held) in enumerate(held_sets(panel, full, protocol, splits)):
        ref = panel.subset_models(build)
        params = PipelineParams(seed=s, **CHOSEN_ITEMS)  # type: ignore[arg-type]
        result = run_pipeline(ref, params)
        ref_full = full_suite_scores(ref).to_numpy()
        t = full[held].to_numpy()
        true_rank = np.array([1 + int((ref_full > x).sum()) for x in t])
        for est in ESTIMATORS:
            cal = calibration_entry(ref, params, est, seed=s) if est in CALIBRATED else None
            manifest = result.manifest(ref, "split", cal)
            new = suite_responses(panel, manifest, held)
            r = place_models(ref, manifest, new, est, n_boot, seed=s)
            for j in range(len(held)):
                row = r.iloc[j]
                out.append(
                    {
                        "panel": name,
                        "models": len(panel.model_names),
                        "protocol": protocol,
                        "held": len(held),
                        "build": len(build),
                        "items": int(row.n_items),
                        "share": row.n_items / n_total,
                        "estimator": est,
                        "split": s,
                        "error": row.predicted_full - t[j],
                        "rank_err": abs(row.predicted_rank - true_rank[j]),
                        "cover95": row.predicted_full_lo <= t[j] <= row.predicted_full_hi,
                        "cover90": row.predicted_full_lo90 <= t[j] <= row.predicted_full_hi90,
                        "width90": row.predicted_full_hi90 - row.predicted_full_lo90,
                        "regime": row.regime,
                        "true_above_all": bool(t[j] > np.nanmax(ref_full)),
                    }
                )
    return out


def table(df: pd.DataFrame) -> str:
    lines = [
        "| panel (models) | protocol | held out × splits | suite items (share) | estimator | "
        "full-score MAE | bias | rank MAE | 90 % covers | 95 % covers | 90 % width |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (panel, proto, est), d in df.groupby(["panel", "protocol", "estimator"], sort=False):
        n_splits = d.split.nunique()
        default = " (default)" if est == CHOSEN_ITEMS_ESTIMATOR else ""
        lines.append(
            f"| {panel} ({d.models.iloc[0]}) | {proto} | {d.held.iloc[0]} × {n_splits} | "
            f"{d['items'].mean():.0f} ({100 * d.share.mean():.0f} %) | {est}{default} | "
            f"{d.error.abs().mean():.3f} | {d.error.mean():+.3f} | {d.rank_err.mean():.1f} | "
            f"{100 * d.cover90.mean():.0f} % | {100 * d.cover95.mean():.0f} % | "
            f"{d.width90.mean():.3f} |"
        )
    return "\n".join(lines) + "\n"


def choice(df: pd.DataFrame) -> tuple[str, str]:
    """(chosen estimator, markdown of the choice and the leave-one-panel-out check)."""
    big = df[(df.models >= MIN_MODELS_BEYOND) & ~df.panel.str.contains("held out")]
    mae = big.assign(ae=big.error.abs()).groupby(["panel", "protocol", "estimator"]).ae.mean()
    ratio = mae / mae.groupby(level=["panel", "protocol"]).transform("min")
    overall = ratio.groupby(level="estimator").mean().sort_values()
    lines = [
        "Mean MAE ratio to the best estimator over the (panel, protocol) cells of the panels "
        f"with ≥ {MIN_MODELS_BEYOND} models (1.00 = best everywhere): "
        + ", ".join(f"{e} {v:.2f}" for e, v in overall.items())
        + ".",
        "",
        "| held-out panel | chosen without it | its MAE there (random / frontier / "
        "chronological) | best there |",
        "|---|---|---|---|",
    ]
    for p in sorted(big.panel.unique()):
        rest = ratio.drop(index=p, level="panel")
        if rest.empty:
            continue
        pick = rest.groupby(level="estimator").mean().idxmin()
        there = mae.loc[p]
        cells = " / ".join(
            f"{there.loc[(proto, pick)]:.3f}" if (proto, pick) in there.index else "—"
            for proto in ("random", "frontier", "chronological")
        )
        best = there.groupby(level="estimator").mean().idxmin()
        lines.append(f"| {p} | {pick} | {cells} | {best} |")
    return str(overall.index[0]), "\n".join(lines) + "\n"


def dated(panel: Panel) -> Panel:
    """``panel`` with the OpenVLM leaderboard's release dates (the embedded ``openvlm``
    snapshot) joined on the model name — VLMEvalKit ids on both sides; a model the leaderboard
    does not name stays undated — so the records panels get a chronological hold-out too."""
    import dataclasses

    from primebench_tasks.data.leaderboard import Leaderboard

    dates = Leaderboard.load_default("openvlm").models.set_index("model")["release_date"]
    models = panel.models.copy()
    models["release_date"] = models["release_date"].fillna(models["model"].map(dates))
    return dataclasses.replace(panel, models=models, _hash=None)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--n-boot", type=int, default=100)
    ap.add_argument("--out", default=str(RESULTS / "placement_accuracy.md"))
    args = ap.parse_args()
    rows: list[dict] = []
    panels = [(n, Panel.load_default(n)) for n in REAL]
    panels += [
        (f"simulated-{m}", simulate_panel(scale=0.004, n_models=m, seed=7)) for m in (40, 150)
    ]
    for b in HELD_OUT_RECORDS:
        panels.append(
            (f"{b} records (held out)", dated(Panel.load_default(f"openvlm_{b.lower()}")))
        )
    for name, panel in panels:
        protocols = ["random"]
        if len(panel.model_names) >= MIN_MODELS_BEYOND:
            n_dated = panel.model_table["release_date"].notna().sum()
            protocols += ["frontier", "chronological"] if n_dated >= 20 else ["frontier"]
        for proto in protocols:
            t = time.time()
            rows += evaluate_panel(name, panel, proto, args.splits, args.n_boot)
            print(f"{name} {proto}: done in {time.time() - t:.0f} s", flush=True)
    df = pd.DataFrame(rows)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out.with_suffix(".csv"), index=False, float_format="%.6f")
    chosen, why = choice(df)
    text = table(df)
    print(text)
    print(why)
    out.write_text(text, encoding="utf-8")
    out.with_name("placement_choice.md").write_text(why, encoding="utf-8")
    if chosen != CHOSEN_ITEMS_ESTIMATOR:
        print(f"note: the procedure chooses {chosen!r}, not {CHOSEN_ITEMS_ESTIMATOR!r}")


if __name__ == "__main__":
    main()
