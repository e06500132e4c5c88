"""``check_selector``: the selector contract (:mod:`~primebench_tasks.select.base`) checked on
one selector, as scikit-learn's ``check_estimator`` checks an estimator — run over every
registered selector in the tests, and by anyone who writes a new one."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from primebench_tasks.errors import ConfigError
from primebench_tasks.select.base import ItemFeatures, Selector

CHECK_MODELS = 40
"""Models of the synthetic panel a selector is checked on."""

CHECK_ITEMS = 60
"""Items of that panel (two benchmarks of 30)."""

CHECK_K = 12
"""Items each checked selection asks for."""


def check_panel(seed: int = 0) -> tuple[np.ndarray, ItemFeatures]:
    """A synthetic (CHECK_MODELS, CHECK_ITEMS) right/wrong panel from a 2PL (5 % of the records
    missing, NaN) with two benchmarks' labels and 4-d embeddings: what a selector may be given."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(CHECK_MODELS, 1))
    a, b = rng.uniform(0.5, 2.0, CHECK_ITEMS), rng.normal(size=CHECK_ITEMS)
    p = 1 / (1 + np.exp(-(a * theta - b)))
    X = (rng.random(p.shape) < p).astype(float)
    X[rng.random(X.shape) < 0.05] = np.nan
    bench = np.array(["A"] * (CHECK_ITEMS // 2) + ["B"] * (CHECK_ITEMS - CHECK_ITEMS // 2))
    return X, ItemFeatures(benchmark=bench, embedding=rng.normal(size=(CHECK_ITEMS, 4)))


def check_selector(make: Callable[[int, int], Selector], name: str = "selector") -> None:
    """Check that ``make(k, random_state)`` builds a selector that keeps the contract; raises
    AssertionError naming ``name`` and the broken rule:

    - construction learns nothing (no attribute ending in ``_``), and ``get_params`` round-trips
      through ``sklearn.base.clone``;
    - ``fit(X, items)`` returns the selector, with ``indices_`` (int64, 1-d, distinct item
      positions, at most k) and ``weights_`` (float64, one per index, ≥ 0, summing to 1);
    - the same data and seed select the same items in the same order;
    - scores outside [0, 1] are refused with a ConfigError.
    """
    from sklearn.base import clone

    X, items = check_panel()
    sel = make(CHECK_K, 0)
    learned = sorted(k for k in vars(sel) if k.endswith("_") and not k.startswith("_"))
    assert not learned, f"{name}: __init__ sets learned attributes {learned}"
    params = sel.get_params()
    assert clone(sel).get_params().keys() == params.keys(), f"{name}: clone changes its params"
    assert sel.fit(X, items) is sel, f"{name}: fit must return the selector"
    idx, w = np.asarray(sel.indices_), np.asarray(sel.weights_)
    assert idx.dtype == np.int64 and idx.ndim == 1, f"{name}: indices_ must be 1-d int64"
    assert 0 < len(idx) <= CHECK_K, f"{name}: {len(idx)} indices for k = {CHECK_K}"
    assert len(set(idx.tolist())) == len(idx), f"{name}: an item is selected twice"
    assert idx.min() >= 0 and idx.max() < X.shape[1], f"{name}: an index outside the items"
    assert w.dtype == np.float64 and w.shape == idx.shape, f"{name}: one float64 weight per index"
    assert (w >= 0).all() and np.isclose(w.sum(), 1.0), f"{name}: weights must be ≥ 0, sum to 1"
    again = make(CHECK_K, 0).fit(X, items)
    assert np.array_equal(again.indices_, idx), f"{name}: same data and seed, other items"
    try:
        make(CHECK_K, 0).fit(X * 2.0, items)
    except ConfigError:
        pass
    else:
        raise AssertionError(f"{name}: scores outside [0, 1] were not refused")
