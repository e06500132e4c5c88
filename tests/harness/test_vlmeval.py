"""The VLMEvalKit adapter against VLMEvalKit's real code (the vendored snapshot, see .ci/run):
export → registration → VLMEvalKit's own inference loop and evaluation → ingest → placement.

Without ``vlmeval`` importable the end-to-end tests skip; the export tests need no VLMEvalKit."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness_adapters.harnesses.vlmeval import export_suite
from harness_adapters.harnesses.vlmeval.export import CONFIG_NAME
from primebench_tasks.cli import main
from primebench_tasks.data.defaults import default_path
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError
from primebench_tasks.pipeline.manifest import manifest_items
from primebench_tasks.pipeline.primebench import run_pipeline
from tests.fixtures import vlmeval_standins as S

pytestmark = pytest.mark.slow  # end to end through a real harness: the full run (CI)

ROOT = Path(__file__).resolve().parents[2]
#: the VLMEvalKit snapshot the contracts below were read from (../shared/vendor)
VLMEVAL_COMMIT = "e8e78f05"


def _vlmeval_available() -> bool:
    """Without importing it: importing ``vlmeval`` turns gradients off process-wide
    (``vlmeval/vlm/__init__.py``), which would break the training tests of this session."""
    import importlib.util

    return importlib.util.find_spec("vlmeval") is not None


@pytest.fixture(autouse=True)
def _keep_grad_mode():
    """VLMEvalKit's import turns gradients off process-wide; give every later test its mode."""
    import torch

    prev = torch.is_grad_enabled()
    yield
    torch.set_grad_enabled(prev)


needs_vlmeval = pytest.mark.skipif(
    not _vlmeval_available(),
    reason="needs VLMEvalKit (not on PyPI; its git checkout on the path: README, VLMEvalKit)",
)


@pytest.fixture(scope="module")
def aj_suite():
    p = Panel.load_default("autojudger")
    return run_pipeline(p).manifest(p)


@pytest.fixture(scope="module")
def released():
    from harness_adapters.suites.released import resolve_suite

    return resolve_suite("primebench")


def _ids(manifest, bench):
    return next(by_b[bench] for by_b in manifest_items(manifest).values() if bench in by_b)


def test_export_keeps_exactly_the_suite_rows_and_carries_shared_images(tmp_path, aj_suite):
    src, lmu = tmp_path / "src", tmp_path / "LMU"
    src.mkdir()
    ids = _ids(aj_suite, "AI2D_TEST")
    S.ai2d_tsv(src / "AI2D_TEST.tsv", ids)
    export_suite(aj_suite, src, lmu, only=["AI2D_TEST"])
    got = pd.read_csv(lmu / "PrimeBench_AI2D_TEST.tsv", sep="\t", dtype=str)
    assert sorted(got["index"], key=int) == sorted(ids, key=int)
    up = pd.read_csv(src / "AI2D_TEST.tsv", sep="\t", dtype=str)
    assert list(got.columns) == list(up.columns)
    # the row that pointed outside the suite now holds that image; the inner reference stays
    row = got.set_index("index")
    assert row.loc[ids[2], "image"] == up.set_index("index").loc["900000", "image"]
    assert row.loc[ids[3], "image"] == ids[1]
    cfg = json.loads((lmu / CONFIG_NAME).read_text())
    spec = cfg["data"]["PrimeBench_AI2D_TEST"]
    assert (spec["upstream"], spec["key_column"], spec["n_items"]) == (
        "AI2D_TEST",
        "index",
        len(ids),
    )
    assert cfg["suite"] == aj_suite["version"] and cfg["not_exported"] == ["MMMU_DEV_VAL"]


def test_export_finds_the_id_column_and_refuses_missing_items(tmp_path, released):
    src, lmu = tmp_path / "src", tmp_path / "LMU"
    src.mkdir()
    ids = _ids(released, "MMMU_DEV_VAL")
    S.mmmu_tsv(src / "MMMU_DEV_VAL.tsv", ids)
    export_suite(released, src, lmu, only=["MMMU_DEV_VAL"])
    spec = json.loads((lmu / CONFIG_NAME).read_text())["data"]["PrimeBench_MMMU_DEV_VAL"]
    assert spec["key_column"] == "id" and sorted(spec["index_to_item"].values()) == sorted(ids)
    S.mmmu_tsv(src / "MMMU_DEV_VAL.tsv", ids[:-1])
    with pytest.raises(InputError, match="no column holds every one"):
        export_suite(released, src, tmp_path / "LMU2", only=["MMMU_DEV_VAL"])
    assert not (tmp_path / "LMU2" / CONFIG_NAME).exists()
    with pytest.raises(InputError, match="not benchmarks of suite"):
        export_suite(released, src, lmu, only=["AI2D"])
    with pytest.raises(InputError, match="upstream TSV of BLINK not found"):
        export_suite(released, src, lmu, only=["BLINK"])


@pytest.fixture(scope="module")
def vlmeval_run(tmp_path_factory, released):
    """The released suite's MMMU and MathVista through `primebench evaluate vlmeval` (VLMEvalKit's
    run.py, in a subprocess as a user runs it) with the fake model; MathVista without a judge."""
    if not _vlmeval_available():
        pytest.skip("VLMEvalKit not installed")
    tmp = tmp_path_factory.mktemp("vlmeval_run")
    src, lmu, work = tmp / "upstream", tmp / "LMUData", tmp / "outputs"
    src.mkdir()
    S.mmmu_tsv(src / "MMMU_DEV_VAL.tsv", _ids(released, "MMMU_DEV_VAL"))
    S.mathvista_tsv(src / "MathVista_MINI.tsv", _ids(released, "MathVista_MINI"))
    assert (
        main(
            [
                "tasks",
                "vlmeval",
                "--suite",
                "primebench",
                "--source-tsv",
                str(src),
                "--lmudata",
                str(lmu),
                "--only",
                "MMMU_DEV_VAL, MathVista_MINI",
            ]
        )
        == 0
    )
    env = {
        **os.environ,
        "LMUData": str(lmu),
        "PRIMEBENCH_FAKE_VLM": "1",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    cmd = [
        sys.executable,
        "-m",
        "primebench_tasks.cli",
        "evaluate",
        "vlmeval",
        "--import",
        "tests.fixtures.vlmeval_standins",
        "--",
        "--data",
        "PrimeBench_MMMU_DEV_VAL",
        "PrimeBench_MathVista_MINI",
        "--model",
        "FakeVLM",
        "--judge",
        "exact_matching",
        "--work-dir",
        str(work),
        "--api-nproc",
        "1",
    ]
    proc = subprocess.run(cmd, env=env, cwd=tmp, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return {"lmu": lmu, "work": work, "log": proc.stdout + proc.stderr}


def _load(path):
    from vlmeval.smp import load

    return load(str(path))


@needs_vlmeval
def test_run_py_scores_exactly_the_suite_items_as_vlmeval_does(vlmeval_run, released):
    from harness_adapters.harnesses.vlmeval import read_work_dir

    records, docs = read_work_dir(vlmeval_run["work"])
    by = {d["benchmark"]: d for d in docs}
    assert set(by) == {"MMMU_DEV_VAL", "MathVista_MINI"}
    for bench, d in by.items():
        got = records[records.benchmark == bench]
        assert sorted(got.item_id) == sorted(_ids(released, bench))  # exactly the suite's items
        assert d["suite"] == released["version"] and d["model"] == "FakeVLM"
        table = _load(Path(d["table"]))
        imap = d["index_to_item"]
        if d["score_rule"] == "hit":  # MMMU: VLMEvalKit's own per-row hit
            assert d["upstream_class"] == "MMMUDataset"
            want = {
                imap[str(i)]: float(h) for i, h in zip(table["index"], table["hit"], strict=True)
            }
        else:  # MathVista: the rows' verdicts are what MathVista_acc counts
            from vlmeval.dataset.utils.mathvista import post_check

            assert d["upstream_class"] == "MathVista" and d["judge"] == "exact_matching"
            want = {
                imap[str(i)]: float(bool(post_check(table.iloc[k], prefetch=False)))
                for k, i in enumerate(table["index"])
            }
            assert d["judge_needed"] > 0  # the verbose answers a judge would have read
        assert dict(zip(got.item_id, got.score, strict=True)) == want
        assert 0 < got.score.mean() < 1
    # VLMEvalKit's own summary agrees with the mean of the ingested rows
    work = Path(by["MMMU_DEV_VAL"]["table"]).parent
    acc = _load(next(work.glob("FakeVLM_PrimeBench_MMMU_DEV_VAL_acc.csv")))
    mmmu = records[records.benchmark == "MMMU_DEV_VAL"].score.mean()
    assert float(acc["Overall"].iloc[0]) == pytest.approx(mmmu)
    score = _load(next(work.glob("FakeVLM_PrimeBench_MathVista_MINI_exact_matching_score.csv")))
    overall = score[score["Task&Skill"] == "Overall"]["acc"].iloc[0]
    mv = records[records.benchmark == "MathVista_MINI"].score.mean()
    assert float(overall) == pytest.approx(100 * mv)


@needs_vlmeval
def test_mmmu_images_interleave_as_upstream(vlmeval_run):
    """The registered dataset is VLMEvalKit's MMMUDataset restricted to the suite: two-image
    questions come out as text, image, text, image, text."""
    from harness_adapters.harnesses.vlmeval.datasets import register

    os.environ["LMUData"] = str(vlmeval_run["lmu"])
    from vlmeval.dataset import MMMUDataset, build_dataset

    classes = register(vlmeval_run["lmu"])
    ds = build_dataset("PrimeBench_MMMU_DEV_VAL")
    assert isinstance(ds, MMMUDataset) and type(ds) is classes["PrimeBench_MMMU_DEV_VAL"]
    two = next(i for i in range(len(ds)) if "<image 2>" in ds.data.iloc[i]["question"])
    kinds = [m["type"] for m in ds.build_prompt(ds.data.iloc[two])]
    assert kinds == ["text", "image", "text", "image", "text"]


@needs_vlmeval
def test_place_vlmeval_reports_and_ingest_appends(vlmeval_run, tmp_path, capsys):
    out = tmp_path / "report"
    assert (
        main(
            [
                "place",
                "--vlmeval",
                str(vlmeval_run["work"]),
                "--out",
                str(out),
                "--allow-partial",
                "--n-boot",
                "200",
            ]
        )
        == 0
    )
    doc = json.loads((out / "report.json").read_text())
    # provenance on stdout and in report.md: where each benchmark was placed, how new (#55)
    shown = capsys.readouterr().out
    line = "MMMU_DEV_VAL: placed among 185 models of panel `mmmu_merged`"
    assert line in shown and line in (out / "report.md").read_text()
    assert "newest released 2025-02" in shown
    r = doc["models"]["FakeVLM"]["benchmarks"]
    assert r["MMMU_DEV_VAL"]["n_scored"] == r["MMMU_DEV_VAL"]["n_items"] > 0
    assert r["MathVista_MINI"]["predicted_rank"]["value"] >= 1
    # the run's answers are read from VLMEvalKit's prediction files (the response check)
    profile = r["MMMU_DEV_VAL"]["responses"]["profile"]
    assert profile["n"] == r["MMMU_DEV_VAL"]["n_scored"] and profile["empty"] is not None
    assert set(doc["missing"]["FakeVLM"]) == {
        "BLINK",
        "MATH-Vision_MINI",
        "AI2D_TEST",
        "OCRBench",
        "RealWorldQA",
    }
    with pytest.raises(InputError, match="has no result for"):
        from harness_adapters.harnesses.vlmeval import read_work_dir
        from harness_adapters.run.report import write_placement

        recs, docs = read_work_dir(vlmeval_run["work"])
        write_placement(recs, docs[0]["suite"], tmp_path / "r2")


@needs_vlmeval
def test_ai2d_in_process_with_vlmeval_inference_loop_and_panel_ingest(
    tmp_path, aj_suite, monkeypatch
):
    """AI2D (ImageMCQDataset) of a suite built from the AutoJudger panel: build_dataset,
    VLMEvalKit's infer_data_job and evaluate in this process; ingest into a panel copy."""
    src, lmu, work = tmp_path / "src", tmp_path / "LMU", tmp_path / "work" / "FakeVLM"
    src.mkdir()
    ids = _ids(aj_suite, "AI2D_TEST")
    S.ai2d_tsv(src / "AI2D_TEST.tsv", ids)
    export_suite(aj_suite, src, lmu, only=["AI2D_TEST"])
    monkeypatch.setenv("LMUData", str(lmu))
    from vlmeval.dataset import ImageMCQDataset, build_dataset
    from vlmeval.inference import infer_data_job

    from harness_adapters.harnesses.vlmeval.datasets import register

    register()
    ds = build_dataset("PrimeBench_AI2D_TEST")
    assert isinstance(ds, ImageMCQDataset) and len(ds) == len(ids)
    work.mkdir(parents=True)
    model = S._fake_vlm_class()()
    infer_data_job(model, str(work), "FakeVLM", ds, api_nproc=1)
    pred = work / "FakeVLM_PrimeBench_AI2D_TEST.xlsx"
    ds.evaluate(str(pred), model="exact_matching", nproc=1)
    result = _load(work / "FakeVLM_PrimeBench_AI2D_TEST_exact_matching_result.xlsx")
    panel_dir = tmp_path / "panel"
    shutil.copytree(default_path("autojudger"), panel_dir)
    assert main(["ingest", "vlmeval", str(tmp_path / "work"), "--panel", str(panel_dir)]) == 0
    q = Panel.load(panel_dir)
    row = q.matrix("AI2D_TEST")[q.model_names.index("FakeVLM")]
    pos = {str(i): k for k, i in enumerate(q.item_ids("AI2D_TEST"))}
    want = dict(zip(result["index"].astype(str), result["hit"].astype(float), strict=True))
    assert {i: row[pos[i]] for i in want} == want
    assert int(np.isfinite(row).sum()) == len(ids)
    assert main(["ingest", "vlmeval", str(tmp_path / "work"), "--panel", str(panel_dir)]) == 0
    assert Panel.load(panel_dir).content_hash == q.content_hash  # idempotent


@needs_vlmeval
def test_vlmeval_contracts_used_are_the_pinned_ones():
    """Fails when the installed VLMEvalKit changes what the adapter relies on."""
    import inspect

    import vlmeval.dataset as D
    from vlmeval.dataset.image_base import ImageBaseDataset
    from vlmeval.dataset.utils import mathvista
    from vlmeval.inference import infer_data_job
    from vlmeval.smp import get_intermediate_file_path

    from harness_adapters.harnesses.vlmeval.registration import upstream_class

    assert upstream_class(D, "MMMU_DEV_VAL") is D.MMMUDataset
    assert upstream_class(D, "MathVista_MINI").__name__ == "MathVista"
    assert upstream_class(D, "AI2D_TEST") is D.ImageMCQDataset
    assert upstream_class(D, "BLINK") is D.ImageMCQDataset
    assert list(inspect.signature(ImageBaseDataset.__init__).parameters) == [
        "self",
        "dataset",
        "skip_noimg",
    ]
    assert list(inspect.signature(mathvista.post_check).parameters) == ["line", "prefetch"]
    assert "dataset" in inspect.signature(infer_data_job).parameters
    assert (
        get_intermediate_file_path("a/M_D.xlsx", "_exact_matching_result")
        == "a/M_D_exact_matching_result.xlsx"
    )
    src = Path(D.__file__).resolve().parents[2]
    assert (src / "run.py").exists()
    assert isinstance(D.DATASET_CLASSES, list) and isinstance(D.SUPPORTED_DATASETS, list)


@needs_vlmeval
def test_prism_axis_built_offline_runs_in_vlmeval_and_lands_in_run_records(
    tmp_path, monkeypatch, mathvision
):
    """The `if` axis of a PRISM build made offline (no generator) as a VLMEvalKit dataset:
    VLMEvalKit's prompt and inference loop, the project's rule grader, records as the lmms-eval
    path writes them."""
    from vlmeval.inference import infer_data_job
    from vlmeval.vlm.base import BaseModel

    from harness_adapters.harnesses.vlmeval.datasets import register
    from harness_adapters.prism.build import build, read_build
    from harness_adapters.prism.run import axis_text, records_file
    from harness_adapters.prism.single_turn import rule_score
    from tests.harness.conftest import small_suite

    build(mathvision, tmp_path / "build", None, small_suite(mathvision, 6))
    lmu, work = tmp_path / "LMU", tmp_path / "work" / "Echo"
    assert (
        main(
            [
                "prism",
                "tasks",
                "vlmeval",
                "--prism",
                str(tmp_path / "build"),
                "--lmudata",
                str(lmu),
                "--axes",
                "if",
            ]
        )
        == 0
    )
    monkeypatch.setenv("LMUData", str(lmu))
    from vlmeval.dataset import build_dataset

    assert set(register()) == {"PrimeBench_PRISM_if"}
    ds = build_dataset("PrimeBench_PRISM_if")
    index, store = read_build(tmp_path / "build")
    first = index["items"][0]
    art = store.load("if", first["benchmark"], first["item_id"])
    msgs = ds.build_prompt(ds.data.iloc[0])
    assert [m["type"] for m in msgs] == ["image", "text"]
    assert msgs[1]["value"] == axis_text("if", first["doc"], art["payload"])  # the runner's text

    class Echo(BaseModel):
        def generate_inner(self, message, dataset=None):
            n = len(message[-1]["value"])
            return "ANSWER: A" if n % 2 else "the answer is b, I think."

    work.mkdir(parents=True)
    infer_data_job(Echo(), str(work), "Echo", ds, api_nproc=1)
    summary = ds.evaluate(str(work / "Echo_PrimeBench_PRISM_if.xlsx"))
    result = _load(work / "Echo_PrimeBench_PRISM_if_primebench_result.xlsx")
    grades = dict(zip(ds.data["key"], ds.data["grade"], strict=True))
    assert [
        rule_score("if", json.loads(grades[k]), p)
        for k, p in zip(result["key"], result["prediction"], strict=True)
    ] == list(result["score"])
    assert float(summary["score"].iloc[0]) == pytest.approx(result["score"].mean())
    assert (
        main(
            [
                "prism",
                "ingest",
                "vlmeval",
                str(tmp_path / "work"),
                "--prism",
                str(tmp_path / "build"),
                "--out",
                str(tmp_path / "run"),
                "--model",
                "Echo",
            ]
        )
        == 0
    )
    recs = records_file(tmp_path / "run").read()
    assert len(recs) == len(ds) == 6 and {r["axis"] for r in recs} == {"if"}
    assert {f"{r['benchmark']}/{r['item_id']}": r["responses"][0] for r in recs} == dict(
        zip(result["key"], result["prediction"].astype(str), strict=True)
    )
    assert (
        main(
            [
                "prism",
                "ingest",
                "vlmeval",
                str(tmp_path / "work"),
                "--prism",
                str(tmp_path / "build"),
                "--out",
                str(tmp_path / "run"),
                "--model",
                "Echo",
            ]
        )
        == 0
    )
    assert len(records_file(tmp_path / "run").read()) == 6  # idempotent


@needs_vlmeval
def test_registration_leaves_the_callers_grad_mode():
    """`import vlmeval` alone turns torch gradients off process-wide; the adapter's import does
    not (a training loop may register datasets)."""
    code = (
        "import torch; from harness_adapters.harnesses.vlmeval.registration import import_vlmeval; "
        "import_vlmeval(); import vlmeval; assert torch.is_grad_enabled(), 'grad off'"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert r.returncode == 0, r.stderr[-2000:]


def test_export_refuses_two_benchmarks_with_one_dataset_name(tmp_path):
    """`a/b` and `a_b` both became PrimeBench_a_b: rc 0, one TSV with half the items."""
    from tests.fixtures.manifests import small_manifest

    manifest = small_manifest({"Text Recognition": {"a/b": ["1", "2"], "a_b": ["1", "2"]}})
    with pytest.raises(InputError, match="would both be exported as VLMEvalKit dataset"):
        export_suite(manifest, tmp_path, tmp_path / "LMU")
    assert not (tmp_path / "LMU").exists()


def test_vlmeval_keeps_the_harness_protocol(vlmeval_run, tmp_path):
    """check_harness over VLMEvalKit's plug, on a real work dir."""
    from primebench_tasks.cli.conformance import check_harness
    from primebench_tasks.suite.harness import harnesses

    run = check_harness(harnesses()["vlmeval"], vlmeval_run["work"], tmp_path)
    assert len(run.records) > 0
