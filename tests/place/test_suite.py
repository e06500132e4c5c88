"""The suite level of a placement (``place.suite.place_on_suite``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from primebench_tasks.data.panel import Panel
from primebench_tasks.place.suite import place_on_suite
from primebench_tasks.suite.manifest import SuiteManifest

BENCH = "MATH-Vision_MINI"
SUITES = Path(__file__).resolve().parents[2] / "task_configs" / "suites"


def test_a_one_benchmark_suite_is_that_benchmark():
    """On 4d9a95b a one-benchmark suite (primebench_mathvision) gave its suite a predicted full
    score interval of its own (bootstrap draws) beside the benchmark's design interval: two
    intervals for one estimate. The suite and its one category now say the benchmark's."""
    suite = SuiteManifest.read(SUITES / "primebench_mathvision.json")
    panel = Panel.load_default("mathvision")
    ids = list(suite.entry(BENCH).item_ids)
    pos = {str(i): j for j, i in enumerate(panel.item_ids(BENCH))}
    X = panel.matrix(BENCH)
    new = pd.DataFrame(
        [[float(X[r, pos[i]]) for i in ids] for r in (2, 9)],
        index=["a", "b"],
        columns=pd.MultiIndex.from_tuples([(BENCH, i) for i in ids]),
    )
    doc = place_on_suite(suite, {BENCH: panel}, new, "greg", 50, 0)
    for m in ("a", "b"):
        r = doc.models[m]
        b = r.benchmarks[BENCH]
        assert b.interval_from == "design" and np.isfinite(b.predicted_full.value)
        assert r.suite.predicted_full == b.predicted_full
        assert r.suite.predicted_rank == b.predicted_rank
        (cat,) = r.categories.values()
        assert cat.predicted_full == b.predicted_full and cat.predicted_rank == b.predicted_rank
