"""The adaptive test inside VLMEvalKit: each round exported as VLMEvalKit datasets of the round's
items, run by VLMEvalKit's own inference and evaluation (``infer_data_job``, the upstream class's
``evaluate``) with one model instance, the records and report those of ``run --adaptive``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.fixtures import vlmeval_standins as S
from tests.harness.test_vlmeval import needs_vlmeval

pytestmark = [pytest.mark.slow, needs_vlmeval]  # end to end through a real harness (CI)

BENCH = "RealWorldQA"


@pytest.fixture(autouse=True)
def _keep_grad_mode():
    """VLMEvalKit's import turns gradients off process-wide; give every later test its mode."""
    import torch

    prev = torch.is_grad_enabled()
    yield
    torch.set_grad_enabled(prev)


@pytest.fixture
def realworldqa(tmp_path, monkeypatch):
    """The released VLMEvalKit suite restricted to RealWorldQA, its reference panel, an upstream
    TSV stand-in of every item of its pool, and VLMEvalKit's fake model built once, answering
    from that pool (right for about half the items)."""
    from harness_adapters.harnesses.vlmeval.export import export_suite
    from harness_adapters.suites.released import resolve_suite
    from primebench_tasks.pipeline.multi_source import source_panels

    full = resolve_suite("primebench_vlmeval")
    suite = full.restricted({BENCH: full.entry(BENCH).item_ids}, name="vlmeval_rwqa")
    panel = source_panels(full)[BENCH]
    pool = [str(i) for i in panel.item_ids(BENCH)]
    src = tmp_path / "upstream"
    src.mkdir()
    S.for_benchmark(BENCH)(src / f"{full.entry(BENCH).vlmeval_dataset}.tsv", pool)
    key = tmp_path / "key"  # the fake model's answer key: the whole pool, exported
    export_suite(suite.asking({BENCH: pool}), src, key)
    monkeypatch.setenv("LMUData", str(key))
    model = S._fake_vlm_class()()
    rows = pd.read_csv(next(key.glob("*.tsv")), sep="\t", dtype=str, keep_default_na=False)
    right = {str(r["index"]): S.fake_answer(dict(r)) == r["answer"] for _, r in rows.iterrows()}
    return suite, panel, pool, src, model, right


def test_adaptive_rounds_run_through_vlmevalkit_and_resume(realworldqa, tmp_path, monkeypatch):
    from harness_adapters.harnesses.vlmeval.adaptive import run_adaptive_vlmeval
    from harness_adapters.run.records import RecordFile
    from primebench_tasks.adaptive.result import AdaptiveSettings
    from primebench_tasks.cli import main

    suite, panel, pool, src, model, right = realworldqa
    out = tmp_path / "run"
    settings = AdaptiveSettings(target_width=None, max_items=10, round_size=5)
    reads: list[str] = []  # the upstream TSV read from src, by anyone
    read_csv = pd.read_csv

    def counted(path, *args, **kwargs):
        if Path(str(path)).parent == src:
            reads.append(Path(path).name)
        return read_csv(path, *args, **kwargs)

    monkeypatch.setattr(pd, "read_csv", counted)
    # two rounds in Python with a model instance, then "killed": resumed by the CLI below
    run_adaptive_vlmeval("FakeVLM", suite, {BENCH: panel}, src, out, settings, instance=model)
    assert reads == ["RealWorldQA.tsv"]  # read once for the pools and both rounds' exports
    suite_file = tmp_path / "suite.json"
    suite_file.write_text(suite.to_json())
    # --import runs the fixture module afresh, which registers FakeVLM with VLMEvalKit
    monkeypatch.setenv("PRIMEBENCH_FAKE_VLM", "1")
    monkeypatch.delitem(sys.modules, "tests.fixtures.vlmeval_standins")
    cmd = ["adaptive", "vlmeval", "--model", "FakeVLM", "--suite", str(suite_file)]
    cmd += ["--source-tsv", str(src), "--out", str(out), "--max-items", "15"]
    cmd += ["--round-size", "5", "--target-width", "0"]
    cmd += ["--import", "tests.fixtures.vlmeval_standins"]
    assert main(cmd) == 0
    doc = json.loads((out / "adaptive.json").read_text())
    recs = RecordFile(out / "records.jsonl").read()
    asked = [r["item_id"] for r in recs]
    assert len(asked) == len(set(asked)) == 15 and set(asked) <= set(pool)
    assert set(asked) - set(suite.entry(BENCH).item_ids), "the pool, not only the suite"
    # every item scored by VLMEvalKit's own evaluation, as the fake model answered it
    assert {r["item_id"]: r["score"] for r in recs} == {i: float(right[i]) for i in asked}
    assert all(r["status"] == "ok" and r["response"] in set("ABCD") for r in recs)
    assert sorted(p.name for p in (out / "rounds").iterdir()) == ["r001", "r002", "r003"]
    e = doc["models"]["FakeVLM"]["benchmarks"][BENCH]
    assert e["items"] == 15 and e["pool"] == len(pool)
    assert e["predicted_full"]["lo"] <= e["predicted_full"]["value"] <= e["predicted_full"]["hi"]
    spec = json.loads((out / "run_spec.json").read_text())
    assert spec["model_path"] == "vlmeval:FakeVLM" and BENCH in spec["adaptive"]["documents"]


def test_a_pool_item_missing_from_the_tsv_is_refused_before_the_model(realworldqa, tmp_path):
    from harness_adapters.harnesses.vlmeval.adaptive import run_adaptive_vlmeval
    from primebench_tasks.adaptive.result import AdaptiveSettings
    from primebench_tasks.errors import InputError

    suite, panel, pool, src, _model, _ = realworldqa
    tsv = next(src.glob("*.tsv"))
    df = pd.read_csv(tsv, sep="\t", dtype=str, keep_default_na=False)
    df[df["index"] != pool[-1]].to_csv(tsv, sep="\t", index=False)
    with pytest.raises(InputError, match="1 missing"):
        run_adaptive_vlmeval(
            "NoSuchModel", suite, {BENCH: panel}, src, tmp_path / "run", AdaptiveSettings()
        )
    assert not (tmp_path / "run").exists()
