"""How accurate the shipped default placement is — the probability design (``stratified``) and
the model-assisted estimate with its design interval (``greg``) — on every embedded panel a
released benchmark is placed on, for models like the reference ones and unlike them; the
measurement behind the README's accuracy figure and every figure docs/results.md gives for the
default.

    python benchmarks/placement_design.py [--draws 20] [--budgets 25,50,100]
    python benchmarks/placement_design.py --render   # the table from the committed CSV

Per panel and benchmark, four hold-outs of the models:

- ``random``: 5 seeded splits, 20 % of the models held out (at least 8);
- ``frontier``: the strongest 15 % by the benchmark's full score held out;
- ``chronological``: the newest 15 % of the models with a known release date (the panel's own,
  else the shipped dates: ``data.model_dates``) held out, the suite drawn on the dated models
  released strictly before them;
- ``gap``: drawn on the models scoring at most a cut c, placed on the models scoring
  c + 0.05 to c + 0.10 (those in between left out) — a new model clearly above every reference
  model; c is the cut that holds out the most models (at least 8).

Each hold-out is drawn ``--draws`` times (the design's seed), so the figures are the design's
expected error, not one lucky draw. Per cell and budget (25, 50, 100 items per benchmark; the
flagship draws 100): full-score MAE of the held-out models, bias (predicted − true), how often
the **90 % and 95 %** design intervals held the true full score (reports show 95 %), the
mean absolute rank error among the build models, the held-out ρ and the floor of any
design-unbiased estimate from that many items.

Panels: the five of ≥ 80 models that research/placement/design_comparison.py chose the default
on, and the two small ones the flagship places MathVista (``m3irt``, 24 runs) and MATH-Vision
(``mathvision``, 16 set-ups) on — measured here, not chosen on; with so few held-out models a
coverage is ±15 points.

Writes ``benchmarks/results/default_accuracy.csv`` (one row per cell and draw) and
``default_accuracy.md`` (docs/results.md carries it; ``tools/readme_figure.py`` draws the README's
figure from the CSV). ``research/placement/design_comparison.py`` runs the same cells for every
candidate pair.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from primebench_tasks.data.model_dates import release_dates
from primebench_tasks.data.panel import Panel
from primebench_tasks.evaluate.splits import (
    GAP_MIN_HELD,
    frontier_split,
    gap_split,
    newest_split,
)
from primebench_tasks.metrics import nanmean_rows, spearman
from primebench_tasks.place.estimators import make_estimator
from primebench_tasks.progress import progress_bar
from primebench_tasks.select.base import ItemFeatures
from primebench_tasks.select.irt import paper_thresholds
from primebench_tasks.select.registry import SELECTORS, SelectorContext

DEFAULT = ("stratified", "greg")
"""The shipped default: ``select.default`` and ``place.defaults.DEFAULT_ESTIMATOR``."""
CHOSEN_ON = (
    "openvlm_blink",
    "openvlm_ocrbench_text",
    "openvlm_realworldqa_text",
    "mmmu_merged",
    "autojudger",
)
"""The flagship's panels of ≥ 80 models, which the design comparison chose the default on."""
PANELS = (*CHOSEN_ON, "m3irt", "mathvision")
"""Those, and the two small panels the flagship places MathVista and MATH-Vision on."""
PROTOCOLS = ("random", "frontier", "chronological", "gap")
RANDOM_SPLITS, RANDOM_SHARE, TOP_SHARE, MIN_HELD = 5, 0.2, 0.15, GAP_MIN_HELD
RESULTS = Path(__file__).parent / "results"


def chrono_split(panel: Panel, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The newest 15 % of the dated models among ``keep`` (the panel's dates, else the shipped
    ones), built on those released strictly before them (``evaluate.splits.newest_split``)."""
    dates = release_dates(panel)
    names = [panel.model_names[i] for i in keep]
    table = pd.DataFrame({"model": names, "release_date": [dates.get(m) for m in names]})
    build, held = newest_split(table, TOP_SHARE, minimum=MIN_HELD)
    return keep[build], keep[held]


def splits(panel: Panel, X: np.ndarray, protocol: str) -> list[tuple[np.ndarray, np.ndarray]]:
    full = nanmean_rows(X)
    keep = np.flatnonzero(np.isfinite(full))
    if protocol == "random":
        rng = np.random.default_rng(0)
        out = []
        for _ in range(RANDOM_SPLITS):
            held = np.sort(rng.choice(keep, max(MIN_HELD, round(RANDOM_SHARE * len(keep))), False))
            out.append((np.setdiff1d(keep, held), held))
        return out
    if protocol == "frontier":
        b, h = frontier_split(full[keep], TOP_SHARE, minimum=MIN_HELD)
        return [(keep[b], keep[h])]
    if protocol == "chronological":
        return [chrono_split(panel, keep)]
    b, h, _ = gap_split(full)
    return [(b, h)]


def floor_mae(X: np.ndarray, held: np.ndarray, k: int) -> float:
    """The floor of any design-unbiased estimate from k random items: the MAE it would have if
    it knew every item's probability p_mi exactly (its error is then the Bernoulli noise of the
    drawn items alone: sd √(Σ_i p_mi(1 − p_mi)/N² · N/k · (1 − k/N)), MAE = √(2/π) sd), with
    p_mi from a 2PL fitted on every model of the panel, held-out ones included."""
    from primebench_tasks.select.irt import binarize, fit_2pl_cached

    Y = binarize(X)
    ok = np.isfinite(Y).any(axis=0)
    model = fit_2pl_cached(Y[:, ok])
    p = model.prob(model.theta[held])
    n = p.shape[1]
    sd = np.sqrt((p * (1 - p)).mean(axis=1) / k * (1 - k / n))
    return float(np.sqrt(2 / np.pi) * sd.mean())


def rank_error(pred: np.ndarray, true: np.ndarray, ref: np.ndarray) -> float:
    """Mean |rank of the prediction − rank of the truth| among the build models' full scores."""
    r_pred = 1 + (ref[None, :] > pred[:, None]).sum(axis=1)
    r_true = 1 + (ref[None, :] > true[:, None]).sum(axis=1)
    return float(np.mean(np.abs(r_pred - r_true)))


def cell_rows(
    X: np.ndarray,
    build: np.ndarray,
    held: np.ndarray,
    thresholds: np.ndarray,
    budgets,
    draws: int,
    split: int,
    pairs: Sequence[tuple[str, str]] = (DEFAULT,),
    make: Callable[[str, np.ndarray], Any] = make_estimator,
) -> list[dict]:
    """One hold-out's rows: per budget, draw and (selector, estimator) pair of ``pairs`` (the
    estimator made by ``make``), the held-out models' full-score MAE, bias, the coverage of the
    90 % and the 95 % interval (where the estimator has one of its own; 95 % is what reports
    show), the rank error, the held-out ρ, and the floor of a design-unbiased estimate."""
    Xb, Xh = X[build], X[held]
    full_b, full_h = nanmean_rows(Xb), nanmean_rows(Xh)
    ctx = SelectorContext(thresholds=thresholds)
    items = ItemFeatures()
    rows = []
    for k in budgets:
        floor = floor_mae(X, held, k)
        for d in range(draws):
            cache = {}
            for sel_name, est_name in pairs:
                if sel_name not in cache:
                    seed = 100_000 * split + 1000 * d + k  # every split and draw its own
                    cache[sel_name] = SELECTORS[sel_name](k, seed, ctx).fit(Xb, items)
                sel = cache[sel_name]
                est = make(est_name, thresholds).fit(Xb, sel.indices_, sel.weights_)
                Ys = Xh[:, sel.indices_]
                pred = est.predict(Ys)
                cover = {0.90: np.nan, 0.95: np.nan}
                if hasattr(est, "interval"):
                    for level in cover:
                        lo, hi = est.interval(Ys, level)
                        cover[level] = float(np.mean((lo <= full_h) & (full_h <= hi)))
                rows.append(
                    {
                        "k": k,
                        "draw": d,
                        "selector": sel_name,
                        "estimator": est_name,
                        "mae": float(np.mean(np.abs(pred - full_h))),
                        "bias": float(np.mean(pred - full_h)),
                        "cover90": cover[0.90],
                        "cover95": cover[0.95],
                        "rank_error": rank_error(pred, full_h, full_b),
                        "rho": spearman(pred, full_h),
                        "n_held": len(held),
                        "n_build": len(build),
                        "floor": floor,
                    }
                )
    return rows


def run(
    budgets: list[int],
    draws: int,
    protocols,
    panels,
    pairs: Sequence[tuple[str, str]] = (DEFAULT,),
    make: Callable[[str, np.ndarray], Any] = make_estimator,
    what: str = "placement accuracy",
) -> pd.DataFrame:
    """Every (panel, benchmark, hold-out) cell's rows (:func:`cell_rows`); a hold-out a panel
    cannot make (too few dated models, no gap) is skipped with a line on stderr."""
    out = []
    cells = [(p, pr) for p in panels for pr in protocols]
    with progress_bar(len(cells), what, unit="cell") as bar:
        for name, protocol in cells:
            panel = Panel.load_default(name)
            for b in panel.benchmark_names:
                X = panel.matrix(b).astype(float)
                kind = str(panel.benchmarks.set_index("benchmark").loc[b, "metric_kind"])
                metric = str(panel.benchmarks.set_index("benchmark").loc[b, "metric"])
                t0 = time.time()
                try:
                    sp = splits(panel, X, protocol)
                except ValueError as exc:
                    print(f"{name} {b} {protocol}: skipped ({exc})", file=sys.stderr)
                    continue
                for s, (build, held) in enumerate(sp):
                    th = paper_thresholds(X[build], kind, metric)
                    n_draws = draws if protocol != "random" else max(1, draws // len(sp))
                    for r in cell_rows(X, build, held, th, budgets, n_draws, s, pairs, make):
                        out.append({"panel": name, "benchmark": b, "protocol": protocol,
                                    "split": s, **r})  # fmt: skip
                print(f"{name} {b} {protocol}: {time.time() - t0:.0f}s", file=sys.stderr)
            bar.update(1)
    return pd.DataFrame(out)


CELL = ("panel", "benchmark", "protocol", "k")
"""What one cell of the tables is (a design comparison adds the pair)."""
METRICS = {
    "n_held": "first",
    "mae": "mean",
    "bias": "mean",
    "cover90": "mean",
    "cover95": "mean",
    "rank_error": "mean",
    "rho": "mean",
    "floor": "first",
}
"""Each row's measures and how a cell aggregates them over splits and draws."""


def summary(df: pd.DataFrame, by: Sequence[str] = CELL) -> pd.DataFrame:
    """Per cell ``by``: the means over splits and draws of the measures ``df`` holds."""
    agg = {c: (c, how) for c, how in METRICS.items() if c in df.columns}
    return df.groupby(list(by), sort=False).agg(**agg).reset_index()


def render(df: pd.DataFrame) -> str:
    """The default's table: per panel / benchmark and hold-out, at each budget, MAE (bias) and
    how often the 90 % / 95 % intervals held."""
    s = summary(df)
    budgets = sorted(s["k"].unique())
    lines = [
        "| panel / benchmark | hold-out | n | "
        + " | ".join(f"{k} items: MAE (bias) · 90 % / 95 % held" for k in budgets)
        + " |",
        "|---|---|---|" + "---|" * len(budgets),
    ]
    for (p, b, pr), g in s.groupby(["panel", "benchmark", "protocol"], sort=False):
        g = g.set_index("k")
        cells = [
            f"{g.at[k, 'mae']:.3f} ({g.at[k, 'bias']:+.3f}) · "
            f"{g.at[k, 'cover90']:.0%} / {g.at[k, 'cover95']:.0%}"
            if k in g.index
            else "—"
            for k in budgets
        ]
        lines.append(
            f"| {p} / {b} | {pr} | {int(g['n_held'].iloc[0])} | " + " | ".join(cells) + " |"
        )
    at = s[s["k"] == max(budgets)]
    lines += [
        "",
        f"At {max(budgets)} items per benchmark over all {len(at)} cells: MAE "
        f"{at['mae'].min():.3f}–{at['mae'].max():.3f} (floor of a design-unbiased estimate "
        f"{at['floor'].min():.3f}–{at['floor'].max():.3f}), bias {at['bias'].min():+.3f} to "
        f"{at['bias'].max():+.3f}; the 90 % interval held {at['cover90'].min():.0%}–"
        f"{at['cover90'].max():.0%} of the time, the 95 % interval (what reports show) "
        f"{at['cover95'].min():.0%}–{at['cover95'].max():.0%}.",
        "",
    ]
    return "\n".join(lines)


def arguments(doc: str, panels: Sequence[str], out: Path) -> argparse.ArgumentParser:
    """The options of a script over these cells (this one, and the design comparison)."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--budgets", default="25,50,100")
    ap.add_argument("--draws", type=int, default=20)
    ap.add_argument("--protocols", default=",".join(PROTOCOLS))
    ap.add_argument("--panels", default=",".join(panels))
    ap.add_argument("--render", action="store_true")
    ap.add_argument("--out", default=str(out))
    return ap


def main(argv: list[str] | None = None) -> int:
    a = arguments(__doc__ or "", PANELS, RESULTS / "default_accuracy").parse_args(argv)
    out = Path(a.out)
    if a.render:
        df = pd.read_csv(out.with_suffix(".csv"))
    else:
        df = run(
            [int(x) for x in a.budgets.split(",")],
            a.draws,
            a.protocols.split(","),
            a.panels.split(","),
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        df.to_csv(out.with_suffix(".csv"), index=False, float_format="%.6g")
        df = pd.read_csv(out.with_suffix(".csv"))  # the table is the committed CSV's
    md = render(df)
    out.with_suffix(".md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
