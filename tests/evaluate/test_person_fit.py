"""The misfit check (#56): Snijders' lz* by hand on a two-item case, its calibration on held-out
reference models, and verdicts on a tiny simulated panel — a pattern drawn from the item model
passes, a reversed one (right on the hard items, wrong on the easy ones) is flagged, and a
panel too small to reach the level says so instead of flagging."""

from __future__ import annotations

import math

import numpy as np
import pytest

from primebench_tasks.evaluate.person_fit import lz_star, person_fit


def test_lz_star_by_hand():
    # a = (1, 2), b = (0, 1), θ = 1: both logits w = 1, P = σ(1); answers (1, 0)
    P = 1 / (1 + math.exp(-1))
    q = P * (1 - P)
    W = (1 - P) * 1 + (0 - P) * 1
    c = (q * 1 * 1 + q * 2 * 1) / (q * 1 + q * 4)  # = 0.6
    wt = (1 - c * 1, 1 - c * 2)  # (0.4, -0.2)
    tau2 = q * (wt[0] ** 2 + wt[1] ** 2)
    by_hand = (W + c * -1.0) / math.sqrt(tau2)  # r0(θ) = −θ for the N(0, 1) prior's MAP
    assert c == pytest.approx(0.6) and by_hand == pytest.approx(-5.35614, abs=1e-4)
    got = lz_star(np.array([1.0, 2.0]), np.array([0.0, 1.0]), np.array([1.0]), np.array([[1, 0]]))
    assert got[0] == pytest.approx(by_hand, rel=1e-12)
    # a missing answer is left out; one answered item is no statistic
    one = lz_star(np.array([1.0, 2.0]), np.array([0.0, 1.0]), np.array([1.0]), [[1, np.nan]])
    assert np.isnan(one[0])


def _panel(M: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(0.7, 2.0, n), rng.normal(0, 1.2, n)
    theta = rng.normal(0, 1, M)
    P = 1 / (1 + np.exp(-(np.outer(theta, a) - b)))
    return (rng.random((M, n)) < P).astype(float), a, b


def test_a_pattern_from_the_item_model_passes_and_a_reversed_one_is_flagged():
    Y, a, b = _panel(160, 60, 0)
    ref, new = Y[:120], Y[120:]
    fits = person_fit(ref, new)
    flagged = [f.flagged for f in fits]
    assert sum(flagged) <= 2  # healthy held-out models: about the level (2 %) at most
    assert all(f.p_value is not None and 0 < f.p_value <= 1 for f in fits)
    assert all(f.reference == 120 and f.items == 60 for f in fits)
    # reversed: right exactly on the items the model would most likely miss
    easy_first = np.argsort(b)
    rev = np.zeros((1, 60))
    rev[0, easy_first[-30:]] = 1.0
    (f,) = person_fit(ref, rev)
    assert f.flagged and f.p_value == pytest.approx(1 / 121) and f.worse_than == 1.0
    assert f.line("B").startswith("answers on B fit the reference models worse than 100 % of them")
    assert "chat template" in f.line("B")
    # scores are binarised at 0.5 (a graded 0.8 counts as right)
    (g,) = person_fit(ref, np.where(rev == 1, 0.8, 0.2))
    assert g.statistic == pytest.approx(f.statistic)


def test_too_few_reference_models_or_items_give_no_verdict():
    Y, _, _ = _panel(30, 40, 1)
    (f,) = person_fit(Y[:20], Y[20:21])  # 20 held-out values: p ≥ 1/21 > 0.02
    assert not f.flagged and f.p_value is None and "too few to tell" in f.why_not
    assert f.statistic is not None
    few = np.full((1, 40), np.nan)
    few[0, :5] = 1.0
    (g,) = person_fit(Y[:20], few, level=0.2)
    assert not g.flagged and g.statistic is None and "5 answered items" in g.why_not
