"""Headroom at the top of the panel: reserve part of each benchmark's budget for the items that
separate the strongest models (not in the papers; the placement issue's "suites with headroom").

A selector tuned to rank a whole panel keeps the items that split the crowd; the strongest models
answer nearly all of them (on AutoJudger the ten best score 0.92 on the suite's MMMU items and
0.58 on all of MMMU), so a new model stronger than all of them cannot be told apart from them.
:class:`TopReserveSelector` first reserves ``top_share`` of every benchmark's share for the items
with the highest discrimination signal *among the strongest* ``top_fraction`` of the build models
(:func:`~primebench_tasks.select.vaw.discrimination_signal` on their rows: items they all solve
have no spread there and are never reserved), then lets the base selector fill the rest of the
budget from the remaining items.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from primebench_tasks.errors import ConfigError
from primebench_tasks.metrics import nanmean_rows
from primebench_tasks.select.base import ItemFeatures, Selector, rank_by_score, tie_keys
from primebench_tasks.select.default import TOP_FRACTION, TOP_SHARE
from primebench_tasks.select.vaw import (
    benchmark_groups,
    benchmark_shares,
    discrimination_signal,
)

MIN_TOP_MODELS = 8


def _subset(items: ItemFeatures | None, keep: np.ndarray) -> ItemFeatures | None:
    if items is None:
        return None
    return ItemFeatures(
        benchmark=None if items.benchmark is None else np.asarray(items.benchmark)[keep],
        embedding=None if items.embedding is None else np.asarray(items.embedding)[keep],
        delta=None if items.delta is None else np.asarray(items.delta)[keep],
    )


class TopReserveSelector(Selector):
    """``base`` (budget → unfitted selector) with ``top_share`` of each benchmark's share reserved
    for the items that separate the strongest ``top_fraction`` of the build models.

    Learned: ``indices_`` (reserved items first, then the base selector's), ``weights_`` (uniform),
    ``reserved_`` (the reserved positions), ``base_`` (the fitted base selector)."""

    def __init__(
        self,
        k: int,
        *,
        base: Callable[[int], Selector],
        random_state: int = 0,
        top_share: float = TOP_SHARE,
        top_fraction: float = TOP_FRACTION,
    ) -> None:
        self.k = k
        self.base = base
        self.random_state = random_state
        self.top_share = top_share
        self.top_fraction = top_fraction

    def fit(self, X: np.ndarray, items: ItemFeatures | None = None) -> TopReserveSelector:
        X = self._check(X)
        if not 0 <= self.top_share < 1:
            raise ConfigError(f"top_share must be in [0, 1), got {self.top_share}")
        if not 0 < self.top_fraction <= 1:
            raise ConfigError(f"top_fraction must be in (0, 1], got {self.top_fraction}")
        M, n = X.shape
        k = min(self.k, n)
        strength = nanmean_rows(X)
        ok = np.flatnonzero(np.isfinite(strength))
        n_top = max(MIN_TOP_MODELS, int(round(self.top_fraction * len(ok))))
        reserved: list[int] = []
        if self.top_share > 0 and n_top < len(ok):
            top = ok[np.lexsort((ok, -strength[ok]))][:n_top]
            bench = (
                np.asarray(items.benchmark).astype(str)
                if items is not None and items.benchmark is not None
                else np.zeros(n, dtype=str)
            )
            names, groups = benchmark_groups(bench)
            shares = benchmark_shares(k, np.array([len(g) for g in groups]))
            signal = discrimination_signal(X[top])
            for b, pos, share in zip(names, groups, shares, strict=True):
                k_top = int(np.floor(self.top_share * share + 1e-9))
                s = signal[pos]
                s = np.where(np.isfinite(s) & (s > 0), s, np.nan)  # positive spread only
                order = rank_by_score(s, tie_keys(len(pos), self.random_state, "top:" + str(b)))
                good = order[np.isfinite(s[order])][:k_top]
                reserved += [int(pos[i]) for i in good]
        self.reserved_ = np.asarray(reserved, dtype=np.int64)
        rest = np.setdiff1d(np.arange(n), self.reserved_)
        k_rest = k - len(reserved)
        base_idx = np.zeros(0, dtype=np.int64)
        if k_rest > 0:
            self.base_ = self.base(k_rest).fit(X[:, rest], _subset(items, rest))
            base_idx = rest[self.base_.indices_]
            self.chosen_ = str(getattr(self.base_, "chosen_", type(self.base_).__name__))
            self.n_cells_ = dict(getattr(self.base_, "n_cells_", {}))
        self._set(np.concatenate([self.reserved_, base_idx]))
        return self
