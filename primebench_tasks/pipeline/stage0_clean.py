"""Stage 0: data cleaning (PRIMEBench §4.1, App. B).

All-correct filter: drop an item when every model with a valid score gets the maximum (1 after
scaling). Blind-solvability filter: β_i = mean blind score over the models run without the image;
drop when β_i ≥ τ (τ = 2/3) — only on benchmarks with enough valid blind scores; the others get the
all-correct filter only, as the paper does for eight benchmarks. All-wrong items are kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from primebench_tasks.data.panel import Panel
from primebench_tasks.pipeline.params import MIN_BLIND_MODELS as MIN_BLIND_MODELS
from primebench_tasks.pipeline.params import TAU as TAU


@dataclass
class Stage0Result:
    """keep[b]: bool (N_b,) mask of the items that survive; table: Table 5 analogue."""

    keep: dict[str, np.ndarray]
    table: pd.DataFrame

    @property
    def n_in(self) -> int:
        return int(self.table["items"].sum())

    @property
    def n_out(self) -> int:
        return int(sum(int(k.sum()) for k in self.keep.values()))


def blind_mean(panel: Panel, benchmark: str, min_models: int) -> tuple[np.ndarray, bool, int]:
    """β_i (N_b,) = mean blind score per item over valid records (NaN with fewer than
    ``min_models`` valid blind records), whether the benchmark qualifies for the filter (at least
    ``min_models`` blind models, and at least half of its items with ``min_models`` valid blind
    records), and the number of blind models."""
    n = len(panel.item_ids(benchmark))
    if not panel.has_condition(benchmark, "blind"):
        return np.full(n, np.nan), False, 0
    B = panel.matrix(benchmark, "blind")
    valid = np.isfinite(B)
    n_models = int(valid.any(axis=1).sum())
    cnt = valid.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        beta = np.where(cnt >= min_models, np.where(valid, B, 0).sum(axis=0) / cnt, np.nan)
    qualifies = n_models >= min_models and (cnt >= min_models).mean() >= 0.5
    return beta, bool(qualifies), n_models


def stage0_clean(
    panel: Panel, tau: float = TAU, min_blind_models: int = MIN_BLIND_MODELS
) -> Stage0Result:
    """Apply both filters to every benchmark of ``panel`` (all of its models)."""
    keep: dict[str, np.ndarray] = {}
    rows = []
    for b in panel.benchmark_names:
        X = panel.matrix(b)
        valid = np.isfinite(X)
        has_valid = valid.any(axis=0)
        all_correct = has_valid & np.where(valid, X >= 1.0, True).all(axis=0)
        beta, qualifies, n_blind = blind_mean(panel, b, min_blind_models)
        blind = (
            (np.nan_to_num(beta, nan=-1.0) >= tau)
            if qualifies
            else np.zeros(X.shape[1], dtype=bool)
        )
        removed = all_correct | blind
        keep[b] = ~removed
        n = X.shape[1]
        rows.append(
            {
                "benchmark": b,
                "category": panel.category_of(b),
                "items": n,
                "all_correct": int(all_correct.sum()),
                "blind_solvable": int(blind.sum()),
                "both": int((all_correct & blind).sum()),
                "removed": int(removed.sum()),
                "pct_removed": round(100.0 * removed.sum() / n, 1) if n else 0.0,
                "all_wrong_kept": int(
                    (has_valid & np.where(valid, X <= 0.0, True).all(axis=0)).sum()
                ),
                "blind_models": n_blind,
                "blind_filter": qualifies,
            }
        )
    return Stage0Result(keep=keep, table=pd.DataFrame(rows))
