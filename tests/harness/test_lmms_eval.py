"""lmms-eval adapter. The end-to-end tests run the real lmms-eval 0.7.3 (installed by .ci/run)
offline with its dummy model on the released MATH-Vision testmini suite (real images)."""

import json
from pathlib import Path

import pytest

from harness_adapters.harnesses.lmms_eval import task_path
from harness_adapters.harnesses.lmms_eval.ingest import read_run
from harness_adapters.harnesses.lmms_eval.taskgen import RELEASE_FILE, generate_tasks
from harness_adapters.lmms_eval_upstream.functions import (
    ManifestItemsMissing,
    exact_answer_score,
    make_process_docs,
    resolve_image,
)
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError
from primebench_tasks.pipeline.manifest import manifest_items, read_manifest
from primebench_tasks.pipeline.primebench import run_pipeline
from tests.extras import requires
from tests.fixtures.blas import BLAS_KERNELS, kernel_env

SUITE = task_path().parent / "suites" / "primebench_mathvision.json"


class FakeDataset:
    def __init__(self, rows):
        self.rows = rows

    def __getitem__(self, key):
        return [r[key] for r in self.rows]

    def filter(self, fn):
        return FakeDataset([r for r in self.rows if fn(r)])


def test_process_docs_keeps_exactly_the_manifest_items():
    ds = FakeDataset([{"id": str(i)} for i in range(10)])
    assert ds["id"] and make_process_docs(["3", "5"], "id", "t")(ds)["id"] == ["3", "5"]
    with pytest.raises(ManifestItemsMissing, match=r"1 manifest item\(s\).*'42'"):
        make_process_docs(["3", "42"], "id", "t")(ds)


def test_exact_answer_scorer():
    assert exact_answer_score({"answer": "B", "options": ["x", "y"]}, "B.") == 1.0
    assert exact_answer_score({"answer": "B", "options": ["x", "y"]}, "A") == 0.0
    assert exact_answer_score({"answer": "61", "options": []}, "The answer is 61") == 1.0
    assert exact_answer_score({"answer": "6", "options": []}, "7") == 0.0


def test_released_suite_matches_its_manifest():
    m = read_manifest(SUITE)
    base = task_path() / "primebench_mathvision"
    items = json.loads((base / "primebench_items.json").read_text())
    assert items == {
        "primebench_mathvision_math_vision_mini": manifest_items(m)["Math Reasoning"][
            "MATH-Vision_MINI"
        ]
    }
    # the folder points at the one committed manifest instead of holding a copy of it
    release = json.loads((base / RELEASE_FILE).read_text())
    assert release == {"suite": m["name"], "version": m["version"], "manifest": release["manifest"]}
    assert (base / release["manifest"]).resolve() == SUITE.resolve()
    assert not (base / "primebench_manifest.json").exists()
    # the data file is the shared copy, read through the YAML's relative data_files
    yaml_doc = (base / "primebench_mathvision_math_vision_mini.yaml").read_text()
    data = next(ln.split(": ", 1)[1] for ln in yaml_doc.splitlines() if "test: " in ln)
    assert data.startswith("../_data/math_vision_mini-")
    rows = [json.loads(x) for x in (base / data).read_text().splitlines()]
    # images of the embedded data resolve in the installed package, wherever it is
    assert all(r["image"].startswith("embedded:mathvision/images/") for r in rows)
    assert len(rows) == 304 and all(resolve_image(r["image"], base).exists() for r in rows)


def test_no_generated_file_is_committed_twice():
    """The released manifests, task folders and data files: no two files are byte-identical
    (the lmms-eval folders point at the manifest; the local tasks share one data file)."""
    seen: dict[bytes, Path] = {}
    for path in sorted(task_path().parent.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            data = path.read_bytes()
            assert data not in seen, f"{path} repeats {seen[data]}"
            seen[data] = path


@requires("lmms", "lmms_eval")  # the rebuild writes tasks from the upstream task YAMLs
@pytest.mark.parametrize("kernel", BLAS_KERNELS)
def test_released_suites_rebuild_under_every_blas_kernel(kernel):
    """The committed task_configs are, byte for byte, what tools/release_suites.py generates
    today — under the machine's own OpenBLAS kernel and under forced Haswell and Sandybridge ones
    (a release must not depend on the CPU it was built on)."""
    import subprocess
    import sys

    root = Path(__file__).parents[2]
    env = kernel_env(kernel)
    r = subprocess.run(
        [sys.executable, "tools/release_suites.py", "--check"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr


@requires("lmms", "lmms_eval")
def test_benchmark_without_item_text_is_refused(tmp_path):
    p = Panel.load_default("autojudger")
    m = run_pipeline(p).manifest(p)
    with pytest.raises(ValueError, match="no lmms-eval row key is known"):
        generate_tasks(m, p, tmp_path)


def _write_run(d: Path, lines: list[str], task="primebench_x", suite="v1"):
    d.mkdir(parents=True, exist_ok=True)
    (d / "20260101_results.json").write_text(
        json.dumps(
            {
                "model_name": "m",
                "configs": {
                    task: {"metadata": {"primebench_suite": suite, "benchmark": "MATH-Vision_MINI"}}
                },
            }
        )
    )
    (d / f"20260101_samples_{task}.jsonl").write_text("\n".join(lines) + "\n")


def test_ingest_refuses_bad_logs(tmp_path):
    with pytest.raises(InputError, match="did not finish"):
        read_run(tmp_path)
    good = json.dumps({"doc_id": 0, "primebench_item": {"item_id": "4", "score": 1.0}})
    _write_run(tmp_path / "a", [good, '{"doc_id": 1, "primebench_i'])
    with pytest.raises(InputError, match=r"row 2: truncated"):
        read_run(tmp_path / "a")
    _write_run(tmp_path / "b", [good, json.dumps({"doc_id": 1, "exact_match": 1})])
    with pytest.raises(InputError, match="no primebench_item"):
        read_run(tmp_path / "b")
    _write_run(tmp_path / "c", [good])
    with pytest.raises(InputError, match="generated from suite v1, not v2"):
        read_run(tmp_path / "c", suite_version="v2")
    assert read_run(tmp_path / "c")["item_id"].tolist() == ["4"]


def test_readme_coverage_table_is_the_generated_one():
    from tests.docs import doc_block, script_output

    assert doc_block("coverage-table") == script_output("tools/release_suites.py", "--table")


def test_ingest_refuses_empty_and_truncated_samples(tmp_path):
    good = json.dumps({"doc_id": 0, "primebench_item": {"item_id": "4", "score": 1.0}})
    _write_run(tmp_path / "e", [])
    (tmp_path / "e" / "20260101_samples_primebench_x.jsonl").write_text("")
    with pytest.raises(InputError, match="is empty"):
        read_run(tmp_path / "e")
    _write_run(tmp_path / "t", [good])
    res = tmp_path / "t" / "20260101_results.json"
    doc = json.loads(res.read_text())
    doc["n-samples"] = {"primebench_x": {"original": 3, "effective": 3}}
    res.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="holds 1 of its 3 samples"):
        read_run(tmp_path / "t")


@pytest.mark.parametrize("bad", [7.0, -0.5, float("inf")])
def test_place_refuses_scores_outside_the_unit_interval(bad):
    """A samples line with "score": 7 was placed (suite score 1.4, rank 1 of 13)."""
    import pandas as pd

    from harness_adapters.run.report import score_frame
    from tests.fixtures.manifests import small_manifest

    manifest = small_manifest({"Math Reasoning": {"B": ["1", "2"]}})
    ok = pd.DataFrame(
        {"model": ["m", "m"], "benchmark": ["B", "B"], "item_id": ["1", "2"], "score": [1.0, 0.0]}
    )
    wide, missing = score_frame(ok, manifest)
    assert wide.loc["m"].tolist() == [1.0, 0.0] and not missing
    with pytest.raises(InputError, match=r"model m, B item 2: score .* not a number in \[0, 1\]"):
        score_frame(ok.assign(score=[1.0, bad]), manifest)
    # two disagreeing results for one item: refused, not "the first one"
    twice = pd.concat([ok, ok.iloc[[0]].assign(score=0.0)])
    with pytest.raises(InputError, match="conflicting scores for the same item"):
        score_frame(twice, manifest)
    assert score_frame(pd.concat([ok, ok.iloc[[0]]]), manifest)[0].loc["m"].tolist() == [1.0, 0.0]
