"""The adaptive replay protocol on any panel (``primebench validate --protocol adaptive``)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from primebench_tasks.errors import ConfigError
from primebench_tasks.evaluate import adaptive_validation as av
from tests.conftest import make_panel


def _responses(models: int, items: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ability = np.linspace(-1.5, 1.5, models)
    diff = rng.normal(0, 1, items)
    p = 1 / (1 + np.exp(-(ability[:, None] - diff[None, :]) * 1.5))
    return (rng.random(p.shape) < p).astype(float)


def _panel():
    """26 models: ``bench_a`` answered by all (40 items), ``bench_b`` by 12 only (fewer than
    :data:`~primebench_tasks.evaluate.adaptive_validation.MIN_MODELS`)."""
    a = _responses(26, 40, 0)
    b = _responses(26, 30, 1)
    b[12:] = np.nan
    return make_panel(
        {"bench_a": a, "bench_b": b},
        {"bench_a": "Science Knowledge", "bench_b": "Academic Knowledge"},
    )


def test_hold_outs_by_hand():
    """10 models: a random hold-out holds out max(3, round(0.2·10)) = 3 seeded models; the
    frontier one the 3 strongest (max(3, round(1.5))), ties to the lower position; a model with no
    answer is in neither part."""
    X = np.tile(np.linspace(0.1, 0.9, 10)[:, None], (1, 4))  # model m's full score rises with m
    X[[4, 6]] = 0.9  # 4 and 6 tie with 9 at the top
    X[8] = np.nan  # no answer at all
    held, build = av.hold_out(X, "frontier", 0)
    assert list(held) == [4, 6, 9] and 8 in build and len(build) == 7
    held, build = av.hold_out(X, "random", 5)
    drawn = np.sort(np.random.default_rng(5).choice(10, 3, replace=False))
    assert list(held) == [m for m in drawn if m != 8]
    assert set(build) == set(range(10)) - set(drawn)
    with pytest.raises(ConfigError, match="hold-out protocol"):
        av.hold_out(X, "chronological", 0)


def test_summary_by_hand():
    """Two held-out models at one count: true 0.5 and 0.8, adaptive 0.52 and 0.75 (errors 0.02,
    0.05: MAE 0.035), static 0.45 and 0.9 (0.05, 0.1: MAE 0.075) → ratio 0.4667; intervals
    [0.4, 0.6] (covers, width 0.2) and [0.7, 0.78] (misses, width 0.08); stopped at 10 and 20
    items with points 0.55 and 0.8 (MAE 0.025), both covered."""
    rows = pd.DataFrame(
        {
            "benchmark": ["b", "b"],
            "protocol": ["random", "random"],
            "split": [0, 1],
            "items": [25, 25],
            "true": [0.5, 0.8],
            "predicted": [0.52, 0.75],
            "lo": [0.4, 0.7],
            "hi": [0.6, 0.78],
            "static": [0.45, 0.9],
            "stop_items": [10, 20],
            "stop_predicted": [0.55, 0.8],
            "stop_lo": [0.5, 0.7],
            "stop_hi": [0.6, 0.9],
        }
    )
    s = av.summarise_adaptive(rows).iloc[0]
    assert s.tests == 2 and s.adaptive_mae == pytest.approx(0.035)
    assert s.static_mae == pytest.approx(0.075) and s.ratio == pytest.approx(0.035 / 0.075)
    assert s.cover == 0.5 and s.width == pytest.approx(0.14)
    assert s.stop_items == 15 and s.stop_mae == pytest.approx(0.025) and s.stop_cover == 1.0


def test_validate_adaptive_writes_every_output_and_reruns_to_the_same_bytes(tmp_path):
    panel = _panel()
    said: list[str] = []
    summary = av.validate_adaptive(
        panel, tmp_path / "v", n_splits=2, seed=3, checkpoints=(10, 5), progress=said.append
    )
    out = tmp_path / "v"
    assert {p.name for p in out.iterdir()} == {
        "models.csv",
        "summary.csv",
        "table.md",
        "mae_vs_items.png",
        "spec.json",
        "calibration",
    }
    # bench_b has 12 answering models: said, and named in the spec and the table, not dropped
    assert any("bench_b: 12 models" in m for m in said)
    spec = json.loads((out / "spec.json").read_text("utf-8"))
    assert spec["benchmarks"] == ["bench_a"] and spec["skipped"] == {"bench_b": 12}
    assert spec["items"] == [5, 10] and spec["random_splits"] == 2 and spec["seed"] == 3
    assert "bench_b (12 models)" in (out / "table.md").read_text("utf-8")
    models = pd.read_csv(out / "models.csv")
    # random hold-outs: seeds 3 and 4, 5 models each (round(0.2·26)); frontier: 4 (round(3.9))
    assert sorted(set(zip(models.protocol, models.split, strict=True))) == [
        ("frontier", 3),
        ("random", 3),
        ("random", 4),
    ]
    per = models[models["items"] == 5].groupby(["protocol", "split"]).size()
    assert per[("random", 3)] == 5 and per[("frontier", 3)] == 4
    strongest = panel.matrix("bench_a").mean(axis=1).argsort()[::-1][:4]
    frontier = models[(models.protocol == "frontier") & (models["items"] == 5)]
    assert set(frontier.model_name) == {panel.model_names[m] for m in strongest}
    assert list(summary.columns[:7]) == [
        "benchmark",
        "protocol",
        "items",
        "tests",
        "adaptive_mae",
        "static_mae",
        "ratio",
    ]
    assert (summary.tests == [10, 10, 4, 4]).all()
    assert np.isfinite(summary.adaptive_mae).all() and (summary.cover.between(0, 1)).all()
    # a rerun reads the kept calibrations and writes the same bytes
    calibrations = sorted((out / "calibration").iterdir())
    assert len(calibrations) == 3
    stamps = [p.stat().st_mtime_ns for p in calibrations]
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    av.validate_adaptive(panel, out, n_splits=2, seed=3, checkpoints=(5, 10))
    assert [p.stat().st_mtime_ns for p in sorted((out / "calibration").iterdir())] == stamps
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_validate_adaptive_refuses_a_panel_it_cannot_replay(tmp_path):
    small = make_panel({"bench_a": _responses(12, 20, 0)}, {"bench_a": "Science Knowledge"})
    with pytest.raises(ConfigError, match="no benchmark of 'toy' has 20 models"):
        av.validate_adaptive(small, tmp_path / "v")
    with pytest.raises(ConfigError, match="--splits"):
        av.validate_adaptive(_panel(), tmp_path / "v", n_splits=0)
    assert not (tmp_path / "v").exists()


def test_spec_is_the_commit_point_of_the_outputs(tmp_path, monkeypatch):
    """A run killed while it replaces the outputs leaves no spec.json: the files beside a spec
    are always complete and of the run it describes."""
    panel = _panel()
    out = tmp_path / "v"
    av.validate_adaptive(panel, out, n_splits=1, checkpoints=(5,))
    assert (out / "spec.json").exists()
    real = av.atomic_write_text

    def killed(path, text):
        if path.name == "table.md":
            raise KeyboardInterrupt
        return real(path, text)

    monkeypatch.setattr(av, "atomic_write_text", killed)
    with pytest.raises(KeyboardInterrupt):
        av.validate_adaptive(panel, out, n_splits=1, checkpoints=(10,))
    assert not (out / "spec.json").exists() and "items" in (out / "models.csv").read_text("utf-8")
    monkeypatch.setattr(av, "atomic_write_text", real)
    av.validate_adaptive(panel, out, n_splits=1, checkpoints=(10,))
    assert json.loads((out / "spec.json").read_text("utf-8"))["items"] == [10]
