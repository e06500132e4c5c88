"""An adaptive test as the benchmark's placement (#80): the split normal read off the test's
interval, by hand."""

from __future__ import annotations

import numpy as np
import pytest

from primebench_tasks.adaptive.placement import interval_95, split_normal_draws, split_normal_sds


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
