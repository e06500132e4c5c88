"""Where the adaptive point moves at the top of the panel or beyond it: how the rule was chosen
(issue #29), by a committed procedure with leave-one-panel-out evidence, after the policy
(``adaptive_choice.py``) and the interval (``adaptive_interval_choice.py``).

    python research/adaptive/adaptive_top_shift.py [--splits 10]   # ~14 min, 2 cores
    python research/adaptive/adaptive_top_shift.py --render        # the table from the committed CSV

The calibrated point is the raw prediction moved by a median calibration error
(:meth:`~primebench_tasks.adaptive.benchmark.AdaptiveBenchmark.interval`). At the top of the
panel the calibration rows are of two kinds: reference models held out at random (their errors
centre near 0) and the frontier folds' models, which stood above the models they were fitted on
(their predictions fall short: errors > 0). A new model predicted at the top may be either.
Candidates — the default policy, calibration and item choice for all; only the point at the top
or beyond changes, and no interval does:

- ``all rows`` (the earlier rule): the median error of every calibration row at the top (of the
  frontier folds' rows beyond it);
- ``random-fold rows``: at the top, of the random folds' rows only (no frontier correction);
- ``no shift``: at the top, the raw prediction;
- ``nearest k`` (k in ``candidates.ADAPTIVE_NEAREST_SHIFTS``):
  at the top or beyond, the median error of the k calibration rows, of either kind, whose
  predictions stood nearest in position among their fitting models
  (:func:`~primebench_tasks.place.benchmark.placement_position`) — whether the position
  tells the two kinds apart.

Inside the panel every candidate moves the point by the random folds' interior median error, as
deployed. A candidate's loss on a set of panels is its mean log MAE ratio to the static default
suite over their cells (25 / 50 / 100 items, random and frontier hold-outs), as in the policy's
choice; leave one panel out: the candidate with the least loss on the other four. The default
(:data:`~primebench_tasks.adaptive.defaults.ADAPTIVE_NEAREST_SHIFT`) is the candidate chosen on
all five; a test checks it, and that the deployed rule's errors are the replay's. k = 40 alone
was tried first, in an uncommitted pilot on these panels (with k = 10 and 20), before this grid.
Writes ``research/adaptive/results/adaptive_top_shift.{csv,md}`` (included in docs/results.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # adaptive_replay
sys.path.insert(0, str(Path(__file__).resolve().parent))

import adaptive_replay as replay  # noqa: E402
import adaptive_rules as comparison  # noqa: E402
from candidates import ADAPTIVE_NEAREST_SHIFTS  # noqa: E402

from primebench_tasks.adaptive.benchmark import AdaptiveBenchmark  # noqa: E402
from primebench_tasks.adaptive.procedure import run_procedure  # noqa: E402
from primebench_tasks.metrics import nanmean_rows  # noqa: E402
from primebench_tasks.place.benchmark import (  # noqa: E402
    REGIMES,
    placement_regime,
    regime_residuals,
)

NEAREST = ADAPTIVE_NEAREST_SHIFTS
"""The k of the ``nearest k`` rules: calibration rows whose median error moves the point."""
RULES = ("all rows", "random-fold rows", "no shift", *(f"nearest {k}" for k in NEAREST))


def points(bench: AdaptiveBenchmark, raw: np.ndarray) -> dict[str, np.ndarray]:
    """Every rule's point (V, C) from the raw predictions ``raw`` (V, C) at
    :data:`adaptive_replay.CHECKPOINTS`, with ``bench``'s calibration. The earlier rule and the
    ``nearest k`` rules are the library's own
    (:meth:`~primebench_tasks.adaptive.benchmark.AdaptiveBenchmark.interval` with
    ``nearest_shift`` None or k); the two others differ from the earlier rule only at the top.
    No rule changes the interval, into which every point is clipped."""
    errors, regimes, frontier, _ = bench.calibration
    library = {"all rows": None, **{f"nearest {k}": k for k in NEAREST}}
    deployed = bench.nearest_shift
    out = {r: np.full(raw.shape, np.nan) for r in RULES}
    for c, count in enumerate(replay.CHECKPOINTS):
        j = int(np.searchsorted(bench.counts, count, side="right")) - 1
        for v, pred in enumerate(raw[:, c]):
            for rule, k in library.items():
                bench.nearest_shift = k
                out[rule][v, c], lo, hi, regime = bench.interval(float(pred), count)
            for rule in ("random-fold rows", "no shift"):
                out[rule][v, c] = out["all rows"][v, c]
            if regime == "top":
                rows = np.isfinite(errors[:, j]) & ~frontier
                shift = median_error(errors[rows, j], regimes[rows, j], regime)
                out["random-fold rows"][v, c] = np.clip(pred + shift, lo, hi)
                out["no shift"][v, c] = np.clip(pred, lo, hi)
    bench.nearest_shift = deployed
    return out


def median_error(errors: np.ndarray, regimes: np.ndarray, regime: str) -> float:
    """The median of the calibration ``errors`` (R,) of ``regime`` among their ``regimes`` (R,),
    neighbouring regimes borrowed as the deployed interval does
    (:func:`~primebench_tasks.place.benchmark.regime_residuals`)."""
    by = {g: list(errors[regimes == g]) for g in REGIMES}
    return float(np.median(regime_residuals(by, regime)))


def losses(r: pd.DataFrame) -> pd.DataFrame:
    """Each panel's (rows) loss of each rule (columns, in :data:`RULES`' order)."""
    return comparison.rule_losses(r, RULES)


def chosen(r: pd.DataFrame, panels: list[str] | None = None) -> str:
    """The rule with the least mean loss over ``panels`` (every panel if None; ties → the
    earlier rule in :data:`RULES`)."""
    return comparison.chosen_rule(r, RULES, panels)


def lopo(r: pd.DataFrame) -> dict[str, str]:
    """Leave one panel out: for each panel, the rule chosen on the other panels."""
    return comparison.rule_lopo(r, RULES)


def measure(name: str, X: np.ndarray, protocol: str, seed: int) -> list[dict]:
    """Every rule's and the static suite's absolute errors on one hold-out of one panel."""
    held, build = replay.hold_out(X, protocol, seed)
    Y = X[build]
    bench = AdaptiveBenchmark(
        Y, max_items=max(replay.CHECKPOINTS), seed=seed, policy=replay.BLEND_POLICY
    )
    full = nanmean_rows(Y)
    raw, _ = run_procedure(bench.procedure, X[held], replay.CHECKPOINTS, bench.batch)
    true = nanmean_rows(X[held])
    got = points(bench, raw)
    rows = []
    for c, k in enumerate(replay.CHECKPOINTS):
        static = np.abs(replay.static_prediction(Y, X[held], k, seed) - true)
        for rule in RULES:
            err = np.abs(got[rule][:, c] - true)
            top = placement_regime(raw[:, c], full) != "interior"
            rows.append(
                comparison.cell_row(
                    name, X, protocol, seed, k, err, static, rule=rule, at_top=int(top.sum())
                )
            )
    return rows


def ratios(df: pd.DataFrame) -> pd.DataFrame:
    """The MAE ratio per panel, hold-out, items and rule."""
    return comparison.rule_ratios(df)


def table(df: pd.DataFrame) -> str:
    r = ratios(df)
    lines = comparison.rule_grid(r, RULES)
    tops = (
        df[(df.rule == RULES[0]) & (df["items"] == max(replay.CHECKPOINTS))]
        .groupby("protocol")
        .apply(lambda d: d.at_top.sum() / d.held_out.sum(), include_groups=False)
    )
    lines += [
        "",
        comparison.lopo_sentence(r, RULES) + f". On all five: **`{chosen(r)}`**.",
        "",
        comparison.rule_summary(r, RULES)
        + f". Predicted at the top of the panel or beyond it at 100 items: "
        f"{100 * tops.get('random', float('nan')):.0f} % of the random hold-outs' models, "
        f"{100 * tops.get('frontier', float('nan')):.0f} % of the frontier's.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    comparison.compare("adaptive_top_shift", measure, table, "top-of-panel shift")


if __name__ == "__main__":
    main()
