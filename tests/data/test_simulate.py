import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from primebench_tasks.data.simulate import simulate_leaderboard, simulate_panel
from primebench_tasks.errors import ConfigError
from primebench_tasks.pipeline.stage0_clean import stage0_clean
from primebench_tasks.pipeline.stage1_representatives import benchmark_scores
from primebench_tasks.pipeline.stage3_categories import spectrum


@pytest.mark.parametrize("seed", [0, 1])
def test_simulator_is_calibrated_to_real_data(seed):
    """Ranges measured on the real panels (AutoJudger AI2D/MMMU, M3IRT MathVista/MMMU, OpenVLM;
    see README) and the paper (top-5 energy ≈ 95-97.6 %)."""
    p = simulate_panel(scale=0.02, seed=seed)
    s0 = stage0_clean(p)
    pv = np.concatenate([np.nanmean(p.matrix(b)[:, s0.keep[b]], axis=0) for b in p.benchmark_names])
    q10, q50, q90 = np.quantile(pv, [0.1, 0.5, 0.9])
    assert 0.05 <= q10 <= 0.30  # real: 0.08-0.25
    assert 0.35 <= q50 <= 0.76  # real: 0.375-0.754
    assert 0.75 <= q90 <= 0.95  # real: 0.76-0.94
    s = benchmark_scores(p, s0.keep)
    rho = s.corr(method="spearman").to_numpy()[np.triu_indices(s.shape[1], 1)]
    assert 0.53 <= np.median(rho) <= 0.95  # real: 0.53 (M3IRT) .. 0.95 (OpenVLM pairs)
    cats = pd.DataFrame({c: s[bs].mean(axis=1) for c, bs in p.categories().items()})
    _, energy = spectrum(cats)
    assert 0.90 <= energy[4] <= 0.99


def test_simulator_shapes_and_determinism():
    a = simulate_panel(scale=0.01, seed=5)
    b = simulate_panel(scale=0.01, seed=5)
    assert a.content_hash == b.content_hash
    assert len(a.benchmark_names) == 43 and len(a.categories()) == 18
    assert len(a.model_names) == 30
    missing = np.mean(np.concatenate([np.isnan(a.matrix(x)).ravel() for x in a.benchmark_names]))
    assert 0.01 < missing < 0.04
    blind_models = np.isfinite(a.matrix("scienceqa", "blind")).any(axis=1).sum()
    assert blind_models == 12
    assert not a.has_condition("mmvet", "blind")
    assert set(a.embedding_spaces) == {"text", "vl"}


@pytest.mark.slow
def test_paper_scale_panel_loads_under_2gb(tmp_path):
    out = tmp_path / "sim"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "primebench_tasks.cli",
            "simulate",
            "--scale",
            "1.0",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    code = (
        "import resource; from primebench_tasks import Panel;"
        f"p = Panel.load({str(out)!r}); print(len(p.items));"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    n_items, rss_kb = (int(x) for x in r.stdout.split())
    assert n_items == 386_324
    assert rss_kb < 2 * 1024 * 1024


def test_simulate_leaderboard_shapes_and_determinism():
    a = simulate_leaderboard(50, n_benchmarks=2, seed=4, items=(20, 30))
    b = simulate_leaderboard(50, n_benchmarks=2, seed=4, items=(20, 30))
    assert a.content_hash == b.content_hash
    assert len(a.model_names) == 50 and len(a.benchmark_names) == 2
    for bname in a.benchmark_names:
        X = a.matrix(bname)
        assert 20 <= X.shape[1] <= 30 and np.isin(X, (0.0, 1.0)).all()
    with pytest.raises(ConfigError):
        simulate_leaderboard(10, items=(0, 5))
