"""DISCO (Rubinstein et al. 2026): items on which the models disagree most.

DISCO scores an item by the predictive diversity of the models' output distributions,
PDS_i = Σ_classes max_models p_m(class). It needs the logged answers; a Panel holds correctness
only, so this implementation uses **correctness-derived disagreement**: each model's output is its
(graded) correctness, classes are {correct, incorrect} with p_m(correct) = x_mi, and
PDS_i = max_m x_mi + max_m (1 − x_mi) ∈ [1, 2] (2 = some model fully right and another fully
wrong). Ties — frequent on binary scores — are broken by the Jensen-Shannon divergence of the
models' outputs from their mean (the paper's alternative statistic), then in seeded random order.
Scored, as in the paper, by the selected items' mean.
"""

from __future__ import annotations

import numpy as np

from primebench_tasks.select.base import ItemFeatures, Selector, tie_keys


def _entropy(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-12, 1.0)
    q = np.clip(1.0 - p, 1e-12, 1.0)
    return -(p * np.log(p) + q * np.log(q))


def disagreement(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(PDS (n,), JSD (n,)) of correctness-derived outputs; NaN records are skipped."""
    valid = np.isfinite(X)
    hi = np.where(valid, X, -np.inf).max(axis=0)
    lo = np.where(valid, X, np.inf).min(axis=0)
    pds = np.where(valid.any(axis=0), hi + (1.0 - lo), np.nan)
    cnt = valid.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(valid, X, 0).sum(axis=0) / cnt
        jsd = _entropy(mean) - np.where(valid, _entropy(np.where(valid, X, 0.5)), 0).sum(0) / cnt
    return pds, jsd


class DISCOSelector(Selector):
    """Top-``k`` items by correctness-derived predictive diversity (see module docstring)."""

    def __init__(self, k: int, *, random_state: int = 0) -> None:
        self.k = k
        self.random_state = random_state

    def fit(self, X: np.ndarray, items: ItemFeatures | None = None) -> DISCOSelector:
        X = self._check(X)
        pds, jsd = disagreement(X)
        keys = tie_keys(X.shape[1], self.random_state)
        order = np.lexsort(
            (
                keys,
                -np.round(np.nan_to_num(jsd, nan=-1), 12),
                -np.round(np.nan_to_num(pds, nan=-1), 12),
            )
        )
        self._set(order[: min(self.k, X.shape[1])])
        return self
