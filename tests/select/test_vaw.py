import numpy as np
import pytest

from primebench_tasks.select.base import ItemFeatures, item_variance, sqrt_m_variance
from primebench_tasks.select.fps import FPSSelector, KCenterSelector, farthest_points
from primebench_tasks.select.random import RandomSelector
from primebench_tasks.select.variance import VarianceSelector
from primebench_tasks.select.vaw import (
    ALPHA,
    VAWSelector,
    benchmark_shares,
    category_budget,
    vaw_rank_score,
)


def test_alpha_default_is_paper_value():
    assert pytest.approx(0.05 * np.sqrt(14), abs=5e-4) == ALPHA


@pytest.mark.parametrize(
    "n, r, k",
    [
        (2000, 0.05, 100),
        (5000, 0.05, 250),
        (80, 0.05, 80),
        (1000, 0.02, 100),
        (37_722, 0.05, 1_886),
        (140_661, 0.05, 7_033),
        (90, 0.05, 90),
        (342, 0.05, 100),
        (4_500, 0.05, 225),
    ],
)
def test_category_budget(n, r, k):
    # K_C = max(floor(r n), min(n, 100)); the large cases are Table 9's pools
    assert category_budget(n, r) == k


def test_benchmark_shares_largest_remainder():
    assert benchmark_shares(10, np.array([5, 3, 2])).tolist() == [5, 3, 2]
    # exact 3.5, 2.1, 1.4 -> floors 3, 2, 1 and the one left goes to the largest remainder
    assert benchmark_shares(7, np.array([5, 3, 2])).tolist() == [4, 2, 1]
    assert benchmark_shares(1, np.array([1, 1])).tolist() == [1, 0]  # tie -> earlier
    assert benchmark_shares(50, np.array([3, 4])).tolist() == [3, 4]


def test_eq5_binary_identity():
    X = np.array([[1, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]], dtype=float)
    M = 4
    xbar = X.mean(axis=0)
    direct = ((X - xbar) ** 2).sum(axis=0) / np.sqrt(M)
    np.testing.assert_allclose(sqrt_m_variance(X), direct)
    np.testing.assert_allclose(sqrt_m_variance(X), np.sqrt(M) * xbar * (1 - xbar))
    # item 0: xbar = .75 -> sigma^2 = 2 * .75 * .25 = .375
    assert sqrt_m_variance(X)[0] == pytest.approx(0.375)


def test_eq4_reranks_by_one_over_sqrt_m_when_counts_differ():
    X = np.array([[1, 1], [0, 0], [1, 0], [0, np.nan]], dtype=float)
    delta = np.array([0.1, 0.5])
    var, m = item_variance(X)
    assert m.tolist() == [4, 3]
    s = vaw_rank_score(X, delta, ALPHA)
    assert s[0] == pytest.approx(0.25 + ALPHA * 0.1 / 2)
    assert s[1] == pytest.approx(2 / 9 + ALPHA * 0.5 / np.sqrt(3))
    assert s[1] > s[0]  # lower variance, but its vision tilt counts more at smaller M
    sel = VAWSelector(k=1, cells="none", shares=False).fit(X, ItemFeatures(delta=delta))
    assert sel.indices_.tolist() == [1]
    assert VAWSelector(k=1, cells="none", alpha=0).fit(
        X, ItemFeatures(delta=delta)
    ).indices_.tolist() == [0]


def _clustered():
    # six items in three well-separated embedding clusters; variances differ inside each pair
    X = np.array(
        [
            [0, 0, 0.5, 0.5, 0.2, 0.4],
            [1, 1, 0.5, 0.6, 0.8, 0.6],
            [0, 0, 0.5, 0.5, 0.5, 0.5],
            [1, 0.9, 0.4, 0.3, 0.5, 0.5],
        ]
    )
    emb = np.array([[0, 0], [0.1, 0], [10, 10], [10.1, 10], [-10, 10], [-10.1, 10]])
    return X, emb


def test_alpha_zero_equals_variance_inside_cells():
    X, emb = _clustered()
    var, _ = item_variance(X)
    sel = VAWSelector(k=3, alpha=0.0, cells="embedding").fit(X, ItemFeatures(embedding=emb))
    expected = [max(pair, key=lambda i: var[i]) for pair in ((0, 1), (2, 3), (4, 5))]
    assert sorted(sel.indices_.tolist()) == sorted(expected)
    # plain variance would take two items of one cell
    top = VarianceSelector(k=3).fit(X).indices_.tolist()
    assert sorted(top) != sorted(expected)


def test_vision_tilt_changes_the_cell_winner():
    X, emb = _clustered()
    delta = np.array([0, 2.0, 0, 0, 0, 0])  # item 1: lower variance, strong vision reliance
    sel = VAWSelector(k=3, alpha=ALPHA, cells="embedding").fit(
        X, ItemFeatures(embedding=emb, delta=delta)
    )
    assert 1 in sel.indices_.tolist() and 0 not in sel.indices_.tolist()


def test_items_without_embedding_fill_the_share():
    X, emb = _clustered()
    emb = emb.copy()
    emb[2:] = np.nan  # only the first cell has vectors
    sel = VAWSelector(k=3, alpha=0.0).fit(X, ItemFeatures(embedding=emb))
    var, _ = item_variance(X)
    assert len(sel.indices_) == 3
    assert sel.n_cells_ == {"0": 2}


def test_seeded_ties_are_reproducible():
    X = np.tile(np.array([[1.0], [0.0]]), (1, 40))  # every item has the same variance
    a = VAWSelector(k=5, cells="none", random_state=3).fit(X).indices_
    b = VAWSelector(k=5, cells="none", random_state=3).fit(X).indices_
    c = VAWSelector(k=5, cells="none", random_state=4).fit(X).indices_
    assert a.tolist() == b.tolist() and a.tolist() != c.tolist()
    idx = VarianceSelector(k=5, ties="index").fit(X).indices_
    assert idx.tolist() == [0, 1, 2, 3, 4]


def test_shares_follow_benchmark_sizes():
    rng = np.random.default_rng(0)
    X = (rng.random((10, 30)) < 0.5).astype(float)
    labels = np.array(["a"] * 20 + ["b"] * 10, dtype=object)
    sel = VAWSelector(k=6, cells="random").fit(X, ItemFeatures(benchmark=labels))
    got = labels[sel.indices_]
    assert (got == "a").sum() == 4 and (got == "b").sum() == 2


def test_fps_picks_the_farthest_points():
    x = np.array([[0.0], [1.0], [2.0], [10.0], [4.0]])
    assert farthest_points(x, 3, first=0).tolist() == [0, 3, 4]
    sel = KCenterSelector(k=2).fit(np.zeros((1, 5)), ItemFeatures(embedding=x))
    assert sel.indices_.tolist() == [0, 3]
    with pytest.raises(ValueError, match="embeddings"):
        FPSSelector(k=2).fit(np.zeros((1, 5)))


def test_random_proportional():
    labels = np.array(["a"] * 30 + ["b"] * 10, dtype=object)
    sel = RandomSelector(k=8, proportional=True).fit(
        np.zeros((2, 40)), ItemFeatures(benchmark=labels)
    )
    assert (labels[sel.indices_] == "a").sum() == 6
    assert sel.weights_.sum() == pytest.approx(1.0)


def test_discrimination_signal_by_hand():
    from primebench_tasks.select.datbench import item_rest_correlation
    from primebench_tasks.select.vaw import discrimination_signal

    rng = np.random.default_rng(2)
    X = (rng.random((30, 8)) < 0.5).astype(float)
    r = item_rest_correlation(X)
    p = X.mean(axis=0)
    np.testing.assert_allclose(
        discrimination_signal(X, 4), np.sign(r) * np.abs(r) ** 4 * np.sqrt(p * (1 - p))
    )


def test_cell_quantile_keeps_weak_items_from_winning_cells():
    X, emb = _clustered()
    var, _ = item_variance(X)
    # with every item eligible each of the three cells sends its best item
    base = VAWSelector(k=3, alpha=0.0).fit(X, ItemFeatures(embedding=emb))
    assert sorted(base.indices_.tolist()) == [0, 3, 4]
    # only the upper half may win a cell: the third cell's winner (3) is below the median of
    # the scores, so the fill takes the next best item overall (1)
    sel = VAWSelector(k=3, alpha=0.0, cell_quantile=0.5).fit(X, ItemFeatures(embedding=emb))
    assert sorted(sel.indices_.tolist()) == [0, 1, 4]


def test_response_cells_need_no_embeddings():
    from primebench_tasks.select.vaw import response_vectors

    rng = np.random.default_rng(0)
    X = (rng.random((70, 30)) < 0.5).astype(float)
    X[0, 0] = np.nan
    R = response_vectors(X)
    assert R.shape == (30, 64) and np.isfinite(R).all()
    assert response_vectors(X[:10]).shape == (30, 10)
    sel = VAWSelector(k=6, cells="responses", signal="discrimination", cell_quantile=0.5).fit(X)
    assert len(sel.indices_) == 6 and 1 <= sel.n_cells_["0"] <= 6  # cells with an eligible item
