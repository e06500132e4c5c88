"""Replay time on a dated panel (PRIMEBench App. I.1, Table 20 shape): freeze a selection on the
oldest models, add newer ones in release-order waves, and report the frozen selection's
fidelity, its percentile among random selections, and the refit decisions."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from primebench_tasks.data.leaderboard import Leaderboard
from primebench_tasks.data.panel import Panel
from primebench_tasks.pipeline.params import K
from primebench_tasks.pipeline.primebench import PipelineParams, run_pipeline
from primebench_tasks.pipeline.stage0_clean import stage0_clean
from primebench_tasks.refresh.policy import RefreshPolicy
from primebench_tasks.refresh.shelf_life import (
    best_leaderboard_subset,
    check_frozen,
    leaderboard_subset_check,
)


def release_order(models: pd.DataFrame) -> tuple[list[str], int]:
    """Model names by release date (then name), undated last; and the number dated."""
    m = models.assign(_d=models["release_date"].fillna("9999-99-99"))
    m = m.sort_values(["_d", "model"], kind="stable")
    return list(m["model"]), int(models["release_date"].notna().sum())


def _wave_sizes(n_dated: int, n_all: int, start: float, waves: int) -> list[int]:
    first = max(10, int(round(n_dated * start)))
    sizes = sorted({int(round(first + (n_dated - first) * i / waves)) for i in range(waves + 1)})
    return sizes + ([n_all] if n_all > n_dated else [])


def replay_leaderboard(
    lb: Leaderboard,
    k: int = K,
    start: float = 0.5,
    waves: int = 4,
    policy: RefreshPolicy | None = None,
) -> pd.DataFrame:
    """Benchmark-level replay: freeze the exhaustive k-benchmark subset on the oldest ``start``
    share of dated models; at each cumulative wave report ρ (frozen subset vs all benchmarks),
    the mean over all subsets, the percentile, the gap to the best subset and the decision. A
    last row scores the models newer than the freeze alone."""
    pol = policy or RefreshPolicy()
    order, n_dated = release_order(lb.models)
    sizes = _wave_sizes(n_dated, len(order), start, waves)
    frozen = best_leaderboard_subset(lb, order[: sizes[0]], k)
    rows = []
    published = None
    for n in sizes:
        c = leaderboard_subset_check(lb, frozen, order[:n])
        published = c.rho if published is None else published
        need, why = pol.needs_refit(published, c.rho, c.percentile)
        rows.append(
            {
                "models": n,
                "scored": c.n_models,
                "dated_only": n <= n_dated,
                "frozen_rho": c.rho,
                "subsets_mean_rho": c.random_mean,
                "percentile": c.percentile,
                "gap": c.gap,
                "decision": "refit" if need else "keep",
                "why": "; ".join(why),
            }
        )
    newer = leaderboard_subset_check(lb, frozen, order[sizes[0] : n_dated])
    need, why = pol.needs_refit(published, newer.rho, newer.percentile)
    rows.append(
        {
            "models": n_dated - sizes[0],
            "scored": newer.n_models,
            "dated_only": True,
            "frozen_rho": newer.rho,
            "subsets_mean_rho": newer.random_mean,
            "percentile": newer.percentile,
            "gap": newer.gap,
            "decision": "refit" if need else "keep",
            "why": "newer models alone; " + "; ".join(why),
        }
    )
    out = pd.DataFrame(rows)
    out.attrs["frozen"] = frozen
    return out


def replay_panel(
    panel: Panel,
    params: PipelineParams | None = None,
    start: float = 0.5,
    waves: int = 4,
    n_random: int = 200,
    policy: RefreshPolicy | None = None,
    progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Item-level replay: build the PRIMEBench suite on the oldest ``start`` share of the dated
    models, then on each cumulative wave check it against random suites and a refit."""
    pol = policy or RefreshPolicy()
    say = progress or (lambda _m: None)
    order, n_dated = release_order(panel.model_table)
    sizes = _wave_sizes(n_dated, len(order), start, waves)
    p = params or PipelineParams()
    base = panel.subset_models(order[: sizes[0]])
    s0_all = stage0_clean(panel)
    frozen = run_pipeline(base, p, stage0=s0_all)
    published = frozen.fidelity
    rows = []
    for n in sizes:
        sub = panel.subset_models(order[:n])
        c = check_frozen(sub, s0_all, frozen.selected, n_random=n_random)
        refit = run_pipeline(sub, p, stage0=s0_all)
        need, why = pol.needs_refit(published, c.rho, c.percentile)
        better = refit.fidelity - c.rho >= pol.min_gain
        rows.append(
            {
                "models": n,
                "dated_only": n <= n_dated,
                "frozen_rho": c.rho,
                "random_mean_rho": c.random_mean,
                "percentile": c.percentile,
                "refit_rho": refit.fidelity,
                "gap": refit.fidelity - c.rho,
                "decision": "refit" if need and better else "keep",
                "why": "; ".join(why) or "no drift",
            }
        )
        say(f"replay: {n} models done")
    return pd.DataFrame(rows)
