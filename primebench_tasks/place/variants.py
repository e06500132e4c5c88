"""Ranking close variants (checkpoints, LoRA adapters) on a suite: suite scores with bootstrap
intervals, pairwise "A beats B" probabilities, and the bootstrap ceiling of App. I.4 (the mean
Spearman ρ between bootstrap rankings and the observed ranking; a variant set supports a conclusion
only if it is ≥ 0.90)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from primebench_tasks.metrics import nanmean_rows, spearman
from primebench_tasks.place.defaults import N_BOOT_VARIANTS

CEILING_BAR = 0.90


def suite_scores(X: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Mean over groups (categories) of each row's nan-mean over the group's columns.
    X: (V, N) item scores in [0, 1] or NaN; groups: (N,) labels → (V,)."""
    labels = list(dict.fromkeys(groups.tolist()))
    cols = [nanmean_rows(X[:, groups == g]) for g in labels]
    with np.errstate(all="ignore"):
        return np.nanmean(np.column_stack(cols), axis=1)


def bootstrap_suite_scores(
    X: np.ndarray, groups: np.ndarray, n_boot: int = N_BOOT_VARIANTS, seed: int = 0
) -> np.ndarray:
    """(n_boot, V) suite scores over item resamples drawn with replacement within each group
    (the same resample for every row)."""
    rng = np.random.default_rng(seed)
    members = [np.flatnonzero(groups == g) for g in dict.fromkeys(groups.tolist())]
    out = np.empty((n_boot, X.shape[0]))
    for b in range(n_boot):
        idx = np.concatenate([m[rng.integers(len(m), size=len(m))] for m in members])
        out[b] = suite_scores(X[:, idx], groups[idx])
    return out


def ceiling_of(boots: np.ndarray, observed: np.ndarray) -> float:
    """Mean Spearman ρ between each bootstrap ranking (rows of ``boots``) and ``observed``."""
    rhos = np.array([spearman(b, observed) for b in boots])
    return float(rhos[np.isfinite(rhos)].mean()) if np.isfinite(rhos).any() else float("nan")


def rank_variants(
    scores: pd.DataFrame, categories: pd.Series, n_boot: int = N_BOOT_VARIANTS, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """Rank variants from their item scores.

    ``scores``: index = variant names, columns = item keys, values in [0, 1] or NaN (missing);
    ``categories``: category of each column. Returns (table sorted best first with ``rank``,
    ``suite_score`` and its [2.5, 97.5] interval ``lo``/``hi`` and ``n_scored``; the pairwise
    matrix P[A, B] = P(suite score of A > that of B) over resamples, ties counted one half; the
    bootstrap ceiling)."""
    X = scores.to_numpy(float)
    groups = categories.reindex(scores.columns).to_numpy(object)
    observed = suite_scores(X, groups)
    boots = bootstrap_suite_scores(X, groups, n_boot, seed)
    lo, hi = np.nanpercentile(boots, [2.5, 97.5], axis=0)
    diff = boots[:, :, None] - boots[:, None, :]
    pairwise = pd.DataFrame(
        ((diff > 0) + 0.5 * (diff == 0)).mean(axis=0), index=scores.index, columns=scores.index
    )
    table = pd.DataFrame(
        {"suite_score": observed, "lo": lo, "hi": hi, "n_scored": np.isfinite(X).sum(axis=1)},
        index=scores.index,
    )
    table = table.sort_values("suite_score", ascending=False, kind="stable")
    table.insert(0, "rank", np.arange(1, len(table) + 1))
    table.index.name = "variant"
    ceiling = ceiling_of(boots, observed) if len(scores) > 1 else float("nan")
    return table, pairwise.loc[table.index, table.index], ceiling


SEPARATION_LEVEL = 0.95
"""Two variants are separated when the paired bootstrap puts one above the other with
probability ≥ 1 − (1 − level)/2 (a two-sided 95 % decision)."""


def variant_verdict(
    table: pd.DataFrame, pairwise: pd.DataFrame, level: float = SEPARATION_LEVEL
) -> dict[str, object]:
    """The verdict derived from the same resamples as ``pairwise`` (P[A, B] = P(A beats B)):
    which adjacent pairs of the ranking are separated, the groups of variants the suite cannot
    tell apart (runs of unseparated neighbours), and the winner — named only when the top
    variant is separated from the second. ``table`` is sorted best first."""
    order = list(table.index)
    need = 1 - (1 - level) / 2
    adjacent: list[dict[str, Any]] = [
        {
            "better": str(a),
            "worse": str(b),
            "p_better": float(pairwise.loc[a, b]),
            "separated": bool(pairwise.loc[a, b] >= need),
        }
        for a, b in zip(order, order[1:], strict=False)
    ]
    groups: list[list[str]] = [[str(order[0])]] if order else []
    for pair in adjacent:
        if pair["separated"]:
            groups.append([pair["worse"]])
        else:
            groups[-1].append(pair["worse"])
    winner = str(order[0]) if adjacent and adjacent[0]["separated"] else None
    if len(order) < 2:
        text = "one variant: nothing to compare"
    elif winner is not None:
        text = (
            f"{winner} is best (P(beats {adjacent[0]['worse']}) = "
            f"{adjacent[0]['p_better']:.3f} ≥ {need:.3f})"
        )
    else:
        text = (
            f"the top variants cannot be told apart at {level:.0%}: "
            f"P({adjacent[0]['better']} beats {adjacent[0]['worse']}) = "
            f"{adjacent[0]['p_better']:.3f} < {need:.3f}; evaluate more items or treat them "
            "as tied"
        )
    return {
        "level": level,
        "threshold": need,
        "adjacent": adjacent,
        "indistinguishable_groups": groups,
        "winner": winner,
        "fully_ordered": all(p["separated"] for p in adjacent),
        "text": text,
    }
