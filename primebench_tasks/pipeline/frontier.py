"""The Capability Frontier: a descriptive stress set of items most current VLMs fail
(PRIMEBench §7(3), App. I.2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import ConfigError
from primebench_tasks.metrics import nanmean_rows
from primebench_tasks.select.base import item_variance

FAMILY_MAX = 0.5
BAND = (0.10, 0.50)
MIN_MODELS = 2


@dataclass
class FrontierResult:
    selected: dict[str, np.ndarray]  # benchmark -> item positions
    n_candidates: int
    n_in_band: int
    budget: int
    per_step_gain: float | None
    axes: pd.DataFrame


def model_axes(panel: Panel, keep: dict[str, np.ndarray]) -> pd.DataFrame:
    """Generation axes from model metadata: within each family with ≥ 2 dated models, the oldest
    and newest release are the endpoints; gain = difference of their full-pool accuracy (mean
    over all kept items), per step = gain / (models on the axis − 1) (Table 21)."""
    models = panel.model_table
    acc = _pooled_accuracy(panel, keep)
    rows = []
    for fam, grp in models.dropna(subset=["family", "release_date"]).groupby("family", sort=True):
        grp = grp.sort_values(["release_date", "model"])
        if len(grp) < 2:
            continue
        first, last = grp["model"].iloc[0], grp["model"].iloc[-1]
        gain = float(acc[last] - acc[first])
        steps = len(grp) - 1
        rows.append(
            {
                "axis": f"{fam} generations",
                "from": first,
                "to": last,
                "gain": round(gain, 4),
                "steps": steps,
                "per_step": gain / steps,
            }
        )
    return pd.DataFrame(rows, columns=["axis", "from", "to", "gain", "steps", "per_step"])


def _pooled_accuracy(panel: Panel, keep: dict[str, np.ndarray]) -> pd.Series:
    X = np.concatenate([panel.matrix(b)[:, keep[b]] for b in panel.benchmark_names], axis=1)
    return pd.Series(nanmean_rows(X), index=panel.model_names)


def capability_frontier(
    panel: Panel,
    keep: dict[str, np.ndarray],
    budget: int | None = None,
    family_max: float = FAMILY_MAX,
    band: tuple[float, float] = BAND,
    min_models: int = MIN_MODELS,
) -> FrontierResult:
    """Candidates: every family's mean ≤ ``family_max`` and ≥ ``min_models`` models scored
    (models without a family count as a family of their own). Keep the in-band items (panel mean
    in ``band``) with the largest v̂_i·(1 − x̄_i). Budget: explicit, or in-band size × the largest
    per-step gain along the model axes (:func:`model_axes`)."""
    models = panel.model_table
    fam = models["family"].where(models["family"].notna(), "model:" + models["model"]).to_numpy()
    fam_names = sorted(set(fam))
    scores, where = [], []
    for b in panel.benchmark_names:
        pos = np.flatnonzero(keep[b])
        scores.append(panel.matrix(b)[:, pos])
        where.append((np.full(len(pos), b, dtype=object), pos))
    X = np.concatenate(scores, axis=1).astype(np.float64)
    bench = np.concatenate([w[0] for w in where])
    pos = np.concatenate([w[1] for w in where])
    valid = np.isfinite(X)
    n_valid = valid.sum(axis=0)
    ok = n_valid >= min_models
    for f in fam_names:
        rows = fam == f
        v = valid[rows]
        cnt = v.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            fmean = np.where(v, X[rows], 0).sum(axis=0) / cnt
        ok &= (cnt == 0) | (fmean <= family_max)
    var, _ = item_variance(X)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(valid, X, 0).sum(axis=0) / n_valid
    in_band = ok & (mean >= band[0]) & (mean <= band[1])
    axes = model_axes(panel, keep)
    gain = float(axes["per_step"].max()) if len(axes) else None
    if budget is None:
        if gain is None or gain <= 0:
            raise ConfigError(
                "no model axis with a positive per-step gain (needs families with "
                "≥ 2 dated models in the model metadata); pass an explicit budget"
            )
        budget = int(round(in_band.sum() * gain))
    cand = np.flatnonzero(in_band)
    score = var[cand] * (1 - mean[cand])
    order = np.lexsort((cand, -score))
    chosen = cand[order[:budget]]
    selected = {
        b: np.sort(pos[chosen][bench[chosen] == b])
        for b in panel.benchmark_names
        if (bench[chosen] == b).any()
    }
    return FrontierResult(
        selected=selected,
        n_candidates=int(ok.sum()),
        n_in_band=int(in_band.sum()),
        budget=int(budget),
        per_step_gain=gain,
        axes=axes,
    )
