"""AnchorPoints (Vivek et al. 2024): k-medoids of items on their build-model response
correlations; anchors weighted by cluster size. Follows the working adaptation in
socialfoundations/benchmark-prediction (the official repository holds only a README):
correlation over source models with NaN → 0, ``kmedoids.fasterpam(1 − corr, k, init="random")``,
members assigned to the most correlated medoid."""

from __future__ import annotations

import numpy as np

from primebench_tasks.select.base import ItemFeatures, Selector

MAX_ITEMS = 12_000
"""Above this many items the (n × n) distance matrix is built on a seeded sample of this size
(1.1 GB at float64); the other items are assigned to their most correlated medoid."""


def standardised_items(X: np.ndarray) -> np.ndarray:
    """Item columns centred and scaled to unit norm over models (M, n), NaN-aware by mean
    imputation; a constant item becomes all zeros, so it correlates 0 with everything. The
    Pearson correlation of items i and j is then ``Z[:, i] @ Z[:, j]``."""
    mu = np.nanmean(X, axis=0)
    Z = np.where(np.isfinite(X), X, mu) - mu
    sd = np.sqrt((Z * Z).sum(axis=0))
    sd[sd == 0] = np.inf
    return np.nan_to_num(Z / sd)


class AnchorPointsSelector(Selector):
    """``k`` medoid items of the item-correlation space; ``weights_`` = cluster sizes."""

    def __init__(self, k: int, *, random_state: int = 0, max_items: int = MAX_ITEMS) -> None:
        self.k = k
        self.random_state = random_state
        self.max_items = max_items

    def fit(self, X: np.ndarray, items: ItemFeatures | None = None) -> AnchorPointsSelector:
        import kmedoids

        X = self._check(X)
        n = X.shape[1]
        if self.k >= n:
            self._set(np.arange(n))
            return self
        rng = np.random.default_rng(self.random_state)
        pool = (
            np.arange(n)
            if n <= self.max_items
            else np.sort(rng.choice(n, size=self.max_items, replace=False))
        )
        Z = standardised_items(X)
        corr = Z[:, pool].T @ Z[:, pool]
        diss = np.clip(1.0 - corr, 0.0, 2.0)
        np.fill_diagonal(diss, 0.0)
        res = kmedoids.fasterpam(
            diss, self.k, init="random", random_state=int(self.random_state), n_cpu=1
        )
        medoids = pool[np.asarray(res.medoids, dtype=np.int64)]
        assign = np.concatenate(
            [  # in chunks: (n, k) at once is GBs on large pools
                np.argmax(Z[:, s : s + 4096].T @ Z[:, medoids], axis=1) for s in range(0, n, 4096)
            ]
        )
        assign[medoids] = np.arange(len(medoids))
        sizes = np.bincount(assign, minlength=len(medoids)).astype(float)
        self._set(medoids, sizes)
        return self
