"""ResampledBench: farthest point sampling over item embeddings, scored against AvgRank
(ResampledBench §4, Eq. 1-2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from primebench_tasks.data.panel import Panel
from primebench_tasks.embed.projection import PROJECTION_DIM, random_projection
from primebench_tasks.metrics import nanmean_rows, spearman
from primebench_tasks.select.base import ItemFeatures
from primebench_tasks.select.fps import FPSSelector


def avg_rank(panel: Panel, keep: dict[str, np.ndarray] | None = None) -> pd.Series:
    """Eq. 1: AvgRank(M_i) = mean over benchmarks of the model's rank on that benchmark
    (1 = best mean item score; ties get the average rank)."""
    ranks = []
    for b in panel.benchmark_names:
        X = panel.matrix(b)
        if keep is not None:
            X = X[:, keep[b]]
        s = nanmean_rows(X)
        ranks.append(stats.rankdata(-np.nan_to_num(s, nan=-np.inf)))
    return pd.Series(np.mean(ranks, axis=0), index=panel.model_names)


@dataclass
class ResampledResult:
    selected: dict[str, np.ndarray]  # benchmark -> positions
    rho: float
    n: int


def resampled_suite(
    panel: Panel,
    n: int = 1000,
    space: str = "text",
    per_benchmark: bool = False,
    seed: int = 0,
    projection_dim: int | None = PROJECTION_DIM,
) -> ResampledResult:
    """FPS over the embeddings of all items pooled across benchmarks (or ``n`` per benchmark),
    after the fixed projection (None = raw vectors). Fidelity: Spearman ρ between the mean score on
    the selected items and −AvgRank over the full benchmarks."""
    embs, where = [], []
    for b in panel.benchmark_names:
        e, _ = panel.embeddings(b, space)
        embs.append(e)
        where.append(np.full(len(e), b, dtype=object))
    E = np.concatenate(embs)
    if projection_dim is not None:
        E = random_projection(E, projection_dim)
    bench = np.concatenate(where)
    pos = np.concatenate([np.arange(len(e)) for e in embs])
    groups = (
        [np.flatnonzero(bench == b) for b in panel.benchmark_names]
        if per_benchmark
        else [np.arange(len(E))]
    )
    chosen = []
    for g in groups:
        dummy = np.zeros((1, len(g)))
        sel = FPSSelector(k=n, random_state=seed).fit(dummy, ItemFeatures(embedding=E[g]))
        chosen.append(g[sel.indices_])
    idx = np.concatenate(chosen)
    selected = {
        b: np.sort(pos[idx][bench[idx] == b])
        for b in panel.benchmark_names
        if (bench[idx] == b).any()
    }
    X = np.concatenate([panel.matrix(b)[:, p] for b, p in selected.items()], axis=1)
    score = nanmean_rows(X)
    ar = avg_rank(panel)
    return ResampledResult(selected=selected, rho=spearman(score, -ar.to_numpy()), n=len(idx))
