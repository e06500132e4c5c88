"""The cross-validated default selector: its rule on hand-made inner results, the guard against
the many-model failure (a discrimination-ranked selection losing to random), and that small
panels keep the preferred selector exactly."""

import numpy as np
import pytest

from primebench_tasks.data.simulate import simulate_leaderboard
from primebench_tasks.errors import ConfigError
from primebench_tasks.evaluate.protocols import run_protocol, summarise
from primebench_tasks.select.base import ItemFeatures
from primebench_tasks.select.cross_validated import (
    DEFAULT_CANDIDATES,
    MIN_HALF,
    CrossValidatedSelector,
)
from primebench_tasks.select.default import DEFAULT_SELECTOR
from primebench_tasks.select.registry import SELECTORS, SelectorContext


def test_choose_switches_only_beyond_one_paired_standard_error():
    sel = CrossValidatedSelector(5, candidates=("vaw_dc", "random", "vaw_shares_only"))
    # random beats the preferred arm by 0.1 in every repeat (SE 0): switch
    rho = np.array([[0.8, 0.9, 0.7], [0.7, 0.8, 0.6], [0.9, 1.0, 0.8]])
    assert sel._choose(rho) == "random"
    # gains +0.2, -0.1, +0.05 -> mean 0.05, SE = sd/sqrt(3) = 0.0866: keep the preferred arm
    rho = np.array([[0.5, 0.7, 0.0], [0.8, 0.7, 0.0], [0.6, 0.65, 0.0]])
    d = np.array([0.2, -0.1, 0.05])
    assert d.mean() < d.std(ddof=1) / np.sqrt(3)
    assert sel._choose(rho) == "vaw_dc"
    # two arms beyond their SE: the larger mean gain wins
    rho = np.array([[0.5, 0.6, 0.7], [0.5, 0.61, 0.71], [0.5, 0.62, 0.72]])
    assert sel._choose(rho) == "vaw_shares_only"


def test_small_panels_keep_the_preferred_selector_exactly():
    rng = np.random.default_rng(0)
    X = (rng.random((2 * MIN_HALF - 1, 60)) < rng.random(60)).astype(float)
    items = ItemFeatures(benchmark=np.array(["A"] * 30 + ["B"] * 30))
    cv = CrossValidatedSelector(12, random_state=3).fit(X, items)
    ref = SELECTORS["vaw_dc"](12, 3, SelectorContext()).fit(X, items)
    assert cv.chosen_ == "vaw_dc" and cv.cv_rho_ == {}
    np.testing.assert_array_equal(cv.indices_, ref.indices_)
    np.testing.assert_array_equal(cv.weights_, ref.weights_)


def test_unknown_candidate_is_refused():
    with pytest.raises(ConfigError, match="unknown candidate"):
        CrossValidatedSelector(3, candidates=("vaw_dc", "nope")).fit(np.zeros((4, 5)))


def test_cv_is_deterministic_and_records_its_choice():
    p = simulate_leaderboard(300, n_benchmarks=1, seed=2)
    X = p.matrix(p.benchmark_names[0])
    a = CrossValidatedSelector(25, random_state=1).fit(X)
    b = CrossValidatedSelector(25, random_state=1).fit(X)
    np.testing.assert_array_equal(a.indices_, b.indices_)
    assert a.chosen_ == b.chosen_ and set(a.cv_rho_) == set(DEFAULT_CANDIDATES)
    assert len(a.indices_) == 25
    np.testing.assert_array_equal(
        a.indices_, SELECTORS[a.chosen_](25, 1, SelectorContext()).fit(X).indices_
    )


def test_guard_many_model_failure_is_reproduced_and_the_default_holds():
    """The failure of issue #16 (a 6,300-model text-LLM panel: vaw_dc below random at 25 and
    50 items per benchmark), simulated: a bimodal population with near-ceiling, highly
    discriminating items. vaw_dc must lose to random here (else the simulator no longer
    reproduces the failure), and the default must not fall below random − 1 SE."""
    p = simulate_leaderboard(600, n_benchmarks=3, seed=0)
    _, splits = run_protocol(
        p,
        "heldout",
        [DEFAULT_SELECTOR, "vaw_dc", "random"],
        retentions=(),
        n_splits=3,
        seed=0,
        estimators=("mean",),
        budgets=(25, 50),
    )
    s = summarise(splits).set_index(["selector", "budget"])
    for budget in ("25 per category", "50 per category"):
        rnd = s.loc[("random", budget)]
        assert s.loc[("vaw_dc", budget), "mean_rho"] < rnd["mean_rho"] - rnd["se_rho"]
        assert s.loc[(DEFAULT_SELECTOR, budget), "mean_rho"] >= rnd["mean_rho"] - rnd["se_rho"]
