from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from primebench_tasks.data.panel import Panel


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


@contextlib.contextmanager
def run_lock_held_elsewhere(out: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding ``out``'s run lock (``harness_adapters.run.request.run_lock``)
    while the block runs — a rival run, as a user's second command meets it; killed after (the
    kernel drops its lock)."""
    hold = (
        "import sys, time; from pathlib import Path\n"
        "from harness_adapters.run.request import run_lock\n"
        "with run_lock(Path(sys.argv[1])):\n"
        "    print('held', flush=True); time.sleep(600)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", hold, str(out)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.kill()
        holder.wait(30)
