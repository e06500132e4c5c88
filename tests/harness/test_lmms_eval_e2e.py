"""End-to-end: the real lmms-eval 0.7.3 (installed by .ci/run), offline, with its dummy model,
on generated tasks and on the released MATH-Vision testmini suite (real images)."""

import json
import os
import shutil

import numpy as np
import pytest

from harness_adapters.harnesses.lmms_eval.ingest import read_run
from harness_adapters.lmms_eval_upstream.functions import exact_answer_score
from primebench_tasks.cli import main
from primebench_tasks.data.defaults import default_path
from primebench_tasks.data.panel import Panel
from primebench_tasks.pipeline.manifest import manifest_items, read_manifest
from tests.fixtures.lmms_runs import run_lmms_eval
from tests.harness.test_lmms_eval import SUITE

pytestmark = pytest.mark.slow  # end to end through a real harness: the full run (CI)

lmms_eval = pytest.importorskip(
    "lmms_eval", reason="needs the 'lmms' extra: pip install -e '.[lmms]'"
)
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def _copy_panel(tmp_path):
    dst = tmp_path / "panel"
    shutil.copytree(default_path("mathvision"), dst)
    return dst


def _expected(m):
    panel = Panel.load_default("mathvision")
    items = panel.items_of("MATH-Vision_MINI").set_index("item_id")
    ids = manifest_items(m)["Math Reasoning"]["MATH-Vision_MINI"]
    return {
        i: exact_answer_score(
            {
                "answer": items.loc[i, "answer"],
                "options": json.loads(items.loc[i, "options"] or "[]"),
            },
            "A",
        )
        for i in ids
    }


@pytest.mark.heavy
def test_generated_tasks_run_and_ingest(tmp_path):
    """Manifest from the real MATH-Vision responses → tasks → lmms-eval dummy → ingest."""
    assert (
        main(["build", "primebench", "--default", "mathvision", "--out", str(tmp_path / "suite")])
        == 0
    )
    m = read_manifest(tmp_path / "suite" / "manifest.json")
    assert (
        main(
            [
                "tasks",
                "lmms-eval",
                "--manifest",
                str(tmp_path / "suite" / "manifest.json"),
                "--default",
                "mathvision",
                "--out",
                str(tmp_path / "tasks"),
            ]
        )
        == 0
    )
    # the built suite takes a name of its own (#82: "primebench" shadowed the released flagship)
    from harness_adapters.harnesses.lmms_eval.taskgen import suite_task_name

    task = suite_task_name(m)
    assert task == "primebench_mathvision_suite"
    run_lmms_eval(task, tmp_path / "out", include=tmp_path / "tasks", env=ENV, cwd=tmp_path)
    recs = read_run(tmp_path / "out", model="dummy-A", suite_version=m["version"])
    want = _expected(m)
    assert sorted(recs["item_id"]) == sorted(want)
    got = dict(zip(recs["item_id"], recs["score"], strict=True))
    assert all(got[i] == want[i] for i in want)
    assert 0 < np.mean(list(want.values())) < 1


@pytest.mark.heavy
def test_plain_lmms_eval_tasks_through_the_entry_point(tmp_path):
    """``lmms-eval --tasks primebench_mathvision`` with no --include_path: the entry point adds
    the released suites' directory; ingest is idempotent."""
    run_lmms_eval("primebench_mathvision", tmp_path / "out", env=ENV, cwd=tmp_path)
    panel_dir = _copy_panel(tmp_path)
    args = [
        "ingest",
        "lmms-eval",
        str(tmp_path / "out"),
        "--panel",
        str(panel_dir),
        "--suite",
        str(SUITE),
        "--model",
        "dummy-A",
    ]
    assert main(args) == 0
    p = Panel.load(panel_dir)
    assert "dummy-A" in p.model_names
    row = p.matrix("MATH-Vision_MINI")[p.model_names.index("dummy-A")]
    assert np.isfinite(row).sum() == 100
    assert main(args) == 0  # the same run again adds nothing
    assert Panel.load(panel_dir).content_hash == p.content_hash


@pytest.mark.heavy
def test_prism_axes_as_lmms_eval_tasks(tmp_path, mathvision):
    """PRISM build (scripted generator) → prism_<axis> tasks → lmms-eval dummy → ingest → sc
    continues from the ingested q answers → score."""
    from harness_adapters.harnesses.lmms_eval.prism_tasks import rule_score
    from harness_adapters.prism.build import build
    from harness_adapters.prism.run import records_file
    from tests.harness.conftest import small_suite
    from tests.harness.test_prism import Generator

    build(mathvision, tmp_path / "build", Generator(), small_suite(mathvision, 8))
    assert (
        main(
            [
                "prism",
                "tasks",
                "lmms-eval",
                "--prism",
                str(tmp_path / "build"),
                "--out",
                str(tmp_path / "tasks"),
            ]
        )
        == 0
    )
    run_lmms_eval("prism", tmp_path / "out", include=tmp_path / "tasks", env=ENV, cwd=tmp_path)
    args = [
        "prism",
        "ingest",
        "lmms-eval",
        str(tmp_path / "out"),
        "--prism",
        str(tmp_path / "build"),
        "--out",
        str(tmp_path / "run"),
        "--model",
        "dummy-A",
    ]
    assert main(args) == 0
    recs = records_file(tmp_path / "run").read()
    assert len(recs) == 6 * 8 and {r["axis"] for r in recs} == {"q", "if", "h", "mq", "c", "vis"}
    assert all(r["responses"] == ["A"] for r in recs)
    assert main(args) == 0 and len(records_file(tmp_path / "run").read()) == 48  # idempotent
    res = json.loads(next((tmp_path / "out").rglob("*_results.json")).read_text())
    docs = [
        json.loads(x) for x in (tmp_path / "tasks" / "prism_vis.jsonl").read_text().splitlines()
    ]
    want = np.mean([rule_score("vis", json.loads(d["grade"]), "A") for d in docs])
    assert res["results"]["prism_vis"]["prism_vis,none"] == pytest.approx(want)
    from harness_adapters.prism.build import read_build
    from harness_adapters.prism.run import run_prism
    from harness_adapters.prism.score import MATCHERS, score
    from tests.harness.test_prism import Backend

    index, store = read_build(tmp_path / "build")
    done = run_prism(
        Backend(), index, store, "dummy-A", [None], tmp_path / "run", MATCHERS, axes=("q", "sc")
    )
    assert done == {"dummy-A": {"q": 0, "sc": 8}}  # q came from lmms-eval
    sc = [r for r in records_file(tmp_path / "run").read() if r["axis"] == "sc"]
    assert all(r["responses"][0] == "A" for r in sc)
    doc = score(tmp_path / "build", [tmp_path / "run"], tmp_path / "score", None, n_boot=50)
    assert doc["models"] == ["dummy-A"]


@pytest.mark.heavy
def test_adaptive_driver_runs_rounds_through_lmms_eval_and_resumes(tmp_path):
    """``primebench adaptive lmms-eval``: the dummy model loaded once, rounds of 5 items of the
    MATH-Vision testmini pool through generated tasks and lmms-eval's own scoring; a run stopped
    at 10 items and resumed to 15 asks what an uninterrupted 15-item run asks."""
    from harness_adapters.run.records import RecordFile

    def run(out, items):
        args = ["adaptive", "lmms-eval", "--model", "dummy", "--model_args", "response=A"]
        args += ["--suite", "primebench_mathvision", "--target-width", "0", "--max-items"]
        return main([*args, str(items), "--out", str(out)])

    assert run(tmp_path / "straight", 15) == 0
    assert run(tmp_path / "resumed", 10) == 0
    assert len(list((tmp_path / "resumed" / "rounds").iterdir())) == 2
    assert run(tmp_path / "resumed", 15) == 0
    ids = {k: [r["item_id"] for r in RecordFile(tmp_path / k / "records.jsonl").read()]
           for k in ("straight", "resumed")}  # fmt: skip
    assert ids["straight"] == ids["resumed"] and len(set(ids["straight"])) == 15
    recs = RecordFile(tmp_path / "straight" / "records.jsonl").read()
    panel = Panel.load_default("mathvision")
    gold = panel.items_of("MATH-Vision_MINI").set_index("item_id")
    for r in recs:  # the generated task's scoring (in lmms-eval) of the dummy's "A"
        doc = {"answer": gold.loc[r["item_id"], "answer"],
               "options": json.loads(gold.loc[r["item_id"], "options"] or "[]")}  # fmt: skip
        assert r["status"] == "ok" and r["score"] == exact_answer_score(doc, "A")
    doc = json.loads((tmp_path / "straight" / "adaptive.json").read_text())
    e = doc["models"]["dummy"]["benchmarks"]["MATH-Vision_MINI"]
    assert e["items"] == 15 and e["stopped_because"] == "item budget (15) spent"


def test_adaptive_driver_asks_the_flagships_upstream_pool(tmp_path):
    """``primebench adaptive lmms-eval`` on the released flagship's MMMU: the pool is every item
    of its reference panel (900, the merged MMMU panel), read from an upstream-schema stand-in (--dataset); each round
    is a generated task over the upstream MMMU task code, scored by it (the dummy's "A" is right
    exactly on the multiple-choice items whose answer is A)."""
    from harness_adapters.run.records import RecordFile
    from primebench_tasks.pipeline.manifest import write_manifest
    from tests.fixtures import upstream_standins as standins
    from tests.harness.conftest import flagship_benchmark

    b = "MMMU_DEV_VAL"
    suite, _, pool = flagship_benchmark(b, "flagship_mmmu_standin")
    write_manifest(suite, tmp_path / "suite.json")
    rows = standins.mmmu(pool, tmp_path / "mmmu", extra=0)
    args = ["adaptive", "lmms-eval", "--model", "dummy", "--model_args", "response=A"]
    args += ["--suite", str(tmp_path / "suite.json"), "--out", str(tmp_path / "run")]
    args += ["--dataset", f"{suite.entry(b).lmms_eval_task}={tmp_path / 'mmmu'}"]
    assert main([*args, "--target-width", "0", "--max-items", "10"]) == 0
    recs = RecordFile(tmp_path / "run" / "records.jsonl").read()
    asked = {r["item_id"] for r in recs}
    assert len(asked) == 10 and asked <= set(pool)
    assert asked - set(suite.entry(b).item_ids), "the pool, not only the suite"
    for r in recs:
        row = rows[r["item_id"]]
        want = float(row["question_type"] == "multiple-choice" and row["answer"] == "A")
        assert r["status"] == "ok" and r["score"] == want, r
    doc = json.loads((tmp_path / "run" / "adaptive.json").read_text())
    e = doc["models"]["dummy"]["benchmarks"][b]
    assert e["items"] == 10 and e["pool"] == 900
