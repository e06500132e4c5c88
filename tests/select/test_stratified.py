"""The probability design (``select.stratified``): strata by the items' mean score, proportional
allocation, known inclusion probabilities — by hand on a made matrix."""

from __future__ import annotations

import numpy as np

from primebench_tasks.select.base import ItemFeatures
from primebench_tasks.select.stratified import StratifiedSelector, easiness, equal_strata


def test_easiness_and_equal_strata_by_hand() -> None:
    X = np.array([[1.0, 0.0, np.nan, 0.5], [1.0, 1.0, np.nan, 0.0]])
    assert easiness(X).tolist() == [1.0, 0.5, -np.inf, 0.25]
    parts = equal_strata(np.array([4, 0, 3, 1, 2]), 2)
    assert [p.tolist() for p in parts] == [[0, 3, 4], [1, 2]]  # sizes 3 and 2, sorted within


def test_strata_allocation_and_inclusion_by_hand() -> None:
    # 12 items; item j's mean score falls with j (item 0 easiest): 3 strata of 4 items
    # (k = 6, 2 per stratum): {0-3}, {4-7}, {8-11}, each drawn 2 of 4 → π = 1/2
    M, n = 20, 12
    X = (np.arange(M)[:, None] >= np.arange(n)[None, :] * 1.5).astype(float)
    sel = StratifiedSelector(6, random_state=3, per_stratum=2).fit(X)
    idx = sel.indices_
    assert len(idx) == 6 and len(set(idx.tolist())) == 6 and list(idx) == sorted(idx)
    by_stratum = {s: idx[sel.strata_ == s].tolist() for s in np.unique(sel.strata_)}
    assert [len(v) for v in by_stratum.values()] == [2, 2, 2]
    assert all(set(v) <= set(range(4 * h, 4 * h + 4)) for h, v in enumerate(by_stratum.values()))
    assert np.allclose(sel.inclusion_, 0.5) and np.allclose(sel.weights_, 1 / 6)
    # seeded: the same draw again, another seed another draw
    again = StratifiedSelector(6, random_state=3, per_stratum=2).fit(X)
    assert again.indices_.tolist() == idx.tolist()
    other = [StratifiedSelector(6, random_state=s, per_stratum=2).fit(X).indices_ for s in range(8)]
    assert len({tuple(o) for o in other}) > 1


def test_unequal_strata_get_their_own_weights() -> None:
    # 10 items, k = 4, 2 strata of 5 (per_stratum 2): 2 of 5 each → π = 0.4; benchmarks of 10
    # and 5 items with k = 6: shares 4 and 2 (proportional), the second benchmark one stratum
    X = np.tile(np.linspace(0, 1, 15), (4, 1))
    bench = np.array(["A"] * 10 + ["B"] * 5)
    sel = StratifiedSelector(6, random_state=0, per_stratum=2).fit(X, ItemFeatures(benchmark=bench))
    in_a = sel.indices_ < 10
    assert in_a.sum() == 4 and (~in_a).sum() == 2
    assert np.allclose(sel.inclusion_[in_a], 0.4) and np.allclose(sel.inclusion_[~in_a], 0.4)
    # design weights 1/π normalised: Σ over the draw of (1/π) = 15 items, each 2.5 → 1/6
    assert np.isclose(sel.weights_.sum(), 1.0) and np.allclose(sel.weights_, 1 / 6)


def test_a_horvitz_thompson_mean_is_unbiased_over_draws() -> None:
    # 13 items, 4 drawn, 2 strata: the 7 easiest (π = 2/7) and the 6 hardest (π = 2/6); the
    # weighted mean Σ w_i y_i, averaged over draws, is the pool mean
    y = np.array([0.95, 0.9, 0.8, 0.8, 0.7, 0.6, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0])
    X = np.tile(y, (3, 1))
    draws = [StratifiedSelector(4, random_state=r, per_stratum=2).fit(X) for r in range(4000)]
    assert np.allclose(draws[0].inclusion_, np.where(draws[0].indices_ < 7, 2 / 7, 2 / 6))
    est = [float((s.weights_ * y[s.indices_]).sum()) for s in draws]
    assert abs(np.mean(est) - y.mean()) < 0.005
