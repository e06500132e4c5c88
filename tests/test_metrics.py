"""The bottom-layer metrics against hand-computed cases."""

import numpy as np
import pytest
from scipy.stats import spearmanr

from primebench_tasks.metrics import (
    kendall,
    nanmean_rows,
    spearman,
    spearman_many,
    top_k_overlap,
    zscore,
)


def test_spearman_by_hand():
    # ranks 1 2 3 4 vs 2 1 4 3: d² = 4 → ρ = 1 − 6·4 / (4·15) = 0.6
    assert spearman(np.array([1.0, 2, 3, 4]), np.array([2.0, 1, 4, 3])) == pytest.approx(0.6)
    # ties get average ranks (as scipy); pairs with a NaN are skipped
    a = np.array([1.0, 1, 2, 3, np.nan, 5])
    b = np.array([3.0, 2, 2, 5, 1.0, 6])
    ok = np.isfinite(a)
    assert spearman(a, b) == pytest.approx(spearmanr(a[ok], b[ok]).statistic)
    assert np.isnan(spearman(np.array([1.0, 1, 1]), np.array([1.0, 2, 3])))
    assert np.isnan(spearman(np.array([1.0, 2]), np.array([1.0, 2])))
    cols = spearman_many(np.array([[1.0, 4], [2, 3], [3, 2], [4, 1]]), np.array([1.0, 2, 3, 4]))
    np.testing.assert_allclose(cols, [1.0, -1.0])


def test_kendall_and_top_k_by_hand():
    # one discordant pair of 3: τ = (2 − 1) / 3
    assert kendall(np.array([1.0, 2, 3]), np.array([1.0, 3, 2])) == pytest.approx(1 / 3)
    # top-2 of a = {3, 2}, of b = {3, 0}: one shared of 2
    assert top_k_overlap(np.array([0.1, 0.2, 0.5, 0.9]), np.array([0.8, 0.1, 0.2, 0.9]), 2) == 0.5


def test_nanmean_rows_and_zscore_by_hand():
    x = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]])
    out = nanmean_rows(x)
    assert out[0] == 2.0 and np.isnan(out[1])
    # mean 2, population sd sqrt(2/3)
    np.testing.assert_allclose(zscore(np.array([1.0, 2, 3])), np.array([-1, 0, 1]) / np.sqrt(2 / 3))
    np.testing.assert_array_equal(zscore(np.array([5.0, 5.0])), [0.0, 0.0])
