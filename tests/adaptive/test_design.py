"""The guarded adaptive test's design: draws with known probabilities, the design estimate (by
hand, and unbiased by exact enumeration), the guard, the ledger."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from primebench_tasks.adaptive.design import (
    Draw,
    design_estimate,
    design_terms,
    draw_probabilities,
    draw_round,
    guard,
)
from primebench_tasks.adaptive.ledger import DrawLedger, draw_seed
from primebench_tasks.errors import InputError


def test_draw_probabilities_by_hand():
    q = draw_probabilities(np.array([1.0, 3.0, 0.0, 4.0]), np.array([True, True, True, False]), 0.5)
    # ε/R = 0.5/3 each; (1 − ε)·s/Σs over the remaining (1, 3, 0) → 0.125, 0.375, 0
    assert q == pytest.approx([0.5 / 3 + 0.125, 0.5 / 3 + 0.375, 0.5 / 3, 0.0])
    # no preference: uniform over the remaining
    assert draw_probabilities(np.zeros(3), np.ones(3, bool), 0.2) == pytest.approx([1 / 3] * 3)
    with pytest.raises(ValueError, match="uniform_share"):
        draw_probabilities(np.ones(3), np.ones(3, bool), 0.0)


def test_design_estimate_by_hand():
    y = np.array([1.0, 0.0, 1.0, 1.0])
    draws = [Draw(2, 0.5, 0.6, 2.0), Draw(0, 0.25, 0.7, 1.5)]
    # Z1 = 0 + 2.0 + (1 − 0.6)/0.5 = 2.8; Z2 = y_2 + 1.5 + (1 − 0.7)/0.25 = 3.7
    assert design_terms(draws, y) == pytest.approx([2.8, 3.7])
    est, se = design_estimate(draws, y, 4)
    assert est == pytest.approx(3.25 / 4)
    # sd(0.7, 0.925) = 0.225/√2; over √2 draws
    assert se == pytest.approx(0.225 / 2)
    # a failed draw gives no term, and later terms count its prediction
    y_failed = np.array([1.0, 0.0, np.nan, 1.0])
    assert design_terms(draws, y_failed) == pytest.approx([0.6 + 1.5 + 0.3 / 0.25])
    assert np.isnan(design_estimate([], y, 4)[0])


def _exact_expectation(y: np.ndarray, rounds: int, eps: float) -> float:
    """E[design estimate] over every draw sequence, with probabilities and predictions that
    depend on the answers so far (the adaptive case)."""
    n = len(y)
    total = 0.0
    for seq in itertools.permutations(range(n), rounds):
        prob, draws, asked = 1.0, [], np.zeros(n, bool)
        for i in seq:
            seen = y[asked]
            m = np.full(n, 0.2 + 0.6 * (seen.mean() if len(seen) else 0.5))  # adaptive prediction
            pref = np.arange(1, n + 1, dtype=float) * (1 + seen.sum())  # adaptive preference
            q = draw_probabilities(pref, ~asked, eps)
            prob *= q[i]
            draws.append(Draw(i, float(q[i]), float(m[i]), float(m[~asked].sum())))
            asked[i] = True
        total += prob * design_estimate(draws, y, n)[0]
    return total


@pytest.mark.parametrize("rounds", [1, 2, 3])
def test_design_estimate_is_unbiased_by_exact_enumeration(rounds):
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    assert _exact_expectation(y, rounds, 0.3) == pytest.approx(y.mean(), abs=1e-12)


def test_draw_round_keeps_each_draws_conditional_probability():
    q = np.array([0.5, 0.25, 0.25, 0.0])
    m = np.array([0.1, 0.2, 0.3, 0.4])
    rem = np.array([True, True, True, False])
    d = draw_round(q, m, rem, 2, np.random.default_rng(0))
    assert len(d) == 2 and d[0].item != d[1].item and 3 not in {d[0].item, d[1].item}
    assert d[0].q == pytest.approx(q[d[0].item])
    assert d[1].q == pytest.approx(q[d[1].item] / (1 - q[d[0].item]))
    assert d[0].rest == pytest.approx(0.6) and d[1].rest == pytest.approx(0.6 - m[d[0].item])


def test_guard_by_hand():
    z = 1.645
    # disagree: 0.80 vs 0.70 ± 0.04, k = 0.5 → bound 0.02, value 0.72, the design's interval held
    g = guard(0.80, 0.75, 0.85, 0.70, 0.04, z, 0.5)
    assert g.moved and g.value == pytest.approx(0.72)
    assert g.lo == pytest.approx(0.70 - z * 0.04) and g.hi == pytest.approx(0.79)
    # agree: the model's point, its interval widened by k·SE
    g = guard(0.71, 0.66, 0.76, 0.70, 0.04, z, 0.5)
    assert not g.moved and g.value == pytest.approx(0.71)
    assert (g.lo, g.hi) == pytest.approx((0.64, 0.78))
    # never further than k·SE from the design estimate, whatever the model says
    for model in np.linspace(0, 1, 11):
        assert (
            abs(guard(model, model - 0.05, model + 0.05, 0.3, 0.05, z, 0.5).value - 0.3)
            <= 0.025 + 1e-12
        )
    # no design SE yet: the model's as it is
    assert guard(0.5, 0.4, 0.6, 0.3, float("nan"), z).value == 0.5


def test_ledger_round_trip_and_refusals(tmp_path):
    led = DrawLedger()
    led.add("m", "B", ["a", "c"], [Draw(0, 0.5, 0.25, 2.0), Draw(2, 0.125, 0.75, 1.75)], -0.5)
    path = tmp_path / "draws.json"
    led.write(path)
    back = DrawLedger.read(path)
    assert back.draws("m", "B", {"a": 4, "c": 1}) == [
        Draw(4, 0.5, 0.25, 2.0),
        Draw(1, 0.125, 0.75, 1.75),
    ]
    assert back.rounds("m", "B", {"a": 4, "c": 1}) == (
        [[Draw(4, 0.5, 0.25, 2.0), Draw(1, 0.125, 0.75, 1.75)]],
        [-0.5],
    )
    with pytest.raises(InputError, match="not in the benchmark's pool"):
        back.draws("m", "B", {"a": 0})
    doc = json.loads(path.read_text())
    doc["tests"][0]["draws"][1]["q"] = 0.0
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"tests\[0\]\.draws\[1\]"):
        DrawLedger.read(path)
    doc["tests"][0]["draws"][1] = {"item_id": "a", "round": 0, "q": 0.5, "m": 0.1, "rest": 1.0}
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="drawn twice"):
        DrawLedger.read(path)
    doc["tests"][0]["draws"][1] = {"item_id": "c", "round": 2, "q": 0.5, "m": 0.1, "rest": 1.0}
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="rounds run 0, 1"):
        DrawLedger.read(path)
    assert DrawLedger.read(tmp_path / "absent.json").tests == {}


def test_draw_seed_is_a_function_of_the_test_and_its_count():
    a = draw_seed("v1", "m", "B", 5).random(3)
    assert np.array_equal(a, draw_seed("v1", "m", "B", 5).random(3))
    assert not np.array_equal(a, draw_seed("v1", "m", "B", 10).random(3))
    assert not np.array_equal(a, draw_seed("v1", "m2", "B", 5).random(3))


def _static(items, answers_len=10):
    from primebench_tasks.adaptive.design import StaticRound

    stratum = np.array([0 if i < 4 else 1 for i in items])
    return StaticRound(np.array(items), stratum, np.array([4, 6]), np.full(answers_len, 0.5))


def test_a_static_round_by_hand():
    """Two strata (N = 4, 6; n = 2, 3), m0 = ½: residuals (½, −½) and (½, ½, −½), so
    Z_0 = 5 + 0 + 6/3·½ = 6; variances 16·½·½/2 = 2 and 36·½·⅓/3 = 2."""
    y = np.array([1.0, 0.0, np.nan, np.nan, 1.0, 1.0, 0.0, np.nan, np.nan, np.nan])
    s = _static([0, 1, 4, 5, 6])
    assert s.term(y) == pytest.approx((6.0, 4.0, 5))
    est, se = design_estimate([], y, 10, known=3.0, static=s)
    assert (est, se) == pytest.approx((0.6, 0.2))


def test_a_static_round_then_draws_is_unbiased_by_exact_enumeration():
    """Every stratified draw of the static round (C(4,2)·C(6,3) = 120), then one adaptive draw
    whose probabilities depend on the static answers: E[estimate] = the full score."""
    y = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0])
    total, mass = 0.0, 0.0
    for a in itertools.combinations(range(4), 2):
        for b in itertools.combinations(range(4, 10), 3):
            items = [*a, *b]
            p_static = 1 / (6 * 20)
            asked = np.zeros(10, bool)
            asked[items] = True
            known = float(y[items].sum())
            m = np.full(10, 0.3 + 0.4 * y[items].mean())
            q = draw_probabilities(np.arange(10.0) + y[items].sum(), ~asked, 0.4)
            for i in np.flatnonzero(~asked):
                d = [Draw(int(i), float(q[i]), float(m[i]), float(m[~asked].sum()))]
                est, _ = design_estimate(d, y, 10, known=known, static=_static(items))
                total += p_static * q[i] * est
                mass += p_static * q[i]
    assert mass == pytest.approx(1.0) and total == pytest.approx(y.mean(), abs=1e-12)
