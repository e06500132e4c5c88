"""The locally weighted linear-Gaussian model: weights, kriging and the item choice by hand, against
the ridge regression (the push-through identity) and against explicit Gaussian conditioning."""

import numpy as np
import pytest

from primebench_tasks.adaptive.local_gaussian import LocalGaussian
from primebench_tasks.adaptive.policy import AdaptivePolicy, ridge_full
from primebench_tasks.adaptive.procedure import AdaptiveProcedure
from primebench_tasks.select.irt import binarize, fit_2pl_cached
from tests.fixtures.irt import simulate_2pl


def _local(Y, alpha=10.0, bandwidth=0.5, agreement=0.0):
    return LocalGaussian(
        Y, fit_2pl_cached(binarize(Y)), alpha=alpha, bandwidth=bandwidth, agreement=agreement
    )


def test_weights_by_hand():
    Y = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    lg = _local(Y, bandwidth=0.5, agreement=0.3)
    lg.theta_ref = np.array([-1.0, 0.0, 1.0])
    none = np.zeros(3, bool)
    # nothing asked: posterior sd² = 1, so log w = −(θ_m − θ)² / (2·(0.25 + 1))
    want = np.exp(-np.array([1.0, 0.0, 1.0]) / 2.5)
    assert lg.weights(np.full(3, np.nan), none, 0.0) == pytest.approx(want / want.mean())
    # item 0 asked, answered 1: models 0 and 2 agree (+0.3 each); the sd² is 1/(1 + a²P(1−P))
    asked = np.array([True, False, False])
    answers = np.array([1.0, np.nan, np.nan])
    p = lg.model.prob(np.array([0.0]))[0][0]
    s2 = 1 / (1 + lg.model.a[0] ** 2 * p * (1 - p))
    log_w = -np.array([1.0, 0.0, 1.0]) / (2 * (0.25 + s2)) + 0.3 * np.array([1, 0, 1])
    want = np.exp(log_w)
    assert lg.weights(answers, asked, 0.0) == pytest.approx(want / want.mean())


def test_kriging_by_hand():
    # μ = (.5, .5), B = [[.5, −.5], [−.5, .5]]; item 0 answered 1: K = α + .5, r = .5,
    # ŷ₁ = .5 + (−.25 − .25)·.5/(α + .5) = .25 at α = .5; full = (1 + .25)/2
    Y = np.array([[1.0, 0.0], [0.0, 1.0]])
    lg = _local(Y, alpha=0.5)
    got = lg.predict(np.array([1.0, np.nan]), np.array([True, False]), np.ones(2))
    assert got == pytest.approx(0.625)
    # nothing asked: the weighted mean
    assert lg.predict(np.full(2, np.nan), np.zeros(2, bool), np.array([1.5, 0.5])) == (
        pytest.approx(0.5)
    )


def test_unweighted_kriging_is_the_ridge_regression_plus_the_asked_items_residuals():
    """With w = 1 the kriging mean of every item is the ridge regression of the full scores
    (push-through identity); the prediction counts the asked answers themselves, whose residuals
    against their kriging mean are α·K⁻¹r."""
    X = simulate_2pl(60, 80, 3, a_mean=0.3, b_sd=1.2)[0]
    ref, y = X[:50], X[55]
    alpha = 10.0
    lg = _local(ref, alpha=alpha)
    items = np.array([2, 9, 17, 30, 41, 66])
    asked = np.zeros(80, bool)
    asked[items] = True
    answers = np.where(asked, y, np.nan)
    mu = ref.mean(axis=0)
    B = ref - mu
    K = alpha * np.eye(len(items)) + B[:, items].T @ B[:, items]
    r = y[items] - mu[items]
    y_hat = mu + B.T @ B[:, items] @ np.linalg.solve(K, r)
    assert ((y_hat >= 0) & (y_hat <= 1)).all()  # no clipping in this case
    ridge = ridge_full(ref, ref.mean(axis=1), items, y, alpha)
    want = ridge + alpha * np.linalg.solve(K, r).sum() / 80
    assert lg.predict(answers, asked, np.ones(50)) == pytest.approx(want)


def _conditional_variance_of_sum(Sigma, S, U):
    """var(Σ_U y | y_S) by explicit Gaussian conditioning."""
    one = np.zeros(len(Sigma))
    one[U] = 1.0
    if len(S) == 0:
        return one @ Sigma @ one
    c = Sigma[:, S]
    cond = Sigma - c @ np.linalg.solve(Sigma[np.ix_(S, S)], c.T)
    return one @ cond @ one


def test_choice_maximises_the_variance_reduction_of_the_unasked_sum():
    X = simulate_2pl(40, 30, 5, a_mean=0.3, b_sd=1.2)[0]
    alpha = 2.0
    lg = _local(X, alpha=alpha)
    w = np.linspace(0.5, 1.5, 40)
    w = w / w.mean()
    mu = w @ lg.Y / w.sum()
    B = np.sqrt(w)[:, None] * (lg.Y - mu)
    Sigma = B.T @ B + alpha * np.eye(30)  # the prior covariance of y
    asked = np.zeros(30, bool)
    asked[[4, 11]] = True
    answers = np.where(asked, X[0], np.nan)
    picks = lg.choose(answers, asked, 3, w, exclude=np.eye(30, dtype=bool)[7])
    S = [4, 11]
    for pick in picks:
        U = [i for i in range(30) if i not in S]
        base = _conditional_variance_of_sum(Sigma, S, U)
        gain = {i: base - _conditional_variance_of_sum(Sigma, S + [i], U) for i in U if i != 7}
        best = max(gain.values())
        assert gain[pick] == pytest.approx(best, rel=1e-6)
        S.append(int(pick))
    assert len(set(picks)) == 3 and not set(picks) & {4, 7, 11}


def test_policy_checks_and_labels():
    with pytest.raises(ValueError, match="choice must be one of"):
        AdaptivePolicy(choice="random")
    with pytest.raises(ValueError, match="predictor must be one of"):
        AdaptivePolicy(predictor="median")
    with pytest.raises(ValueError, match="bandwidth must be > 0"):
        _local(np.eye(3), bandwidth=0.0)
    assert AdaptivePolicy("pirt", "fisher", shift="all").label == "pirt / fisher"
    assert AdaptivePolicy("blend", "fisher", 10.0, shift="all").label == "blend α=10 / fisher"
    assert AdaptivePolicy("regime_local", "regime", 10.0, 0.5, 0.15, 0.5, "all", 0.5).label == (
        "regime_local α=10 h=0.5 λ=0.15 / regime"
    )
    assert AdaptivePolicy("regime_local", "regime", 10.0, 0.5, 0.15, 0.25, "all", 0.5).label == (
        "regime_local α=10 h=0.5 λ=0.15 w=0.25 / regime"
    )
    assert AdaptivePolicy(
        "regime_local", "regime", 10.0, 0.5, 0.15, 0.25, "outside", 0.5
    ).label == ("regime_local α=10 h=0.5 λ=0.15 w=0.25 shift=outside / regime")
    with pytest.raises(ValueError, match="pirt_weight must be in"):
        AdaptivePolicy(pirt_weight=1.5)
    with pytest.raises(ValueError, match="beyond_weight must be in"):
        AdaptivePolicy(beyond_weight=-0.1)
    assert AdaptivePolicy(
        "regime_local", "regime", 10.0, 0.5, 0.15, 0.25, "all", beyond_weight=0.6
    ).label == ("regime_local α=10 h=0.5 λ=0.15 w=0.25 beyond w=0.6 / regime")
    # the weight beyond is regime_local's alone: another predictor's label does not name it
    assert AdaptivePolicy("blend", "fisher", 10.0, shift="all", beyond_weight=0.6).label == (
        "blend α=10 / fisher"
    )
    with pytest.raises(ValueError, match="shift must be one of"):
        AdaptivePolicy(shift="inside")


def test_local_blend_weighs_pirt_and_the_kriging_by_hand():
    X = simulate_2pl(80, 200, 0, a_mean=0.3, b_sd=1.2)[0]
    ref = X[:60]
    asked = np.zeros(200, bool)
    asked[:20] = True
    y = np.where(asked, X[70], np.nan)
    point = {}
    for name, w in (("pirt", 1.0), ("local", 0.0), ("quarter", 0.25), ("half", 0.5)):
        policy = AdaptivePolicy("local_blend", "local", pirt_weight=w)
        point[name] = AdaptiveProcedure(ref, policy).point(y, asked)[1]
    pirt_alone = AdaptiveProcedure(ref, AdaptivePolicy("pirt", "local")).point(y, asked)[1]
    kriging = AdaptiveProcedure(ref, AdaptivePolicy("local", "local")).point(y, asked)[1]
    assert point["pirt"] == pytest.approx(pirt_alone) and point["local"] == kriging
    assert point["quarter"] == pytest.approx(0.25 * pirt_alone + 0.75 * kriging)
    assert point["half"] == (pirt_alone + kriging) / 2  # the earlier mean, to the bit


def test_regime_policy_is_local_inside_the_panel_and_fisher_beyond_it():
    X = simulate_2pl(80, 200, 0, a_mean=0.3, b_sd=1.2)[0]
    ref = X[:60]
    regime = AdaptiveProcedure(ref, AdaptivePolicy("regime_local", "regime", beyond_weight=0.5))
    fisher = AdaptiveProcedure(ref, AdaptivePolicy("blend", "fisher"))
    local = AdaptiveProcedure(ref, AdaptivePolicy("local_blend", "local"))
    asked = np.zeros(200, bool)
    asked[:20] = True
    # every answer right: p-IRT puts the model beyond the panel → Fisher's items, blend's point
    top = np.where(asked, 1.0, np.nan)
    assert not regime.interior(top, asked)
    assert list(regime.pick(top, asked, 5)) == list(fisher.pick(top, asked, 5))
    assert regime.point(top, asked) == pytest.approx(fisher.point(top, asked))
    # a median model's answers: the local model's items and point
    mid = np.argsort(ref.mean(axis=1))[30]
    y = np.where(asked, ref[mid], np.nan)
    assert regime.interior(y, asked)
    assert list(regime.pick(y, asked, 5)) == list(local.pick(y, asked, 5))
    assert regime.point(y, asked) == pytest.approx(local.point(y, asked))


def test_beyond_the_panel_the_point_weighs_pirt_by_the_beyond_weight():
    """Where p-IRT places the model above every reference model, regime_local's point is
    w·p-IRT + (1 − w)·ridge, written blend + (w − ½)·(p-IRT − ridge) (½: the blend, to the bit);
    at the top of the panel and inside it the weight changes nothing."""
    from primebench_tasks.adaptive.policy import ridge_full

    X = simulate_2pl(80, 200, 0, a_mean=0.3, b_sd=1.2)[0]
    ref = X[:60]
    asked = np.zeros(200, bool)
    asked[:20] = True
    top = np.where(asked, 1.0, np.nan)  # every answer right: beyond the panel
    procs = {
        w: AdaptiveProcedure(ref, AdaptivePolicy("regime_local", "regime", beyond_weight=w))
        for w in (0.5, 0.6, 1.0)
    }
    p = procs[0.5]
    theta = p.theta(top, asked)
    pirt = p._pirt(top, asked, theta)
    assert p._regime(pirt) == "beyond"
    ridge = ridge_full(p.Y_fit, p.full_fit, np.arange(20), top, p.policy.ridge_alpha)
    assert procs[0.5].point(top, asked)[1] == (pirt + ridge) / 2
    assert procs[0.6].point(top, asked)[1] == pytest.approx(0.6 * pirt + 0.4 * ridge, abs=1e-12)
    assert procs[1.0].point(top, asked)[1] == pytest.approx(pirt, abs=1e-12)
    assert pirt > ridge  # p-IRT's tail over the ridge's shrinkage: the weight moves the point up
    # a median model's answers: inside the panel, one point whatever the weight
    mid = np.argsort(ref.mean(axis=1))[30]
    y = np.where(asked, ref[mid], np.nan)
    assert len({procs[w].point(y, asked)[1] for w in procs}) == 1


def test_choosing_leaves_the_model_as_it_was():
    """The choice's rank-one updates work on a copy: the same weights predict and choose the
    same before and after (a model asked first, with nothing asked, shares its weights with the
    next model's first round)."""
    X = simulate_2pl(40, 50, 2, a_mean=0.3, b_sd=1.2)[0]
    lg = _local(X[:30])
    none = np.zeros(50, bool)
    blank = np.full(50, np.nan)
    w = lg.weights(blank, none, 0.0)
    first = lg.choose(blank, none, 5, w)
    before = lg.predict(X[35], first_mask := np.isin(np.arange(50), first), w)
    assert list(lg.choose(blank, none, 5, w)) == list(first)
    assert lg.predict(X[35], first_mask, w) == before
