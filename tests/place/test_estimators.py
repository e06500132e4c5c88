import numpy as np
import pytest

from primebench_tasks.place.estimators import (
    AIPW,
    GPIRT,
    PIRT,
    SubsetMean,
    WeightedMean,
    make_estimator,
)
from tests.fixtures.irt import simulate_2pl


def test_subset_and_weighted_mean():
    Y = np.array([[1, 0, 1, np.nan], [0, 0, 1, 1]], dtype=float)
    idx = np.array([0, 2, 3])
    assert SubsetMean().fit(Y, idx).predict(Y[:, idx]).tolist() == [1.0, 2 / 3]
    w = WeightedMean().fit(Y, idx, np.array([1.0, 1.0, 2.0]))
    # model 0: item 3 missing -> weights renormalised over items 0 and 2
    assert w.predict(Y[:, idx]).tolist() == pytest.approx([1.0, (0 + 1 + 2) / 4])


def _sim(M=80, n=300, seed=0):
    return simulate_2pl(M, n, seed)[0]


def test_pirt_and_gpirt_predict_full_means():
    Y = _sim()
    src, tgt = Y[:50], Y[50:]
    idx = np.arange(0, 300, 10)
    full = tgt.mean(axis=1)
    for est in (PIRT(), GPIRT()):
        pred = est.fit(src, idx).predict(tgt[:, idx])
        assert np.abs(pred - full).mean() < 0.06
        assert np.corrcoef(pred, full)[0, 1] > 0.85
    g = GPIRT().fit(src, idx)
    assert 0.0 <= g.lambda_ <= 1.0
    # all items seen: p-IRT is the plain mean
    allidx = np.arange(300)
    np.testing.assert_allclose(PIRT().fit(src, allidx).predict(tgt), full)


@pytest.mark.parametrize("n_source, step", [(40, 4), (12, 2)])
def test_aipw_equals_ridge_imputation_of_the_rest(n_source, step):
    """Primal form (10 items < 40 source models) and dual form (20 items > 12 models)."""
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(0)
    ability = rng.random(60)
    Y = np.clip(ability[:, None] + rng.normal(0, 0.05, (60, 40)), 0, 1)
    idx = np.arange(0, 40, step)
    rest = np.setdiff1d(np.arange(40), idx)
    pred = AIPW().fit(Y[:n_source], idx).predict(Y[40:, idx])
    ridge = Ridge(alpha=10.0).fit(Y[:n_source, idx], Y[:n_source, rest].mean(axis=1))
    rest_hat = np.clip(ridge.predict(Y[40:, idx]), 0, 1)
    expected = (Y[40:, idx].sum(axis=1) + len(rest) * rest_hat) / 40
    np.testing.assert_allclose(pred, expected, atol=1e-10)
    assert np.corrcoef(pred, Y[40:].mean(axis=1))[0, 1] > 0.95


def test_unknown_estimator():
    with pytest.raises(ValueError, match="unknown estimator"):
        make_estimator("magic")


def test_estimator_names_are_the_estimators():
    from primebench_tasks.place.defaults import DEFAULT_ESTIMATOR, ESTIMATOR_NAMES
    from primebench_tasks.place.estimators import ESTIMATORS

    assert tuple(ESTIMATORS) == ESTIMATOR_NAMES and DEFAULT_ESTIMATOR in ESTIMATOR_NAMES
