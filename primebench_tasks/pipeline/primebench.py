"""The PRIMEBench pipeline end to end: Stage 0 → 1 → 2 → 3, stoppable after any stage, with the
stage summary (Table 2), the k-sweep (Table 15) and the category spectrum (Fig. 2)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import ConfigError
from primebench_tasks.metrics import spearman
from primebench_tasks.pipeline.headroom import suite_headroom
from primebench_tasks.pipeline.manifest import build_manifest
from primebench_tasks.pipeline.params import PipelineParams  # re-exported
from primebench_tasks.pipeline.stage0_clean import Stage0Result, stage0_clean
from primebench_tasks.pipeline.stage1_representatives import (
    Stage1Result,
    benchmark_scores,
    stage1_representatives,
)
from primebench_tasks.pipeline.stage2_prune import (
    SelectorFactory,
    Stage2Result,
    pooled_category_scores,
    stage2_factory,
    stage2_prune,
)
from primebench_tasks.pipeline.stage3_categories import (
    Stage3Result,
    k_sweep,
    spectrum,
    stage3_select,
)
from primebench_tasks.select.stratified import Draw
from primebench_tasks.suite.manifest import SuiteManifest

STAGES = ("stage0", "stage1", "stage2", "stage3")


@dataclass
class PipelineResult:
    params: PipelineParams
    stage0: Stage0Result
    stage1: Stage1Result | None = None
    stage2: Stage2Result | None = None
    stage3: Stage3Result | None = None
    selected: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    draws: dict[str, dict[str, Draw]] = field(default_factory=dict)
    """The probability design of the selected items where Stage 2 drew them (aligned with
    ``selected``); empty otherwise."""
    reference: pd.Series | None = None
    suite_scores: pd.Series | None = None
    fidelity: float = float("nan")
    stage_table: pd.DataFrame | None = None
    sweep: pd.DataFrame | None = None
    category_scores: pd.DataFrame | None = None
    singular_values: np.ndarray | None = None
    energy: np.ndarray | None = None

    def manifest(
        self, panel: Panel, name: str = "primebench", calibration: dict[str, Any] | None = None
    ) -> SuiteManifest:
        """The suite manifest; ``calibration``: a ``placement_calibration`` entry
        (:func:`primebench_tasks.place.calibration.calibration_entry`) to store in it."""
        stages = [] if self.stage_table is None else self.stage_table.to_dict("records")
        return build_manifest(
            name,
            panel,
            self.selected,
            self.params.as_dict(panel),
            stages,
            {
                "rho": self.fidelity,
                "protocol": "same-models, end-to-end: suite score (mean of "
                "category means) vs mean of category means over all Stage 0-cleaned benchmarks",
                "n_models": len(panel.model_names),
            },
            extra={
                "headroom": suite_headroom(panel, self.selected),
                **({} if calibration is None else {"placement_calibration": calibration}),
            },
            draws=self.draws,
        )


def cleaned_reference(panel: Panel, keep: dict[str, np.ndarray]) -> pd.Series:
    """Per-model mean of category means over all Stage 0-cleaned benchmarks (App. D.3's
    end-to-end reference; a category mean is the mean of its benchmarks' mean item scores)."""
    s = benchmark_scores(panel, keep)
    cat_means = pd.DataFrame(
        {c: s[bs].mean(axis=1, skipna=True) for c, bs in panel.categories().items()}
    )
    return cat_means.mean(axis=1, skipna=True)


def selection_scores(
    panel: Panel,
    selected: dict[str, dict[str, np.ndarray]],
    aggregate: str = "mean_of_category_means",
) -> pd.Series:
    """Per-model suite score: the mean over categories of the item-pooled category score, or
    with ``item_mean`` the mean over all selected items."""
    if aggregate == "mean_of_category_means":
        return pooled_category_scores(panel, selected).mean(axis=1, skipna=True)
    pooled = pooled_category_scores(
        panel, {"all": {f"{b}": pos for by_b in selected.values() for b, pos in by_b.items()}}
    )
    return pooled["all"]


def _stage2_mean_rho(panel: Panel, pools: Stage1Result, stage2: Stage2Result) -> float:
    """Mean over categories of ρ(full-pool mean, selected-item mean) on the panel's models."""
    full = pooled_category_scores(panel, {p.category: p.items for p in pools.pools})
    sel = pooled_category_scores(panel, stage2.selected)
    rhos = [spearman(full[c].to_numpy(), sel[c].to_numpy()) for c in sel.columns]
    rhos = [r for r in rhos if np.isfinite(r)]
    return float(np.mean(rhos)) if rhos else float("nan")


def run_pipeline(
    panel: Panel,
    params: PipelineParams | None = None,
    selector: SelectorFactory | None = None,
    progress: Callable[[str], None] | None = None,
    stage0: Stage0Result | None = None,
) -> PipelineResult:
    """Run Stages 0..``params.until`` on every model of ``panel``. A precomputed ``stage0``
    (e.g. on the whole panel, when ``panel`` is a split's build models) is used as given."""
    p = params or PipelineParams()
    if p.until not in STAGES:
        raise ConfigError(f"until must be one of {STAGES}")
    say = progress or (lambda _m: None)
    s0 = stage0 if stage0 is not None else stage0_clean(panel, p.tau, p.min_blind_models)
    say(f"stage 0: kept {s0.n_out} of {s0.n_in} items")
    res = PipelineResult(params=p, stage0=s0)
    ref = cleaned_reference(panel, s0.keep)
    res.reference = ref
    n_bench = len(panel.benchmark_names)
    rows: list[dict[str, Any]] = [
        {
            "stage": "Stage 0 (cleaning)",
            "unit": "items",
            "input": s0.n_in,
            "output": s0.n_out,
            "rho": None,
        }
    ]
    res.selected = {
        c: {b: np.flatnonzero(s0.keep[b]) for b in bs} for c, bs in panel.categories().items()
    }
    if p.until != "stage0":
        s1 = stage1_representatives(panel, s0.keep, p.target_rho)
        res.stage1 = s1
        say(f"stage 1: {len(s1.pools)} category pools")
        rows.append(
            {
                "stage": "Stage 1 (category rep)",
                "unit": "benchmarks",
                "input": n_bench,
                "output": len(s1.pools),
                "rho": float(np.median([q.final_rho for q in s1.pools])),
            }
        )
        res.selected = {q.category: q.items for q in s1.pools}
    if p.until in ("stage2", "stage3"):
        assert res.stage1 is not None
        make = selector or stage2_factory(
            p.selector, p.alpha, p.cells, p.seed, p.top_share, p.top_fraction
        )
        s2 = stage2_prune(
            panel, res.stage1.pools, p.retention, p.floor, make, p.cell_space, progress=say
        )
        res.stage2 = s2
        pool_items = sum(q.size for q in res.stage1.pools)
        rows.append(
            {
                "stage": "Stage 2 (item pruning)",
                "unit": "category-pool items",
                "input": pool_items,
                "output": s2.n_items,
                "rho": _stage2_mean_rho(panel, res.stage1, s2),
            }
        )
        res.selected = s2.selected
        res.draws = s2.draws
        S = pooled_category_scores(panel, s2.selected)
        res.category_scores = S
        if S.shape[1] >= 2:
            res.singular_values, res.energy = spectrum(S)
        items_per_cat = {c: int(sum(len(v) for v in d.values())) for c, d in s2.selected.items()}
        res.sweep = k_sweep(S, ref, items_per_cat, max_subsets=p.max_subsets)
    if p.until == "stage3":
        assert res.category_scores is not None
        S = res.category_scores
        k = min(p.k, S.shape[1])
        s3 = stage3_select(S, k, p.max_subsets)
        res.stage3 = s3
        say(f"stage 3: {', '.join(s3.categories)} (rho {s3.rho:.3f})")
        rows.append(
            {
                "stage": f"Stage 3 (k={k})",
                "unit": "categories",
                "input": S.shape[1],
                "output": k,
                "rho": s3.rho,
            }
        )
        res.selected = {c: res.selected[c] for c in s3.categories}
        res.draws = {c: v for c, v in res.draws.items() if c in s3.categories}
    scores = selection_scores(panel, res.selected)
    res.suite_scores = scores
    res.fidelity = spearman(scores.to_numpy(), ref.reindex(scores.index).to_numpy())
    n_sel = int(sum(len(v) for d in res.selected.values() for v in d.values()))
    rows.append(
        {"stage": "Suite", "unit": "items", "input": s0.n_in, "output": n_sel, "rho": res.fidelity}
    )
    table = pd.DataFrame(rows)
    table["change_pct"] = (100.0 * (table["output"] - table["input"]) / table["input"]).round(2)
    res.stage_table = table
    return res
