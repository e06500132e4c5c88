"""End-to-end: the real lmms-eval 0.7.3 (installed by .ci/run), offline, with its dummy model,
on generated tasks and on the released MATH-Vision testmini suite (real images)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness_adapters.lmms_eval.ingest import read_run
from harness_adapters.lmms_eval.task_functions import exact_answer_score
from primebench_tasks.cli import main
from primebench_tasks.data.defaults import default_path
from primebench_tasks.data.panel import Panel
from primebench_tasks.pipeline.manifest import manifest_items, read_manifest
from tests.harness.test_lmms_eval import SUITE

lmms_eval = pytest.importorskip("lmms_eval", reason="lmms-eval is not installed")
LMMS = Path(sys.executable).parent / "lmms-eval"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def _copy_panel(tmp_path):
    dst = tmp_path / "panel"
    shutil.copytree(default_path("mathvision"), dst)
    return dst


def _expected(m):
    panel = Panel.load_default("mathvision")
    items = panel.items_of("MATH-Vision_MINI").set_index("item_id")
    ids = manifest_items(m)["Math Reasoning"]["MATH-Vision_MINI"]
    return {i: exact_answer_score({"answer": items.loc[i, "answer"],
                                   "options": json.loads(items.loc[i, "options"] or "[]")}, "A")
            for i in ids}


@pytest.mark.heavy
def test_generated_tasks_run_and_ingest(tmp_path):
    """Manifest from the real MATH-Vision responses → tasks → lmms-eval dummy → ingest."""
    assert main(["build", "primebench", "--default", "mathvision", "--out",
                 str(tmp_path / "suite")]) == 0
    m = read_manifest(tmp_path / "suite" / "manifest.json")
    assert main(["tasks", "lmms-eval", "--manifest", str(tmp_path / "suite" / "manifest.json"),
                 "--default", "mathvision", "--out", str(tmp_path / "tasks")]) == 0
    r = subprocess.run([str(LMMS), "--model", "dummy", "--model_args", "response=A", "--tasks",
                        "primebench", "--include_path", str(tmp_path / "tasks"), "--log_samples",
                        "--output_path", str(tmp_path / "out")], capture_output=True, text=True,
                       env=ENV, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    recs = read_run(tmp_path / "out", model="dummy-A", suite_version=m["version"])
    want = _expected(m)
    assert sorted(recs["item_id"]) == sorted(want)
    got = dict(zip(recs["item_id"], recs["score"]))
    assert all(got[i] == want[i] for i in want)
    assert 0 < np.mean(list(want.values())) < 1


@pytest.mark.heavy
def test_plain_lmms_eval_tasks_through_the_entry_point(tmp_path):
    """``lmms-eval --tasks primebench_mathvision`` with no --include_path: the entry point adds
    the released suites' directory; ingest is idempotent."""
    r = subprocess.run([str(LMMS), "--model", "dummy", "--model_args", "response=A", "--tasks",
                        "primebench_mathvision", "--log_samples", "--output_path",
                        str(tmp_path / "out")], capture_output=True, text=True, env=ENV,
                       cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    panel_dir = _copy_panel(tmp_path)
    args = ["ingest", "lmms-eval", str(tmp_path / "out"), "--panel", str(panel_dir), "--suite",
            str(SUITE), "--model", "dummy-A"]
    assert main(args) == 0
    p = Panel.load(panel_dir)
    assert "dummy-A" in p.model_names
    row = p.matrix("MATH-Vision_MINI")[p.model_names.index("dummy-A")]
    assert np.isfinite(row).sum() == 100
    assert main(args) == 0  # the same run again adds nothing
    assert Panel.load(panel_dir).content_hash == p.content_hash
