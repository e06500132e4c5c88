"""PScore against the PRISM-VLM paper's own published numbers (Table 2 typed into a fixture)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from primebench_tasks.cli import main
from primebench_tasks.prism.pscore import (
    AXES,
    aggregate,
    dominant_axis,
    effective_weights,
    leave_one_axis_out,
)
from primebench_tasks.prism.separation import benjamini_hochberg, paired_bootstrap, separation
from primebench_tasks.prism.sycophancy import first_flip, sc_scores

FIXTURE = Path(__file__).parents[1] / "fixtures" / "prism_table2.csv"


@pytest.fixture(scope="module")
def table2() -> pd.DataFrame:
    df = pd.read_csv(FIXTURE).set_index("model")
    assert len(df) == 42
    return df


def test_pscore_is_the_harmonic_mean_of_the_seven_axes(table2):
    S = table2[list(AXES)]
    # the table's axis means are rounded to 3 d.p.; the harmonic mean is increasing in every
    # axis, so the exact PScore lies between the aggregates of the rounding bounds
    lo, hi = aggregate(S - 0.0005), aggregate(S + 0.0005)
    paper = table2["pscore"]
    assert ((paper >= lo - 0.0005) & (paper <= hi + 0.0005)).all()
    np.testing.assert_allclose(aggregate(S), paper, atol=0.0015)


def test_leave_one_axis_out_reproduces_table_13(table2):
    loao = leave_one_axis_out(table2[list(AXES)]).set_index("axis")["spearman_rho"]
    paper = {
        "q": 0.998,
        "if": 0.994,
        "h": 0.980,
        "mq": 0.974,
        "sc": 0.887,
        "c": 0.997,
        "vis": 0.998,
    }
    for axis, rho in paper.items():
        assert loao[axis] == pytest.approx(rho, abs=0.006), axis
    assert loao.idxmin() == "sc"


def test_effective_weights_reproduce_table_15(table2):
    w = effective_weights(table2[list(AXES)])
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    paper = {"q": 0.08, "if": 0.07, "h": 0.13, "mq": 0.29, "sc": 0.26, "c": 0.12, "vis": 0.06}
    for axis, v in paper.items():
        assert w[axis].mean() == pytest.approx(v, abs=0.006), axis
    counts = dominant_axis(table2[list(AXES)]).value_counts()
    assert counts.to_dict() == {"mq": 26, "sc": 14, "h": 2}


def test_aggregator_correlation_with_q_orders_as_table_6(table2):
    S = table2[list(AXES)]
    r = {
        a: np.corrcoef(aggregate(S, a), S["q"])[0, 1]
        for a in ("arithmetic", "geometric", "harmonic")
    }
    assert r["arithmetic"] > r["geometric"] > r["harmonic"]
    assert r["arithmetic"] == pytest.approx(0.865, abs=0.01)
    assert r["harmonic"] == pytest.approx(0.789, abs=0.01)


def test_weighted_pscore_eq3():
    S = pd.DataFrame({"q": [0.5], "if": [0.25]}, index=["m"])
    # Σw / Σ(w/s) = 3 / (1/0.5 + 2/0.25) = 3 / 10
    assert aggregate(S, weights={"q": 1, "if": 2}).iloc[0] == pytest.approx(0.3)
    assert aggregate(S, "min").iloc[0] == 0.25
    assert aggregate(S, weights={"q": 1, "if": 0}).iloc[0] == pytest.approx(0.5)


def test_cli_aggregate(tmp_path, table2):
    f = tmp_path / "axes.csv"
    table2.reset_index()[["model", *AXES]].to_csv(f, index=False)
    assert (
        main(
            [
                "prism",
                "aggregate",
                "--axis-means",
                str(f),
                "--weights",
                "sc=0.5",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 0
    )
    ps = pd.read_csv(tmp_path / "o" / "pscore.csv")
    assert list(ps.columns) == ["model", "pscore", "dominant_axis"] and len(ps) == 42
    assert set(pd.read_csv(tmp_path / "o" / "loao.csv")["axis"]) == set(AXES)
    bad = table2.reset_index()[["model", *AXES]]
    bad.loc[3, "h"] = 1.7
    bad.to_csv(f, index=False)
    assert main(["prism", "aggregate", "--axis-means", str(f), "--out", str(tmp_path / "x")]) == 2


def test_benjamini_hochberg_known_vector():
    p = np.array([0.01, 0.04, 0.03, 0.005, 0.2])
    # sorted: .005 .01 .03 .04 .2 vs thresholds .01 .02 .03 .04 .05 -> the first four pass
    assert benjamini_hochberg(p, 0.05).tolist() == [True, True, True, True, False]
    assert benjamini_hochberg(np.array([0.5, 0.6])).tolist() == [False, False]


def test_paired_bootstrap_separates_a_known_difference():
    rng = np.random.default_rng(0)
    n = 400
    base = rng.random(n) < 0.5
    items = {
        "strong": (base | (rng.random(n) < 0.3)).astype(float),
        "weak": base.astype(float),
        "weak_twin": base.astype(float),
    }
    reps = paired_bootstrap(items, np.mean, n, n_boot=500)
    point = np.array([v.mean() for v in items.values()])
    pairs, per = separation(reps, point, list(items))
    pr = pairs.set_index(["model_a", "model_b"])
    assert pr.loc[("strong", "weak"), "p"] < 0.01 and pr.loc[("strong", "weak"), "separated_bh"]
    assert pr.loc[("weak", "weak_twin"), "p"] == 1.0  # identical responses: never separated
    assert (per["ci_low"] <= per["score"]).all() and (per["score"] <= per["ci_high"]).all()
    assert per.set_index("model").loc["strong", "rank_high"] == 1


def test_sycophancy_flip_and_scores():
    assert first_flip(["B", "b ", "B"]) == 0
    assert first_flip(["B", "B", "C"]) == 2  # the dialogue stops at the first flip
    c0 = np.array([1, 1, 1, 1, 0], bool)
    ft = np.array([0, 1, 3, 3, 0])
    ad = np.array([0, 0, 1, 0, 0], bool)
    s = sc_scores(c0, ft, ad)
    assert s.sc_b == pytest.approx(1 / 4)
    assert s.sc_a == pytest.approx(2 / 5)
    assert s.sc_corr == pytest.approx(3 / 4)  # only one turn-3 flip adopted the false answer
    assert s.sc_reach == pytest.approx(2 / 3)  # over items that reached Q3: 0, 2, 3
