"""The sequential design (#89): strata by easiness, proportional rounds, the stratified estimate
and its design variance by hand, the fixed-width stop, and the replay's keys."""

from __future__ import annotations

import numpy as np
import pytest

from primebench_tasks.adaptive.replay import replay
from primebench_tasks.adaptive.sequential import (
    SequentialTest,
    easiness_strata,
    stratified_estimate,
)
from primebench_tasks.errors import ConfigError


def test_strata_are_equal_parts_in_easiness_order():
    X = np.array([[1, 0, 1, 0, 1, 0.0], [1, 0, 0, 0, 1, 1.0], [1, 0, 1, np.nan, 0, 1.0]])
    # easiness: 1, 0, 2/3, 0 (one answer), 2/3, 2/3 → order 1, 3, 2, 4, 5, 0 (ties by position)
    assert easiness_strata(X, 3).tolist() == [2, 0, 1, 0, 1, 2]
    unanswered = np.full((2, 2), np.nan)
    assert easiness_strata(unanswered, 2).tolist() == [0, 1]  # both at ½, by position
    with pytest.raises(ConfigError):
        easiness_strata(X, 0)


def test_the_stratified_estimate_by_hand():
    """Two strata of the pool, N = (4, 6); drawn 2 of stratum 0 (answers 1, 0) and 3 of stratum 1
    (1, 1, 1). Means ½ and 1 → ŷ = (4·½ + 6·1)/10 = 0.8. With the pseudo-answer ½:
    s₀² = ((1−½)² + (0−½)² + 0)/2 = 0.25, s₁² = (3·(1−0.875)² + (½−0.875)²)/3 = 0.0625;
    var = (16·(1−2/4)·0.25/2 + 36·(1−3/6)·0.0625/3)/100 = (1 + 0.375)/100 → SE = 0.11726."""
    strata = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    pool = np.ones(10, bool)
    drawn = np.zeros(10, bool)
    drawn[[0, 1, 4, 5, 6]] = True
    y = np.array([1, 0, 0, 0, 1, 1, 1, 0, 0, 0], float)
    est = stratified_estimate(y, drawn, strata, pool, level=0.90)
    assert est.predicted == pytest.approx(0.8)
    assert est.se == pytest.approx(np.sqrt(0.01375))
    assert est.hi == pytest.approx(min(1.0, 0.8 + 1.6448536 * np.sqrt(0.01375)))
    assert est.n_items == 5


def test_rounds_follow_the_strata_sizes_and_never_repeat_an_item():
    strata = np.repeat([0, 1, 2], [10, 20, 30])
    test = SequentialTest(strata, np.ones(60, bool), seed=3, round_size=12, target_width=None)
    first = test.next_round()
    assert np.bincount(strata[first], minlength=3).tolist() == [2, 4, 6]
    seen = list(first)
    while len(seen) < 60:
        seen += list(test.next_round())
    assert sorted(seen) == list(range(60))
    again = SequentialTest(strata, np.ones(60, bool), seed=3, round_size=12, target_width=None)
    assert again.next_round().tolist() == first.tolist()  # seeded: the same draws


def test_a_static_runs_answers_count_and_are_not_asked_again():
    strata = np.repeat([0, 1], [5, 5])
    already = np.zeros(10, bool)
    already[[0, 5]] = True
    test = SequentialTest(strata, np.ones(10, bool), round_size=8, already=already)
    picked = test.next_round()
    assert not set(picked) & {0, 5} and len(picked) == 8 and test.drawn.sum() == 10


def test_the_stop_reads_the_width_after_the_minimum():
    strata = np.repeat([0, 1], [200, 200])
    y = np.r_[np.zeros(200), np.ones(200)]  # each stratum all one way: the floor keeps a width
    test = SequentialTest(strata, np.ones(400, bool), target_width=0.10, min_items=30)
    reasons = []
    while (why := test.stop_reason(test.estimate(y))) is None:
        test.next_round()
        reasons.append(int(test.drawn.sum()))
    assert why == "width" and reasons[-1] >= 30
    capped = SequentialTest(strata, np.ones(400, bool), target_width=0.001, max_items=50)
    while capped.stop_reason(capped.estimate(y)) is None:
        capped.next_round()
    assert capped.stop_reason(capped.estimate(y)) == "budget" and capped.drawn.sum() == 50


def test_the_replay_keeps_its_keys_and_runs_to_each_count():
    rng = np.random.default_rng(0)
    ability, ease = rng.normal(size=40), rng.normal(size=300)
    X = (rng.random((40, 300)) < 1 / (1 + np.exp(-(ability[:, None] + ease)))).astype(float)
    X[35, :10] = np.nan  # an item a model has no answer for is never asked
    r = replay(X[:30], X[30:], (20, 60, 150), seed=1, target_width=0.10)
    for k in (
        "true",
        "predicted",
        "lo",
        "hi",
        "stop_items",
        "stop_predicted",
        "stop_lo",
        "stop_hi",
    ):
        assert k in r
    assert r["predicted"].shape == (10, 3) and np.isfinite(r["predicted"]).all()
    assert (r["order"][5, :150] >= 10).all()
    assert np.all(r["lo"] <= r["predicted"]) and np.all(r["predicted"] <= r["hi"])
    assert np.all((r["stop_items"] >= 30) & (r["stop_items"] <= 150))
    # at a fixed count the figures are the static design's: the same seed, the same draws
    again = replay(X[:30], X[30:], (20, 60, 150), seed=1)
    np.testing.assert_array_equal(again["predicted"], r["predicted"])
    assert "stop_items" not in again
