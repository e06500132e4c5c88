"""Variance selector: category-wide top-K by the √M-scaled variance (Eq. 5)."""

from __future__ import annotations

import numpy as np

from primebench_tasks.errors import ConfigError
from primebench_tasks.select.base import (
    ItemFeatures,
    Selector,
    item_variance,
    rank_by_score,
    tie_keys,
)


class VarianceSelector(Selector):
    """Top-``k`` items by variance across build models, with no shares and no cells.

    ``ties`` = ``"seeded"`` breaks exact ties in a seeded random order (the paper's Stage 2
    default), ``"index"`` by item position (the paper's end-to-end table, App. D.3). Items
    with different numbers of valid records are ranked by the plug-in variance v̂_i, the Eq. 5
    score divided by √M_i (§4.3).
    """

    def __init__(self, k: int, *, random_state: int = 0, ties: str = "seeded") -> None:
        self.k = k
        self.random_state = random_state
        self.ties = ties

    def fit(self, X: np.ndarray, items: ItemFeatures | None = None) -> VarianceSelector:
        X = self._check(X)
        var, _ = item_variance(X)
        n = X.shape[1]
        if self.ties == "seeded":
            keys = tie_keys(n, self.random_state)
        elif self.ties == "index":
            keys = np.arange(n)
        else:
            raise ConfigError(f"ties must be 'seeded' or 'index', got {self.ties!r}")
        self._set(rank_by_score(var, keys)[: min(self.k, n)])
        return self
