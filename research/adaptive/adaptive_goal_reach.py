"""What the adaptive cells short of issue #29's MAE goal would take: how many items the deployed
test needs there to reach 0.7 × the static suite's error, and what other predictors and item
choices give at 50 and 100 items on the same panels.

    python research/adaptive/adaptive_goal_reach.py [--splits 5]   # ~20 min, 2 cores
    python research/adaptive/adaptive_goal_reach.py --render       # the tables from the committed CSV

The cells (:data:`CELLS`): AI2D's random hold-outs (the unmet cells with the most tests: 34
held-out models a split) and the frontier hold-outs of MMMU, OCRBench and RealWorldQA (25–28
models each). Per hold-out:

- ``deployed``: the library's test, replayed as ``adaptive_replay.py`` replays it (calibrated
  point, :func:`~primebench_tasks.evaluate.adaptive_validation.replay_hold_out`) at 25, 50 and
  100 items — its errors are ``adaptive_replay.csv``'s (a test checks it) — beside the static
  default suite of the same size; and its point uncalibrated (``deployed, uncalibrated``) on to
  :data:`COUNTS` items, the static suite beside it at each. The curve is uncalibrated because the
  calibration replays every reference model to the largest count (an hour a split on AI2D at 400
  items); what the calibration's shift does to a ratio at 50 and 100 items is the second table's
  first column against the first table's ratios (on AI2D little; on the frontier up to 0.2,
  either way).
- Predictors on the deployed test's own asked items (uncalibrated points, so compared with the
  deployed point uncalibrated): the local kriging alone, kriging with every reference model
  weighted alike (the ridge regression of the full scores), kriging weighted by ability alone
  (no answer agreement), p-IRT alone, and the mean of the local and the global kriging in the
  deployed blend.
- An item choice: the deployed choice with every reference model weighted alike (inside the
  panel, where the deployed test weights them by closeness), uncalibrated.

Measured (5 random splits): on AI2D's random hold-outs the uncalibrated test needs 300 items to
be within 0.7 × the static suite's error at 100 items (and 100 items for its error at 50); no
predictor or choice here is better than the deployed one on every cell — the global-weight choice
gains RealWorldQA's frontier and loses OCRBench's and AI2D's, and MMMU's frontier at 50 items is
0.67 uncalibrated, 0.84 after the calibration's shift, which gains OCRBench's frontier instead.
Writes ``research/adaptive/results/adaptive_goal_reach.{csv,md}``
(included in docs/results.md; a test checks them).
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

from primebench_tasks.adaptive.defaults import ADAPTIVE_TARGET_WIDTH  # noqa: E402
from primebench_tasks.adaptive.local_gaussian import LocalGaussian  # noqa: E402
from primebench_tasks.adaptive.policy import BATCH, AdaptivePolicy
from primebench_tasks.adaptive.procedure import (
    AdaptiveProcedure,
    run_procedure,  # noqa: E402
)
from primebench_tasks.evaluate.adaptive_validation import (  # noqa: E402
    replay_hold_out,
    static_prediction,
)

CELLS = (
    ("autojudger AI2D_TEST", "random"),
    ("autojudger MMMU_DEV_VAL", "frontier"),
    ("OCRBench records (held out)", "frontier"),
    ("RealWorldQA records (held out)", "frontier"),
)
"""(benchmark, hold-out) of the cells measured: those short of the goal in adaptive_replay.md."""
COUNTS = (25, 50, 100, 150, 200, 300, 400)
"""The item counts at which the deployed test (uncalibrated) and the static suite are compared."""
REPLAYED = (25, 50, 100)
"""The item counts of ``adaptive_replay.py``: the calibrated test's."""
GOAL_COUNTS = (50, 100)
"""The goal's item counts: the static suite's error there, × :data:`GOAL`, is the mark."""
GOAL = 0.7
VARIANTS = ("deployed, uncalibrated", "kriging alone", "global kriging", "ability weights only")
VARIANTS += ("p-IRT alone", "local + global kriging", "global-weight choice")
"""The other predictors and choices, compared at :data:`GOAL_COUNTS` items."""


class GlobalChoice(AdaptiveProcedure):
    """The deployed procedure, but inside the panel its items are chosen with every reference
    model weighted alike."""

    def pick(
        self, answers: np.ndarray, asked: np.ndarray, k: int, exclude: np.ndarray | None = None
    ) -> np.ndarray:
        theta, _ = self.state(answers, asked)
        if self.local is not None and self._interior(self._pirt(answers, asked, theta)):
            return self.local.choose(answers, asked, k, np.ones(len(self.Y_fit)), exclude)
        return super().pick(answers, asked, k, exclude)


def predictors(
    procedure: AdaptiveProcedure, by_ability: LocalGaussian, y: np.ndarray, items: np.ndarray
) -> list[float]:
    """The predicted full scores of a model with answers ``y`` (n,) asked ``items``: the second
    to the sixth of :data:`VARIANTS`, in order; ``by_ability``: the procedure's local model
    with no answer agreement (its weights are the ability weights)."""
    local = procedure.local
    assert local is not None
    asked = np.zeros(len(y), bool)
    asked[items] = True
    answers = np.where(asked, y, np.nan)
    theta, w = procedure.state(answers, asked)
    assert w is not None
    pirt = procedure._pirt(answers, asked, theta)
    kriging = local.predict(answers, asked, w)
    flat = local.predict(answers, asked, np.ones(len(w)))
    ability = local.predict(answers, asked, by_ability.weights(answers, asked, theta))
    p = procedure.policy.pirt_weight
    return [
        kriging,
        p * pirt + (1 - p) * flat,
        p * pirt + (1 - p) * ability,
        pirt,
        p * pirt + (1 - p) * (kriging + flat) / 2,
    ]


def measure(name: str, X: np.ndarray, protocol: str, seed: int) -> list[dict]:
    """One row per held-out model, variant and item count: its error and the static suite's."""
    if (name, protocol) not in CELLS:
        return []
    r = replay_hold_out(X, protocol, seed, REPLAYED, ADAPTIVE_TARGET_WIDTH)
    base = {"benchmark": name, "protocol": protocol, "split": seed}
    rows = [
        {
            **base,
            "model": int(row.model),
            "variant": "deployed",
            "items": int(row.items),
            "err": abs(row.predicted - row.true),
            "static_err": abs(row.static - row.true),
        }
        for row in r.itertuples()
    ]
    held, build = replay.hold_out(X, protocol, seed)
    true = np.nanmean(X[held], axis=1)
    replayed = r.pivot(index="model", columns="items", values="static").loc[held]
    static = {  # the replay's static suite where it has one: the same seed gives the same
        c: np.abs(
            (
                replayed[c].to_numpy()
                if c in REPLAYED
                else static_prediction(X[build], X[held], c, seed)
            )
            - true
        )
        for c in COUNTS
    }
    procedure = AdaptiveProcedure(X[build], AdaptivePolicy())
    assert procedure.local is not None
    by_ability = LocalGaussian(
        X[build],
        procedure.model,
        alpha=procedure.local.alpha,
        bandwidth=procedure.local.bandwidth,
        agreement=0.0,
    )
    curve, order = run_procedure(procedure, X[held], COUNTS, BATCH)
    chosen, _ = run_procedure(GlobalChoice(X[build], AdaptivePolicy()), X[held], GOAL_COUNTS, BATCH)
    for v, model in enumerate(held):
        rows += [
            {
                **base,
                "model": int(model),
                "variant": "deployed, uncalibrated",
                "items": count,
                "err": abs(curve[v, j] - true[v]),
                "static_err": static[count][v],
            }
            for j, count in enumerate(COUNTS)
            if count not in GOAL_COUNTS
        ]
        for j, count in enumerate(GOAL_COUNTS):
            items = order[v, :count]
            preds = [
                curve[v, COUNTS.index(count)],
                *predictors(procedure, by_ability, X[model], items[items >= 0]),
                chosen[v, j],
            ]
            rows += [
                {
                    **base,
                    "model": int(model),
                    "variant": variant,
                    "items": count,
                    "err": abs(pred - true[v]),
                    "static_err": static[count][v],
                }
                for variant, pred in zip(VARIANTS, preds, strict=True)
            ]
    return rows


def table(df: pd.DataFrame) -> str:
    """The deployed test's ratios per cell, its uncalibrated error curve and the items it needs
    to reach the goal, then the variants' ratios at the goal's counts (MAE ÷ the static suite's
    MAE over the same tests)."""
    lines = [
        "| benchmark | hold-out | tests | MAE ÷ static MAE at 50 / 100 items | uncalibrated MAE "
        "at " + " / ".join(map(str, COUNTS)) + " items (static: the same counts) | items "
        f"it needs to reach {GOAL:g} × the static MAE at 50 / 100 items |",
        "|---|---|---|---|---|---|",
    ]
    for (bench, protocol), d in df.groupby(["benchmark", "protocol"], sort=False):
        deployed = d[d.variant == "deployed"].groupby("items")[["err", "static_err"]].mean()
        curve = d[d.variant == "deployed, uncalibrated"].groupby("items")
        mae, static = curve.err.mean(), curve.static_err.mean()
        reach = []
        for c in GOAL_COUNTS:
            ok = mae.index[mae <= GOAL * static[c]]
            reach.append(str(int(ok.min())) if len(ok) else f"> {max(COUNTS)}")
        tests = d[d.variant == "deployed"].groupby("split").model.nunique().sum()
        lines.append(
            f"| {bench} | {protocol} | {tests} | "
            + " / ".join(f"{deployed.err[c] / deployed.static_err[c]:.2f}" for c in GOAL_COUNTS)
            + " | "
            + " / ".join(f"{mae[c]:.4f}" for c in COUNTS)
            + " (static "
            + " / ".join(f"{static[c]:.4f}" for c in COUNTS)
            + ") | "
            + " / ".join(reach)
            + " |"
        )
    lines += [
        "",
        "The same tests, other predictors (on the deployed test's asked items) and one other "
        "item choice, uncalibrated — MAE ÷ the static suite's MAE at 50 / 100 items:",
        "",
        "| benchmark | hold-out | " + " | ".join(VARIANTS) + " |",
        "|---|---|" + "---|" * len(VARIANTS),
    ]
    other = df[df.variant.isin(VARIANTS) & df["items"].isin(GOAL_COUNTS)]
    for (bench, protocol), d in other.groupby(["benchmark", "protocol"], sort=False):
        cells = []
        for variant in VARIANTS:
            e = d[d.variant == variant].groupby("items")[["err", "static_err"]].mean()
            cells.append(" / ".join(f"{e.err[c] / e.static_err[c]:.2f}" for c in GOAL_COUNTS))
        lines.append(f"| {bench} | {protocol} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    comparison.compare("adaptive_goal_reach", measure, table, "goal reach", splits=5, cells=CELLS)


if __name__ == "__main__":
    main()
