"""Suite tasks that include an upstream lmms-eval task (a stand-in in tests/fixtures), keep
exactly the manifest's items and wrap its process_results with the stable item id."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness_adapters.harnesses.lmms_eval.ingest import read_run
from harness_adapters.harnesses.lmms_eval.taskgen import generate_tasks
from harness_adapters.lmms_eval_upstream.functions import ManifestItemsMissing
from harness_adapters.lmms_eval_upstream.tasks import find_task_yaml, load_task_config
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError
from primebench_tasks.pipeline.manifest import build_manifest
from tests.fixtures.lmms_runs import run_lmms_eval

UPSTREAM = Path(__file__).parents[1] / "fixtures" / "upstream_lmms_task"
IDS = [f"t{i}" for i in range(12)]


def _panel() -> Panel:
    scores = pd.DataFrame(
        [
            {
                "model": m,
                "benchmark": "ToyBench",
                "item_id": i,
                "condition": "vl",
                "score": float((k + j) % 2),
            }
            for k, m in enumerate(["m1", "m2", "m3"])
            for j, i in enumerate(IDS)
        ]
    )
    models = pd.DataFrame({"model": ["m1", "m2", "m3"]})
    benchmarks = pd.DataFrame(
        [
            {
                "benchmark": "ToyBench",
                "category": "Toy",
                "metric": "toy_acc",
                "metric_kind": "accuracy",
                "score_min": 0.0,
                "score_max": 100.0,
                "lmms_eval_task": "toy_upstream",
                "vlmeval_dataset": None,
            }
        ]
    )
    items = pd.DataFrame({"benchmark": "ToyBench", "item_id": IDS})
    return Panel.from_records("toy", scores, models, benchmarks, items)


def _manifest(panel: Panel, positions) -> dict:
    return build_manifest(
        "primebench_toy", panel, {"Toy": {"ToyBench": np.array(positions)}}, {}, [], {"rho": None}
    )


def test_upstream_config_resolves_includes_and_keeps_function_refs():
    path = find_task_yaml("toy_upstream", [UPSTREAM])
    cfg = load_task_config(path)
    assert cfg["task"] == "toy_upstream" and cfg["output_type"] == "generate_until"
    assert cfg["process_results"].ref == "utils.process_results"
    assert cfg["metric_list"][0]["aggregation"].directory == str(UPSTREAM)
    with pytest.raises(InputError, match="'no_such_task' is not installed"):
        find_task_yaml("no_such_task", [UPSTREAM])


def test_unknown_row_key_is_refused(tmp_path):
    p = _panel()
    with pytest.raises(InputError, match="--upstream-key"):
        generate_tasks(_manifest(p, [0, 1]), p, tmp_path)


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generated_task_flattens_upstream_and_wraps_its_functions(tmp_path):
    datasets = pytest.importorskip(
        "datasets", reason="needs the 'lmms' extra (datasets): pip install -e '.[lmms]'"
    )
    p = _panel()
    m = _manifest(p, [0, 3, 5, 7])
    generate_tasks(m, p, tmp_path / "g", {"toy_upstream": "qid"}, [UPSTREAM])
    yaml = (tmp_path / "g" / "primebench_toy_toybench.yaml").read_text()
    # flattened, nothing machine-specific: upstream functions by a relative folder
    assert "include:" not in yaml and not re.search(r":\s*['\"]?/", yaml)  # no absolute path
    assert "doc_to_text: !function 'primebench_suite.upstream_" in yaml
    assert "- metric: primebench_item" in yaml and "upstream_task: toy_upstream" in yaml
    assert "test: ../../../" in yaml or "test: ../" in yaml  # data_files re-anchored
    assert "metric: primebench_item" in (tmp_path / "g" / "primebench_toy.yaml").read_text()
    suite_py = (tmp_path / "g" / "primebench_suite.py").read_text()
    assert not re.search(r"['\"]/", suite_py)
    mod = _load(tmp_path / "g" / "primebench_suite.py", "gen_suite")
    rows = [json.loads(x) for x in (UPSTREAM / "toy_upstream.jsonl").read_text().splitlines()]
    kept = mod.process_docs_primebench_toy_toybench(datasets.Dataset.from_list(rows))
    assert sorted(kept["qid"]) == ["t0", "t3", "t5", "t7"]
    out = mod.process_results_primebench_toy_toybench(kept[0], ["B"])
    assert out["toy_acc"] in (0.0, 100.0)
    assert out["primebench_item"] == {"item_id": kept[0]["qid"], "score": out["toy_acc"] / 100.0}
    agg = [
        v for k, v in vars(mod).items() if k.startswith("upstream_") and v.ref == "utils.toy_mean"
    ]
    assert len(agg) == 1 and agg[0]([0.0, 100.0]) == 50.0
    retired = _manifest(p, [2, 11])  # t11 is dropped by the upstream process_docs
    generate_tasks(retired, p, tmp_path / "r", {"toy_upstream": "qid"}, [UPSTREAM])
    mod = _load(tmp_path / "r" / "primebench_suite.py", "gen_r")
    with pytest.raises(ManifestItemsMissing, match="t11"):
        mod.process_docs_primebench_toy_toybench(datasets.Dataset.from_list(rows))


def test_generation_is_whole_and_refuses_collisions(tmp_path):
    p = _panel()
    m = _manifest(p, [0, 3])
    out = tmp_path / "tasks"
    generate_tasks(m, p, out, {"toy_upstream": "qid"}, [UPSTREAM])
    before = sorted(x.name for x in out.iterdir())
    # a failing generation (unknown upstream folder → task not found) leaves the folder as it was
    with pytest.raises(InputError):
        generate_tasks(
            _manifest(p, [1]), p, out, {"toy_upstream": "qid"}, []
        ) if False else generate_tasks(
            _manifest(p, [1]), p, out, {"toy_upstream": "nokey"}, [tmp_path / "nowhere"]
        )
    assert sorted(x.name for x in out.iterdir()) == before
    assert not [x for x in tmp_path.iterdir() if x.name.startswith(".tasks.")]
    # an existing folder that is not generated tasks is refused
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    with pytest.raises(InputError, match="not a folder of generated tasks"):
        generate_tasks(m, p, other, {"toy_upstream": "qid"}, [UPSTREAM])
    assert (other / "keep.txt").read_text() == "mine"


def test_benchmarks_that_slug_alike_are_an_error(tmp_path):
    scores = pd.DataFrame(
        [
            {
                "model": m,
                "benchmark": b,
                "item_id": f"i{j}",
                "condition": "vl",
                "score": float((k + j) % 2),
            }
            for k, m in enumerate(["m1", "m2"])
            for b in ("a/b", "a_b")
            for j in range(3)
        ]
    )
    benchmarks = pd.DataFrame(
        [
            {
                "benchmark": b,
                "category": "Toy",
                "metric": "acc",
                "metric_kind": "binary",
                "score_min": 0.0,
                "score_max": 1.0,
                "lmms_eval_task": None,
                "vlmeval_dataset": None,
            }
            for b in ("a/b", "a_b")
        ]
    )
    items = pd.DataFrame(
        [{"benchmark": b, "item_id": f"i{j}"} for b in ("a/b", "a_b") for j in range(3)]
    )
    p = Panel.from_records("t", scores, pd.DataFrame({"model": ["m1", "m2"]}), benchmarks, items)
    m = build_manifest(
        "primebench_toy",
        p,
        {"Toy": {"a/b": np.array([0]), "a_b": np.array([1])}},
        {},
        [],
        {"rho": None},
    )
    with pytest.raises(InputError, match="both become the lmms-eval task 'primebench_toy_a_b'"):
        generate_tasks(m, p, tmp_path / "t")
    assert not (tmp_path / "t").exists()


@pytest.mark.heavy
def test_lmms_eval_runs_the_wrapped_upstream_task(tmp_path):
    pytest.importorskip("lmms_eval", reason="needs the 'lmms' extra: pip install -e '.[lmms]'")
    p = _panel()
    m = _manifest(p, [0, 1, 3, 6, 8])
    shutil.copytree(UPSTREAM, tmp_path / "tasks" / "upstream")
    generate_tasks(
        m,
        p,
        tmp_path / "tasks" / "suite",
        {"toy_upstream": "qid"},
        [tmp_path / "tasks" / "upstream"],
    )
    run_lmms_eval("primebench_toy", tmp_path / "out", include=tmp_path / "tasks", cwd=tmp_path)
    recs = read_run(tmp_path / "out", model="dummy-A", suite_version=m["version"])
    got = dict(zip(recs["item_id"], recs["score"], strict=True))
    answers = {
        json.loads(x)["qid"]: json.loads(x)["answer"]
        for x in (UPSTREAM / "toy_upstream.jsonl").read_text().splitlines()
    }
    assert got == {i: float(answers[i] == "A") for i in ["t0", "t1", "t3", "t6", "t8"]}


def test_ingest_refuses_an_item_without_a_per_item_score(tmp_path):
    d = tmp_path / "m"
    d.mkdir()
    meta = {"primebench_suite": "v1", "benchmark": "ToyBench", "upstream_task": "toy_upstream"}
    (d / "20260101_results.json").write_text(
        json.dumps({"model_name": "m", "configs": {"primebench_toy_toybench": {"metadata": meta}}})
    )
    (d / "20260101_samples_primebench_toy_toybench.jsonl").write_text(
        json.dumps({"doc_id": 0, "primebench_item": {"item_id": "t0", "score": None}}) + "\n"
    )
    with pytest.raises(InputError, match="no per-item score") as e:
        read_run(tmp_path)
    assert "row 1" in str(e.value) or ":1" in str(e.value)
