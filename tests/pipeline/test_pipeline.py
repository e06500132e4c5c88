import json

import numpy as np
import pytest

from primebench_tasks import Panel
from primebench_tasks.cli import main
from primebench_tasks.data.simulate import simulate_panel
from primebench_tasks.pipeline.frontier import capability_frontier
from primebench_tasks.pipeline.manifest import read_manifest
from primebench_tasks.pipeline.primebench import PipelineParams, run_pipeline
from primebench_tasks.pipeline.resampled import avg_rank, resampled_suite
from primebench_tasks.pipeline.stage0_clean import stage0_clean


@pytest.fixture(scope="module")
def sim() -> Panel:
    return simulate_panel(scale=0.01, seed=0)


def test_build_is_byte_identical(tmp_path):
    args = ["build", "primebench", "--default", "m3irt", "--retention", "0.05"]
    assert main(args + ["--out", str(tmp_path / "a")]) == 0
    assert main(args + ["--out", str(tmp_path / "b")]) == 0
    a = (tmp_path / "a" / "manifest.json").read_bytes()
    assert a == (tmp_path / "b" / "manifest.json").read_bytes()
    m = read_manifest(tmp_path / "a" / "manifest.json")
    assert m["schema"] == "primebench.suite/1"
    assert m["fidelity"]["rho"] > 0.8
    assert (tmp_path / "a" / "report.md").exists() and (tmp_path / "a" / "spectrum.png").exists()


@pytest.mark.parametrize(
    "until, n_cats", [("stage0", 18), ("stage1", 18), ("stage2", 18), ("stage3", 5)]
)
def test_every_stage_yields_a_valid_manifest(sim, tmp_path, until, n_cats):
    res = run_pipeline(sim, PipelineParams(until=until))
    m = res.manifest(sim)
    assert len(m["categories"]) == n_cats
    ids = {
        i for c in m["categories"].values() for b in c["benchmarks"].values() for i in b["item_ids"]
    }
    assert len(ids) == m["n_items"] > 0
    assert set(ids) <= set(sim.items["item_id"])
    assert np.isfinite(res.fidelity)


def test_stage2_budgets_and_blind_cleaning(sim):
    res = run_pipeline(sim)
    s0 = res.stage0.table.set_index("benchmark")
    assert s0.loc["scienceqa", "blind_filter"] and s0.loc["scienceqa", "blind_solvable"] > 0
    assert not s0.loc["mmvet", "blind_filter"]
    t = res.stage2.table
    assert (t["kept"] == t["budget"]).all()
    assert (t["budget"] == np.maximum(np.floor(0.05 * t["pool"]), np.minimum(t["pool"], 100))).all()
    assert res.stage3 is not None and len(res.stage3.categories) == 5
    assert res.fidelity > 0.8
    assert res.energy[4] > 0.85


def test_selected_items_survived_stage0(sim):
    res = run_pipeline(sim)
    for by_b in res.selected.values():
        for b, pos in by_b.items():
            assert res.stage0.keep[b][pos].all()


def test_frontier(sim):
    s0 = stage0_clean(sim)
    fr = capability_frontier(sim, s0.keep)
    assert fr.budget == round(fr.n_in_band * fr.per_step_gain)
    assert sum(len(v) for v in fr.selected.values()) == min(fr.budget, fr.n_in_band)
    assert "Qwen generations" in set(fr.axes["axis"])
    for b, pos in fr.selected.items():
        mean = np.nanmean(sim.matrix(b)[:, pos], axis=0)
        assert ((mean >= 0.10) & (mean <= 0.50)).all()


def test_resampled(sim):
    r = resampled_suite(sim, n=100, space="text")
    assert r.n == 100
    assert r.rho > 0.5
    ar = avg_rank(sim)
    assert ar.min() >= 1 and ar.max() <= len(sim.model_names)


def test_main_job_prints_stage_table_and_fidelity(tmp_path, capsys):
    assert main(["build", "primebench", "--default", "autojudger", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Stage 0 (cleaning)" in out and "fidelity rho" in out
    m = json.loads((tmp_path / "manifest.json").read_text())
    assert m["built_from"]["panel"] == "autojudger" and len(m["built_from"]["models"]) == 169
    # the README's figures for the main job are this run's
    assert "suite: 254 items" in out and "fidelity rho = 0.953" in out
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "README.md").read_text("utf-8")
    assert "(254 items, ρ = 0.953)" in readme
    assert len(m["placement_calibration"]["residuals"]) == 169


def test_cli_resampled_and_frontier(tmp_path, sim):
    sim.save(tmp_path / "p")
    assert (
        main(
            [
                "build",
                "resampled",
                "--panel",
                str(tmp_path / "p"),
                "--n",
                "50",
                "--out",
                str(tmp_path / "r"),
            ]
        )
        == 0
    )
    assert read_manifest(tmp_path / "r" / "manifest.json")["n_items"] == 50
    assert (
        main(["build", "frontier", "--panel", str(tmp_path / "p"), "--out", str(tmp_path / "f")])
        == 0
    )
    assert (
        main(["build", "resampled", "--default", "autojudger", "--out", str(tmp_path / "x")]) == 2
    )  # no embeddings: a clear error


def test_a_broken_manifest_names_its_file_and_line(tmp_path):
    """'Expecting value…' without a file name: a JSON error now names file and line."""
    from primebench_tasks.errors import InputError

    bad = tmp_path / "m.json"
    bad.write_text('{\n  "schema": "primebench.suite/1",\n  "name": \n}')
    with pytest.raises(InputError, match=rf"file {bad}, row 4: manifest is not valid JSON"):
        read_manifest(bad)
    bad.write_text("[1, 2]")
    with pytest.raises(InputError, match="unsupported schema 'list'"):
        read_manifest(bad)
