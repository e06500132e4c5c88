import numpy as np
import pytest

from primebench_tasks.select.anchor_points import AnchorPointsSelector
from primebench_tasks.select.base import ItemFeatures
from primebench_tasks.select.datbench import DatBenchSelector, item_rest_correlation
from primebench_tasks.select.disco import DISCOSelector, disagreement
from primebench_tasks.select.irt import (
    IRTSelector,
    binarize,
    estimate_theta,
    fit_2pl,
    paper_thresholds,
)
from primebench_tasks.select.registry import SELECTORS, SelectorContext, resolve
from primebench_tasks.select.vaw import VAWSelector, dpp_greedy_map, rbf_bandwidth
from tests.fixtures.irt import simulate_2pl


def _irt_data(M=300, n=400, seed=0):
    return simulate_2pl(M, n, seed)


def test_2pl_recovers_parameters():
    Y, th, a, b = _irt_data()
    Y[::7, ::5] = np.nan
    m = fit_2pl(Y)
    assert np.corrcoef(m.theta, th)[0, 1] > 0.97
    assert np.corrcoef(m.b, b)[0, 1] > 0.95
    assert np.corrcoef(np.log(m.a), np.log(a))[0, 1] > 0.6


def test_theta_map_matches_grid_search():
    Y, th, a, b = _irt_data(M=5, n=60)
    m = fit_2pl(Y)
    seen = np.arange(0, 60, 3)
    est = estimate_theta(m, Y[:, seen], seen)
    grid = np.linspace(-4, 4, 8001)
    for i in range(5):
        z = np.outer(grid, m.a[seen]) - m.b[seen]
        lp = (Y[i, seen] * z - np.logaddexp(0, z)).sum(axis=1) - grid**2 / 2
        assert est[i] == pytest.approx(grid[np.argmax(lp)], abs=2e-3)


def test_binarisation_rule():
    X = np.array([[0.2, 0.7], [0.6, 0.9], [np.nan, 0.1]])
    assert np.isnan(binarize(X)[2, 0]) and binarize(X)[1, 0] == 1 and binarize(X)[0, 0] == 0
    assert paper_thresholds(X, "continuous", "exact match").tolist() == [0.5, 0.5]  # VQA soft
    assert paper_thresholds(X, "judge", "GPT").tolist() == [0.5, 0.5]
    assert paper_thresholds(X, "continuous", "BLEU").tolist() == [0.6, 0.6]  # median


def test_irt_anchors_weighted_by_cluster_size():
    Y, *_ = _irt_data(M=60, n=200)
    sel = IRTSelector(k=20).fit(Y)
    assert len(set(sel.indices_.tolist())) == len(sel.indices_) <= 20
    assert sel.weights_.sum() == pytest.approx(1.0)
    assert len(np.unique(sel.weights_)) > 1


def test_anchor_points_picks_one_medoid_per_correlated_block():
    rng = np.random.default_rng(0)
    base = rng.random((30, 2)) < 0.5
    cols = [base[:, 0]] * 6 + [base[:, 1]] * 4
    X = np.column_stack(cols).astype(float)
    flip = rng.random(X.shape) < 0.03
    X[flip] = 1 - X[flip]
    sel = AnchorPointsSelector(k=2).fit(X)
    groups = {int(i) // 6 if i < 6 else 1 for i in sel.indices_}
    assert groups == {0, 1}
    w = dict(zip((sel.indices_ >= 6).tolist(), sel.weights_, strict=True))
    assert w[False] == pytest.approx(0.6) and w[True] == pytest.approx(0.4)


def test_item_rest_correlation_is_point_biserial_on_binary():
    rng = np.random.default_rng(1)
    X = (rng.random((25, 12)) < 0.5).astype(float)
    r = item_rest_correlation(X)
    for i in range(12):
        rest = np.delete(X, i, axis=1).mean(axis=1)
        m1, m0 = rest[X[:, i] == 1].mean(), rest[X[:, i] == 0].mean()
        p = X[:, i].mean()
        rpb = (m1 - m0) / rest.std() * np.sqrt(p * (1 - p))
        assert r[i] == pytest.approx(rpb)
    top = DatBenchSelector(k=3).fit(X).indices_
    assert set(top) == set(np.argsort(-r)[:3])


def test_disco_disagreement():
    X = np.array([[1, 1, 0.5], [0, 1, 0.5], [1, 1, 0.5]], dtype=float)
    pds, jsd = disagreement(X)
    assert pds.tolist() == [2.0, 1.0, 1.0]
    assert jsd[1] == pytest.approx(0.0) and jsd[0] > 0
    assert DISCOSelector(k=1).fit(X).indices_.tolist() == [0]


def test_dpp_prefers_diverse_high_quality_items():
    x = np.array([[0, 0], [0, 0.01], [5, 5], [-5, 5]], dtype=float)
    q = np.array([1.0, 0.99, 0.5, 0.4])
    got = dpp_greedy_map(x, q, 3, rbf_bandwidth(x, 0, pairs=50))
    assert got[0] == 0 and 1 not in got.tolist()  # the near-duplicate adds no volume
    sel = VAWSelector(k=2, cells="dpp", alpha=0).fit(
        np.array([[1, 1, 0, 1], [0, 0, 1, 0]], float), ItemFeatures(embedding=x)
    )
    assert sorted(sel.indices_.tolist()) in ([0, 2], [0, 3], [1, 2], [1, 3])


def test_registry():
    names, skipped = resolve("all", has_embeddings=False)
    assert "vaw_shares_only" in names and "fps" in skipped and "vaw" in skipped
    X, *_ = _irt_data(M=20, n=50)
    E = np.random.default_rng(0).normal(size=(50, 4))
    for name, f in SELECTORS.items():
        sel = f(10, 0, SelectorContext()).fit(X, ItemFeatures(embedding=E))
        assert 0 < len(sel.indices_) <= 10, name
        assert sel.weights_.sum() == pytest.approx(1.0), name
    with pytest.raises(ValueError, match="unknown selector"):
        resolve("nope", True)


def test_theta_estimate_is_the_map_even_with_large_discriminations():
    """p-IRT's θ diverged silently (undamped Newton reached 80–150 with discriminations up to 10
    and 25 items). Against a brute-force grid maximum of the log-posterior, for random patterns,
    all-correct and all-wrong: the safeguarded solve finds the MAP, with no overflow."""
    from primebench_tasks.select.irt import IRT2PL, estimate_theta

    rng = np.random.default_rng(0)
    n = 25
    a = rng.uniform(0.5, 10.0, n)
    b = rng.normal(0, 8, n)
    model = IRT2PL(a=a, b=b, theta=np.zeros(1))
    Y = np.vstack([rng.integers(0, 2, (30, n)).astype(float), np.ones(n), np.zeros(n)])
    Y[3, :5] = np.nan
    with np.errstate(all="raise"):
        th = estimate_theta(model, Y, np.arange(n))
    grid = np.linspace(-60, 60, 240001)
    for row, t in zip(Y, th, strict=True):
        obs = np.isfinite(row)
        z = np.outer(grid, a[obs]) - b[obs]
        ll = (row[obs] * z - np.logaddexp(0, z)).sum(axis=1) - grid**2 / 2
        assert abs(t - grid[np.argmax(ll)]) < 1e-3
    assert np.all(np.abs(th) < 10)


def test_selectors_are_scikit_learn_estimators():
    """get_params / set_params / clone on every registered selector; parameters after k are
    keyword-only."""
    from sklearn.base import clone

    from primebench_tasks.select.registry import SELECTORS, SelectorContext
    from primebench_tasks.select.vaw import VAWSelector

    for name, make in SELECTORS.items():
        sel = make(7, 3, SelectorContext())
        params = sel.get_params()
        assert params["k"] == 7 and params["random_state"] == 3, name
        twin = clone(sel)
        assert twin.get_params().keys() == params.keys() and twin is not sel
    v = VAWSelector(5, random_state=1, cells="none").set_params(k=9, cells="random")
    assert (v.k, v.cells, v.random_state) == (9, "random", 1)
    with pytest.raises(TypeError):
        VAWSelector(5, 1)  # random_state is keyword-only
