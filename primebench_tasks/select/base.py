"""The selector contract (docs/architecture.md, "Estimators and selectors"): ``Selector(k=..., random_state=..., **params)
.fit(X_build, items=None) -> self`` with learned ``indices_`` (item positions, int64, in selection
order) and ``weights_`` (float64, sums to 1; uniform unless the method weights its anchors).
Nothing happens in ``__init__``; a selector never reads files.

``X_build`` is (n_models, n_items) float in [0, 1] with NaN for missing records.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator

from primebench_tasks.errors import ConfigError


@dataclass(frozen=True)
class ItemFeatures:
    """What a selector may know about items besides the build models' scores.

    benchmark : (n,) benchmark name per item (for benchmark shares), or None.
    embedding : (n, d) float vectors for cells / FPS (already projected), NaN rows = no vector.
    delta : (n,) vision dependence δ^VL in [0, 2] (0 where unknown).
    """

    benchmark: np.ndarray | None = None
    embedding: np.ndarray | None = None
    delta: np.ndarray | None = None


class Selector(BaseEstimator):
    """Base class: stores parameters, checks inputs, exposes ``indices_`` and ``weights_``.

    A scikit-learn estimator: ``get_params`` / ``set_params`` / ``sklearn.base.clone`` read the
    ``__init__`` parameters (``k`` positional, the rest keyword-only) from the attributes of the
    same name."""

    k: int
    random_state: int

    def fit(self, X: np.ndarray, items: ItemFeatures | None = None) -> Selector:
        raise NotImplementedError

    def _check(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ConfigError(f"X must be (n_models, n_items), got shape {X.shape}")
        if not self.k > 0:
            raise ConfigError(f"k must be positive, got {self.k}")
        finite = X[np.isfinite(X)]
        if finite.size and (finite.min() < 0 or finite.max() > 1):
            raise ConfigError("scores must be scaled to [0, 1]")
        return X

    def _set(self, indices: np.ndarray, weights: np.ndarray | None = None) -> None:
        self.indices_ = np.asarray(indices, dtype=np.int64)
        w = np.ones(len(self.indices_)) if weights is None else np.asarray(weights, float)
        self.weights_ = w / w.sum() if w.sum() > 0 else w


def item_variance(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Plug-in variance v̂_i = (1/M_i) Σ_m (x_mi − x̄_i)² over the valid records of each item and
    M_i, the number of valid records. Items with M_i = 0 get v̂ = NaN. Shapes: (n,), (n,)."""
    valid = np.isfinite(X)
    m = valid.sum(axis=0)
    x0 = np.where(valid, X, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = x0.sum(axis=0) / m
        var = (np.where(valid, X - mean, 0.0) ** 2).sum(axis=0) / m
    return var, m


def sqrt_m_variance(X: np.ndarray) -> np.ndarray:
    """Eq. 5: σ̂²_i = (1/√M) Σ_m (x_mi − x̄_i)² = √M_i · v̂_i (on each item's valid records)."""
    var, m = item_variance(X)
    return np.sqrt(m) * var


def tie_keys(n: int, random_state: int, salt: str = "") -> np.ndarray:
    """A seeded random permutation key per position (lower = earlier among exact ties). The salt
    (e.g. a benchmark name) makes keys differ between pools but stay reproducible."""
    rng = np.random.default_rng([random_state, zlib.crc32(salt.encode("utf-8"))])
    return rng.permutation(n)


def rank_by_score(score: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Positions sorted by descending score (NaN last), ties by ascending key. Scores are
    compared at 12 decimals, so float noise between equal scores does not break a tie."""
    s = np.where(np.isfinite(score), np.round(score, 12), -np.inf)
    return np.lexsort((keys, -s))
