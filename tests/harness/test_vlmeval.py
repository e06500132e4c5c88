"""VLMEvalKit adapter data contracts (VLMEvalKit itself cannot be installed here: its runtime
registration is tested against a stand-in ``vlmeval.dataset`` module with the same attributes)."""

import json
import sys
import types

import numpy as np
import pandas as pd
import pytest

from harness_adapters.vlmeval import export_suite, read_results, register
from primebench_tasks.cli import main
from primebench_tasks.data.defaults import default_path
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError
from primebench_tasks.pipeline.primebench import run_pipeline


@pytest.fixture(scope="module")
def suite():
    p = Panel.load_default("autojudger")
    return run_pipeline(p).manifest(p)


def _upstream_tsv(path, ids):
    n = len(ids)
    df = pd.DataFrame({"index": list(ids), "image": ["aGVsbG8="] * n,
                       "question": [f"q{i}" for i in range(n)], "A": "x", "B": "y",
                       "answer": "A", "category": "c"})
    df.to_csv(path, sep="\t", index=False)


def test_export_keeps_exactly_the_suite_rows(tmp_path, suite):
    src = tmp_path / "src"
    src.mkdir()
    p = Panel.load_default("autojudger")
    _upstream_tsv(src / "AI2D_TEST.tsv", p.item_ids("AI2D_TEST"))
    _upstream_tsv(src / "MMMU_DEV_VAL.tsv", p.item_ids("MMMU_DEV_VAL"))
    assert main(["vlmeval", "export", "--manifest", _write(tmp_path, suite), "--source-tsv",
                 str(src), "--lmudata", str(tmp_path / "LMU")]) == 0
    got = pd.read_csv(tmp_path / "LMU" / "PrimeBench_AI2D_TEST.tsv", sep="\t", dtype=str)
    want = suite["categories"]["Science Knowledge"]["benchmarks"]["AI2D_TEST"]["item_ids"]
    assert sorted(got["index"], key=int) == sorted(want, key=int)
    assert list(got.columns) == ["index", "image", "question", "A", "B", "answer", "category"]
    cfg = json.loads((tmp_path / "LMU" / "primebench_vlmeval_config.json").read_text())
    assert cfg["data"]["PrimeBench_MMMU_DEV_VAL"]["class"] == "PrimeBenchDataset"


def _write(tmp_path, manifest):
    from primebench_tasks.pipeline.manifest import write_manifest

    write_manifest(manifest, tmp_path / "m.json")
    return str(tmp_path / "m.json")


def test_export_refuses_missing_items(tmp_path, suite):
    src = tmp_path / "src"
    src.mkdir()
    p = Panel.load_default("autojudger")
    _upstream_tsv(src / "AI2D_TEST.tsv", p.item_ids("AI2D_TEST")[:100])
    _upstream_tsv(src / "MMMU_DEV_VAL.tsv", p.item_ids("MMMU_DEV_VAL"))
    with pytest.raises(InputError, match=r"manifest item\(s\) are not in the TSV"):
        export_suite(suite, src, tmp_path / "LMU")
    assert not (tmp_path / "LMU" / "PrimeBench_AI2D_TEST.tsv").exists()


def test_ingest_xlsx_tsv_json_results(tmp_path):
    panel_dir = tmp_path / "panel"
    import shutil

    shutil.copytree(default_path("autojudger"), panel_dir)
    p = Panel.load(panel_dir)
    ids = p.item_ids("AI2D_TEST")[:5]
    hits = [1, 0, 1, 1, 0]
    work = tmp_path / "work" / "NewVLM" / "T1"
    work.mkdir(parents=True)
    pd.DataFrame({"index": ids, "prediction": "A", "hit": hits}).to_excel(
        work / "NewVLM_PrimeBench_AI2D_TEST_exact_matching_result.xlsx", index=False)
    mmmu = p.item_ids("MMMU_DEV_VAL")[:3]
    pd.DataFrame({"index": mmmu, "eval_score": [1.0, 0.5, 0.0]}).to_csv(
        work / "NewVLM_PrimeBench_MMMU_DEV_VAL_exact_matching_results.tsv", sep="\t",
        index=False)
    assert main(["ingest", "vlmeval", str(tmp_path / "work"), "--panel", str(panel_dir)]) == 0
    q = Panel.load(panel_dir)
    row = q.matrix("AI2D_TEST")[q.model_names.index("NewVLM")]
    assert row[:5].tolist() == hits and np.isnan(row[5:]).all()
    assert q.matrix("MMMU_DEV_VAL")[q.model_names.index("NewVLM")][:3].tolist() == [1, .5, 0]
    assert main(["ingest", "vlmeval", str(tmp_path / "work"), "--panel", str(panel_dir)]) == 0
    assert Panel.load(panel_dir).content_hash == q.content_hash  # idempotent


def test_ingest_refuses_tables_without_index(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    pd.DataFrame({"idx": [1], "hit": [1]}).to_excel(
        work / "M_PrimeBench_AI2D_TEST_exact_matching_result.xlsx", index=False)
    with pytest.raises(InputError, match="field 'index'"):
        read_results(work, {"PrimeBench_AI2D_TEST": "AI2D_TEST"})
    with pytest.raises(InputError, match="no PrimeBench result files"):
        read_results(tmp_path / "nothing", {"PrimeBench_AI2D_TEST": "AI2D_TEST"})


def test_runtime_registration(monkeypatch):
    class ImageMCQDataset:
        TYPE = "MCQ"

        def __init__(self, dataset="", **kw):
            self.dataset_name = dataset

    fake = types.ModuleType("vlmeval.dataset")
    fake.ImageMCQDataset = ImageMCQDataset
    fake.DATASET_CLASSES = [ImageMCQDataset]
    fake.SUPPORTED_DATASETS = []
    pkg = types.ModuleType("vlmeval")
    pkg.dataset = fake
    monkeypatch.setitem(sys.modules, "vlmeval", pkg)
    monkeypatch.setitem(sys.modules, "vlmeval.dataset", fake)
    cls = register({"PrimeBench_AI2D_TEST": "ImageMCQDataset"})
    assert fake.PrimeBenchDataset is cls and cls in fake.DATASET_CLASSES
    assert "PrimeBench_AI2D_TEST" in fake.SUPPORTED_DATASETS
    assert cls("PrimeBench_AI2D_TEST").dataset_name == "PrimeBench_AI2D_TEST"
    with pytest.raises(ValueError, match="not a PrimeBench dataset"):
        cls("AI2D_TEST")
