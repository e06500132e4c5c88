"""check_harness (the harness protocol, as scikit-learn's check_estimator) over the installed
lmms-eval plug on a run folder of its format (VLMEvalKit's: tests/harness/test_vlmeval.py, on
a real work dir), and a harness that breaks a rule is caught naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from primebench_tasks.cli.conformance import check_harness
from primebench_tasks.suite.harness import HarnessRun, harnesses


def _lmms_run(d: Path) -> Path:
    d.mkdir()
    meta = {"primebench_suite": "v1", "benchmark": "B"}
    results = {"configs": {"primebench_x": {"metadata": meta}}, "date": "20260101_000000"}
    (d / "20260101_results.json").write_text(json.dumps(results))
    rows = [
        {"doc_id": i, "primebench_item": {"item_id": f"i{i}", "score": i % 2}} for i in range(5)
    ]
    (d / "20260101_samples_primebench_x.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows)
    )
    return d


def test_lmms_eval_keeps_the_harness_protocol(tmp_path):
    (tmp_path / "empty").mkdir()
    run = check_harness(harnesses()["lmms-eval"], _lmms_run(tmp_path / "run"), tmp_path / "empty")
    assert run.suite_version == "v1" and list(run.records["score"]) == [0, 1, 0, 1, 0]


class _Csv:
    name, summary = "csv", "scores in a CSV"
    prism_export = prism_ingest = None

    def __init__(self, score: float = 1.0, twice: bool = False) -> None:
        self.score, self.twice = score, twice

    def detect(self, output: Path) -> bool:
        return (output / "scores.csv").exists()

    def read_run(self, output: Path, model: str | None = None) -> HarnessRun:
        rows = [("m", "B", "i1", self.score)] * (2 if self.twice else 1)
        frame = pd.DataFrame(rows, columns=["model", "benchmark", "item_id", "score"])
        return HarnessRun(frame, "v1")

    def add_commands(self, tree) -> None:
        tree.sub.add_parser("csv")


@pytest.mark.parametrize(
    "harness, message",
    [
        (_Csv(), None),
        (_Csv(score=7.0), "scores outside \\[0, 1\\]"),
        (_Csv(twice=True), "a \\(model, benchmark, item\\) appears twice"),
    ],
)
def test_a_harness_that_breaks_a_rule_is_named(tmp_path, harness, message):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "scores.csv").write_text("x")
    (tmp_path / "empty").mkdir()
    if message is None:
        check_harness(harness, tmp_path / "run", tmp_path / "empty")
    else:
        with pytest.raises(AssertionError, match=f"csv: {message}"):
            check_harness(harness, tmp_path / "run", tmp_path / "empty")
