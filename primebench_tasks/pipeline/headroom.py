"""Headroom of a suite at the top of its reference panel: can it still separate the strongest
models, or do they answer nearly all of its items?

For the ``top`` strongest reference models (by mean score over all items of the suite's
benchmarks, each benchmark weighted equally), per benchmark of the suite:

- ``easier_by``: their mean score on the suite's items minus their mean score on all of the
  benchmark's items (0 = the suite is as hard for them as the benchmark; the placement issue's
  goal: ≤ 0.10);
- ``solved_by_all``: the share of the suite's items that every one of them answers fully right
  (score 1);
- and for the suite, ``top_decile_rho``: Spearman ρ between the suite score (mean of benchmark
  means on the suite items) and the full score (mean of benchmark means on all items) among the
  strongest 10 % of the models (at least 5) — the suite's fidelity where new models arrive.

Everything is in-sample on the panel the suite was built from (the placement benchmark measures
the same on held-out models).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from primebench_tasks.data.panel import Panel
from primebench_tasks.metrics import nanmean_rows, spearman

TOP_MODELS = 10
TOP_DECILE = 0.10


def suite_headroom(
    panel: Panel, selected: Mapping[str, Mapping[str, np.ndarray]], top: int = TOP_MODELS
) -> dict[str, Any]:
    """``selected``: category → benchmark → item positions (the pipeline's selection).
    Returns ``{"top_models", "benchmarks": {b: {"easier_by", "solved_by_all", "suite_mean",
    "full_mean"}}, "easier_by" (mean over benchmarks), "solved_by_all" (pooled share),
    "top_decile_rho", "n_top_decile"}`` (floats rounded to 6 decimals)."""
    by_b = {b: np.asarray(pos) for d in selected.values() for b, pos in d.items()}
    if not by_b:
        return {}
    full_b = np.column_stack([nanmean_rows(panel.matrix(b)) for b in by_b])
    suite_b = np.column_stack([nanmean_rows(panel.matrix(b)[:, pos]) for b, pos in by_b.items()])
    with np.errstate(invalid="ignore"):
        full = np.nanmean(full_b, axis=1)
        suite = np.nanmean(suite_b, axis=1)
    ok = np.flatnonzero(np.isfinite(full))
    order = ok[np.lexsort((ok, -full[ok]))]
    best = order[: min(top, len(order))]
    bench: dict[str, Any] = {}
    solved, total = 0, 0
    for j, (b, pos) in enumerate(by_b.items()):
        Xs = panel.matrix(b)[np.ix_(best, pos)]
        all_right = np.all(Xs >= 1.0, axis=0)
        solved += int(all_right.sum())
        total += len(pos)
        suite_mean, full_mean = np.nanmean(suite_b[best, j]), np.nanmean(full_b[best, j])
        bench[b] = {
            "suite_mean": _r(suite_mean),
            "full_mean": _r(full_mean),
            "easier_by": _r(suite_mean - full_mean),
            "solved_by_all": _r(all_right.mean() if len(pos) else np.nan),
        }
    n_dec = max(5, int(round(TOP_DECILE * len(order))))
    dec = order[:n_dec]
    return {
        "top_models": [panel.model_names[i] for i in best],
        "benchmarks": bench,
        "easier_by": _r(np.mean([v["easier_by"] for v in bench.values()])),
        "solved_by_all": _r(solved / total if total else np.nan),
        "top_decile_rho": _r(spearman(suite[dec], full[dec])),
        "n_top_decile": int(len(dec)),
    }


def _r(x: float) -> float:
    return round(float(x), 6)
