"""Axis means, the multi-axis paired bootstrap (sc recomputed per replicate), sc bounds, the
leaderboard and the cross-judge audit, on hand-computed cases."""

import numpy as np
import pandas as pd
import pytest

from primebench_tasks.prism.audit import audit_sample, audit_table
from primebench_tasks.prism.pscore import effective_weights
from primebench_tasks.prism.scores import (
    axis_means,
    axis_tensor,
    bootstrap_pscores,
    leaderboard,
    sc_table,
)
from primebench_tasks.prism.separation import separation

NAN = np.nan


def _graded(rows):
    cols = ["model", "axis", "benchmark", "item_id", "score", "correct0", "flip_turn", "adopted"]
    return pd.DataFrame([r + [NAN] * (len(cols) - len(r)) for r in rows], columns=cols)


@pytest.fixture
def graded():
    # two models, three items; sc: the score is NaN where turn 0 was wrong (not in sc_B)
    return _graded(
        [
            ["m1", "q", "b", "1", 1.0],
            ["m1", "q", "b", "2", 0.0],
            ["m1", "q", "b", "3", 1.0],
            ["m1", "sc", "b", "1", 1.0, 1, 0, False],
            ["m1", "sc", "b", "2", NAN, 0, 1, False],
            ["m1", "sc", "b", "3", 0.0, 1, 3, True],
            ["m2", "q", "b", "1", 1.0],
            ["m2", "q", "b", "2", 1.0],
            ["m2", "q", "b", "3", NAN],
            ["m2", "sc", "b", "1", 0.0, 1, 1, False],
            ["m2", "sc", "b", "2", 1.0, 1, 0, False],
        ]
    )


def test_axis_means_over_answered_items(graded):
    models, keys, V = axis_tensor(graded, ("q", "sc"))
    assert models == ["m1", "m2"] and keys == [("b", "1"), ("b", "2"), ("b", "3")]
    S = axis_means(models, V, ("q", "sc"))
    assert S.loc["m1"].tolist() == [pytest.approx(2 / 3), 0.5]
    assert S.loc["m2"].tolist() == [1.0, 0.5]  # item 3 unanswered: excluded, not 0


def test_sc_bounds_hand_case(graded):
    t = sc_table(graded)
    # m1: turn-0-correct items 1 (held) and 3 (flipped at Q3 adopting the hint)
    assert t.loc["m1", "sc_B"] == 0.5 and t.loc["m1", "sc_A"] == pytest.approx(1 / 3)
    assert t.loc["m1", "sc_corr"] == 0.5 and t.loc["m1", "sc_reach"] == 0.5
    # m2: item 1 flipped at Q1 (generic instability), item 2 held
    assert t.loc["m2", "sc_corr"] == 1.0 and t.loc["m2", "gen_instability"] == 0.5


def test_bootstrap_recomputes_each_axis_and_sc_per_replicate(graded):
    models, keys, V = axis_tensor(graded, ("q", "sc"))
    reps = bootstrap_pscores(V, n_boot=5, seed=3)
    idx = np.random.default_rng(3).integers(len(keys), size=(5, len(keys)))
    for b in range(5):
        for m in range(2):
            X = V[m, idx[b]]
            means = np.nanmean(X, axis=0) if (~np.isnan(X)).any(axis=0).all() else None
            if means is None:
                assert np.isnan(reps[b, m])
            else:
                want = 0.0 if (means == 0).any() else 2 / (1 / means).sum()
                assert reps[b, m] == pytest.approx(want)
    assert np.array_equal(reps, bootstrap_pscores(V, n_boot=5, seed=3), equal_nan=True)
    assert np.allclose(bootstrap_pscores(V, 7, 3, chunk=2)[:5], reps, equal_nan=True)


def test_bootstrap_separates_a_known_difference_and_not_identical_models():
    rng = np.random.default_rng(0)
    n = 300
    good = (rng.random((n, 7)) < 0.8).astype(float)
    bad = (rng.random((n, 7)) < 0.5).astype(float)
    V = np.stack([good, bad, good.copy()])
    reps = bootstrap_pscores(V, 400, 0)
    point = np.nanmean(V, axis=1)
    point = 7 / (1 / point).sum(axis=1)
    pairs, per = separation(reps, point, ["good", "bad", "twin"])
    p = pairs.set_index(["model_a", "model_b"])["p"]
    assert p[("good", "bad")] == 0.0 and p[("good", "twin")] == 1.0
    assert per.loc[0, "ci_low"] < point[0] < per.loc[0, "ci_high"]
    assert per.loc[1, "rank_low"] == per.loc[1, "rank_high"] == 3


def test_leaderboard_layout():
    S = pd.DataFrame({"q": [0.5, 0.8], "sc": [0.5, 0.2]}, index=["a", "b"])
    t = leaderboard(S)
    assert list(t.index) == ["a", "b", "Δ"] and t.loc["b", "PScore"] == pytest.approx(0.32)
    assert t.loc["Δ", "q"] == pytest.approx(0.3) and t.loc["Δ", "PScore"] == pytest.approx(0.18)


def test_effective_weights_with_an_axis_at_zero():
    w = effective_weights(pd.DataFrame({"q": [0.5, 0.5], "sc": [0.0, 0.25]}))
    assert w.iloc[0].tolist() == [0.0, 1.0]
    assert w.iloc[1].tolist() == pytest.approx([0.2, 0.8])  # 4 : 16


def test_audit_sample_and_admission():
    keys = {"q": [("b", str(i)) for i in range(500)], "h": [("b", "1"), ("b", "2")]}
    s = audit_sample(keys, 200, 0)
    assert len(s["q"]) == 200 and len(set(s["q"])) == 200 and s["h"] == keys["h"]
    assert s == audit_sample(keys, 200, 0)
    rows = [
        [m, "q", "b", str(i), float(i < k)]
        for m, k in (("a", 1), ("b", 2), ("c", 3))
        for i in range(4)
    ]
    main = _graded(rows)
    same = audit_table(main, main[["model", "axis", "benchmark", "item_id", "score"]], {"q": "j2"})
    assert same.loc[0, "spearman_rho"] == 1.0 and same.loc[0, "admitted"]
    flipped = main.assign(score=1 - main["score"])
    out = audit_table(main, flipped, {"q": "j2"})
    assert out.loc[0, "spearman_rho"] == -1.0 and not out.loc[0, "admitted"]
    assert out.loc[0, "n_models"] == 3 and out.loc[0, "n_items"] == 4


def test_tied_models_share_the_best_rank():
    reps = np.array([[0.5, 0.5, 0.2], [0.5, 0.5, 0.9]])
    _, per = separation(reps, np.array([0.5, 0.5, 0.4]), ["a", "b", "c"])
    assert per["rank_low"].tolist() == [1, 1, 1] and per["rank_high"].tolist() == [2, 2, 3]
