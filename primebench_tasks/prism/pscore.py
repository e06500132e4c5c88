"""PScore: per-axis means combined by harmonic mean (PRISM-VLM §3, App. E.1).

PScore = |A| / Σ_a 1/s_a; weighted PScore_w = Σ_a w_a / Σ_a (w_a / s_a) (Eq. 3); effective weight
of axis a for one model w_a = (1/s_a²) / Σ_b 1/s_b² (Eq. 2), the derivative share of the harmonic
mean, which concentrates on the weakest axes.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from primebench_tasks.errors import ConfigError
from primebench_tasks.metrics import spearman
from primebench_tasks.prism.axes import AXES as AXES  # defined once, re-exported

AGGREGATORS = ("harmonic", "arithmetic", "geometric", "min")


def aggregate(
    S: pd.DataFrame, aggregator: str = "harmonic", weights: Mapping[str, float] | None = None
) -> pd.Series:
    """Per-model aggregate of the axis columns of ``S`` (models × axes, scores in (0, 1]).
    ``weights`` (axis → nominal weight, default 1) apply to every aggregator; a zero weight drops
    the axis. A model with a missing axis gets NaN."""
    if aggregator not in AGGREGATORS:
        raise ConfigError(f"aggregator must be one of {AGGREGATORS}")
    axes = list(S.columns)
    w = np.array([float((weights or {}).get(a, 1.0)) for a in axes])
    if (w < 0).any() or w.sum() <= 0:
        raise ConfigError("weights must be >= 0 with a positive sum")
    V = S[axes].to_numpy(dtype=float)
    keep = w > 0
    V, w = V[:, keep], w[keep]
    with np.errstate(divide="ignore", invalid="ignore"):
        if aggregator == "harmonic":
            out = w.sum() / (w / V).sum(axis=1)
        elif aggregator == "arithmetic":
            out = (V * w).sum(axis=1) / w.sum()
        elif aggregator == "geometric":
            out = np.exp((np.log(V) * w).sum(axis=1) / w.sum())
        else:
            out = V.min(axis=1)
    out = np.where(np.isfinite(V).all(axis=1), out, np.nan)
    return pd.Series(out, index=S.index, name="pscore")


def effective_weights(S: pd.DataFrame) -> pd.DataFrame:
    """w_a = (1/s_a²) / Σ_b 1/s_b² per model (rows sum to 1). A model with axes at 0 puts all
    the weight on them, equally (the limit of the formula)."""
    V = S.to_numpy(dtype=float)
    zero = V == 0
    with np.errstate(divide="ignore"):
        inv = np.where(zero.any(axis=1, keepdims=True), zero.astype(float), 1.0 / V**2)
    return pd.DataFrame(inv / inv.sum(axis=1, keepdims=True), index=S.index, columns=S.columns)


def dominant_axis(S: pd.DataFrame) -> pd.Series:
    """The single lowest axis of each model (the one with the largest effective weight)."""
    return S.idxmin(axis=1).rename("dominant_axis")


def leave_one_axis_out(S: pd.DataFrame, aggregator: str = "harmonic") -> pd.DataFrame:
    """Spearman ρ between the full aggregate and the aggregate without each axis (Table 13)."""
    full = aggregate(S, aggregator)
    rows = [
        {
            "axis": a,
            "spearman_rho": spearman(
                aggregate(S.drop(columns=a), aggregator).to_numpy(), full.to_numpy()
            ),
        }
        for a in S.columns
    ]
    return pd.DataFrame(rows)
