"""Is the predicted full score never worse than a random sample of the same size — for models
like the reference ones, at their top, beyond all of them, and newer than all of them? (issue:
"Placement a user can bet on".)

    python research/placement/design_comparison.py [--draws 6] [--budgets 25,50,100]
    python research/placement/design_comparison.py --render   # the table from the committed CSV

Per panel (the flagship's own: every embedded panel with ≥ 80 models) and per benchmark, four
hold-outs of the models:

- ``random``: 5 seeded splits, 20 % of the models held out;
- ``frontier``: the strongest 15 % by the benchmark's full score held out;
- ``chronological``: the newest 15 % of the models with a known release date (the panel's own,
  else the shipped dates: ``data.model_dates``) held out, the selection built on the dated models
  released strictly before them;
- ``gap``: built on the models scoring at most a cut c, placed on the models scoring
  c + 0.05 to c + 0.10 (the models in between left out) — a new model clearly above every
  reference model; c is the cut that holds out the most models (at least 8).

Each hold-out is drawn ``--draws`` times (the selection's seed; every selector, seeded or not,
gets each seed) so that a random design's figures are its expected error, not one lucky draw.
For each (selector, estimator) pair at 25, 50 and 100 items per benchmark: full-score MAE of the
held-out models, bias (predicted − true), the coverage of the 90 % interval where the estimator
has one of its own (the model-assisted estimator's design interval), the mean absolute rank error
among the build models (rank of the prediction vs rank of the truth) and the held-out Spearman ρ.

Pairs: the old default (``cross_validated`` + ``pirt``), random + mean / p-IRT / gp-IRT /
model-assisted, anchor points + gp-IRT (tinyBenchmarks), DISCO + its regression (``aipw``), and
the probability design: ``stratified`` + the model-assisted estimator ``greg``.

Writes ``research/placement/results/design_comparison.csv`` (one row per cell and pair) and
``design_comparison.md`` (the tables; docs/results.md carries them, checked by a test).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from primebench_tasks.place.estimators import GREG, RIDGE_ALPHA, make_estimator

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # the cells
from placement_design import CELL, arguments, run  # noqa: E402
from placement_design import CHOSEN_ON as PANELS  # noqa: E402
from placement_design import summary as cell_summary  # noqa: E402

PAIRS = (
    ("cross_validated", "pirt"),
    ("random", "mean"),
    ("random", "pirt"),
    ("random", "gpirt"),
    ("random", "greg"),
    ("anchor_points", "gpirt"),
    ("disco", "aipw"),
    ("stratified", "greg"),
    ("random", "greg_ridge"),
    ("stratified", "greg_ridge"),
)
OLD_DEFAULT = ("cross_validated", "pirt")
RESULTS = Path(__file__).parent / "results"


RIDGE_FOLDS = 5


class RidgeGREG(GREG):
    """The candidate ``greg_ridge`` (not the product's): the model-assisted estimator whose item
    predictions come from a linear kernel ridge regression (α = ``RIDGE_ALPHA``) fitted on the
    source models, from the new model's responses to the drawn items outside the item's fold —
    cross-fitted over ``RIDGE_FOLDS`` folds of the drawn items, so a drawn item never predicts
    itself; an item not drawn gets the mean of the folds' predictions."""

    def fit(self, Y_source, indices, weights=None) -> RidgeGREG:
        super().fit(Y_source, indices, weights)
        Y = np.asarray(Y_source, float)
        self.mu_ = np.nan_to_num(np.nanmean(Y, axis=0), nan=0.5)
        self.Yc_ = np.where(np.isfinite(Y), Y, self.mu_) - self.mu_
        self.fold_ = np.arange(len(self.indices_)) % min(RIDGE_FOLDS, len(self.indices_))
        return self

    def _item_probabilities(self, Y: np.ndarray) -> np.ndarray:
        sel = self.indices_
        Xs = self.Yc_[:, sel]
        Ynew = np.where(np.isfinite(Y), Y, self.mu_[sel]) - self.mu_[sel]
        n_f = int(self.fold_.max()) + 1
        out = np.zeros((len(Y), self.Yc_.shape[1]))
        drawn = np.zeros((len(Y), self.Yc_.shape[1]))
        for f in range(n_f):
            keep = self.fold_ != f
            Xf = Xs[:, keep]
            G = Xf @ Xf.T + RIDGE_ALPHA * np.eye(len(Xf))
            pred = (Ynew[:, keep] @ Xf.T) @ np.linalg.solve(G, self.Yc_)  # (M', n)
            out += pred / n_f
            mine = sel[self.fold_ == f]
            drawn[:, mine] = pred[:, mine]
        out[:, sel] = drawn[:, sel]
        return np.clip(out + self.mu_, 0.0, 1.0)


def estimator(name: str, thresholds: np.ndarray):
    """The product's estimator ``name``; ``greg_ridge``: the candidate :class:`RidgeGREG`."""
    if name == "greg_ridge":
        return RidgeGREG(thresholds)
    return make_estimator(name, thresholds)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per cell and (selector, estimator) pair: the means over splits and draws."""
    return cell_summary(df, [*CELL, "selector", "estimator"])


RANDOM_BASELINES = (("random", "mean"), ("random", "pirt"))
NOISE = 1.10
"""A pair is "never worse than a random sample" when in no cell its MAE exceeds random + mean's
by more than this factor (the figures are means over 20 draws; one draw's MAE varies by ~25 %,
their mean by ~6 %)."""
COVER = (0.85, 0.95)
"""A pair's 90 % interval "holds" when its coverage lies in this range in every hold-out and
budget (the issue's goal). Only an estimator with an interval of its own (the design interval of
the model-assisted estimator) can hold for a model unlike the reference models: intervals from
the reference models' held-out errors measure errors the reference models make."""


def choice(s: pd.DataFrame) -> pd.DataFrame:
    """Per pair, over every (panel, benchmark, hold-out, budget) cell: the mean ratio of its MAE
    to the better random baseline's (all budgets, and at 100 items), the worst ratio to random +
    mean's, the coverage range of its 90 % interval over hold-outs and budgets, the mean ρ and
    random + mean's, and whether it qualifies: never worse than a random sample (worst ratio ≤
    NOISE), an interval that holds (coverage within COVER everywhere) and a ranking no worse
    than random items' (mean ρ ≥ random's − 0.01). The choice is the qualifying pair with the
    lowest mean ratio to the better random baseline."""
    keys = ["panel", "benchmark", "protocol", "k"]
    base = s.set_index(keys + ["selector", "estimator"])["mae"]
    rnd = base.xs(("random", "mean"), level=["selector", "estimator"])
    best = pd.concat(
        [base.xs(p, level=["selector", "estimator"]) for p in RANDOM_BASELINES], axis=1
    ).min(axis=1)
    rho_r = s[(s.selector == "random") & (s.estimator == "mean")]["rho"].mean()
    rows = []
    for (a, e), g in s.groupby(["selector", "estimator"], sort=False):
        cover = g.groupby(["protocol", "k"])["cover90"].mean()
        g = g.set_index(keys)
        to_random = g["mae"] / rnd.reindex(g.index)
        to_best = g["mae"] / best.reindex(g.index)
        holds = bool(cover.notna().all() and cover.between(*COVER).all())
        rows.append(
            {
                "pair": f"{a}+{e}",
                "mean_to_best_random": float(to_best.mean()),
                "at_100_items": float(to_best.xs(100, level="k").mean()),
                "worst_to_random_mean": float(to_random.max()),
                "cover90": "—" if cover.isna().all() else f"{cover.min():.2f}-{cover.max():.2f}",
                "mean_rho": float(g["rho"].mean()),
                "random_rho": float(rho_r),
                "qualifies": bool(
                    to_random.max() <= NOISE and holds and g["rho"].mean() >= rho_r - 0.01
                ),
            }
        )
    out = pd.DataFrame(rows).sort_values("mean_to_best_random").reset_index(drop=True)
    q = out[out["qualifies"]]
    out["chosen"] = out.index == (q.index[0] if len(q) else -1)
    return out


def goals(s: pd.DataFrame, pair: tuple[str, str]) -> pd.DataFrame:
    """Per hold-out at 100 items: how many cells of ``pair`` meet each of the issue's goals, and
    the mean floor of a design-unbiased estimate there."""
    keys = ["panel", "benchmark", "protocol", "k"]
    t = s[s["k"] == 100].set_index(keys + ["selector", "estimator"])
    me = t.xs(pair, level=["selector", "estimator"])
    rnd = pd.concat([t.xs(p, level=["selector", "estimator"])["mae"] for p in RANDOM_BASELINES],
                    axis=1).min(axis=1)  # fmt: skip
    anchor = t.xs(("anchor_points", "gpirt"), level=["selector", "estimator"])["mae"]
    rows = []
    for protocol, g in me.groupby(level="protocol", sort=False):
        idx = g.index
        cap = 0.020 if protocol in ("random", "chronological") else 0.025
        rows.append(
            {
                "hold-out": protocol,
                "cells": len(g),
                "≤ 0.8 × best random": int((g["mae"] <= 0.8 * rnd.reindex(idx)).sum()),
                "≤ anchor + gp-IRT": int((g["mae"] <= anchor.reindex(idx)).sum()),
                "MAE goal": cap,
                "≤ goal": int((g["mae"] <= cap).sum()),
                "|bias| ≤ 0.01": int((g["bias"].abs() <= 0.01).sum()),
                "90 % cover 85-95 %": int(g["cover90"].between(0.85, 0.95).sum()),
                "mean MAE": round(float(g["mae"].mean()), 4),
                "mean floor": round(float(g["floor"].mean()), 4),
            }
        )
    return pd.DataFrame(rows)


def render(s: pd.DataFrame) -> str:
    from primebench_tasks.report.tables import markdown_table

    c = choice(s)
    chosen = c[c["chosen"]]["pair"].tolist()
    pair = tuple(chosen[0].split("+")) if chosen else ("stratified", "greg")
    lines = [
        "#### The choice (every cell, 25-100 items per benchmark)",
        "",
        markdown_table(c.round(3)),
        "",
        f"#### The goals at 100 items per benchmark: {'+'.join(pair)}",
        "",
        markdown_table(goals(s, pair)),  # type: ignore[arg-type]
        "",
    ]
    for k in sorted(s["k"].unique()):
        sub = s[s["k"] == k]
        pairs = [f"{a}+{b}" for a, b in PAIRS]
        lines += [
            f"#### {k} items per benchmark: full-score MAE (bias), held-out ρ in brackets",
            "",
            "| panel / benchmark | hold-out | n | " + " | ".join(pairs) + " |",
            "|---|---|---|" + "---|" * len(pairs),
        ]
        for (p, b, pr), g in sub.groupby(["panel", "benchmark", "protocol"], sort=False):
            g = g.set_index(["selector", "estimator"])
            cells = []
            for a, e in PAIRS:
                r = g.loc[(a, e)]
                cells.append(f"{r.mae:.3f} ({r.bias:+.3f}) [{r.rho:.2f}]")
            lines.append(
                f"| {p} / {b} | {pr} | {int(g['n_held'].iloc[0])} | " + " | ".join(cells) + " |"
            )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    a = arguments(__doc__ or "", PANELS, RESULTS / "design_comparison").parse_args(argv)
    out = Path(a.out)
    if a.render:
        df = pd.read_csv(out.with_suffix(".csv"))
        if "floor" not in df.columns:  # a run from before the floor was measured
            df["floor"] = np.nan
    else:
        df = run([int(x) for x in a.budgets.split(",")], a.draws, a.protocols.split(","),
                 a.panels.split(","), PAIRS, estimator, "design comparison")  # fmt: skip
        out.parent.mkdir(parents=True, exist_ok=True)
        df.to_csv(out.with_suffix(".csv"), index=False, float_format="%.6g")
    md = render(summary(df))
    out.with_suffix(".md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
