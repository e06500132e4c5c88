"""The harness protocol: the installed harnesses by entry point, detection, and a new harness as
one object (a folder and an entry point) that ``primebench place`` then serves."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from harness_adapters.suites.released import suites_path
from primebench_tasks.cli import main
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError, PrimeBenchError
from primebench_tasks.pipeline.manifest import read_manifest
from primebench_tasks.suite import harness as H


class CsvHarness:
    """A harness that writes ``scores.csv`` (model, benchmark, item_id, score) and a
    ``suite.txt`` with the suite version: everything a new harness needs to be placed."""

    name = "csv"
    summary = "a test harness: scores.csv + suite.txt"
    prism_export = None
    prism_ingest = None

    def detect(self, output: Path) -> bool:
        return (Path(output) / "scores.csv").exists()

    def read_run(self, output: Path, model: str | None = None) -> H.HarnessRun:
        recs = pd.read_csv(Path(output) / "scores.csv", dtype={"item_id": str})
        if model is not None:
            recs = recs[recs["model"] == model]
        return H.HarnessRun(recs, (Path(output) / "suite.txt").read_text().strip())

    def add_commands(self, tree) -> None:  # no sub-commands of its own
        return None


@dataclass
class FakeEntryPoint:
    name: str
    value: str
    obj: object

    def load(self):
        return self.obj


def test_the_installed_harnesses():
    found = H.harnesses()
    assert {"lmms-eval", "vlmeval"} <= set(found)
    for h in found.values():
        assert isinstance(h, H.Harness) and h.prism_export is not None


def test_detection_and_naming(tmp_path):
    (tmp_path / "lm").mkdir()
    (tmp_path / "lm" / "20260101_results.json").write_text("{}")
    (tmp_path / "vk").mkdir()
    (tmp_path / "vk" / "M_PrimeBench_X_primebench.json").write_text("{}")
    assert H.harness_for(tmp_path / "lm").name == "lmms-eval"
    assert H.harness_for(tmp_path / "vk").name == "vlmeval"
    with pytest.raises(InputError, match="all recognise"):
        H.harness_for(tmp_path)  # both, below it
    (tmp_path / "none").mkdir()
    with pytest.raises(InputError, match="holds no files") as exc:
        H.harness_for(tmp_path / "none")
    assert exc.value.file == str(tmp_path / "none")
    with pytest.raises(InputError, match="no harness 'helm'"):
        H.harness_for(tmp_path, "helm")


def test_an_entry_point_that_is_not_a_harness_is_refused():
    with pytest.raises(PrimeBenchError, match="bad = x:y .* is not a harness"):
        H.harnesses([FakeEntryPoint("bad", "x:y", object())])
    two = [FakeEntryPoint("a", "m:a", CsvHarness()), FakeEntryPoint("b", "m:b", CsvHarness())]
    with pytest.raises(PrimeBenchError, match="two harnesses are named 'csv'"):
        H.harnesses(two)


def test_a_new_harness_is_one_object_and_place_serves_it(tmp_path, monkeypatch):
    """A new harness (here: one class and one entry point) is found by its entry point, picked
    by detection, and its run placed by the one placement path: the scores of a reference model
    give that model's full score inside the predicted interval."""
    installed = H.harnesses()
    eps = [FakeEntryPoint(n, f"installed:{n}", h) for n, h in installed.items()]
    eps.append(FakeEntryPoint("csv", "tests.suite.test_harness:CsvHarness", CsvHarness()))
    monkeypatch.setattr(
        H, "harnesses", lambda entry_points=None: dict((e.obj.name, e.obj) for e in eps)
    )
    suite = read_manifest(suites_path() / "primebench_mathvision.json")
    panel = Panel.load_default("mathvision")
    model = panel.model_names[3]
    X = panel.matrix("MATH-Vision_MINI")[3]
    pos = {str(i): j for j, i in enumerate(panel.item_ids("MATH-Vision_MINI"))}
    ids = suite.entry("MATH-Vision_MINI").item_ids
    run = tmp_path / "run"
    run.mkdir()
    pd.DataFrame(
        {
            "model": [f"{model}-again"] * len(ids),
            "benchmark": ["MATH-Vision_MINI"] * len(ids),
            "item_id": list(ids),
            "score": [float(X[pos[i]]) for i in ids],
        }
    ).to_csv(run / "scores.csv", index=False)
    (run / "suite.txt").write_text(suite.version)
    assert H.harness_for(run).name == "csv"
    assert main(["place", str(run), "--out", str(tmp_path / "rep"), "--n-boot", "50"]) == 0
    rep = json.loads((tmp_path / "rep" / "report.json").read_text())
    b = rep["models"][f"{model}-again"]["benchmarks"]["MATH-Vision_MINI"]
    assert b["n_scored"] == len(ids)
    full = float(pd.Series(panel.matrix("MATH-Vision_MINI")[3]).mean())
    assert b["predicted_full"]["lo"] <= full <= b["predicted_full"]["hi"]
    # a report into a run folder that a run is writing (it holds RUN/run.lock) is refused:
    # on 4d9a95b both exited 0 and the folder ended with another model's report.json
    from tests.conftest import run_lock_held_elsewhere

    busy = tmp_path / "busy"
    with run_lock_held_elsewhere(busy):
        assert main(["place", str(run), "--out", str(busy), "--n-boot", "50"]) == 2
        assert not (busy / "report.json").exists()
    assert main(["place", str(run), "--out", str(busy), "--n-boot", "50"]) == 0
    # #79: a finished run's folder keeps its own report unless --overwrite is given; a fresh
    # --out that is refused keeps no empty run.lock (nor the folder)
    (busy / "run_spec.json").write_text("{}")
    before = (busy / "report.json").read_bytes()
    assert main(["place", str(run), "--out", str(busy), "--n-boot", "50"]) == 2
    assert (busy / "report.json").read_bytes() == before
    assert main(["place", str(run), "--out", str(busy), "--n-boot", "50", "--overwrite"]) == 0
    fresh = tmp_path / "fresh"
    assert (
        main(["place", str(run), "--out", str(fresh), "--suite", str(tmp_path / "nope.json")]) != 0
    )
    assert not fresh.exists()
    # a run whose records lack a column is refused, naming the harness
    pd.DataFrame({"model": ["m"], "item_id": ["1"], "score": [1.0]}).to_csv(
        run / "scores.csv", index=False
    )
    with pytest.raises(PrimeBenchError, match="harness 'csv' returned records with columns"):
        H.check_records(CsvHarness().read_run(run), "csv")


def test_a_folder_no_harness_reads_is_said_for_what_it_is(tmp_path):
    """Battery 7 (the newcomer's walk): an lmms-eval run that stopped writes no output, and
    ``place out/`` asked for ``--harness`` instead of saying so."""
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no files: the harness wrote no output there"):
        H.harness_for(tmp_path / "empty")
    run = tmp_path / "run"
    run.mkdir()
    (run / "run_spec.json").write_text("{}")
    (run / "records.jsonl").write_text("")
    with pytest.raises(InputError, match="this is a `primebench run` folder, placed by the run"):
        H.harness_for(run)
    (tmp_path / "other" / "x").mkdir(parents=True)
    (tmp_path / "other" / "x" / "notes.txt").write_text("?")
    with pytest.raises(InputError, match="no installed harness recognises this folder"):
        H.harness_for(tmp_path / "other")


def test_place_takes_a_released_suite_by_name(tmp_path):
    """``place --suite primebench_mathvision`` refused the name ``suites list`` offers."""
    from harness_adapters.suites.released import find_manifest, resolve_suite

    m = resolve_suite("primebench_mathvision")
    assert find_manifest(m.version, "primebench_mathvision").version == m.version
    with pytest.raises(InputError, match="the run was made with suite 0000"):
        find_manifest("0000", "primebench_mathvision")
