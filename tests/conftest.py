from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from primebench_tasks.data.panel import Panel

RAY_FILES = frozenset({"test_ray_e2e.py", "test_lora_reference.py", "test_gpu_check.py"})
"""The test files that start a Ray cluster (in process or through ``benchmarks/gpu_check.py``)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Groups for pytest-xdist's ``--dist loadgroup`` (CI's part 2 runs ``-n 2``): the tests of
    one file stay on one worker, so a module fixture (an engine, a server, a cluster) starts once
    as in a serial run; and every file in :data:`RAY_FILES` shares one worker, because a cluster's
    teardown (``ray stop --force``) stops every Ray process on the machine. Without ``-n`` the
    marks do nothing."""
    for item in items:
        file_id = item.nodeid.split("::", 1)[0]  # the file, relative to the rootdir
        group = "ray" if item.path.name in RAY_FILES else file_id
        item.add_marker(pytest.mark.xdist_group(group))


def make_panel(
    mats: dict[str, np.ndarray],
    categories: dict[str, str],
    blind: dict[str, np.ndarray] | None = None,
    models: list[str] | None = None,
    families: list[str] | None = None,
    dates: list[str] | None = None,
) -> Panel:
    """A small panel from dense matrices (models x items), NaN = missing."""
    n_models = next(iter(mats.values())).shape[0]
    models = models or [f"m{i:02d}" for i in range(n_models)]
    recs = []
    items = []
    for cond, source in (("vl", mats), ("blind", blind or {})):
        for b, X in source.items():
            for m in range(X.shape[0]):
                for i in range(X.shape[1]):
                    recs.append((models[m], b, f"{b}-{i}", cond, float(X[m, i])))
    for b, X in mats.items():
        items += [(b, f"{b}-{i}") for i in range(X.shape[1])]
    scores = pd.DataFrame(recs, columns=["model", "benchmark", "item_id", "condition", "score"])
    mt = pd.DataFrame({"model": models, "family": families, "release_date": dates})
    bt = pd.DataFrame({"benchmark": list(mats), "category": [categories[b] for b in mats]})
    it = pd.DataFrame(items, columns=["benchmark", "item_id"])
    return Panel.from_records("toy", scores, mt, bt, it)


@pytest.fixture
def toy_panel() -> Panel:
    rng = np.random.default_rng(0)
    ability = np.linspace(-1.5, 1.5, 12)
    mats = {}
    for b, n in (("bench_a", 60), ("bench_b", 40), ("bench_c", 50)):
        diff = rng.normal(0, 1, n)
        p = 1 / (1 + np.exp(-(ability[:, None] - diff[None, :]) * 1.5))
        mats[b] = (rng.random(p.shape) < p).astype(float)
    cats = {
        "bench_a": "Science Knowledge",
        "bench_b": "Science Knowledge",
        "bench_c": "Academic Knowledge",
    }
    return make_panel(mats, cats)
