"""Placement of new models on a reference panel and variant ranking: hand-computed cases."""

import numpy as np
import pandas as pd
import pytest

from primebench_tasks.pipeline.manifest import build_manifest
from primebench_tasks.place.benchmark import full_suite_scores, place_models
from primebench_tasks.place.variants import rank_variants, suite_scores
from tests.conftest import make_panel


def _panel():
    X = np.array([[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 0, 0]], float)  # full .75, .25, .5
    return make_panel({"b": X}, {"b": "Math Reasoning"})


def _new(cols, rows, names):
    return pd.DataFrame(rows, index=names, columns=pd.MultiIndex.from_tuples(cols))


def test_full_suite_score_is_the_mean_of_category_means_of_benchmark_means():
    X = np.array([[1, 0], [0, 0]], float)
    Y = np.array([[1, 1, 1, 1], [1, np.nan, 0, 0]], float)
    Z = np.array([[0, 0, 0], [1, 1, 1]], float)
    panel = make_panel(
        {"x": X, "y": Y, "z": Z}, {"x": "Math Reasoning", "y": "Math Reasoning", "z": "OCR"}
    )
    s = full_suite_scores(panel)
    # m00: math = (0.5 + 1)/2 = .75, ocr 0 → .375; m01: math = (0 + 1/3)/2 = 1/6, ocr 1 → 7/12
    assert s.tolist() == pytest.approx([0.375, 7 / 12])


def test_place_models_hand_computed():
    panel = _panel()
    m = build_manifest("s", panel, {"Math Reasoning": {"b": np.array([1, 2])}}, {}, [], {})
    new = _new([("b", "b-1"), ("b", "b-2")], [[1.0, 0.0], [np.nan, 1.0]], ["x", "y"])
    r = place_models(panel, m, new, estimator="mean", n_boot=200)
    # x: suite .5; refs' suite scores 1, 0, .5 → rank 2; predicted full .5 vs .75/.25/.5 → 2
    assert r.loc["x", "suite_score"] == 0.5 and r.loc["x", "suite_rank"] == 2
    assert r.loc["x", "predicted_full"] == 0.5 and r.loc["x", "predicted_rank"] == 2
    # y: its missing item is skipped, not 0 → suite 1.0, rank 1
    assert r.loc["y", "suite_score"] == 1.0 and r.loc["y", "n_scored"] == 1
    assert r.loc["y", "suite_rank"] == 1
    assert (r.suite_rank_lo <= r.suite_rank).all() and (r.suite_rank <= r.suite_rank_hi).all()
    assert r.loc["x", "suite_score_lo"] == 0.0 and r.loc["x", "suite_score_hi"] == 1.0
    assert r.loc["x", "n_reference"] == 3 and r.loc["x", "cat:Math Reasoning"] == 0.5


def test_place_models_maps_uncovered_categories_by_regression():
    rng = np.random.default_rng(0)
    X = (rng.random((12, 30)) < np.linspace(0.1, 0.9, 12)[:, None]).astype(float)
    panel = make_panel({"a": X, "c": X.copy()}, {"a": "Math Reasoning", "c": "OCR"})
    m = build_manifest("s", panel, {"Math Reasoning": {"a": np.arange(30)}}, {}, [], {})
    new = _new([("a", f"a-{i}") for i in range(30)], [X[5]], ["x"])
    r = place_models(panel, m, new, estimator="mean", n_boot=20)
    # the full score equals the 'a' mean for every reference model: the map is the identity
    assert r.loc["x", "predicted_full"] == pytest.approx(X[5].mean(), abs=1e-3)


def test_rank_variants_hand_computed():
    cols = ["i1", "i2", "i3", "i4"]
    scores = pd.DataFrame(
        [[1, 1, 1, 1], [0, 0, 0, 0], [1, 0, np.nan, 0]],
        index=["A", "B", "C"],
        columns=cols,
        dtype=float,
    )
    cats = pd.Series(["k", "k", "l", "l"], index=cols)
    # C: category k mean .5, category l mean 0 (missing skipped) → .25
    assert suite_scores(scores.to_numpy(), cats.to_numpy(object)).tolist() == [1, 0, 0.25]
    table, pw, ceiling = rank_variants(scores, cats, n_boot=300)
    assert list(table.index) == ["A", "C", "B"] and table["rank"].tolist() == [1, 2, 3]
    assert pw.loc["A", "B"] == 1.0 and pw.loc["B", "A"] == 0.0
    assert 0 < pw.loc["C", "B"] < 1 and pw.loc["C", "B"] + pw.loc["B", "C"] == pytest.approx(1)
    assert table.loc["C", "n_scored"] == 3
    assert 0.5 < ceiling <= 1.0


def test_every_interval_contains_its_point():
    """The report crashed ('yerr' must not contain negative values) when the refitted point
    fell outside its bootstrap interval; intervals are widened to hold the point."""
    from primebench_tasks.data.simulate import simulate_panel
    from primebench_tasks.pipeline.primebench import PipelineParams, run_pipeline
    from primebench_tasks.place.benchmark import place_models

    panel = simulate_panel(scale=0.002, n_models=25, seed=3)
    ref = panel.subset_models(panel.model_names[:20])
    m = run_pipeline(ref, PipelineParams(until="stage2")).manifest(ref)
    from primebench_tasks.pipeline.manifest import manifest_items

    cols = [(b, i) for by_b in manifest_items(m).values() for b, ids in by_b.items() for i in ids]
    import pandas as pd

    new = pd.DataFrame(
        [
            [
                panel.matrix(b)[panel.model_names.index(x), list(panel.item_ids(b)).index(i)]
                for b, i in cols
            ]
            for x in panel.model_names[20:]
        ],
        index=panel.model_names[20:],
        columns=pd.MultiIndex.from_tuples(cols),
    )
    for est in ("aipw", "pirt", "mean"):
        placed = place_models(ref, m, new, est, n_boot=60, seed=1)
        for q in ("suite_score", "suite_rank", "predicted_full", "predicted_rank"):
            assert (placed[f"{q}_lo"] <= placed[q]).all() and (
                placed[q] <= placed[f"{q}_hi"]
            ).all(), (est, q)


def test_variant_verdict_agrees_with_its_pairwise_probabilities():
    """Hand-made pairwise matrix: A vs B is a coin flip (0.63) → no winner, A ≈ B; B vs C is
    clear (0.99) → C is separated. The ceiling cannot overrule this."""
    import pandas as pd

    from primebench_tasks.place.variants import variant_verdict

    names = ["A", "B", "C"]
    table = pd.DataFrame({"rank": [1, 2, 3], "suite_score": [0.62, 0.61, 0.40]}, index=names)
    pw = pd.DataFrame(
        [[0.5, 0.63, 1.0], [0.37, 0.5, 0.99], [0.0, 0.01, 0.5]], index=names, columns=names
    )
    v = variant_verdict(table, pw)
    assert v["winner"] is None and v["indistinguishable_groups"] == [["A", "B"], ["C"]]
    assert "cannot be told apart" in v["text"] and "0.630" in v["text"]
    pw.loc["A", "B"], pw.loc["B", "A"] = 0.98, 0.02
    v = variant_verdict(table, pw)
    assert v["winner"] == "A" and v["fully_ordered"] and v["threshold"] == 0.975


def test_readme_placement_table_is_the_benchmark_output():
    """The README's placement tables are what benchmarks/placement_accuracy.py renders from its
    committed rows (rerun the script and commit its outputs when it changes), and the default
    estimator is the one its procedure chooses."""
    import importlib.util
    from pathlib import Path

    import pandas as pd

    from primebench_tasks.place.defaults import DEFAULT_ESTIMATOR

    root = Path(__file__).parents[2]
    spec = importlib.util.spec_from_file_location(
        "placement_accuracy", root / "benchmarks" / "placement_accuracy.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    results = root / "benchmarks" / "results"
    df = pd.read_csv(results / "placement_accuracy.csv")
    table = (results / "placement_accuracy.md").read_text("utf-8")
    chosen, why = mod.choice(df)
    assert mod.table(df) == table
    assert why == (results / "placement_choice.md").read_text("utf-8")
    # the previous default's suites (chosen items) and the estimator chosen for them; the
    # default is now the design comparison's (tests/test_readme_results.py)
    assert chosen == mod.CHOSEN_ITEMS_ESTIMATOR == "pirt" != DEFAULT_ESTIMATOR
    assert {"random", "frontier", "chronological"} <= set(df["protocol"])
    from tests.docs import doc_block

    for marker, text in (("placement-table", table), ("placement-choice", why)):
        assert doc_block(marker) == text
