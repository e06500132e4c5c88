"""The misfit check (#56): Snijders' lz* by hand on a two-item case, its calibration on held-out
reference models, and verdicts on a tiny simulated panel — a pattern drawn from the item model
passes, a reversed one (right on the hard items, wrong on the easy ones) is flagged, and a
panel too small to reach the level says so instead of flagging; the directed residual by hand,
and a truncated run (wrong on the long items) flagged by it where lz* alone lets it pass."""

from __future__ import annotations

import math

import numpy as np
import pytest

from primebench_tasks.place.misfit import ItemFacts, directed_residual, lz_star, person_fit


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


def test_directed_residual_by_hand():
    # a = (1, 2, 1), b = 0, θ = 0: every P = ½, q = ¼. c = (1, 0, −1) is orthogonal to the span
    # of (a, 1) = span{(1, 0, 1), (0, 1, 0)}, so c̃ = c; answers (1, 0, 0): u − P = (½, −½, −½)
    # Σ c̃ (u − P) = ½ + ½ = 1; Σ q c̃² = ¼ · 2 = ½; z = 1 / √½ = √2
    a, b, theta = np.array([1.0, 2.0, 1.0]), np.zeros(3), np.array([0.0])
    z = directed_residual(a, b, theta, [[1, 0, 0]], np.array([1.0, 0.0, -1.0]), min_items=3)
    assert z[0] == pytest.approx(math.sqrt(2), rel=1e-12)
    # c = (2, 1, 0) = (1, 0, −1) + 1·(1, 1, 1): the constant is taken out, same z
    z2 = directed_residual(a, b, theta, [[1, 0, 0]], np.array([2.0, 1.0, 0.0]), min_items=3)
    assert z2[0] == pytest.approx(math.sqrt(2), rel=1e-9)
    # too few items with a covariate, or a two-valued covariate with one item on a side: none
    assert np.isnan(directed_residual(a, b, theta, [[1, 0, 0]], np.array([1.0, 0.0, -1.0]))[0])
    one_side = directed_residual(a, b, theta, [[1, 0, 0]], np.array([1.0, 0.0, 0.0]), min_items=3)
    assert np.isnan(one_side[0])


def test_a_truncated_run_is_flagged_by_its_length_signature():
    Y, a, b = _panel(160, 60, 2)
    length = np.random.default_rng(3).uniform(20, 400, 60)  # question characters
    facts = ItemFacts(length)
    ref, new = Y[:120], Y[120:]
    healthy = person_fit(ref, new, facts=facts)
    assert sum(f.flagged for f in healthy) <= 2
    assert all(f.directed is not None and "length" in f.directed for f in healthy)
    cut = new.copy()
    cut[:, np.argsort(-length)[:20]] = 0.0  # the longest third lost to the token budget
    by_lz = person_fit(ref, cut)
    with_length = person_fit(ref, cut, facts=facts)
    # 40 truncated runs, weak ones lose little: 19 flagged with the length residual, 3 by lz*
    assert sum(f.flagged for f in with_length) >= 15 and sum(f.flagged for f in by_lz) <= 5
    f = next(f for f in with_length if f.flagged)
    assert f.signature == "length" and "truncated decoding" in f.line("B")
    with pytest.raises(ValueError, match="facts of 60 items for 59"):
        person_fit(ref[:, :59], cut[:, :59], facts=facts)
