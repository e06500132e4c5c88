"""The suite rank on imputed reference scores (place.imputation): formulas by hand, the
validation rule on a made panel, the leaderboard join, and the released flagship end to end."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from primebench_tasks.data.panel import Panel
from primebench_tasks.place.imputation import (
    category_mean,
    impute_reference,
    leaderboard_covariates,
    restrict,
)
from primebench_tasks.suite.manifest import as_suite
from tests.conftest import make_panel

SUITES = Path(__file__).parents[2] / "task_configs" / "suites"


def test_category_mean_by_hand():
    """Categories A = (x, y), B = (z): row 1 (0.2, 0.4, 0.9) → ((0.2 + 0.4)/2 + 0.9)/2 = 0.6;
    row 2 (1, 0, 0) → (0.5 + 0)/2 = 0.25; a missing benchmark gives no mean."""
    scores = pd.DataFrame({"x": [0.2, 1.0, 0.5], "y": [0.4, 0.0, np.nan], "z": [0.9, 0.0, 0.5]})
    got = category_mean(scores, {"A": ["x", "y"], "B": ["z"], "empty": []})
    assert got[:2] == pytest.approx([0.6, 0.25]) and np.isnan(got[2])
    assert restrict({"A": ["x", "y"], "B": ["z"]}, ["y"]) == {"A": ["y"]}


def test_rank_among_uncertain_reference_by_hand():
    """Value 0.5 among references (0.6, 0.4): rank 2 of 3. Draw 1: the model 0.5, references
    (0.6, 0.4) → rank 2; draw 2: the model 0.5, references (0.45, 0.4) → rank 1. The 95 %
    interval of ranks (2, 1) is [1.025, 1.975], widened to hold the point 2."""
    from primebench_tasks.place.suite import _rank

    r = _rank(0.5, np.array([0.5, 0.5]), np.array([0.6, 0.4]), np.array([[0.6, 0.4], [0.45, 0.4]]))
    assert r is not None
    assert r.value == 2 and r.out_of == 3
    assert r.lo == pytest.approx(1.025) and r.hi == pytest.approx(2.0)
    # without reference draws, the reference is fixed: every draw ranks 2
    fixed = _rank(0.5, np.array([0.5, 0.5]), np.array([0.6, 0.4]))
    assert fixed is not None and fixed.lo == fixed.hi == 2


def _panel(benchmark: str, models: list[str], scores: list[float], n_items: int = 20) -> Panel:
    """A one-benchmark panel whose models score ``scores`` (multiples of 1/n_items)."""
    mat = np.array(
        [[1.0 if j < round(s * n_items) else 0.0 for j in range(n_items)] for s in scores]
    )
    return make_panel({benchmark: mat}, {benchmark: "C"}, models=models)


def test_imputation_validates_per_benchmark_and_fills_what_follows_the_others():
    """40 models. X: every model, score = its ability. Y = X, observed for 30 models: imputed
    for the other 10 within a step of X, and validated. N: noise over 30 models — imputed no
    better than its mean: left out, saying so. S: 5 models — too few to measure: left out."""
    models = [f"m{i:02d}" for i in range(40)]
    ability = np.round(np.linspace(0.1, 0.9, 40) * 20) / 20
    noise = np.random.default_rng(1).integers(0, 21, 30) / 20
    panels = {
        "X": _panel("X", models, list(ability)),
        "Y": _panel("Y", models[:30], list(ability[:30])),
        "N": _panel("N", models[5:35], list(noise)),
        "S": _panel("S", models[:5], list(ability[:5])),
    }
    imp = impute_reference(panels, ["X", "Y", "N", "S"], leaderboard=None)
    assert imp.basis == ("X", "Y")
    assert "no better than its mean" in imp.excluded["N"]
    assert imp.excluded["S"].startswith("5 reference models have it")
    assert imp.validation["Y"]["mae"] < 0.05 < imp.validation["Y"]["mean_mae"]
    filled = imp.imputed.loc[models[30:], "Y"].to_numpy()
    assert np.abs(filled - ability[30:]).max() <= 0.05
    # observed cells are kept as observed
    assert imp.imputed.loc[models[:30], "Y"].to_numpy() == pytest.approx(ability[:30], abs=1e-6)
    # every model has at least half of the basis observed (X): all 40 ranked
    cats = {"A": ["X"], "B": ["Y"]}
    assert len(imp.suite_scores(cats)) == 40
    draws = imp.suite_draws(cats, 200, seed=0)
    assert draws.shape == (200, 40)
    assert np.ptp(draws[:, :30], axis=0).max() == 0  # observed: no spread
    assert np.ptp(draws[:, 30:], axis=0).min() > 0  # imputed: the residuals' spread
    summary = imp.summary(["X", "Y"])
    assert summary["n_complete"] == 30 and summary["imputed_cells"] == 10
    assert summary["covariates"] == "no leaderboard"
    # the same inputs and seed: the same imputation
    again = impute_reference(panels, ["X", "Y", "N", "S"], leaderboard=None)
    assert again.imputed.equals(imp.imputed)


def test_leaderboard_rows_join_only_by_a_unique_folded_name():
    scores = pd.DataFrame(
        {"MMStar": [0.5, 0.6, 0.7], "HallusionBench": [0.1, 0.2, 0.3]},
        index=["Qwen2-VL-7B", "Foo 1B", "foo-1b"],
    )
    cov = leaderboard_covariates(["qwen2_vl_7b", "FOO-1B", "Bar"], scores)
    assert list(cov.columns) == ["leaderboard:MMStar"]  # HallusionBench is held out
    assert cov.loc["qwen2_vl_7b", "leaderboard:MMStar"] == 0.5
    assert cov.loc[["FOO-1B", "Bar"]].isna().all().all()  # two names fold alike; none matches


def test_the_flagship_is_ranked_on_the_benchmarks_whose_scores_impute():
    """No reference model has all seven flagship benchmarks. A reference model's own answers,
    replayed, are ranked on the five whose imputation validates, among the 167 models with at
    least three of them; MathVista and MATH-Vision are left out with the reason; the rank's
    interval holds the rank of the model's own imputed-reference suite score."""
    from primebench_tasks.pipeline.manifest import manifest_items
    from primebench_tasks.pipeline.multi_source import source_panels
    from primebench_tasks.place.suite import place_on_suite
    from tests.place.test_standing import _replay

    manifest = as_suite(json.loads((SUITES / "primebench.json").read_text()))
    panels = source_panels(manifest)
    model = "InternVL2-8B"  # in the five large panels, not in MathVista's or MATH-Vision's
    new = _replay(manifest, panels, model)
    doc = place_on_suite(manifest, panels, new, n_boot=200).to_json()
    s = doc["models"][f"{model} again"]["suite"]
    basis = s["rank_basis"]
    five = ["MMMU_DEV_VAL", "RealWorldQA", "AI2D_TEST", "OCRBench", "BLINK"]
    assert basis["benchmarks"] == five
    assert set(basis["left_out"]) == {"MathVista_MINI", "MATH-Vision_MINI"}
    assert basis["n_complete"] == 66 and basis["imputed_cells"] > 0
    rank = s["predicted_rank"]
    assert rank["out_of"] == basis["n_reference"] + 1 and basis["n_reference"] > 150
    assert rank["lo"] <= rank["value"] <= rank["hi"]
    imp = impute_reference(panels, list(panels))
    cats = restrict({c: list(v) for c, v in manifest_items(manifest).items()}, five)
    ref = imp.suite_scores(cats)
    own = 1 + int((ref > ref[model]).sum())
    assert rank["lo"] <= own <= rank["hi"]
