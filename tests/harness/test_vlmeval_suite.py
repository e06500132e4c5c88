"""The released VLMEvalKit suite ``primebench_vlmeval`` (AI2D, MMMU, BLINK, OCRBench, RealWorldQA,
keyed by VLMEvalKit's ``index``) through VLMEvalKit's real ``run.py``: export from upstream-schema
TSV stand-ins, every item scored by VLMEvalKit's own evaluation (OCRBench: its rule per row, the
sum equal to its own total), then ``primebench place --vlmeval`` with a suite-level rank among the
reference models that have all five benchmarks."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from primebench_tasks.cli import main
from primebench_tasks.pipeline.manifest import manifest_items
from tests.fixtures import vlmeval_standins as S
from tests.harness.test_vlmeval import ROOT, needs_vlmeval

pytestmark = pytest.mark.slow  # end to end through a real harness: the full run (CI)

BENCHMARKS = ("AI2D_TEST", "MMMU_DEV_VAL", "BLINK", "OCRBench", "RealWorldQA")


@pytest.fixture(autouse=True)
def _keep_grad_mode():
    """VLMEvalKit's import turns gradients off process-wide; give every later test its mode."""
    import torch

    prev = torch.is_grad_enabled()
    yield
    torch.set_grad_enabled(prev)


@pytest.fixture(scope="module")
def suite():
    from harness_adapters.suites.released import resolve_suite

    return resolve_suite("primebench_vlmeval")


def _ids(manifest, bench):
    return next(by_b[bench] for by_b in manifest_items(manifest).values() if bench in by_b)


def test_the_suite_spans_five_benchmarks_keyed_by_vlmevalkit_index(suite):
    from primebench_tasks.pipeline.multi_source import source_panels

    assert set(BENCHMARKS) == {b for by_b in manifest_items(suite).values() for b in by_b}
    panels = source_panels(suite)
    assert {b: p.name for b, p in panels.items()} == {
        "AI2D_TEST": "autojudger",
        "MMMU_DEV_VAL": "autojudger",
        "BLINK": "openvlm_blink",
        "OCRBench": "openvlm_ocrbench",
        "RealWorldQA": "openvlm_realworldqa",
    }
    for c in suite["categories"].values():
        for b, e in c["benchmarks"].items():
            assert e["vlmeval_dataset"] == b and e["vlmeval"]["key"] == "index"
    # the models of all five (VLMEvalKit ids on every side): the suite-level reference
    common = set.intersection(*(set(e["source"]["models"]) for e in _entries(suite)))
    assert len(common) == 66 and "InternVL2-8B" in common


def _entries(suite):
    return [e for c in suite["categories"].values() for e in c["benchmarks"].values()]


def _run_in_vlmeval(
    tmp: Path,
    suite: dict,
    name: str,
    writers: dict | None = None,
    only: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> Path:
    """Export ``suite`` (``only`` those benchmarks) from upstream-schema stand-ins (the card's,
    or ``writers[benchmark]``; a design-only benchmark's from ``tests.fixtures.design_standins``,
    150 rows) and run it with VLMEvalKit's run.py and the fake model (``env`` added to its
    environment); returns the work dir."""
    from tests.fixtures import design_standins

    src, lmu, work = tmp / "upstream", tmp / "LMUData", tmp / "outputs"
    src.mkdir()
    benches = [b for by_b in manifest_items(suite).values() for b in by_b if not only or b in only]
    for e in suite.design_only if hasattr(suite, "design_only") else ():
        if not only or e.name in only:
            kind = design_standins.KINDS[e.name]
            rows = design_standins.ROWS[kind](150)
            design_standins.vlmeval_tsv(kind, rows, src / f"{e.vlmeval_dataset}.tsv", seed=3)
    dataset = {
        b: e["vlmeval_dataset"]
        for c in suite["categories"].values()
        for b, e in c["benchmarks"].items()
    }
    for b in benches:
        write = (writers or {}).get(b) or S.for_benchmark(b)  # the card's stand-in
        write(src / f"{dataset[b]}.tsv", _ids(suite, b))
    export = ["tasks", "vlmeval", "--suite", name, *(["--only", ",".join(only)] if only else [])]
    assert main([*export, "--source-tsv", str(src), "--lmudata", str(lmu)]) == 0
    env = {
        **os.environ,
        **(env or {}),
        "LMUData": str(lmu),
        "PRIMEBENCH_FAKE_VLM": "1",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    cmd = [sys.executable, "-m", "primebench_tasks.cli", "evaluate", "vlmeval"]
    cmd += ["--import", "tests.fixtures.vlmeval_standins", "--", "--data"]
    cmd += [f"PrimeBench_{b}" for b in benches]
    cmd += [
        f"PrimeBench_{e.name}"
        for e in getattr(suite, "design_only", ())
        if not only or e.name in only
    ]
    cmd += ["--model", "FakeVLM", "--judge", "exact_matching", "--work-dir", str(work)]
    cmd += ["--api-nproc", "1"]
    proc = subprocess.run(cmd, env=env, cwd=tmp, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return work


@pytest.fixture(scope="module")
def vlmeval_suite_run(tmp_path_factory, suite):
    tmp = tmp_path_factory.mktemp("vlmeval_suite")
    return {"work": _run_in_vlmeval(tmp, suite, "primebench_vlmeval"), "tmp": tmp}


@needs_vlmeval
def test_every_item_is_scored_as_vlmevalkit_scores_it(vlmeval_suite_run, suite):
    from vlmeval.smp import load

    from harness_adapters.harnesses.vlmeval import read_work_dir

    records, docs = read_work_dir(vlmeval_suite_run["work"])
    by = {d["benchmark"]: d for d in docs}
    assert set(by) == set(BENCHMARKS)
    for b, d in by.items():
        got = records[records.benchmark == b]
        assert sorted(got.item_id) == sorted(_ids(suite, b)), b  # exactly the suite's items
        assert 0 < got.score.mean() < 1, b
        if b == "OCRBench":
            assert d["upstream_class"] == "OCRBench" and d["score_rule"] == "ocrbench"
            work = Path(d["table"]).parent
            totals = load(str(next(work.glob("FakeVLM_PrimeBench_OCRBench_score.json"))))
            assert totals["Final Score"] == got.score.sum()  # VLMEvalKit's own total
        else:
            assert d["score_rule"] == "hit", b  # VLMEvalKit's per-row multiple-choice result
    assert by["RealWorldQA"]["upstream_class"] == "ImageMCQDataset"


@needs_vlmeval
def test_place_gives_a_suite_rank_among_the_models_with_all_five(vlmeval_suite_run, tmp_path):
    out = tmp_path / "report"
    place = ["place", "--vlmeval", str(vlmeval_suite_run["work"]), "--out", str(out)]
    assert main([*place, "--n-boot", "200"]) == 0
    doc = json.loads((out / "report.json").read_text())
    r = doc["models"]["FakeVLM"]
    assert set(r["benchmarks"]) == set(BENCHMARKS)
    assert r["benchmarks"]["BLINK"]["n_reference"] == 86
    assert r["benchmarks"]["OCRBench"]["n_reference"] == 188
    rank = r["suite"]["predicted_rank"]
    assert rank is not None and rank["out_of"] == 67  # 66 reference models + this one
    assert rank["lo"] <= rank["value"] <= rank["hi"]
    assert "no_rank_because" not in r["suite"]
    # where it would have stood on the OpenVLM leaderboard (AI2D, MMMU, OCRBench are on it)
    assert {b for b, e in r["benchmarks"].items() if "leaderboard" in e} == {
        "AI2D_TEST",
        "MMMU_DEV_VAL",
        "OCRBench",
    }
    md = (out / "report.md").read_text()
    assert "**leaderboard** `openvlm` (VLMEvalKit's figures; newest model released 2025-09-17" in md
    assert "- MMMU_DEV_VAL (`MMMU_VAL`, 284 models): rank" in md and "among its year's" in md


@needs_vlmeval
def test_the_resampled_suite_runs_in_vlmevalkit_and_places(tmp_path):
    """The released ResampledBench suite (300 items of BLINK, OCRBench and RealWorldQA chosen
    by farthest-point sampling over their text embeddings) through VLMEvalKit's run.py: every
    item scored, each benchmark placed among its own models, the suite among the 76 with all
    three."""
    from harness_adapters.harnesses.vlmeval import read_work_dir
    from harness_adapters.suites.released import resolve_suite

    suite = resolve_suite("primebench_resampled")
    assert suite["n_items"] == 300 and suite["params"]["selector"] == "fps"
    work = _run_in_vlmeval(tmp_path, suite, "primebench_resampled")
    records, _docs = read_work_dir(work)
    for b in ("BLINK", "OCRBench", "RealWorldQA"):
        assert sorted(records[records.benchmark == b].item_id) == sorted(_ids(suite, b))
    out = tmp_path / "report"
    assert main(["place", "--vlmeval", str(work), "--out", str(out), "--n-boot", "100"]) == 0
    r = json.loads((out / "report.json").read_text())["models"]["FakeVLM"]
    assert {b: e["n_reference"] for b, e in r["benchmarks"].items()} == {
        "BLINK": 86,
        "OCRBench": 188,
        "RealWorldQA": 172,
    }
    assert r["suite"]["predicted_rank"]["out_of"] == 77


@needs_vlmeval
def test_the_wide_suite_runs_all_twelve_benchmarks_in_vlmevalkit_and_places(tmp_path):
    """The released wide suite through VLMEvalKit's run.py, all twelve benchmarks, no judge: the
    flagship's seven, every item scored — MATH-Vision by VLMEvalKit's own MathVision evaluation on
    its rule-based path (its post_check per row; the answers only a judge could read counted),
    its summary equal to the ingested rows' mean — and the five design-only ones drawn from their
    TSVs (#81), then placed: each listed benchmark among its source panel, the suite ranked on
    imputed reference scores, each design-only benchmark by its design on all its 100 items."""
    from vlmeval.dataset.utils.mathv import post_check
    from vlmeval.smp import load

    from harness_adapters.harnesses.vlmeval import read_work_dir
    from harness_adapters.suites.released import resolve_suite

    flagship = resolve_suite("primebench_wide")
    # the flagship's MMMU is keyed by MMMU's own ids (the merged panel), not VLMEvalKit's index;
    # its OCRBench and RealWorldQA rows are checked against the records' text: the records' rows
    writers = {
        "MMMU_DEV_VAL": S.mmmu_tsv,
        "OCRBench": lambda p, ids: S.records_tsv(p, ids, "openvlm_ocrbench_text", "OCRBench"),
        "RealWorldQA": lambda p, ids: S.records_tsv(
            p, ids, "openvlm_realworldqa_text", "RealWorldQA"
        ),
    }
    work = _run_in_vlmeval(tmp_path, flagship, "primebench_wide", writers)
    records, docs = read_work_dir(work)
    by = {d["benchmark"]: d for d in docs}
    benches = {b for by_b in manifest_items(flagship).values() for b in by_b}
    drawn = {e.name for e in flagship.design_only}
    assert set(by) == benches | drawn and len(benches) == 7 and len(drawn) == 5
    for b in benches:
        assert sorted(records[records.benchmark == b].item_id) == sorted(_ids(flagship, b))
    mv = by["MATH-Vision_MINI"]
    assert mv["upstream_class"] == "MathVision" and mv["score_rule"] == "mathvision_post_check"
    assert mv["judge"] == "exact_matching" and mv["judge_needed"] > 0
    table = load(str(Path(mv["table"])))
    want = {
        mv["index_to_item"][str(i)]: float(bool(post_check(table.iloc[k], prefetch=False)))
        for k, i in enumerate(table["index"])
    }
    got = records[records.benchmark == "MATH-Vision_MINI"]
    assert dict(zip(got.item_id, got.score, strict=True)) == want
    assert 0 < got.score.mean() < 1
    summary = load(str(next(Path(mv["table"]).parent.glob("*MATH-Vision_MINI*_score.csv"))))
    overall = summary[summary["Subject"] == "Overall"]["acc"].iloc[0]
    assert float(overall) == pytest.approx(100 * got.score.mean())
    out = tmp_path / "report"
    assert main(["place", "--vlmeval", str(work), "--out", str(out), "--n-boot", "100"]) == 0
    r = json.loads((out / "report.json").read_text())["models"]["FakeVLM"]
    assert all(e["n_scored"] == e["n_items"] > 0 for e in r["benchmarks"].values())
    assert r["benchmarks"]["MATH-Vision_MINI"]["n_reference"] == 16
    basis = r["suite"]["rank_basis"]
    assert set(basis["left_out"]) == {"MathVista_MINI", "MATH-Vision_MINI"}
    assert len(basis["benchmarks"]) == 5 and basis["not_scored"] == []
    assert r["suite"]["predicted_rank"]["out_of"] == basis["n_reference"] + 1
    assert "MATH-Vision_MINI: placed among 16 models" in (out / "report.md").read_text()
    assert sorted(r["design_only"]) == sorted(drawn)
    assert all(e["n_scored"] == 100 for e in r["design_only"].values())
