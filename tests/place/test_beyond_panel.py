"""Placement beyond the reference panel: regimes, regime intervals, hold-out splits, headroom and
the top reserve — hand-computed cases."""

import numpy as np
import pandas as pd
import pytest

from primebench_tasks.errors import ConfigError
from primebench_tasks.evaluate.splits import frontier_split, newest_split
from primebench_tasks.pipeline.headroom import suite_headroom
from primebench_tasks.pipeline.manifest import build_manifest
from primebench_tasks.place.benchmark import (
    MIN_REGIME_RESIDUALS,
    place_models,
    placement_position,
    placement_regime,
    regime_residuals,
)
from primebench_tasks.select.base import ItemFeatures
from primebench_tasks.select.headroom import TopReserveSelector
from primebench_tasks.select.random import RandomSelector
from tests.conftest import make_panel


def test_regime_by_hand():
    ref = np.arange(1, 21) / 20.0  # 0.05 .. 1.00; 85th percentile order statistic: ref[17] = .9
    got = placement_regime(np.array([0.5, 0.9, 0.95, 1.0, 1.01, np.nan]), ref)
    assert got.tolist() == ["interior", "top", "top", "top", "beyond", "interior"]


def test_position_by_hand():
    ref = np.arange(1, 21) / 20.0  # the top starts at ref[17] = 0.90, the best is 1.00
    got = placement_position(np.array([0.8, 0.9, 0.95, 1.0, 1.05, np.nan]), ref)
    assert np.allclose(got[:5], [-1.0, 0.0, 0.5, 1.0, 1.5]) and np.isnan(got[5])
    # its signs are the regimes: < 0 inside, 0–1 at the top, > 1 beyond
    assert placement_regime(np.array([0.8, 0.9, 1.0, 1.05]), ref).tolist() == [
        "interior",
        "top",
        "top",
        "beyond",
    ]
    assert np.isnan(placement_position(np.array([0.5]), np.array([np.nan]))).all()
    assert placement_position(np.array([[0.9, 1.0]]), ref).shape == (1, 2)


def test_regime_residuals_borrow_outward_first():
    pools = {"interior": [0.0] * 30, "top": [0.1] * 5, "beyond": [0.2] * 10}
    # top has 5 < 20: beyond's 10 join (15), still short: interior's join → 45
    assert len(regime_residuals(pools, "top")) == 45
    assert len(regime_residuals(pools, "interior")) == 30  # enough alone
    beyond = regime_residuals(pools, "beyond")
    assert len(beyond) == 45 and beyond[0] == 0.0  # sorted
    assert MIN_REGIME_RESIDUALS == 20


def test_frontier_split_holds_out_the_strongest():
    s = np.array([0.5, 0.9, np.nan, 0.1, 0.9, 0.7])
    build, held = frontier_split(s, share=0.15, minimum=3)
    # ok = 5 models, 15 % → 1 < minimum 3: the three strongest, ties by position (1 before 4)
    assert held.tolist() == [1, 4, 5] and build.tolist() == [0, 2, 3]
    with pytest.raises(ConfigError):
        frontier_split(np.array([0.1, 0.2]), minimum=3)


def test_newest_split_holds_out_whole_dates_and_builds_on_older_only():
    models = pd.DataFrame(
        {
            "model": list("abcdefgh"),
            "release_date": [
                "2024-01",
                "2024-02",
                "2024-03",
                "2024-04",
                "2024-05",
                "2024-06",
                "2024-06",
                None,
            ],
        }
    )
    build, held = newest_split(models, share=0.15, minimum=2)
    # 7 dated, 15 % → 1 < 2: the two newest are f, g (both 2024-06); cut-off 2024-06
    assert held.tolist() == [5, 6] and build.tolist() == [0, 1, 2, 3, 4]  # h (undated) in neither


def _ladder_panel(n_models=12, n_items=40, seed=0):
    rng = np.random.default_rng(seed)
    ability = np.linspace(-2, 2, n_models)
    diff = np.linspace(-2, 2, n_items)
    p = 1 / (1 + np.exp(-(ability[:, None] - diff[None, :]) * 2))
    return (rng.random((n_models, n_items)) < p).astype(float)


def test_a_model_above_every_reference_model_is_said_to_be_beyond():
    X = _ladder_panel()
    panel = make_panel({"b": X}, {"b": "Math Reasoning"})
    sel = np.arange(0, 40, 2)
    m = build_manifest("s", panel, {"Math Reasoning": {"b": sel}}, {}, [], {})
    cols = [("b", f"b-{i}") for i in sel]
    new = pd.DataFrame([np.ones(len(sel)), X[6, sel]], index=["strong", "mid"], columns=cols)
    new.columns = pd.MultiIndex.from_tuples(cols)
    r = place_models(panel, m, new, estimator="mean", n_boot=20)
    assert r.loc["strong", "regime"] == "beyond" and bool(r.loc["strong", "above_all"])
    assert r.loc["strong", "predicted_rank"] == 1
    assert r.loc["mid", "regime"] == "interior" and not bool(r.loc["mid", "above_all"])


def test_regime_intervals_come_from_the_regime_errors():
    X = _ladder_panel()
    panel = make_panel({"b": X}, {"b": "Math Reasoning"})
    sel = np.arange(0, 40, 2)
    cal = {
        "estimator": "mean",
        "residuals": [0.0] * 30,
        "regimes": {"interior": [-0.01, 0.01] * 15, "top": [], "beyond": [-0.2, 0.2] * 15},
    }
    m = build_manifest(
        "s", panel, {"Math Reasoning": {"b": sel}}, {}, [], {}, extra={"placement_calibration": cal}
    )
    cols = pd.MultiIndex.from_tuples([("b", f"b-{i}") for i in sel])
    new = pd.DataFrame([np.ones(len(sel)), X[6, sel]], index=["strong", "mid"], columns=cols)
    r = place_models(panel, m, new, estimator="mean", n_boot=10)
    assert r.loc["strong", "predicted_full"] == 1.0  # the mean estimator: 1.0, above all
    # beyond: the ±0.2 errors, the upper end clipped to the score's range [0, 1]; interior: the
    # ±0.01 errors
    assert r.loc["strong", "predicted_full_lo90"] == pytest.approx(0.8)
    assert r.loc["strong", "predicted_full_hi90"] == 1.0
    assert r.loc["mid", "predicted_full_hi90"] - r.loc["mid", "predicted_full_lo90"] == (
        pytest.approx(0.02)
    )
    assert (r["residuals_from"] == "manifest-regime").all()


def test_headroom_by_hand():
    # 12 models; the best (rows 11, 10, ...) solve items 0-1 always, never item 3
    X = np.zeros((12, 4))
    X[:, 0] = 1
    X[6:, 1] = 1
    X[10:, 2] = 1
    panel = make_panel({"b": X}, {"b": "Math Reasoning"})
    h = suite_headroom(panel, {"Math Reasoning": {"b": np.array([0, 1])}}, top=2)
    # top 2 = models 10, 11: suite mean 1.0, full mean 3/4 → easier by 0.25; both items solved
    b = h["benchmarks"]["b"]
    assert (b["suite_mean"], b["full_mean"], b["easier_by"], b["solved_by_all"]) == (
        1.0,
        0.75,
        0.25,
        1.0,
    )
    assert h["solved_by_all"] == 1.0 and h["n_top_decile"] == 5


def test_top_reserve_keeps_items_that_split_the_strongest():
    X = _ladder_panel(n_models=40, n_items=60, seed=1)
    items = ItemFeatures(benchmark=np.array(["b"] * 60))
    sel = TopReserveSelector(
        20,
        base=lambda k: RandomSelector(k, random_state=0),
        top_share=0.25,
        top_fraction=0.25,
    ).fit(X, items)
    assert len(sel.indices_) == 20 and len(set(sel.indices_)) == 20
    assert len(sel.reserved_) == 5
    top = np.argsort(-X.mean(axis=1), kind="stable")[:10]
    # no reserved item is solved (or failed) by all of the ten strongest
    spread = X[np.ix_(top, sel.reserved_)]
    assert (spread.min(axis=0) < 1).all() and (spread.max(axis=0) > 0).all()
    # top_share 0: exactly the base selector
    base = RandomSelector(20, random_state=0).fit(X, items)
    plain = TopReserveSelector(
        20, base=lambda k: RandomSelector(k, random_state=0), top_share=0.0
    ).fit(X, items)
    assert plain.indices_.tolist() == base.indices_.tolist()


def test_calibration_files_random_and_frontier_errors_by_regime():
    from primebench_tasks.pipeline.params import PipelineParams
    from primebench_tasks.place.calibration import FRONTIER_SHARE, placement_errors

    rng = np.random.default_rng(0)
    ab = np.linspace(-2, 2, 40)
    mats = {}
    for b, n in (("sci", 120), ("aca", 100)):
        d = rng.normal(0, 1, n)
        mats[b] = (rng.random((40, n)) < 1 / (1 + np.exp(-(ab[:, None] - d)))).astype(float)
    panel = make_panel(mats, {"sci": "Science Knowledge", "aca": "Academic Knowledge"})
    e = placement_errors(panel, PipelineParams(floor=20), "mean", folds=5, frontier_folds=2)
    assert (e["fold_kind"] == "random").sum() == 40  # every model once in a random fold
    h = int(round(FRONTIER_SHARE * 40))
    assert (e["fold_kind"] == "frontier").sum() == 2 * h
    # the strongest held out and built on weaker models: mostly predicted at the top or beyond
    front = e[e["fold_kind"] == "frontier"]
    assert front["regime"].isin(["top", "beyond"]).mean() >= 0.5
    assert set(e["regime"]) <= {"interior", "top", "beyond"}


def test_a_model_with_nothing_scored_gets_no_rank_and_no_prediction():
    """`run` with every item failed wrote suite rank 1 and a predicted score."""
    X = _ladder_panel()
    panel = make_panel({"b": X}, {"b": "Math Reasoning"})
    sel = np.arange(0, 40, 2)
    m = build_manifest("s", panel, {"Math Reasoning": {"b": sel}}, {}, [], {})
    cols = pd.MultiIndex.from_tuples([("b", f"b-{i}") for i in sel])
    new = pd.DataFrame([np.full(len(sel), np.nan), X[6, sel]], index=["failed", "ok"], columns=cols)
    r = place_models(panel, m, new, estimator="pirt", n_boot=10)
    failed = r.loc["failed"]
    assert failed.n_scored == 0 and failed.regime == "none"
    for col in (
        "suite_score",
        "suite_rank",
        "predicted_full",
        "predicted_rank",
        "predicted_full_lo",
    ):
        assert np.isnan(failed[col]), col
    assert np.isfinite(r.loc["ok", "predicted_rank"])
