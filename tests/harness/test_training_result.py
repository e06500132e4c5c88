"""#73: the training callback places a checkpoint through the one placement path
(``write_report``) and logs what the returned Placement says — it imports no placement module of
its own."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.harness.conftest import mathvision, suite20  # noqa: F401 - the fixtures

TRAINING = Path(__file__).resolve().parents[2] / "harness_adapters/engines/vllm/training.py"


def test_the_callback_imports_no_placement_module_of_its_own():
    tree = ast.parse(TRAINING.read_text("utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    for own in ("place.misfit", "place.responses", "place.variants"):
        assert not any(m.endswith(own) for m in imported), own
    # the run's one placement of a variant (place_variant writes through write_report), and
    # nothing of the run but its plug surface
    assert "harness_adapters.run.plug" in imported
    assert not any(
        m.startswith("harness_adapters.run.") for m in imported - {"harness_adapters.run.plug"}
    )
    import inspect

    from harness_adapters.run.session import place_variant

    assert "write_report(" in inspect.getsource(place_variant)


def test_checkpoint_result_is_read_from_the_placement(tmp_path, mathvision, suite20):  # noqa: F811
    from harness_adapters.engines.vllm.training import checkpoint_result
    from harness_adapters.run.report import missing_items, write_report

    b = "MATH-Vision_MINI"
    ids = suite20.entry(b).item_ids
    y = mathvision.matrix(b)[0]
    where = {str(i): k for k, i in enumerate(mathvision.item_ids(b))}
    cols = pd.MultiIndex.from_tuples([(b, i) for i in ids], names=["benchmark", "item_id"])
    scores = pd.DataFrame([[y[where[i]] for i in ids]], index=["base+step-5"], columns=cols)
    reference = mathvision.subset_models(mathvision.model_names[1:])
    placement = write_report(
        suite20, scores, missing_items(scores), tmp_path / "ckpt", reference, n_boot=50,
        conditions={"harness": "test"},
    )  # fmt: skip
    res = checkpoint_result(placement, "base+step-5", "half of it applied")
    m = placement.models["base+step-5"]
    assert res.suite_score == m.suite.score.value == pytest.approx(float(np.mean(scores)))
    assert res.predicted_full == m.suite.predicted_full.value
    assert res.n_scored == res.n_items == 20
    assert set(res.categories) == set(m.categories) and res.misfit[b] == m.benchmarks[b].misfit
    assert res.conditions == {"harness": "test"} and res.note == "half of it applied"
    out = res.to_json()  # JSON values, the checks as report.json holds them
    assert out["misfit"][b] == m.benchmarks[b].misfit.to_json() and "step" not in out
    assert (tmp_path / "ckpt" / "report.json").exists()
