"""Which selector, and how well the default estimator predicts the full score: held-out evidence
on every embedded real panel and on simulated leaderboards, with leave-one-panel-out choice of the
constants (issue #16). Writes the selector section of docs/results.md.

    python benchmarks/selector_evidence.py [--splits 20] [--out benchmarks/results]
    python benchmarks/selector_evidence.py --render   # the markdown again from the committed CSV
    python benchmarks/selector_evidence.py --held-out  # the panels used to choose nothing

Protocol: ``primebench validate``'s held-out protocol (Stages 0-1 on all models, seeded random
halves, selection on the build half, Spearman ρ on the held-out half between the pool's full mean
and the estimate). A *panel* is one category pool of a real panel (each embedded VLM panel's
benchmarks are their own categories) or a whole simulated leaderboard (the split ρ is the mean
over its five benchmarks, as ``validate`` reports). Budgets: 10, 25, 50, 100 items per pool, and
1, 2, 5 % of the pool's items (at least 5 items).

Goals checked cell by cell (panel × budget):
1. the default selector is ≥ random − 1 SE, and within 1 SE of the best arm in ≥ 80 % of cells;
2. the default estimator's MAE at 100 items where the panel has ≥ 100 models is ≤ 0.015;
3. leave-one-panel-out: for each panel D, the setting (a fixed ``vaw_dc`` constant pair, or the
   cross-validated rule) with the best mean gap to the per-cell best on the other panels, scored on
   D.
Outputs: ``selector_cells.csv`` (every panel × budget × arm), ``selector_mae.csv``,
``selector_evidence.md`` (embedded in docs/results.md between ``selector-evidence`` markers and
checked by ``tests/test_readme_results.py``).

``--held-out``: the same protocol, every selector of ``validate --selectors all``, on the panels
that chose nothing — VLMEvalKit's published records of BLINK, OCRBench and RealWorldQA (the
embedded ``openvlm_*`` panels, added after the default was chosen): ``selector_heldout_*.csv`` and
``selector_heldout.md`` (docs/results.md, ``selector-heldout`` markers).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from primebench_tasks.data.panel import Panel
from primebench_tasks.data.simulate import simulate_leaderboard
from primebench_tasks.evaluate.protocols import run_protocol
from primebench_tasks.select.cross_validated import MIN_HALF
from primebench_tasks.select.registry import SELECTORS, resolve
from primebench_tasks.select.vaw import VAWSelector

DEFAULT_SELECTOR = "cross_validated"
"""The selector this evidence chose on ranking fidelity (the default until the probability design
replaced it on the predicted score: research/placement/design_comparison.py); its figures stay as
they were measured."""
DEFAULT_ESTIMATOR = "pirt"
"""The full-score estimator of that default (likewise kept as measured)."""

ITEM_BUDGETS = (10, 25, 50, 100)
PERCENT_BUDGETS = (0.01, 0.02, 0.05)
PERCENT_FLOOR = 5
MAE_GOAL = 0.015
MAE_MIN_MODELS = 100
SHARE_GOAL = 0.8
CV_MIN_BUILD = 2 * MIN_HALF
"""Build models the default rule needs to cross-validate (the build half of 2 × this)."""

GRID = {f"vaw_dc_p{p}_q{q:g}": (p, q) for p in (1, 2, 4) for q in (0.0, 0.5)}
"""The fixed constant pairs (|r| exponent, cell quantile) of the discrimination selector; vaw_dc
is (4, 0.5)."""
FIXED_DEFAULT = "vaw_dc_p4_q0.5"
SETTINGS = (*GRID, DEFAULT_SELECTOR)
"""What the leave-one-panel-out procedure chooses among."""

REAL = (
    ("autojudger", "AutoJudger"),
    ("m3irt", "M3IRT"),
    ("blink", "BLINK"),
    ("mathvision", "MATH-Vision"),
)
HELD_OUT = (
    ("openvlm_blink", "BLINK-records"),
    ("openvlm_ocrbench", "OCRBench-records"),
    ("openvlm_realworldqa", "RealWorldQA-records"),
)
"""Panels used to choose nothing (added after the default was chosen)."""
SIMULATED = (
    ("leaderboard-20", dict(n_models=20)),
    ("leaderboard-200", dict(n_models=200)),
    ("leaderboard-1000", dict(n_models=1000)),
    ("leaderboard-5000", dict(n_models=5000)),
    ("leaderboard-2000-unimodal", dict(n_models=2000, chance_share=0.0)),
)


def _grid_factory(power: float, q: float):
    return lambda k, rs, c: VAWSelector(
        k,
        random_state=rs,
        signal="discrimination",
        cells="responses",
        cell_quantile=q,
        power=power,
    )


def panels(quick: bool, held_out: bool = False) -> list[tuple[str, Panel, bool]]:
    """(label, panel, simulated)."""
    out = [
        (label, Panel.load_default(name), False) for name, label in (HELD_OUT if held_out else REAL)
    ]
    if held_out:
        return out
    for label, kw in SIMULATED:
        if quick and kw["n_models"] > 200:
            continue
        out.append((label, simulate_leaderboard(seed=0, name=label, **kw), True))
    return out


def _panel_label(label: str, simulated: bool, category: str, panel: Panel) -> str:
    if simulated:
        return label
    bench = next(b for b in panel.benchmark_names if panel.category_of(b) == category)
    return f"{label} {bench}"


def run(splits: int, quick: bool, held_out: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    if not held_out:  # the grid only enters the leave-one-panel-out choice
        SELECTORS.update({name: _grid_factory(p, q) for name, (p, q) in GRID.items()})
    cell_rows, mae_rows = [], []
    todo = panels(quick, held_out)
    for label, panel, simulated in tqdm(todo, desc="panels", unit="panel"):
        names, _ = resolve("all", bool(panel.embedding_spaces), binary=True)
        # the grid only enters the leave-one-panel-out choice, which held-out panels never make
        arms = list(dict.fromkeys([DEFAULT_SELECTOR, *names, *([] if held_out else GRID)]))
        t0 = time.perf_counter()
        cats, _ = run_protocol(
            panel,
            "heldout",
            arms,
            retentions=PERCENT_BUDGETS,
            n_splits=splits,
            seed=0,
            estimators=("mean",),
            floor=PERCENT_FLOOR,
            budgets=ITEM_BUDGETS,
        )
        est, _ = run_protocol(
            panel,
            "heldout",
            [DEFAULT_SELECTOR],
            retentions=(),
            n_splits=splits,
            seed=0,
            estimators=("mean", "aipw", "pirt", "gpirt"),
            budgets=(100,),
        )
        seconds = time.perf_counter() - t0
        M = len(panel.model_names)
        for df, sink in ((cats, cell_rows), (est, mae_rows)):
            df = df.copy()
            df["panel"] = [_panel_label(label, simulated, c, panel) for c in df["category"]]
            # a simulated leaderboard is one panel: its split ρ is the mean over its benchmarks
            g = df.groupby(["panel", "split", "selector", "estimator", "budget"], sort=False)
            per_split = g.agg(
                rho=("rho", "mean"),
                mae=("mae", "mean"),
                k=("k", "mean"),
                retention=("retention", "first"),
            ).reset_index()
            per_split["models"] = M
            per_split["simulated"] = simulated
            per_split["seconds"] = round(seconds, 1)
            sink.append(per_split)
    keys = ["panel", "models", "simulated", "selector", "estimator", "budget", "retention"]

    def summarise(parts: list[pd.DataFrame]) -> pd.DataFrame:
        d = pd.concat(parts, ignore_index=True)
        out = (
            d.groupby(keys, sort=False, dropna=False)
            .agg(
                n_items=("k", "mean"),
                mean_rho=("rho", "mean"),
                sd_rho=("rho", "std"),
                n=("rho", "count"),
                mae=("mae", "mean"),
            )
            .reset_index()
        )
        out["se_rho"] = out["sd_rho"] / np.sqrt(out["n"])
        return out.drop(columns=["sd_rho"])

    return summarise(cell_rows), summarise(mae_rows)


def _budget_order(b: str) -> tuple[int, float]:
    return (0, float(b.split()[0])) if b.endswith("per category") else (1, float(b[:-1]))


def _budget_name(b: str) -> str:
    return f"{b.split()[0]} items" if b.endswith("per category") else b


def goal_cells(cells: pd.DataFrame, arm: str = DEFAULT_SELECTOR) -> pd.DataFrame:
    """One row per panel × budget: the arm against random and the best selector of the registry
    (``validate --selectors all``; the grid's constant pairs are variants of the default, not
    other selectors, and only enter the leave-one-panel-out choice)."""
    rows = []
    for (panel, budget), c in cells.groupby(["panel", "budget"], sort=False):
        c = c.set_index("selector")
        d, r = c.loc[arm], c.loc["random"]
        best = c.loc[[s for s in c.index if s in SELECTORS and s not in GRID], "mean_rho"].idxmax()
        b = c.loc[best]
        rows.append(
            {
                "panel": panel,
                "models": int(d["models"]),
                "budget": budget,
                "n_items": float(d["n_items"]),
                "default": float(d["mean_rho"]),
                "default_se": float(d["se_rho"]),
                "random": float(r["mean_rho"]),
                "random_se": float(r["se_rho"]),
                "best": best,
                "best_rho": float(b["mean_rho"]),
                "best_se": float(b["se_rho"]),
                "not_below_random": bool(d["mean_rho"] >= r["mean_rho"] - r["se_rho"] - 1e-12),
                "near_best": bool(d["mean_rho"] >= b["mean_rho"] - b["se_rho"] - 1e-12),
            }
        )
    out = pd.DataFrame(rows)
    out["_o"] = [_budget_order(b) for b in out["budget"]]
    return out.sort_values(["panel", "_o"], kind="stable").drop(columns="_o")


def leave_one_panel_out(cells: pd.DataFrame) -> pd.DataFrame:
    """For each panel D: the setting of :data:`SETTINGS` with the highest mean gap to the
    per-cell best arm on the other panels; its mean gap and cells near the best on D."""
    reg = cells[~cells["selector"].isin(list(GRID))]
    best = reg.groupby(["panel", "budget"])["mean_rho"].max().rename("best")
    c = cells.join(best, on=["panel", "budget"])
    c = c.assign(gap=c["mean_rho"] - c["best"])
    c = c[c["selector"].isin(SETTINGS)]
    gap = c.groupby(["panel", "selector"])["gap"].mean().unstack("selector")
    rows = []
    for d in gap.index:
        train = gap.drop(index=d).mean(axis=0)
        chosen = str(train.idxmax())
        on_d = c[(c["panel"] == d) & (c["selector"] == chosen)]
        g = goal_cells(cells[cells["panel"] == d], chosen)
        rows.append(
            {
                "held_out_panel": d,
                "chosen_on_others": chosen,
                "gap_on_held_out": float(on_d["gap"].mean()),
                "fixed_vaw_dc_gap": float(gap.loc[d, FIXED_DEFAULT]),
                "default_gap": float(gap.loc[d, DEFAULT_SELECTOR]),
                "chosen_near_best": f"{int(g['near_best'].sum())}/{len(g)}",
            }
        )
    return pd.DataFrame(rows)


def _cell_table(g: pd.DataFrame) -> list[str]:
    lines = [
        "| panel (models) | budget | items | default ρ | random ρ | best arm | best ρ "
        "| ≥ random − SE | ≤ 1 SE from best |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in g.itertuples():
        lines.append(
            f"| {r.panel} ({r.models}) | {_budget_name(r.budget)} | {r.n_items:.0f} | "
            f"{r.default:.3f} ± {r.default_se:.3f} | {r.random:.3f} ± {r.random_se:.3f} | "
            f"{r.best} | {r.best_rho:.3f} ± {r.best_se:.3f} | "
            f"{'yes' if r.not_below_random else '**no**'} | "
            f"{'yes' if r.near_best else '**no**'} |"
        )
    return lines


def _mae_table(mae: pd.DataFrame) -> list[str]:
    m = mae[(mae["models"] >= MAE_MIN_MODELS)]
    wide = m.pivot_table(
        index=["panel", "models"], columns="estimator", values="mae", sort=False
    ).reset_index()
    ests = [e for e in ("aipw", "mean", "pirt", "gpirt") if e in wide.columns]
    lines = [
        "| panel (models) | " + " | ".join(f"`{e}` MAE" for e in ests) + " | goal |",
        "|---|" + "---|" * (len(ests) + 1),
    ]
    for r in wide.itertuples(index=False):
        v = r._asdict()
        lines.append(
            f"| {v['panel']} ({v['models']}) | "
            + " | ".join(f"{v[e]:.4f}" for e in ests)
            + f" | {'met' if v[DEFAULT_ESTIMATOR] <= MAE_GOAL else '**not met**'} |"
        )
    return lines


def render_held_out(cells: pd.DataFrame, mae: pd.DataFrame, splits: int) -> str:
    """The held-out panels' section: the goal-1 cells and the estimators' MAE."""
    cells = cells[cells["estimator"] == "mean"]
    g = goal_cells(cells)
    below = g[~g["not_below_random"]]
    n_near = int(g["near_best"].sum())
    lines = [
        f"Generated by `python benchmarks/selector_evidence.py --held-out --splits {splits}` "
        "(the same protocol and arms, on VLMEvalKit's published records of BLINK, OCRBench and "
        "RealWorldQA — panels added after the default was chosen, used to choose nothing).",
        "",
        f"The default `{DEFAULT_SELECTOR}` is ≥ random − 1 SE in {len(g) - len(below)}/{len(g)} "
        f"cells and within 1 SE of the best arm in {n_near}/{len(g)} "
        f"({100 * n_near / len(g):.0f} %).",
        "",
        *_cell_table(g),
        "",
        f"Full-score MAE at 100 items per pool with the default selection (goal ≤ {MAE_GOAL} "
        f"for `{DEFAULT_ESTIMATOR}`):",
        "",
        *_mae_table(mae),
    ]
    return "\n".join(lines) + "\n"


def render(cells: pd.DataFrame, mae: pd.DataFrame, splits: int) -> str:
    cells = cells[cells["estimator"] == "mean"]  # subset-mean scoring, as the suites are scored
    g = goal_cells(cells)
    n_near = int(g["near_best"].sum())
    share = n_near / len(g)
    below = g[~g["not_below_random"]]
    lines = [
        f"Generated by `python benchmarks/selector_evidence.py --splits {splits}` "
        f"(held-out protocol, {splits} splits; ρ ± SE over splits; every arm of "
        "`primebench validate --selectors all` plus six fixed constant pairs of the "
        "discrimination selector).",
        "",
        f"**Goal 1** — the default `{DEFAULT_SELECTOR}` never below random − 1 SE: "
        f"{'met' if below.empty else 'NOT met'} ({len(g) - len(below)}/{len(g)} cells; "
        f"{int((below['models'] >= 2 * CV_MIN_BUILD).sum())} of the {len(below)} below are on "
        f"panels of ≥ {2 * CV_MIN_BUILD} models, where the rule cross-validates); "
        f"within 1 SE of the best arm: {n_near}/{len(g)} cells = {100 * share:.0f} % "
        f"(goal ≥ {100 * SHARE_GOAL:.0f} %: {'met' if share >= SHARE_GOAL else 'NOT met'}).",
        "",
        *_cell_table(g),
    ]
    per_arm = []
    for arm in sorted(set(cells["selector"]) - set(GRID)):
        ga = goal_cells(cells, arm)
        per_arm.append(
            (
                arm,
                ga["near_best"].mean(),
                int((~ga["not_below_random"]).sum()),
                float((ga["default"] - ga["best_rho"]).mean()),
            )
        )
    per_arm.sort(key=lambda r: (-r[1], -r[3]))
    lines += [
        "",
        "Every selector measured the same way (the goal's two counts, and the mean gap "
        "to the per-cell best arm):",
        "",
        "| selector | cells ≤ 1 SE from the best | cells below random − SE | mean gap |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| `{a}`{' (default)' if a == DEFAULT_SELECTOR else ''} | {100 * near:.0f} % | "
        f"{below} | {gap:+.3f} |"
        for a, near, below, gap in per_arm
    ]
    far = g[~g["near_best"]]
    lines += [
        "",
        "Cells where the default is more than 1 SE from the best arm: "
        + (
            ", ".join(
                f"{r.panel} at {_budget_name(r.budget)} ({r.best} "
                f"{r.best_rho:.3f} vs {r.default:.3f})"
                for r in far.itertuples()
            )
            or "none"
        )
        + ".",
    ]
    lines += [
        "",
        f"**Goal 2** — full-score MAE of the default estimator (`{DEFAULT_ESTIMATOR}`) "
        f"at 100 items per pool with the default selection, panels with ≥ "
        f"{MAE_MIN_MODELS} models (goal ≤ {MAE_GOAL}); the other estimators for "
        "comparison:",
        "",
        *_mae_table(mae),
    ]
    lopo = leave_one_panel_out(cells)
    lines += [
        "",
        "**Leave-one-panel-out** — the procedure picks, among the six fixed constant "
        "pairs (`vaw_dc_p<exponent>_q<cell quantile>`; `vaw_dc` is p4 q0.5) and the "
        f"cross-validated rule (`{DEFAULT_SELECTOR}`), the one with the best mean gap to "
        "the per-cell best arm on the *other* panels; the columns give the gaps on the "
        "held-out panel (mean over its budgets; 0 = the best arm everywhere):",
        "",
        "| held-out panel | chosen on the others | its gap | its cells ≤ 1 SE from best "
        f"| fixed vaw_dc gap | `{DEFAULT_SELECTOR}` gap |",
        "|---|---|---|---|---|---|",
    ]
    for r in lopo.itertuples():
        lines.append(
            f"| {r.held_out_panel} | {r.chosen_on_others} | {r.gap_on_held_out:+.3f} "
            f"| {r.chosen_near_best} | {r.fixed_vaw_dc_gap:+.3f} | "
            f"{r.default_gap:+.3f} |"
        )
    wins = int((lopo["default_gap"] >= lopo["gap_on_held_out"] - 1e-12).sum())
    lines += [
        "",
        f"The default's gap is at least as small as the procedure's choice on {wins} of "
        f"{len(lopo)} held-out panels; the fixed `vaw_dc` on "
        f"{int((lopo['fixed_vaw_dc_gap'] >= lopo['gap_on_held_out'] - 1e-12).sum())}.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    # IRT anchors on small panels: fewer distinct (a, b) points than clusters; sklearn warns on
    # every fit and the IRT arm keeps fewer items (its n_items in selector_cells.csv shows it)
    warnings.filterwarnings("ignore", message="Number of distinct clusters")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--splits", type=int, default=20, help="held-out splits (default 20)")
    ap.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).parent / "results",
        help="results folder (default benchmarks/results)",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="real panels and the two smallest simulations only (a smoke run)",
    )
    ap.add_argument(
        "--held-out",
        action="store_true",
        help="the panels used to choose nothing (VLMEvalKit's records), into selector_heldout_*",
    )
    ap.add_argument(
        "--render",
        action="store_true",
        help="only write the markdown again from the CSV files in --out",
    )
    a = ap.parse_args(argv)
    stem = "selector_heldout" if a.held_out else "selector"
    cells_csv, mae_csv = a.out / f"{stem}_cells.csv", a.out / f"{stem}_mae.csv"
    if a.render:
        cells, mae = pd.read_csv(cells_csv), pd.read_csv(mae_csv)
        splits = int(cells["n"].max())
    else:
        cells, mae = run(a.splits, a.quick, a.held_out)
        splits = a.splits
        a.out.mkdir(parents=True, exist_ok=True)
        cells.to_csv(cells_csv, index=False, float_format="%.6g")
        mae.to_csv(mae_csv, index=False, float_format="%.6g")
        # rendered from the files as written, so --render reproduces it exactly
        cells, mae = pd.read_csv(cells_csv), pd.read_csv(mae_csv)
    text = (render_held_out if a.held_out else render)(cells, mae, splits)
    (a.out / ("selector_heldout.md" if a.held_out else "selector_evidence.md")).write_text(
        text, "utf-8"
    )
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
