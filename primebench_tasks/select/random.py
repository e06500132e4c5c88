"""Random selectors: uniform, and ResampledBench's size-proportional baseline."""

from __future__ import annotations

import numpy as np

from primebench_tasks.select.base import ItemFeatures, Selector


class RandomSelector(Selector):
    """``k`` items uniformly without replacement. With ``proportional=True`` and
    ``items.benchmark`` given, each benchmark gets a share proportional to its size (largest
    remainder), as ResampledBench's random baseline samples in proportion to dataset sizes."""

    def __init__(self, k: int, *, random_state: int = 0, proportional: bool = False) -> None:
        self.k = k
        self.random_state = random_state
        self.proportional = proportional

    def fit(self, X: np.ndarray, items: ItemFeatures | None = None) -> RandomSelector:
        X = self._check(X)
        n = X.shape[1]
        rng = np.random.default_rng(self.random_state)
        k = min(self.k, n)
        if not self.proportional or items is None or items.benchmark is None:
            self._set(np.sort(rng.choice(n, size=k, replace=False)))
            return self
        from primebench_tasks.select.vaw import benchmark_groups, benchmark_shares

        _, groups = benchmark_groups(items.benchmark)
        sizes = np.array([len(pos) for pos in groups])
        picked = []
        for pos, share in zip(groups, benchmark_shares(k, sizes), strict=True):
            picked.append(rng.choice(pos, size=share, replace=False))
        self._set(np.sort(np.concatenate(picked)))
        return self
