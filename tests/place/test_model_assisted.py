"""The model-assisted estimator (``place.estimators.GREG``, :func:`model_assisted`): by hand,
and unbiased with an interval that holds for a model far above every reference model whose item
profile the reference models do not share — where p-IRT on the same items is far off."""

from __future__ import annotations

import numpy as np
import pytest

from primebench_tasks.place.estimators import GREG, PIRT, model_assisted
from primebench_tasks.select.stratified import StratifiedSelector


def test_model_assisted_by_hand() -> None:
    # residuals 0.2, -0.1, 0.3 on 3 equally weighted drawn items of a 10-item pool, p̂ mean 0.5
    resid = np.array([[0.2, -0.1, 0.3], [np.nan, 0.4, np.nan]])
    w = np.array([[1 / 3, 1 / 3, 1 / 3], [0.0, 1.0, 0.0]])
    point, var = model_assisted(np.array([0.5, 0.55]), resid, w, 10)
    assert point[0] == pytest.approx(0.5 + 0.4 / 3)
    # ē = 0.1333; Σ (e − ē)² = 0.086667; × (1/3)² × 3/2 × (1 − 3/10) = 0.0101111
    assert var[0] == pytest.approx(0.086667 / 9 * 1.5 * 0.7, rel=1e-4)
    # one answered item: its residual corrects the point; no variance from one item
    assert point[1] == pytest.approx(0.95) and np.isnan(var[1])
    none, v = model_assisted(np.array([0.5]), np.full((1, 3), np.nan), np.zeros((1, 3)), 10)
    assert np.isnan(none[0]) and np.isnan(v[0])


def _panel_and_frontier(
    seed: int = 0, abilities: tuple[float, float] = (2.5, 3.5)
) -> tuple[np.ndarray, np.ndarray]:
    """A 2PL panel of 120 reference models (abilities N(0, 1)) on 600 items, and 30 models of a
    new generation: ``abilities`` uniform and, on the 300 items the reference models find
    hardest, a profile of their own (those items 1.5 logits easier for them)."""
    rng = np.random.default_rng(seed)
    n = 600
    a = rng.lognormal(0.0, 0.3, n)
    b = rng.normal(0.0, 1.2, n)
    theta = rng.normal(0.0, 1.0, 120)
    P = 1 / (1 + np.exp(-(a * (theta[:, None] - b))))
    ref = (rng.random(P.shape) < P).astype(float)
    hard = np.argsort(ref.mean(axis=0))[:300]
    shift = np.zeros(n)
    shift[hard] = 1.5
    new_theta = rng.uniform(*abilities, 30)
    Pn = 1 / (1 + np.exp(-(a * (new_theta[:, None] - b) + shift)))
    new = (rng.random(Pn.shape) < Pn).astype(float)
    return ref, new


def test_all_items_drawn_give_the_observed_mean() -> None:
    ref, new = _panel_and_frontier()
    idx = np.arange(ref.shape[1])
    est = GREG().fit(ref, idx)
    assert est.predict(new) == pytest.approx(new.mean(axis=1))
    assert np.allclose(est.variance(new), 0.0)


def _ridge_greg():
    """The research candidate with the cross-fitted ridge predictor
    (research/placement/design_comparison.py: compared, not chosen)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[2] / "research" / "placement" / "design_comparison.py"
    spec = importlib.util.spec_from_file_location("design_comparison", path)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod.RidgeGREG


@pytest.mark.parametrize("predictor", ["irt", "ridge"])
def test_a_new_generation_far_above_the_panel_is_estimated_without_bias(predictor) -> None:
    ref, new = _panel_and_frontier()
    truth = new.mean(axis=1)
    assert truth.min() > ref.mean(axis=1).max()  # every new model above every reference one
    errs, pirt_errs, covered = [], [], []
    for r in range(40):
        sel = StratifiedSelector(100, random_state=r).fit(ref)
        make = GREG if predictor == "irt" else _ridge_greg()
        est = make().fit(ref, sel.indices_, sel.weights_)
        Ys = new[:, sel.indices_]
        errs.append(est.predict(Ys) - truth)
        lo, hi = est.interval(Ys, 0.90)
        covered.append((lo <= truth) & (truth <= hi))
        pirt_errs.append(PIRT().fit(ref, sel.indices_).predict(Ys) - truth)
    errs, pirt_errs = np.array(errs), np.array(pirt_errs)
    assert abs(errs.mean()) < 0.01  # design-unbiased whatever the new profile
    assert pirt_errs.mean() < -0.02  # the item model's extrapolation reads them as weaker
    assert np.abs(errs).mean() < np.abs(pirt_errs).mean()
    assert 0.85 <= np.mean(covered) <= 0.97
