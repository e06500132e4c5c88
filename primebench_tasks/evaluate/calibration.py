"""Calibration of placement intervals at build time, with the item selection inside the
cross-validation.

Residuals of the reference models on a suite that was *selected on those same models* are
optimistic: the items were chosen to track them. On small panels (16–24 models) intervals from
such residuals covered 67–80 % for a nominal 95 %. Here each of ``folds`` folds of the build models
is held out, the suite is rebuilt on the other models with the same parameters, and the held-out
models are placed on it from their real responses: their errors ``true − predicted`` full-suite
score are what a new model's placement error looks like (CV+ / cross-conformal with the selection
refitted). The manifest stores them (``placement_calibration``); ``place_models`` uses them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from primebench_tasks.data.panel import Panel
from primebench_tasks.evaluate.placement import DEFAULT_ESTIMATOR, full_suite_scores, place_models
from primebench_tasks.pipeline.manifest import manifest_items

FOLDS = 10


def suite_responses(panel: Panel, manifest: dict[str, Any], models: list[str]) -> pd.DataFrame:
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


def placement_residuals(
    panel: Panel, params: Any, estimator: str = DEFAULT_ESTIMATOR, folds: int = FOLDS, seed: int = 0
) -> np.ndarray:
    """Held-out errors (true − predicted full-suite score) of the panel's models, each placed on
    a suite rebuilt without its fold (``params``: the build's ``PipelineParams``). Sorted."""
    from primebench_tasks.pipeline.primebench import run_pipeline

    full = full_suite_scores(panel)
    models = [m for m in panel.model_names if np.isfinite(full[m])]
    k = max(2, min(folds, len(models)))
    order = np.random.default_rng(seed).permutation(len(models))
    out: list[float] = []
    for f in range(k):
        held = [models[j] for j in sorted(order[f::k])]
        train = [m for m in panel.model_names if m not in set(held)]
        if len(train) < 4 or not held:
            continue
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
        out += list(full[held].to_numpy() - placed["predicted_full"].to_numpy())
    r = np.asarray(out, dtype=float)
    return np.sort(r[np.isfinite(r)])


def calibration_entry(
    panel: Panel, params: Any, estimator: str = DEFAULT_ESTIMATOR, folds: int = FOLDS, seed: int = 0
) -> dict[str, Any]:
    """The manifest's ``placement_calibration`` field."""
    r = placement_residuals(panel, params, estimator, folds, seed)
    return {
        "estimator": estimator,
        "folds": folds,
        "seed": seed,
        "protocol": f"{folds}-fold over the build models: suite rebuilt without the fold, "
        "held-out models placed from their responses; residual = true - "
        "predicted full-suite score",
        "residuals": [round(float(x), 6) for x in r],
    }
