"""Stage 2: item pruning of each category pool with a selector — VAW by default (PRIMEBench
§4.3, App. D.1)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from primebench_tasks.data.panel import Panel
from primebench_tasks.embed.projection import random_projection, vision_dependence
from primebench_tasks.errors import ConfigError
from primebench_tasks.pipeline.cell_space import resolve_cell_space  # re-exported
from primebench_tasks.pipeline.params import FLOOR, RETENTION
from primebench_tasks.pipeline.stage1_representatives import CategoryPool
from primebench_tasks.select.base import ItemFeatures, Selector
from primebench_tasks.select.default import DEFAULT_SELECTOR, TOP_FRACTION
from primebench_tasks.select.stratified import Draw, StratifiedSelector
from primebench_tasks.select.vaw import ALPHA, VAWSelector, category_budget

SelectorFactory = Callable[[int], Selector]
"""budget K -> an unfitted selector."""


@dataclass
class PoolData:
    """A category pool laid out for a selector: X (M, n) scores, features, and the
    (benchmark, item position) of every pool column."""

    category: str
    X: np.ndarray
    features: ItemFeatures
    benchmark: np.ndarray
    position: np.ndarray


def pool_data(
    panel: Panel, pool: CategoryPool, cell_space: str | None, projection_dim: int = 64
) -> PoolData:
    """Concatenate a pool's benchmarks into one (M, n) matrix with item features: projected cell
    embeddings (NaN rows = none) and δ^VL (needs both ``text`` and ``vl`` spaces; else 0)."""
    mats, bench, pos, embs, deltas = [], [], [], [], []
    for b, p in pool.items.items():
        mats.append(panel.matrix(b)[:, p])
        bench.append(np.full(len(p), b, dtype=object))
        pos.append(p)
        d = np.zeros(len(p))
        if {"text", "vl"} <= set(panel.embedding_spaces):
            t, _ = panel.embeddings(b, "text")
            v, _ = panel.embeddings(b, "vl")
            d = vision_dependence(t[p], v[p])
        deltas.append(d)
        if cell_space is not None:
            e, _ = panel.embeddings(b, cell_space)
            embs.append(random_projection(e[p], projection_dim))
    return PoolData(
        category=pool.category,
        X=np.concatenate(mats, axis=1),
        features=ItemFeatures(
            benchmark=np.concatenate(bench),
            embedding=np.concatenate(embs) if embs else None,
            delta=np.concatenate(deltas),
        ),
        benchmark=np.concatenate(bench),
        position=np.concatenate(pos),
    )


@dataclass
class Stage2Result:
    """selected[category][benchmark] = sorted item positions kept; table per category;
    draws[category][benchmark] = the probability design of the kept items (aligned with
    ``selected``: inclusion probabilities, strata and their sizes) where the selector draws with
    known probabilities (``select.stratified``), absent otherwise."""

    selected: dict[str, dict[str, np.ndarray]]
    table: pd.DataFrame
    draws: dict[str, dict[str, Draw]] = field(default_factory=dict)

    @property
    def n_items(self) -> int:
        return int(sum(len(v) for d in self.selected.values() for v in d.values()))


def stage2_factory(
    name: str = DEFAULT_SELECTOR,
    alpha: float = ALPHA,
    cells: str = "embedding",
    random_state: int = 0,
    top_share: float = 0.0,
    top_fraction: float = TOP_FRACTION,
) -> SelectorFactory:
    """budget → selector. ``vaw`` is the paper's VAW with the given α and cells; every other
    name comes from :mod:`primebench_tasks.select.registry`. With ``top_share`` > 0 the selector
    fills what :class:`~primebench_tasks.select.headroom.TopReserveSelector` leaves after
    reserving that share of each benchmark for the strongest models' items (the pipeline passes
    ``PipelineParams.top_share``; 0 here = the selector alone)."""
    if name == "vaw":

        def base(k: int) -> Selector:
            return VAWSelector(k=k, random_state=random_state, alpha=alpha, cells=cells)

    else:
        from primebench_tasks.select.registry import SELECTORS, SelectorContext

        if name not in SELECTORS:
            raise ConfigError(f"unknown selector {name!r}; known: {', '.join(SELECTORS)}")

        def base(k: int) -> Selector:
            return SELECTORS[name](k, random_state, SelectorContext())

    if top_share <= 0:
        return base
    from primebench_tasks.select.headroom import TopReserveSelector

    return lambda k: TopReserveSelector(
        k,
        base=base,
        random_state=random_state,
        top_share=top_share,
        top_fraction=top_fraction,
    )


def stage2_prune(
    panel: Panel,
    pools: list[CategoryPool],
    retention: float = RETENTION,
    floor: int = FLOOR,
    selector: SelectorFactory | None = None,
    cell_space: str = "auto",
    progress: Callable[[str], None] | None = None,
) -> Stage2Result:
    """Keep K_C = max(⌊r·n_C⌋, min(n_C, floor)) items of each pool, chosen by ``selector``
    (default: :data:`DEFAULT_SELECTOR`) on this panel's models."""
    space = resolve_cell_space(panel, cell_space)
    make = selector or stage2_factory()
    selected: dict[str, dict[str, np.ndarray]] = {}
    draws: dict[str, dict[str, Draw]] = {}
    rows = []
    for pool in pools:
        data = pool_data(panel, pool, space)
        k = category_budget(data.X.shape[1], retention, floor)
        sel = make(k).fit(data.X, data.features)
        idx = sel.indices_
        drawn = isinstance(sel, StratifiedSelector)
        by_b: dict[str, np.ndarray] = {}
        for b in pool.items:
            mask = data.benchmark[idx] == b
            if mask.any():
                order = np.argsort(data.position[idx][mask], kind="stable")
                by_b[b] = data.position[idx][mask][order]
                if drawn:
                    draws.setdefault(pool.category, {})[b] = Draw.of(sel, mask, order)
        selected[pool.category] = by_b
        rows.append(
            {
                "category": pool.category,
                "representative": pool.representative,
                "pool": data.X.shape[1],
                "budget": k,
                "kept": len(idx),
                "cells": int(sum(getattr(sel, "n_cells_", {}).values())),
                "chosen": getattr(sel, "chosen_", ""),
                "reserved_top": int(len(getattr(sel, "reserved_", ()))),
            }
        )
        if progress:
            progress(f"stage 2: {pool.category}: {len(idx)} of {data.X.shape[1]} items")
    return Stage2Result(selected=selected, table=pd.DataFrame(rows), draws=draws)


def pooled_category_scores(
    panel: Panel, selected: dict[str, dict[str, np.ndarray]]
) -> pd.DataFrame:
    """s̃_C per model: the item-pooled mean over a category's selected items (M × categories)."""
    out = {}
    for cat, by_b in selected.items():
        valid_sum = np.zeros(len(panel.model_names))
        cnt = np.zeros(len(panel.model_names))
        for b, pos in by_b.items():
            X = panel.matrix(b)[:, pos]
            v = np.isfinite(X)
            valid_sum += np.where(v, X, 0.0).sum(axis=1)
            cnt += v.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[cat] = np.where(cnt > 0, valid_sum / cnt, np.nan)
    return pd.DataFrame(out, index=panel.model_names)
