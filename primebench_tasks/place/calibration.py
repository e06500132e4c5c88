"""Calibration of placement intervals at build time, with the item selection inside the
cross-validation.

Residuals of the reference models on a suite that was *selected on those same models* are
optimistic: the items were chosen to track them. On small panels (16–24 models) intervals from
such residuals covered 67–80 % for a nominal 95 %. Here each of ``folds`` folds of the build models
is held out, the suite is rebuilt on the other models with the same parameters, and the held-out
models are placed on it from their real responses: their errors ``true − predicted`` full-suite
score are what a new model's placement error looks like (CV+ / cross-conformal with the selection
refitted). The manifest stores them (``placement_calibration``); ``place_models`` uses them.

A new model is usually stronger than every reference model, and random folds never show that
case. Nested *frontier* folds do: the strongest ``FRONTIER_SHARE`` of the models are held out and
the suite is rebuilt on the weaker models only (then the next ``FRONTIER_SHARE``, ...). Every
held-out error is filed under the regime its prediction fell in among its fold's reference models
(``placement.REGIMES``); ``place_models`` gives a new model the interval of its own regime.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from primebench_tasks.data.panel import Panel
from primebench_tasks.pipeline.manifest import manifest_items
from primebench_tasks.place.benchmark import (
    DEFAULT_ESTIMATOR,
    REGIMES,
    full_suite_scores,
    place_models,
)
from primebench_tasks.place.defaults import FRONTIER_SHARE
from primebench_tasks.suite.manifest import SuiteManifest

FOLDS = 10
FRONTIER_FOLDS = 3


def suite_responses(panel: Panel, manifest: SuiteManifest, models: list[str]) -> pd.DataFrame:
    """``models``' scores on the manifest's items: (models × (benchmark, item_id)), NaN =
    missing."""
    rows = [panel.model_names.index(m) for m in models]
    cols, vals = [], []
    for by_b in manifest_items(manifest).values():
        for b, ids in by_b.items():
            pid = {str(i): j for j, i in enumerate(panel.item_ids(b))}
            X = panel.matrix(b)
            for i in ids:
                cols.append((b, str(i)))
                vals.append(X[rows, pid[str(i)]])
    return pd.DataFrame(
        np.array(vals).T,
        index=models,
        columns=pd.MultiIndex.from_tuples(cols, names=["benchmark", "item_id"]),
    )


def _place_fold(
    panel: Panel,
    params: Any,
    estimator: str,
    seed: int,
    held: list[str],
    train: list[str],
    full: pd.Series,
) -> tuple[list[float], list[str]]:
    """Build on ``train``, place ``held`` from their responses: (true − predicted, regime)."""
    from primebench_tasks.pipeline.primebench import run_pipeline

    ref = panel.subset_models(train)
    manifest = run_pipeline(ref, params).manifest(ref, "calibration")
    placed = place_models(
        ref,
        manifest,
        suite_responses(panel, manifest, held),
        estimator,
        n_boot=1,
        seed=seed,
        residuals=np.zeros(0),
    )
    resid = full[held].to_numpy() - placed["predicted_full"].to_numpy()
    return list(resid), list(placed["regime"])


def placement_errors(
    panel: Panel,
    params: Any,
    estimator: str = DEFAULT_ESTIMATOR,
    folds: int = FOLDS,
    seed: int = 0,
    frontier_folds: int = FRONTIER_FOLDS,
    frontier_share: float = FRONTIER_SHARE,
) -> pd.DataFrame:
    """Held-out placement errors of the panel's models: columns ``residual`` (true − predicted
    full-suite score), ``regime`` (where the prediction fell among the fold's reference models:
    :func:`~primebench_tasks.place.benchmark.placement_regime`) and ``fold_kind``.

    - ``random``: ``folds`` random folds; each is placed on a suite rebuilt without it.
    - ``frontier``: ``frontier_folds`` nested folds of the strongest models: fold j holds out the
      models ranked in ``[j·h, (j+1)·h)`` by full score (h = ``frontier_share`` of the models)
      and builds on the models ranked below them only, so that the held-out models stand above
      their whole reference panel — the case of a new model stronger than every known one."""
    full = full_suite_scores(panel)
    models = [m for m in panel.model_names if np.isfinite(full[m])]
    k = max(2, min(folds, len(models)))
    order = np.random.default_rng(seed).permutation(len(models))
    rows: list[tuple[float, str, str]] = []
    for f in range(k):
        held = [models[j] for j in sorted(order[f::k])]
        train = [m for m in panel.model_names if m not in set(held)]
        if len(train) < 4 or not held:
            continue
        r, g = _place_fold(panel, params, estimator, seed, held, train, full)
        rows += [(x, y, "random") for x, y in zip(r, g, strict=True)]
    ranked = list(full[models].sort_values(ascending=False, kind="stable").index)
    h = max(1, int(round(frontier_share * len(models))))
    for j in range(frontier_folds):
        held = sorted(ranked[j * h : (j + 1) * h])
        below = set(ranked[(j + 1) * h :])
        train = [m for m in panel.model_names if m in below]
        if len(train) < max(4, h) or not held:
            break
        r, g = _place_fold(panel, params, estimator, seed, held, train, full)
        rows += [(x, y, "frontier") for x, y in zip(r, g, strict=True)]
    out = pd.DataFrame(rows, columns=["residual", "regime", "fold_kind"])
    return out[np.isfinite(out["residual"])].reset_index(drop=True)


def placement_residuals(
    panel: Panel, params: Any, estimator: str = DEFAULT_ESTIMATOR, folds: int = FOLDS, seed: int = 0
) -> np.ndarray:
    """Held-out errors (true − predicted full-suite score) of the panel's models, each placed on
    a suite rebuilt without its random fold (``params``: the build's ``PipelineParams``).
    Sorted."""
    e = placement_errors(panel, params, estimator, folds, seed, frontier_folds=0)
    return np.sort(e["residual"].to_numpy(float))


def calibration_entry(
    panel: Panel,
    params: Any,
    estimator: str = DEFAULT_ESTIMATOR,
    folds: int = FOLDS,
    seed: int = 0,
    frontier_folds: int = FRONTIER_FOLDS,
) -> dict[str, Any]:
    """The manifest's ``placement_calibration`` field: the random folds' residuals (``residuals``)
    and every residual by the regime its prediction fell in (``regimes``; random and frontier
    folds together), rounded to 6 decimals."""
    e = placement_errors(panel, params, estimator, folds, seed, frontier_folds)

    def rounded(x: pd.Series) -> list[float]:
        return [round(float(v), 6) for v in np.sort(x.to_numpy(float))]

    return {
        "estimator": estimator,
        "folds": folds,
        "frontier_folds": frontier_folds,
        "frontier_share": FRONTIER_SHARE,
        "seed": seed,
        "protocol": f"{folds}-fold over the build models: suite rebuilt without the fold, "
        "held-out models placed from their responses; residual = true - "
        f"predicted full-suite score; plus {frontier_folds} nested frontier folds (the "
        f"strongest {FRONTIER_SHARE:.0%} held out, built on weaker models only)",
        "residuals": rounded(e.loc[e["fold_kind"] == "random", "residual"]),
        "regimes": {
            g: rounded(e.loc[e["regime"] == g, "residual"])
            for g in REGIMES
            if (e["regime"] == g).any()
        },
    }
