"""Item-level paired bootstrap for PScore (PRISM-VLM §5): B resamples of the items, the same item
indices for every model; two-sided p = 2·min(Pr(Δ ≤ 0), Pr(Δ ≥ 0)); Benjamini–Hochberg across
pairs; per-model 95 % CIs and rank CIs.

A replicate where a model's score is undefined (NaN: e.g. no turn-0-correct sc item was drawn,
which only happens on tiny item sets) is left out of that model's p-values and CI, and ranks the
model last in that replicate. Ranks are competition ranks (tied models share the best rank)."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd

B = 2000
FDR = 0.05
"""PRISM's separation: the Benjamini–Hochberg false discovery rate of the pairwise tests."""


def benjamini_hochberg(p: np.ndarray, alpha: float = FDR) -> np.ndarray:
    """Reject flags (same order as ``p``) of the BH step-up procedure at FDR ``alpha``."""
    p = np.asarray(p, dtype=float)
    n = len(p)
    order = np.argsort(p, kind="stable")
    thresh = alpha * np.arange(1, n + 1) / n
    passed = p[order] <= thresh
    k = np.flatnonzero(passed).max() + 1 if passed.any() else 0
    out = np.zeros(n, dtype=bool)
    out[order[:k]] = True
    return out


def paired_bootstrap(
    item_scores: dict[str, np.ndarray],
    score_fn: Callable[[np.ndarray], float],
    n_items: int,
    n_boot: int = B,
    seed: int = 0,
) -> np.ndarray:
    """(n_boot, n_models) replicate scores: replicate b draws item indices once and evaluates
    every model's ``score_fn`` on them (so an axis like sc is recomputed inside each replicate)."""
    rng = np.random.default_rng(seed)
    models = list(item_scores)
    out = np.empty((n_boot, len(models)))
    for b in range(n_boot):
        idx = rng.integers(n_items, size=n_items)
        for j, m in enumerate(models):
            out[b, j] = score_fn(item_scores[m][idx])
    return out


def separation(
    reps: np.ndarray, point: np.ndarray, models: list[str], alpha: float = FDR
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pairwise two-sided bootstrap p-values with BH, and per-model CIs and rank CIs.
    ``reps`` (B, n_models) replicate scores, ``point`` (n_models,) full-sample scores."""
    rows = []
    for i in range(len(models)):
        for j in range(i + 1, len(models)):
            d = reps[:, i] - reps[:, j]
            d = d[np.isfinite(d)]
            p = (
                min(1.0, 2 * min(float(np.mean(d <= 0)), float(np.mean(d >= 0))))
                if len(d)
                else float("nan")
            )
            rows.append(
                {
                    "model_a": models[i],
                    "model_b": models[j],
                    "delta": float(point[i] - point[j]),
                    "p": p,
                }
            )
    pairs = pd.DataFrame(rows)
    if len(pairs):
        pairs["separated"] = pairs["p"] < alpha
        pairs["separated_bh"] = benjamini_hochberg(pairs["p"].fillna(1.0).to_numpy(), alpha)
    r = np.nan_to_num(reps, nan=-np.inf)
    ranks = 1 + (r[:, None, :] > r[:, :, None]).sum(axis=2)  # 1 + models strictly better
    with warnings.catch_warnings():  # a model undefined in every replicate: NaN interval
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanpercentile(reps, 2.5, axis=0), np.nanpercentile(reps, 97.5, axis=0)
    per = pd.DataFrame(
        {
            "model": models,
            "score": point,
            "ci_low": lo,
            "ci_high": hi,
            "rank_low": np.percentile(ranks, 2.5, axis=0, method="lower").astype(int),
            "rank_high": np.percentile(ranks, 97.5, axis=0, method="higher").astype(int),
        }
    )
    return pairs, per
