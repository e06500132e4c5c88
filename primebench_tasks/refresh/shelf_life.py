"""How well a frozen selection still ranks the models of a grown panel (PRIMEBench App. I.1).

A frozen selection is ranked against random selections of the same size, because random subsets
of a low-rank score matrix already rank models well: the percentile, not a fixed threshold, says
whether the frozen choice still beats chance.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from primebench_tasks.data.leaderboard import Leaderboard
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import NotFoundError
from primebench_tasks.metrics import spearman, spearman_many
from primebench_tasks.pipeline.primebench import cleaned_reference, selection_scores
from primebench_tasks.pipeline.stage0_clean import Stage0Result

N_RANDOM = 200


@dataclass
class FrozenCheck:
    """Fidelity of the frozen suite on a panel and its place among random suites."""

    n_models: int
    rho: float
    random_mean: float
    percentile: float
    best_rho: float | None = None

    @property
    def gap(self) -> float | None:
        return None if self.best_rho is None else self.best_rho - self.rho


def positions(
    panel: Panel, items: dict[str, dict[str, list[str]]]
) -> dict[str, dict[str, np.ndarray]]:
    """Manifest item ids → item positions in ``panel`` (ids unknown to the panel are an error)."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for cat, by_b in items.items():
        out[cat] = {}
        for b, ids in by_b.items():
            if b not in panel.benchmark_names:
                raise NotFoundError(f"suite benchmark {b!r} is not in panel {panel.name!r}")
            pos = pd.Index(panel.item_ids(b)).get_indexer(ids)
            if (pos < 0).any():
                missing = [i for i, p in zip(ids, pos, strict=True) if p < 0][:5]
                raise NotFoundError(f"suite items of {b!r} not in the panel, e.g. {missing}")
            out[cat][b] = pos
    return out


def check_frozen(
    panel: Panel,
    s0: Stage0Result,
    selected: dict[str, dict[str, np.ndarray]],
    n_random: int = N_RANDOM,
    seed: int = 0,
) -> FrozenCheck:
    """ρ between the frozen suite's score and the mean of category means over all Stage
    0-cleaned items, on ``panel``'s models; and the percentile of that ρ among ``n_random``
    random suites with the same number of items per benchmark, drawn from the cleaned items."""
    ref = cleaned_reference(panel, s0.keep).to_numpy()
    rho = spearman(selection_scores(panel, selected).to_numpy(), ref)
    rng = np.random.default_rng(seed)
    rand = []
    for _ in range(n_random):
        sel = {
            c: {
                b: rng.choice(
                    np.flatnonzero(s0.keep[b]),
                    size=min(len(p), int(s0.keep[b].sum())),
                    replace=False,
                )
                for b, p in by_b.items()
            }
            for c, by_b in selected.items()
        }
        rand.append(spearman(selection_scores(panel, sel).to_numpy(), ref))
    rand_arr = np.array(rand)
    pct = 100.0 * float(np.mean(np.nan_to_num(rand_arr, nan=-2) <= rho))
    return FrozenCheck(
        n_models=len(panel.model_names),
        rho=rho,
        random_mean=float(np.nanmean(rand_arr)),
        percentile=pct,
    )


def leaderboard_subset_check(lb: Leaderboard, frozen: list[str], models: list[str]) -> FrozenCheck:
    """Benchmark-level shelf life (Table 20): on ``models``, ρ between the mean z-score over the
    frozen benchmarks and over all benchmarks (z fitted on these models), the percentile of the
    frozen subset among all subsets of its size, and the best subset's ρ."""
    S = lb.scores.loc[models].dropna()
    Z = ((S - S.mean()) / S.std(ddof=0)).to_numpy()
    cols = list(S.columns)
    ref = Z.mean(axis=1)
    k = len(frozen)
    combos = np.array(list(itertools.combinations(range(len(cols)), k)))
    rhos = spearman_many(Z[:, combos].mean(axis=2), ref)
    fz = spearman(Z[:, [cols.index(b) for b in frozen]].mean(axis=1), ref)
    return FrozenCheck(
        n_models=len(S),
        rho=fz,
        random_mean=float(np.nanmean(rhos)),
        percentile=100.0 * float(np.mean(rhos <= fz + 1e-12)),
        best_rho=float(np.nanmax(rhos)),
    )


def best_leaderboard_subset(lb: Leaderboard, models: list[str], k: int) -> list[str]:
    """Exhaustive Eq. 7 on a leaderboard: the k benchmarks whose mean z-score ranks ``models``
    most like all benchmarks (ties → first in alphabetical order)."""
    from primebench_tasks.pipeline.stage3_categories import stage3_select

    S = lb.scores.loc[models].dropna()
    Z = (S - S.mean()) / S.std(ddof=0)
    return stage3_select(Z, k).categories
