"""p-IRT's weight in the adaptive point at the top of the panel and beyond it (issue #29): a
committed comparison with leave-one-panel-out evidence, after the policy (``adaptive_choice.py``),
the interval (``adaptive_interval_choice.py``) and the point's shift at the top
(``adaptive_top_shift.py``).

    python research/adaptive/adaptive_outside_weight.py [--splits 10]   # ~15 min, 2 cores
    python research/adaptive/adaptive_outside_weight.py --render        # the table from the committed CSV

Where p-IRT places a model at the top of the panel or beyond it, the policy (``regime_local``)
predicted the blend (p-IRT + ridge)/2 (the local kriging only inside). On the frontier
hold-outs the two halves err differently (the table's last line): the ridge regression
under-predicts on every panel (it shrinks toward the panel's mean), p-IRT errs less and either
way (over on MMMU, BLINK and RealWorldQA: the 2PL's logistic tail) — so the blend's error, and
the weight that would cancel it, depend on the benchmark. Candidates — the library's policy, item choice, calibration procedure, interval and
shift for all; only p-IRT's weight w outside the interior changes, the point there being
blend + (w − ½)·(p-IRT − ridge), in the calibration's rows as in the test:

- ``w=a`` for a in :data:`WEIGHTS` (``w=0.5`` the earlier blend; ``w=1``: p-IRT alone);
- ``w=a beyond`` for a in :data:`BEYOND_WEIGHTS`: the weight only where p-IRT places the model
  above every reference model (at the top of the panel the blend) — added after the first run
  had shown the random hold-outs' models at the top losing what the frontier gained with
  ``w=0.6`` and ``w=0.75``;
- ``stacked: frontier folds``: per benchmark and item count, w fitted by least squares on the
  calibration's nested frontier-fold rows outside the interior (the reference models held out
  above their whole fitting panel: the situation of a new model), clipped to [0, 1] — the
  calibration says which half the benchmark's 2PL and ridge deserve (:func:`stacked_weight`);
- ``stacked: outside rows``: the same on every calibration row outside the interior (random
  folds' top models too).

Each candidate's calibration errors, regimes and positions are recomputed with its own point
(the interval and the shift follow them), so a candidate is scored as it would be deployed. A
candidate's loss on a set of panels is its mean log MAE ratio to the static default suite over
their cells (25 / 50 / 100 items, random and frontier hold-outs), as in the other choices; leave
one panel out: the candidate with the least loss on the other four. The table also gives each
candidate's 90 % coverage at those counts (random · frontier), the stacked weights, and the
raw halves' mean errors beyond the panel on the frontier hold-outs.

Measured: ``w=0.6 beyond`` is chosen on all five panels (mean log ratio −0.595 against the
blend's −0.585) and on three of the five leave-one-out folds; it is the library's
:data:`~primebench_tasks.adaptive.defaults.ADAPTIVE_BEYOND_WEIGHT` (a test checks it, and that
its errors are the replay's). The stacked weights lost: the calibration's frontier folds stand
closer to their fitting models than the real frontier to the panel. Writes
``research/adaptive/results/adaptive_outside_weight.{csv,md}`` (included in docs/results.md).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # adaptive_replay
sys.path.insert(0, str(Path(__file__).resolve().parent))

import adaptive_replay as replay  # noqa: E402
import adaptive_rules as comparison  # noqa: E402

from primebench_tasks.adaptive.benchmark import CALIBRATION_DECIMALS, AdaptiveBenchmark
from primebench_tasks.adaptive.defaults import ADAPTIVE_BEYOND_WEIGHT, ADAPTIVE_FOLDS
from primebench_tasks.adaptive.policy import predict_adaptive
from primebench_tasks.adaptive.procedure import (
    AdaptiveProcedure,
    calibration_runs,
    run_procedure,  # noqa: E402
)
from primebench_tasks.metrics import nanmean_rows  # noqa: E402
from primebench_tasks.place.benchmark import (  # noqa: E402
    placement_position,
    placement_regime,
)
from primebench_tasks.place.calibration import FRONTIER_FOLDS  # noqa: E402

WEIGHTS = (0.5, 0.6, 0.75, 1.0)
"""The fixed candidates' p-IRT weight outside the interior (0.5: the earlier blend)."""
BEYOND_WEIGHTS = (0.6, 0.75, 1.0)
"""The ``beyond`` candidates' p-IRT weight where p-IRT places the model above every reference
model (at the top of the panel: the blend)."""
STACKED = ("frontier folds", "outside rows")
RULES = (
    *(f"w={w:g}" for w in WEIGHTS),
    *(f"w={w:g} beyond" for w in BEYOND_WEIGHTS),
    *(f"stacked: {s}" for s in STACKED),
)
BLEND = "w=0.5"
"""The earlier point: the blend (p-IRT + ridge)/2 at the top and beyond."""
DEPLOYED = f"w={ADAPTIVE_BEYOND_WEIGHT:g} beyond"
"""The library's point (:data:`~primebench_tasks.adaptive.defaults.ADAPTIVE_BEYOND_WEIGHT`)."""
BASE = replay.BLEND_POLICY
"""The policy every candidate starts from: the library's with the earlier point (the blend)."""


class ComponentProcedure(AdaptiveProcedure):
    """The procedure (under :data:`BASE`), which also logs, at every point it gives, (its point,
    p-IRT, ridge, outside the interior?, above every fitting model?, the fitting models' full
    scores) in :attr:`log`
    (class-wide: :func:`calibration_runs` builds its own instances). Its points and its items
    are the library's."""

    log: ClassVar[list[tuple[float, float, float, bool, bool, np.ndarray]]] = []

    def point(self, answers: np.ndarray, asked: np.ndarray) -> tuple[float, float]:
        theta, blend = super().point(answers, asked)
        answers, asked = np.asarray(answers, float), np.asarray(asked, bool)
        pirt = self._pirt(answers, asked, theta)
        regime = self._regime(pirt)
        outside = regime != "interior"
        items = np.flatnonzero(asked & np.isfinite(answers))
        ridge = (
            predict_adaptive(
                pirt, self.Y_fit, self.full_fit, items, answers, "ridge", self.policy.ridge_alpha
            )
            if outside
            else blend
        )
        beyond = regime == "beyond"
        ComponentProcedure.log.append((blend, pirt, ridge, outside, beyond, self.full_fit))
        return theta, blend


def logged(shape: tuple[int, int]) -> dict[str, np.ndarray]:
    """The log's entries since it was cleared, as arrays of ``shape`` (rows, counts): in the
    order :func:`_run` asks for points (row by row, count by count)."""
    log = ComponentProcedure.log
    assert len(log) == shape[0] * shape[1], (len(log), shape)
    out = {
        key: np.array([e[i] for e in log], bool if i >= 3 else float).reshape(shape)
        for i, key in enumerate(("base", "pirt", "ridge", "outside", "beyond"))
    }
    fits = [e[5] for e in log]
    out["fit"] = np.array([fits[r * shape[1]] for r in range(shape[0])], dtype=object)
    ComponentProcedure.log = []
    return out


def moved(parts: dict[str, np.ndarray], w: np.ndarray, where: str = "outside") -> np.ndarray:
    """The points (R, C) with p-IRT's weight ``w`` (C,) ``where`` p-IRT places the model
    (``outside`` the interior, or ``beyond`` every reference model): the blend + (w − ½)·(p-IRT
    − ridge) there (exactly the base point where w = ½), the base point (:data:`BASE`'s)
    elsewhere."""
    shift = (np.asarray(w, float)[None, :] - 0.5) * (parts["pirt"] - parts["ridge"])
    return np.where(parts[where] & (shift != 0), parts["base"] + shift, parts["base"])


def stacked_weight(parts: dict[str, np.ndarray], true: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """p-IRT's weight (C,) at each count fitted by least squares on the calibration ``rows``
    (R,) bool outside the interior: w − ½ = Σ d·(t − b) / Σ d², d = p-IRT − ridge, b the
    blend, t the true full score (``true`` (R,)); clipped to [0, 1]; ½ where no row
    is outside or every d is 0."""
    out = np.full(parts["pirt"].shape[1], 0.5)
    for j in range(len(out)):
        use = rows & parts["outside"][:, j] & np.isfinite(true)
        d = (parts["pirt"][:, j] - parts["ridge"][:, j])[use]
        if use.any() and float(d @ d) > 0:
            r = (true - parts["base"][:, j])[use]
            out[j] = float(np.clip(0.5 + (d @ r) / (d @ d), 0.0, 1.0))
    return out


def calibration_for(
    parts: dict[str, np.ndarray],
    errors: np.ndarray,
    frontier: np.ndarray,
    w: np.ndarray,
    where: str = "outside",
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The calibration (errors, regimes, frontier, positions) of the points with weight ``w``
    ``where`` (:func:`moved`), from the base points' unrounded ``errors`` (R, C), rounded as
    the library keeps it."""
    pred = moved(parts, w, where)
    errors = np.round(errors - (pred - parts["base"]), CALIBRATION_DECIMALS)
    regimes = np.empty(pred.shape, dtype=object)
    positions = np.empty(pred.shape)
    for r, fit in enumerate(parts["fit"]):
        regimes[r] = placement_regime(pred[r], fit)
        positions[r] = placement_position(pred[r], fit)
    return errors, regimes, frontier, np.round(positions, CALIBRATION_DECIMALS)


def measure(name: str, X: np.ndarray, protocol: str, seed: int) -> list[dict]:
    """Every rule's and the static suite's absolute errors and 90 % coverage on one hold-out of
    one panel."""
    held, build = replay.hold_out(X, protocol, seed)
    Y = X[build]
    bench = AdaptiveBenchmark(Y, max_items=max(replay.CHECKPOINTS), seed=seed, policy=BASE)
    ComponentProcedure.log = []
    errors, pred, _, frontier, _ = calibration_runs(
        Y,
        bench.counts,
        bench.batch,
        ADAPTIVE_FOLDS,
        seed,
        FRONTIER_FOLDS,
        bench.policy,
        ComponentProcedure,
    )
    cal = logged(pred.shape)
    true_cal = (errors + pred)[:, 0]
    base_cal = np.round(errors, CALIBRATION_DECIMALS)
    assert np.array_equal(cal["base"], pred)  # the library's own points under BASE
    test = ComponentProcedure(Y, bench.policy)
    raw, _ = run_procedure(test, X[held], replay.CHECKPOINTS, bench.batch)
    parts = logged(raw.shape)
    true = nanmean_rows(X[held])
    counts = [int(np.searchsorted(bench.counts, c, side="right")) - 1 for c in replay.CHECKPOINTS]
    weights = {f"w={w:g}": np.full(len(bench.counts), w) for w in WEIGHTS}
    weights.update({f"w={w:g} beyond": np.full(len(bench.counts), w) for w in BEYOND_WEIGHTS})
    weights["stacked: frontier folds"] = stacked_weight(cal, true_cal, frontier)
    weights["stacked: outside rows"] = stacked_weight(cal, true_cal, np.ones(len(frontier), bool))
    got: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for rule, w in weights.items():
        where = "beyond" if rule.endswith(" beyond") else "outside"
        calib = calibration_for(cal, errors, frontier, w, where)
        if rule == BLEND:
            assert np.array_equal(calib[0], base_cal, equal_nan=True)
        bench.__dict__["calibration"] = calib
        pts = moved(parts, w[counts], where)
        out = np.full((3, *raw.shape), np.nan)
        for v in range(len(held)):
            for c, count in enumerate(replay.CHECKPOINTS):
                out[:, v, c] = bench.interval(float(pts[v, c]), count)[:3]
        got[rule] = (out[0], out[1], out[2])
    rows = []
    hold = (name, X, protocol, seed)
    for c, k in enumerate(replay.CHECKPOINTS):
        static = np.abs(replay.static_prediction(Y, X[held], k, seed) - true)
        beyond = parts["beyond"][:, c]
        halves = {  # the raw halves' signed errors where p-IRT places the model beyond the panel
            f"{half}_err_sum_beyond": float((parts[half][beyond, c] - true[beyond]).sum())
            for half in ("pirt", "ridge")
        }
        for rule in RULES:
            point, lo, hi = (a[:, c] for a in got[rule])
            rows.append(
                comparison.cell_row(
                    *hold,
                    k,
                    np.abs(point - true),
                    static,
                    rule=rule,
                    weight=float(weights[rule][counts[c]]),
                    covered=int(((lo <= true) & (true <= hi)).sum()),
                    outside=int(parts["outside"][:, c].sum()),
                    beyond=int(beyond.sum()),
                    **halves,
                )
            )
    return rows


def ratios(df: pd.DataFrame) -> pd.DataFrame:
    """The MAE ratio per panel, hold-out, items and rule."""
    return comparison.rule_ratios(df)


def chosen(r: pd.DataFrame, panels: list[str] | None = None) -> str:
    """The rule with the least mean loss over ``panels`` (every panel if None)."""
    return comparison.chosen_rule(r, RULES, panels)


def coverage(df: pd.DataFrame) -> str:
    """Each rule's 90 % coverage at 25 / 50 / 100 items over every panel, random · frontier."""
    parts = []
    for rule in RULES:
        d = df[df.rule == rule].groupby("protocol")
        share = d.covered.sum() / d.held_out.sum()
        parts.append(
            f"`{rule}` {100 * share.get('random', np.nan):.1f} % · "
            f"{100 * share.get('frontier', np.nan):.1f} %"
        )
    return "90 % coverage at 25 / 50 / 100 items, every panel (random · frontier): " + ", ".join(
        parts
    )


def weights_sentence(df: pd.DataFrame) -> str:
    """The stacked rules' weights at 50 and 100 items per panel (mean over the hold-outs)."""
    parts = []
    for stack in STACKED:
        d = df[(df.rule == f"stacked: {stack}") & df["items"].isin(replay.GOAL_ITEMS)]
        w = d.groupby(["panel", "items"], sort=False).weight.mean()
        text = "; ".join(
            f"{panel} {' / '.join(f'{x:.2f}' for x in w.loc[panel])}"
            for panel in dict.fromkeys(w.index.get_level_values(0))
        )
        parts.append(f"{stack}: {text}")
    return "The stacked weights at 50 / 100 items (mean over the hold-outs): " + " — ".join(parts)


def halves_sentence(df: pd.DataFrame) -> str:
    """The raw halves' mean signed error (prediction − truth) beyond the panel on the frontier
    hold-outs at 50 items, per panel."""
    d = df[(df.rule == BLEND) & (df.protocol == "frontier") & (df["items"] == 50)]
    parts = []
    for panel, g in d.groupby("panel", sort=False):
        n = g.beyond.sum()
        if n:
            parts.append(
                f"{panel} {g.pirt_err_sum_beyond.sum() / n:+.3f} / "
                f"{g.ridge_err_sum_beyond.sum() / n:+.3f} ({n} models)"
            )
    return (
        "Where p-IRT places a frontier hold-out's model above every reference model at 50 items, "
        "the raw halves' mean error (prediction − truth), p-IRT / ridge: " + "; ".join(parts)
    )


def table(df: pd.DataFrame) -> str:
    r = ratios(df)
    lines = comparison.rule_grid(r, RULES)
    lines += [
        "",
        comparison.lopo_sentence(r, RULES) + f". On all five: **`{chosen(r)}`**.",
        "",
        comparison.rule_summary(r, RULES) + ".",
        "",
        coverage(df) + ".",
        "",
        weights_sentence(df) + ".",
        "",
        halves_sentence(df) + ".",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    comparison.compare("adaptive_outside_weight", measure, table, "p-IRT's weight outside")


if __name__ == "__main__":
    main()
