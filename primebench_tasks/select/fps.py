"""Farthest point sampling (ResampledBench §4.2, Eq. 2) and k-center greedy (LMMs-Eval Lite)."""

from __future__ import annotations

import numpy as np

from primebench_tasks.errors import ConfigError
from primebench_tasks.numerics import grid_bits, to_grid
from primebench_tasks.select.base import ItemFeatures, Selector


def farthest_points(x: np.ndarray, k: int, first: int) -> np.ndarray:
    """Greedy farthest point sampling with Euclidean distance: start at ``first``, then repeatedly
    add argmax_i min_{j∈S} ||x_i − x_j|| (Eq. 2; ties → lowest index). O(n·k·d) time with a running
    min-distance array, O(n) extra memory. Returns k positions in selection order.

    Distances are exact on a fixed-point grid of ``x`` (:mod:`primebench_tasks.numerics`), so the
    choice is the same on every CPU and BLAS kernel."""
    x, _ = to_grid(np.asarray(x, dtype=np.float64), grid_bits(np.shape(x)[1], headroom=3))
    n = len(x)
    k = min(k, n)
    out = np.empty(k, dtype=np.int64)
    sq = (x * x).sum(axis=1)
    mind = np.full(n, np.inf)
    cur = first
    for s in range(k):
        out[s] = cur
        d = sq - 2.0 * (x @ x[cur]) + sq[cur]
        np.minimum(mind, np.maximum(d, 0.0), out=mind)
        mind[cur] = -1.0
        if s + 1 < k:
            cur = int(np.argmax(mind))
    return out


class FPSSelector(Selector):
    """ResampledBench: FPS over item embeddings from a seeded random start. Items without an
    embedding are never selected. ``start="index0"`` starts at the first item instead, as
    LMMs-Eval Lite's k-center greedy does (:class:`KCenterSelector`)."""

    def __init__(self, k: int, *, random_state: int = 0, start: str = "random") -> None:
        self.k = k
        self.random_state = random_state
        self.start = start

    def fit(self, X: np.ndarray, items: ItemFeatures | None = None) -> FPSSelector:
        X = self._check(X)
        if items is None or items.embedding is None:
            raise ConfigError("FPS needs item embeddings (items.embedding)")
        emb = np.asarray(items.embedding)
        if len(emb) != X.shape[1]:
            raise ConfigError(f"{len(emb)} embeddings for {X.shape[1]} items")
        ok = np.flatnonzero(np.isfinite(emb).all(axis=1))
        if len(ok) == 0:
            raise ConfigError("no item has an embedding")
        if self.start == "random":
            first = int(np.random.default_rng(self.random_state).integers(len(ok)))
        elif self.start == "index0":
            first = 0
        else:
            raise ConfigError(f"start must be 'random' or 'index0', got {self.start!r}")
        self._set(ok[farthest_points(emb[ok], self.k, first)])
        return self


class KCenterSelector(FPSSelector):
    """k-center greedy of LMMs-Eval Lite: FPS from a deterministic first point (index 0)."""

    def __init__(self, k: int, *, random_state: int = 0) -> None:
        super().__init__(k=k, random_state=random_state, start="index0")
