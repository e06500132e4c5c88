"""Stage 3: category-count pruning by exhaustive k-subset search (PRIMEBench §4.4 Eq. 7, App. E)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from math import comb

import numpy as np
import pandas as pd

from primebench_tasks.errors import ConfigError
from primebench_tasks.metrics import spearman, spearman_many
from primebench_tasks.pipeline.params import MAX_SUBSETS, K

TIE_TOL = 1e-12


@dataclass
class Stage3Result:
    categories: list[str]
    rho: float
    n_subsets: int
    method: str


def _complete_rows(S: pd.DataFrame) -> pd.DataFrame:
    return S.loc[S.notna().all(axis=1)]


def stage3_select(
    S: pd.DataFrame, k: int = K, max_subsets: int = MAX_SUBSETS, chunk: int = 20_000
) -> Stage3Result:
    """Eq. 7: the k-subset of category columns of ``S`` (models × categories, pruned scores)
    whose mean ranks the models most like the mean over all columns (Spearman ρ). Exact ties →
    the first subset in alphabetical category order. Models with a missing category score are
    left out. Above ``max_subsets`` subsets, greedy forward selection is used instead."""
    S = _complete_rows(S)
    cats = sorted(S.columns)
    n = len(cats)
    if not 1 <= k <= n:
        raise ConfigError(f"k must be in [1, {n}], got {k}")
    V = S[cats].to_numpy(dtype=np.float64)
    ref = V.mean(axis=1)
    total = comb(n, k)
    if total > max_subsets:
        return _greedy(V, ref, cats, k)
    best_rho, best_idx = -np.inf, None
    combos_iter = itertools.combinations(range(n), k)
    seen = 0
    while True:
        block = np.array(list(itertools.islice(combos_iter, chunk)), dtype=np.int64)
        if len(block) == 0:
            break
        means = V[:, block].mean(axis=2)  # (M, n_block)
        rhos = np.nan_to_num(spearman_many(means, ref), nan=-2.0)
        j = int(np.argmax(rhos))
        if rhos[j] > best_rho + TIE_TOL:
            best_rho, best_idx = float(rhos[j]), block[j]
        seen += len(block)
    assert best_idx is not None  # at least one subset was scored
    return Stage3Result([cats[i] for i in best_idx], best_rho, seen, "exhaustive")


def _greedy(V: np.ndarray, ref: np.ndarray, cats: list[str], k: int) -> Stage3Result:
    chosen: list[int] = []
    rho = -np.inf
    for _ in range(k):
        rest = [j for j in range(len(cats)) if j not in chosen]
        means = np.stack([V[:, chosen + [j]].mean(axis=1) for j in rest], axis=1)
        rhos = np.nan_to_num(spearman_many(means, ref), nan=-2.0)
        j = int(np.argmax(rhos))
        chosen.append(rest[j])
        rho = float(rhos[j])
    return Stage3Result(sorted(cats[i] for i in chosen), rho, len(cats) * k, "greedy")


def k_sweep(
    S: pd.DataFrame,
    reference: pd.Series,
    items_per_category: dict[str, int],
    ks: list[int] | None = None,
    max_subsets: int = MAX_SUBSETS,
) -> pd.DataFrame:
    """Table 15 analogue: for each k, the Stage 3 ρ (against all pruned categories), the
    end-to-end ρ (against ``reference``: the mean of category means over all Stage 0-cleaned
    benchmarks), the items kept and the selected categories."""
    rows = []
    for k in ks or list(range(1, S.shape[1] + 1)):
        r = stage3_select(S, k, max_subsets)
        e2e = spearman(
            S[r.categories].mean(axis=1).to_numpy(), reference.reindex(S.index).to_numpy()
        )
        rows.append(
            {
                "k": k,
                "stage3_rho": round(r.rho, 4),
                "end_to_end_rho": round(e2e, 4),
                "items": int(sum(items_per_category[c] for c in r.categories)),
                "categories": ", ".join(r.categories),
                "method": r.method,
            }
        )
    return pd.DataFrame(rows)


def spectrum(S: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Singular values of the z-normalised model × category matrix and their cumulative energy
    Σσ² (Fig. 2). Each category's score vector is z-scored over the models, as Stage 1 z-scores
    benchmark score vectors; models with a missing category score are left out."""
    V = _complete_rows(S).to_numpy(dtype=np.float64)
    sd = V.std(axis=0)
    Z = (V - V.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    sv = np.linalg.svd(Z, compute_uv=False)
    energy = np.cumsum(sv**2) / max((sv**2).sum(), 1e-300)
    return sv, energy
