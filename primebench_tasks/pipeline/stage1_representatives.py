"""Stage 1: one representative benchmark per capability category, with multi-source item
supplementation for low-ρ categories (PRIMEBench §4.2 Eq. 3, App. C)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from primebench_tasks.data.panel import Panel
from primebench_tasks.metrics import nanmean_rows, spearman, spearman_many, zscore
from primebench_tasks.pipeline.params import TARGET_RHO
from primebench_tasks.select.base import item_variance


@dataclass
class CategoryPool:
    """A Stage 1 category pool: the representative's cleaned items plus supplements.

    items[b] are item positions of benchmark b (columns of its score matrix), in pool order.
    """

    category: str
    representative: str
    rep_rho: float
    candidate_rho: dict[str, float]
    items: dict[str, np.ndarray]
    tier: int = 1
    added: int = 0
    available: int = 0
    final_rho: float = float("nan")
    rep_items: int = 0
    prefix_rho: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def size(self) -> int:
        return int(sum(len(v) for v in self.items.values()))


def benchmark_scores(panel: Panel, keep: dict[str, np.ndarray]) -> pd.DataFrame:
    """s_{m,b}: per-model mean item score on each benchmark's kept items, (models × benchmarks)."""
    cols = {b: nanmean_rows(panel.matrix(b)[:, keep[b]]) for b in panel.benchmark_names}
    return pd.DataFrame(cols, index=panel.model_names)


def category_mean(s: pd.DataFrame, benchmarks: list[str]) -> np.ndarray:
    """s_C = (1/|C|) Σ_b z(s_b) over a category's benchmarks, NaN-aware, (M,)."""
    z = np.column_stack([zscore(s[b].to_numpy()) for b in benchmarks])
    return np.nanmean(z, axis=1) if z.shape[1] > 1 else z[:, 0]


def choose_representative(
    s: pd.DataFrame, benchmarks: list[str]
) -> tuple[str, float, dict[str, float], np.ndarray]:
    """Eq. 3: b* = argmax_b ρ(s_b, s_C); exact ties → the earlier benchmark in catalogue order."""
    sc = category_mean(s, benchmarks)
    rhos = {b: spearman(s[b].to_numpy(), sc) for b in benchmarks}
    if len(benchmarks) == 1:
        rhos = {benchmarks[0]: 1.0}
    best = max(benchmarks, key=lambda b: (np.nan_to_num(rhos[b], nan=-2.0), -benchmarks.index(b)))
    return best, rhos[best], rhos, sc


def supplement(
    panel: Panel,
    keep: dict[str, np.ndarray],
    benchmarks: list[str],
    rep: str,
    sc: np.ndarray,
    target: float = TARGET_RHO,
) -> tuple[dict[str, np.ndarray], int, int, float, np.ndarray]:
    """App. C.2: add the other benchmarks' cleaned items in descending variance of their scaled
    scores (ties by benchmark order, then item index) and recompute, after each addition, the
    Spearman ρ between the item-pooled score of the pool and the category mean. Stop at the first
    prefix with ρ ≥ target, else take the prefix with the highest ρ (shortest among equals).

    All prefixes are evaluated at once from cumulative per-model sums.
    Returns (items per benchmark, added, available, final ρ, ρ of every prefix (0..available)).
    """
    X_rep = panel.matrix(rep)[:, keep[rep]]
    valid = np.isfinite(X_rep)
    s0 = np.where(valid, X_rep, 0.0).sum(axis=1)
    c0 = valid.sum(axis=1).astype(np.float64)
    cand_b, cand_pos, cand_var, cand_border = [], [], [], []
    mats = []
    for j, b in enumerate(benchmarks):
        if b == rep:
            continue
        pos = np.flatnonzero(keep[b])
        X = panel.matrix(b)[:, pos]
        var, _ = item_variance(X)
        mats.append(X)
        cand_b.extend([b] * len(pos))
        cand_pos.append(pos)
        cand_var.append(var)
        cand_border.append(np.full(len(pos), j))
    rep_items = {rep: np.flatnonzero(keep[rep])}
    ok = np.isfinite(sc)
    if not mats:
        rho0 = spearman(s0 / np.maximum(c0, 1), sc)
        return rep_items, 0, 0, rho0, np.array([rho0])
    X_all = np.concatenate(mats, axis=1)
    pos_all = np.concatenate(cand_pos)
    var_all = np.concatenate(cand_var)
    border = np.concatenate(cand_border)
    # rounded so that float noise in equal variances does not override the tie rule
    order = np.lexsort((pos_all, border, -np.round(np.nan_to_num(var_all, nan=-1.0), 12)))
    Xo = X_all[:, order]
    vo = np.isfinite(Xo)
    cs = np.cumsum(np.where(vo, Xo, 0.0), axis=1)
    cc = np.cumsum(vo, axis=1)
    sums = np.concatenate([s0[:, None], s0[:, None] + cs], axis=1)
    cnts = np.concatenate([c0[:, None], c0[:, None] + cc], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled = sums / cnts
    rows_ok = ok & np.isfinite(pooled).all(axis=1)
    rhos = spearman_many(pooled[rows_ok], sc[rows_ok])
    r = np.nan_to_num(rhos, nan=-2.0)
    hit = np.flatnonzero(r >= target)
    n_add = int(hit[0]) if len(hit) else int(np.argmax(r))
    chosen = order[:n_add]
    labels = np.asarray(cand_b, dtype=object)[chosen]
    items = dict(rep_items)
    for b in benchmarks:
        if b != rep and (labels == b).any():
            items[b] = np.sort(pos_all[chosen][labels == b])
    return items, n_add, len(order), float(rhos[n_add]), rhos


@dataclass
class Stage1Result:
    pools: list[CategoryPool]

    def table(self) -> pd.DataFrame:
        """Tables 6 and 8 analogue: one row per category."""
        return pd.DataFrame(
            [
                {
                    "category": p.category,
                    "representative": p.representative,
                    "stage1_rho": round(p.rep_rho, 3),
                    "tier": p.tier,
                    "rep_items": p.rep_items,
                    "added": p.added,
                    "available": p.available,
                    "final_rho": round(p.final_rho, 3),
                    "pool": p.size,
                }
                for p in self.pools
            ]
        )

    def candidates_table(self) -> pd.DataFrame:
        """Table 7 analogue: every candidate's ρ with its category mean."""
        return pd.DataFrame(
            [
                {
                    "category": p.category,
                    "benchmark": b,
                    "rho": round(r, 3),
                    "representative": b == p.representative,
                }
                for p in self.pools
                for b, r in p.candidate_rho.items()
            ]
        )


def stage1_representatives(
    panel: Panel,
    keep: dict[str, np.ndarray],
    target: float = TARGET_RHO,
    supplement_items: bool = True,
) -> Stage1Result:
    """Pick each category's representative (Eq. 3) and supplement it when ρ < target (C.2).
    Reads every model of ``panel`` (pass a model subset for the end-to-end protocol)."""
    s = benchmark_scores(panel, keep)
    pools = []
    for cat, benches in panel.categories().items():
        rep, rho, rhos, sc = choose_representative(s, benches)
        rep_items = int(keep[rep].sum())
        if supplement_items and len(benches) > 1 and not rho >= target:
            items, added, avail, final, prefix = supplement(panel, keep, benches, rep, sc, target)
            tier = 2 if final >= target else 3
        else:
            items = {rep: np.flatnonzero(keep[rep])}
            avail = int(sum(keep[b].sum() for b in benches if b != rep))
            added, final, prefix, tier = 0, rho, np.array([rho]), 1
        pools.append(
            CategoryPool(
                category=cat,
                representative=rep,
                rep_rho=float(rho),
                candidate_rho=rhos,
                items=items,
                tier=tier,
                added=added,
                available=avail,
                final_rho=float(final),
                rep_items=rep_items,
                prefix_rho=prefix,
            )
        )
    return Stage1Result(pools=pools)
