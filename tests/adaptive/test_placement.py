"""An adaptive test as the benchmark's placement (#80): the split normal read off the test's
interval, by hand; a race's draws by their Hansen–Hurwitz estimate, by hand."""

from __future__ import annotations

import numpy as np
import pytest

from primebench_tasks.adaptive.placement import (
    interval_95,
    race_benchmark,
    split_normal_draws,
    split_normal_sds,
)


def test_the_split_normal_interval_by_hand():
    # p = 0.6, 90 % [0.5, 0.7]: σ = 0.1 / 1.644854 = 0.0607957; 95 %: 0.6 ∓ 1.959964 σ
    down, up = split_normal_sds(0.6, 0.5, 0.7, 0.9)
    assert down == pytest.approx(0.0607957, abs=1e-6) and up == pytest.approx(down)
    assert interval_95(0.6, 0.5, 0.7, 0.9) == pytest.approx((0.480843, 0.719157), abs=1e-6)
    # asymmetric and clipped: [0.9, 1.0] around 0.98 at 90 %
    lo, hi = interval_95(0.98, 0.9, 1.0, 0.9)
    assert lo == pytest.approx(0.98 - 1.959964 * 0.08 / 1.644854, abs=1e-6) and hi == 1.0


def test_the_draws_hold_the_interval_they_come_from():
    rng = np.random.default_rng(0)
    d = split_normal_draws(0.6, 0.5, 0.72, 0.9, rng, 200_000)
    lo, hi = np.percentile(d, [5, 95])
    assert lo == pytest.approx(0.5, abs=0.002) and hi == pytest.approx(0.72, abs=0.002)


def test_a_race_is_placed_by_its_draws_hansen_hurwitz_estimate_by_hand():
    # items 3, 7, 9 asked (answers 1, 0, 1); draws (3, 0.5), (7, 2.0), (9, 1.5), (3, 0.5):
    # (0.5 + 0 + 1.5 + 0.5) / 4 = 0.625; the score on the items asked 2/3
    ref_items = np.array([[1, 1, 1], [0, 0, 1], [0, 0, 0]], float)
    g = race_benchmark(
        [(3, 0.5), (7, 2.0), (9, 1.5), (3, 0.5)],
        source="p",
        answers={3: 1.0, 7: 0.0, 9: 1.0},
        reference_on_items=ref_items,
        reference_full=np.array([0.9, 0.5, 0.1]),
        n_reference=3,
        n_boot=400,
        seed=0,
    )
    b = g.placement
    assert b.predicted_full.value == pytest.approx(0.625)
    assert b.predicted_full.lo <= 0.625 <= b.predicted_full.hi
    assert b.score.value == pytest.approx(2 / 3) and b.n_items == 3 and b.n_scored == 3
    # rank 2 of 4 on the full scores (0.9 above it), 2 on the items asked (1.0 above 2/3)
    assert b.predicted_rank.value == 2 and b.rank_on_suite_items.value == 2
    assert b.interval_from == "design" and b.regime == "interior"
    assert len(g.full_draws) == 400 and np.all((g.full_draws >= 0) & (g.full_draws <= 1))


def test_a_race_with_a_failed_item_leaves_its_draws_out_and_with_none_has_no_score():
    g = race_benchmark(
        [(1, 1.0), (2, 1.0)],
        source="p",
        answers={1: 1.0, 2: float("nan")},
        reference_on_items=np.ones((2, 2)),
        reference_full=np.array([0.5, 0.4]),
        n_reference=2,
        n_boot=50,
        seed=0,
    )
    assert g.placement.predicted_full.value == 1.0 and g.placement.n_scored == 1
    assert g.placement.regime == "beyond" and g.placement.above_all_reference
    none = race_benchmark(
        [(1, 1.0)],
        source="p",
        answers={1: float("nan")},
        reference_on_items=np.ones((2, 1)),
        reference_full=np.array([0.5, 0.4]),
        n_reference=2,
        n_boot=50,
        seed=0,
    )
    assert none.placement.predicted_full.value is None and none.placement.score.value is None
    assert none.placement.no_prediction_because == "no scored item"
