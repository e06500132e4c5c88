"""Whether the local model's noise variance α should be chosen per benchmark, from its own
calibration (issue #29): a committed comparison with leave-one-panel-out evidence, after the
policy (``adaptive_choice.py``), the interval (``adaptive_interval_choice.py``) and the point at
the top (``adaptive_top_shift.py``). Its answer was no: the library keeps one α.

    python research/adaptive/adaptive_alpha_choice.py [--splits 10]   # ~30 min, 2 cores
    python research/adaptive/adaptive_alpha_choice.py --render        # the table from the committed CSV

The policy's choice fixed one α for every benchmark (α = 30, chosen on all five panels). Its
table shows the best α differing by benchmark: α = 10 was the better on AI2D's and RealWorldQA's
random hold-outs, α = 30 on OCRBench's frontier. The calibration already replays the procedure on
the benchmark's own reference models held out of the fit (random folds and frontier folds), so
it can say which α predicts this benchmark better — with nothing but the reference panel.
Candidates (the deployed policy otherwise, its calibration, interval and point rule):

- ``α=a`` for a in :data:`ALPHAS` (the two best α of the policy's choice; 30 is the deployed
  :data:`~primebench_tasks.adaptive.defaults.ADAPTIVE_RIDGE_ALPHA`): one α everywhere;
- ``calibrated: random folds``: per benchmark the candidate α whose calibration rows of the
  random folds erred least: the mean absolute error less its median (the point moves by a median
  error), averaged over every count
  (:func:`calibration_loss`);
- ``calibrated: all rows``: the same over every calibration row, the random and the frontier
  folds' each less its own median.

A candidate's loss on a set of panels is its mean log MAE ratio to the static default suite over
their cells (25 / 50 / 100 items, random and frontier hold-outs), as in the other choices; leave
one panel out: the candidate with the least loss on the other four.

Measured: the calibrated rules did no better than α = 30 (−0.5854 and −0.5836 against −0.5850):
the calibration's choice did not follow the held-out one (on OCRBench it chose α = 10 in 9 of
11 hold-outs, where α = 30 was the better), and a calibrated rule costs one calibration per
candidate — the setup doubled. So the library keeps α = 30 (a test checks that the calibrated
rules' gain is below 0.001). Writes ``research/adaptive/results/adaptive_alpha_choice.{csv,md}``
(included in docs/results.md).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # adaptive_replay
sys.path.insert(0, str(Path(__file__).resolve().parent))

import adaptive_replay as replay  # noqa: E402
import adaptive_rules as comparison  # noqa: E402

from primebench_tasks.adaptive.benchmark import AdaptiveBenchmark  # noqa: E402
from primebench_tasks.adaptive.defaults import ADAPTIVE_RIDGE_ALPHA  # noqa: E402
from primebench_tasks.adaptive.procedure import run_procedure  # noqa: E402
from primebench_tasks.metrics import nanmean_rows  # noqa: E402

ALPHAS = (10.0, ADAPTIVE_RIDGE_ALPHA)
"""The candidate α: the policy choice's two best (``adaptive_choice.py``), each the better on
some panels there."""
CALIBRATED = ("random folds", "all rows")
RULES = (*(f"α={a:g}" for a in ALPHAS), *(f"calibrated: {c}" for c in CALIBRATED))


def calibration_loss(bench: AdaptiveBenchmark, all_rows: bool = False) -> float:
    """How well ``bench``'s procedure predicted its own reference models held out of the fit:
    the mean over counts of the mean absolute calibration error less its median (the point
    moves by a median error), over the random folds' rows — or, ``all_rows``, over the random
    and the frontier folds' rows, each kind less its own median. NaN without a finite error."""
    errors, _, frontier, _ = bench.calibration
    kinds = [~frontier, frontier] if all_rows else [~frontier]
    per_count = []
    for j in range(errors.shape[1]):
        dev = []
        for rows in kinds:
            col = errors[rows, j]
            col = col[np.isfinite(col)]
            if len(col):
                dev.append(np.abs(col - np.median(col)))
        if dev:
            per_count.append(float(np.concatenate(dev).mean()))
    return float(np.mean(per_count)) if per_count else float("nan")


def measure(name: str, X: np.ndarray, protocol: str, seed: int) -> list[dict]:
    """Every candidate α's absolute errors on one hold-out of one panel, with its calibration
    loss (random folds, all rows), and the static suite's."""
    held, build = replay.hold_out(X, protocol, seed)
    Y = X[build]
    true = nanmean_rows(X[held])
    static = {
        k: np.abs(replay.static_prediction(Y, X[held], k, seed) - true) for k in replay.CHECKPOINTS
    }
    rows = []
    for a in ALPHAS:
        policy = replace(replay.BLEND_POLICY, ridge_alpha=float(a))
        bench = AdaptiveBenchmark(Y, max_items=max(replay.CHECKPOINTS), seed=seed, policy=policy)
        loss = {c: calibration_loss(bench, c == "all rows") for c in CALIBRATED}
        raw, _ = run_procedure(bench.procedure, X[held], replay.CHECKPOINTS, bench.batch)
        for c, k in enumerate(replay.CHECKPOINTS):
            point = np.array([bench.interval(float(p), k)[0] for p in raw[:, c]])
            rows.append(
                comparison.cell_row(
                    name,
                    X,
                    protocol,
                    seed,
                    k,
                    np.abs(point - true),
                    static[k],
                    alpha=float(a),
                    loss_random=loss["random folds"],
                    loss_all=loss["all rows"],
                )
            )
    return rows


def by_rule(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (hold-out, items, rule): the fixed α's errors, and the calibrated rules' —
    the errors of the α each chose on that hold-out's reference panel (ties → the smaller α)."""
    keys = ["panel", "models", "protocol", "split", "items"]
    out = [df.assign(rule=[f"α={a:g}" for a in df.alpha])]
    for c, col in (("random folds", "loss_random"), ("all rows", "loss_all")):
        best = df.sort_values([*keys, col, "alpha"], kind="stable").groupby(keys).head(1)
        out.append(best.assign(rule=f"calibrated: {c}"))
    return pd.concat(out, ignore_index=True)


def ratios(df: pd.DataFrame) -> pd.DataFrame:
    """The MAE ratio per panel, hold-out, items and rule (:func:`by_rule`)."""
    return comparison.rule_ratios(by_rule(df))


def table(df: pd.DataFrame) -> str:
    r = ratios(df)
    lines = comparison.rule_grid(r, RULES)
    picks = by_rule(df)
    picks = picks[
        picks.rule.str.startswith("calibrated") & (picks["items"] == replay.CHECKPOINTS[0])
    ]
    share = picks.groupby(["panel", "rule"], sort=False).alpha.agg(
        lambda a: "/".join(f"{(a == x).sum()}" for x in ALPHAS)
    )
    lines += [
        "",
        comparison.loss_sentence(r, RULES) + f"; deployed: `α={ADAPTIVE_RIDGE_ALPHA:g}`.",
        "",
        comparison.rule_summary(r, RULES)
        + ". How often each calibrated rule chose "
        + " / ".join(f"α={a:g}" for a in ALPHAS)
        + " (hold-outs): "
        + "; ".join(f"{p}, {rule.split(': ')[1]}: {s}" for (p, rule), s in share.items())
        + ".",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    comparison.compare("adaptive_alpha_choice", measure, table, "α per benchmark")


if __name__ == "__main__":
    main()
