"""The hostile battery, placement: a run with nothing scored, or too few items of a benchmark to
say anything, is never placed as a result, and no interval leaves the score's range [0, 1].
Through the one placement path of every harness (``write_placement``), on a small suite of the
embedded AutoJudger panel (169 real VLMs on MMMU and AI2D)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness_adapters.run.report import write_placement
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError
from primebench_tasks.pipeline.manifest import build_manifest, write_manifest
from primebench_tasks.place.defaults import MIN_SCORED_ITEMS, min_scored_items

PICK = np.arange(0, 200, 8)  # 25 items of each benchmark


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> tuple[Panel, str, Path, dict[str, list[str]]]:
    panel = Panel.load_default("autojudger")
    sel = {panel.category_of(b): {b: PICK} for b in panel.benchmark_names}
    manifest = build_manifest("tiny", panel, sel, {"n": len(PICK)}, [], {"rho": None})
    path = write_manifest(manifest, tmp_path_factory.mktemp("suite") / "manifest.json")
    ids = {b: [str(i) for i in panel.item_ids(b)[PICK]] for b in panel.benchmark_names}
    return panel, manifest["version"], path, ids


def _records(ids: dict[str, list[str]], model: str, scores) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"model": model, "benchmark": b, "item_id": i, "score": scores(b, k)}
            for b, items in ids.items()
            for k, i in enumerate(items)
        ]
    )


def test_min_scored_items_by_hand() -> None:
    assert MIN_SCORED_ITEMS == 10
    assert [min_scored_items(n) for n in (1, 2, 3, 19, 20, 25, 100)] == [1, 1, 2, 10, 10, 10, 10]


def test_a_run_whose_every_score_is_missing_is_refused_or_unranked(suite, tmp_path) -> None:
    panel, version, path, ids = suite
    nan = _records(ids, "dead", lambda b, k: np.nan)
    with pytest.raises(InputError, match="model dead: the run has no result for"):
        write_placement(nan, version, tmp_path / "a", path, panel, n_boot=20)
    assert not (tmp_path / "a").exists()
    doc = write_placement(
        nan, version, tmp_path / "b", path, panel, n_boot=20, allow_partial=True
    ).to_json()
    placed = doc["models"]["dead"]
    assert placed["suite"]["predicted_rank"] is None and placed["suite"]["score"]["value"] is None
    for b in ids:
        assert placed["benchmarks"][b]["predicted_full"]["value"] is None
        assert "no item scored" in placed["benchmarks"][b]["no_prediction_because"]


def test_one_item_per_benchmark_is_no_result(suite, tmp_path) -> None:
    panel, version, path, ids = suite
    one = _records(ids, "one", lambda b, k: 1.0 if k == 0 else np.nan)
    with pytest.raises(InputError, match="too few items scored on MMMU_DEV_VAL \\(1 of 25\\)"):
        write_placement(one, version, tmp_path / "a", path, panel, n_boot=20)
    doc = write_placement(
        one, version, tmp_path / "b", path, panel, n_boot=20, allow_partial=True
    ).to_json()
    placed = doc["models"]["one"]
    for b in ids:
        e = placed["benchmarks"][b]
        assert e["n_scored"] == 1
        assert e["predicted_full"]["value"] is None and e["predicted_rank"]["value"] is None
        assert "1 of 25 items scored, fewer than the 10" in e["no_prediction_because"]
    assert placed["suite"]["predicted_rank"] is None
    assert "no benchmark has the items a placement needs" in placed["suite"]["no_rank_because"]
    assert doc["missing"]["one"]["AI2D_TEST"]["why"] == "1 scored, fewer than the 10 placed"


def test_ten_items_are_placed(suite, tmp_path) -> None:
    panel, version, path, ids = suite
    ten = _records(ids, "ten", lambda b, k: float(k % 2) if k < 10 else np.nan)
    doc = write_placement(
        ten, version, tmp_path, path, panel, n_boot=20, allow_partial=True
    ).to_json()
    for b in ids:
        assert doc["models"]["ten"]["benchmarks"][b]["predicted_full"]["value"] is not None


@pytest.mark.parametrize("score", [0.0, 1.0])
def test_intervals_stay_in_the_unit_interval(suite, tmp_path, score: float) -> None:
    panel, version, path, ids = suite
    run = _records(ids, "m", lambda b, k: score)
    doc = write_placement(run, version, tmp_path, path, panel, n_boot=50).to_json()
    placed = doc["models"]["m"]
    values = [placed["suite"]["predicted_full"], placed["suite"]["score"]]
    for b in ids:
        values += [placed["benchmarks"][b]["predicted_full"], placed["benchmarks"][b]["score"]]
    values += [c["predicted_full"] for c in placed["categories"].values()]
    for v in values:
        assert 0.0 <= v["lo"] <= v["value"] <= v["hi"] <= 1.0, v


def test_a_full_disk_leaves_no_report_beside_its_error(suite, tmp_path) -> None:
    """On 4d9a95b a `place` into a disk that filled while it wrote left a complete report.json
    beside its error (report.md and placement.png missing): the three are written as a whole."""
    from tests.hostile.test_environment import _tmpfs

    panel, version, path, ids = suite
    recs = _records(ids, "m", lambda b, k: float(k % 2))
    with _tmpfs(tmp_path / "full", "size=1m") as full:
        with open(full / ".filler", "wb") as fh:  # room for report.json, not the figure
            fh.write(b"\0" * (1024 * 1024 - 48 * 1024))
        with pytest.raises(OSError):
            write_placement(recs, version, full / "rep", path, panel, n_boot=20)
        assert sorted(p.name for p in (full / "rep").iterdir()) == []
