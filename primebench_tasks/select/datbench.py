"""DatBench discrimination: item-rest correlation r_pb, top-K (Joshi et al. 2026; PRIMEBench
App. D.1: on continuous scores the Pearson item-rest correlation, which equals the point-biserial
correlation on binary ones)."""

from __future__ import annotations

import numpy as np

from primebench_tasks.select.base import ItemFeatures, Selector, rank_by_score, tie_keys


def item_rest_correlation(X: np.ndarray) -> np.ndarray:
    """r_i = Pearson corr over models between x_i and the model's mean on the other items
    (NaN-aware; constant items get NaN). Shape (n,)."""
    valid = np.isfinite(X)
    x0 = np.where(valid, X, 0.0)
    tot = x0.sum(axis=1, keepdims=True)
    cnt = valid.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        rest = (tot - x0) / (cnt - valid)
    w = (valid & np.isfinite(rest)).astype(np.float64)
    a = np.where(w > 0, X, 0.0)
    b = np.where(w > 0, rest, 0.0)
    n = w.sum(axis=0)
    sa, sb = a.sum(axis=0), b.sum(axis=0)
    cov = n * (a * b).sum(axis=0) - sa * sb
    va = n * (a * a).sum(axis=0) - sa * sa
    vb = n * (b * b).sum(axis=0) - sb * sb
    with np.errstate(invalid="ignore", divide="ignore"):
        r = cov / np.sqrt(va * vb)
    r[(n < 3) | (va <= 1e-12 * np.maximum(n, 1) ** 2) | (vb <= 1e-12 * np.maximum(n, 1) ** 2)] = (
        np.nan
    )
    return np.clip(r, -1.0, 1.0)


class DatBenchSelector(Selector):
    """Top-``k`` items by item-rest correlation; exact ties in seeded random order."""

    def __init__(self, k: int, *, random_state: int = 0) -> None:
        self.k = k
        self.random_state = random_state

    def fit(self, X: np.ndarray, items: ItemFeatures | None = None) -> DatBenchSelector:
        X = self._check(X)
        r = item_rest_correlation(X)
        order = rank_by_score(r, tie_keys(X.shape[1], self.random_state))
        self._set(order[: min(self.k, X.shape[1])])
        return self
