"""What an adaptive test costs before its first item: building an ``AdaptiveBenchmark`` (the 2PL
fit and the calibration of the intervals: the default policy replayed on the reference models, 10
random folds (``ADAPTIVE_FOLDS``) and 3 frontier folds, at every count up to 100 items) for each benchmark of the AutoJudger
panel — done once per run, at its first stop decision — and reading that calibration back from
the run's ``calibration/`` (what a resumed run does instead).

    python benchmarks/adaptive_setup.py

Writes ``benchmarks/results/adaptive_setup.md`` (included in docs/results.md).
"""

from __future__ import annotations

import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from primebench_tasks.adaptive.benchmark import AdaptiveBenchmark
from primebench_tasks.adaptive.policy import AdaptivePolicy
from primebench_tasks.data.panel import Panel

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    aj = Panel.load_default("autojudger")
    lines = [
        f"{os.cpu_count()} CPU cores ({platform.machine()}); policy `{AdaptivePolicy().label}`, "
        "at most 100 items in rounds of 5.",
        "",
        "| benchmark | reference models × items | setup (s) | resumed: read back (s) |",
        "|---|---|---|---|",
    ]
    for b in aj.benchmark_names:
        Y = aj.matrix(b).astype(float)
        Y = Y[np.isfinite(Y).any(axis=1)]
        with tempfile.TemporaryDirectory() as run:
            t = time.perf_counter()
            AdaptiveBenchmark(Y, max_items=100, cache_dir=run).calibration  # noqa: B018
            setup = time.perf_counter() - t
            t = time.perf_counter()
            AdaptiveBenchmark(Y, max_items=100, cache_dir=run).calibration  # noqa: B018
            back = time.perf_counter() - t
        lines.append(f"| {b} | {Y.shape[0]} × {Y.shape[1]:,} | {setup:.1f} | {back:.2f} |")
    text = "\n".join(lines) + "\n"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "adaptive_setup.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
