"""Rank-fidelity metrics and NaN-aware reductions: the bottom layer that the pipeline, the
selectors, the estimators and the protocols all use (it imports no other part of the package)."""

from __future__ import annotations

import numpy as np
from scipy import stats


def rank_columns(x: np.ndarray) -> np.ndarray:
    """Average ranks (1 = smallest) down axis 0 of a (M,) or (M, n) array without NaNs."""
    return stats.rankdata(x, axis=0, method="average")


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman rho over the entries where both are finite; NaN when fewer than 3 remain or
    either side is constant."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 3:
        return float("nan")
    return float(spearman_many(a[ok][:, None], b[ok])[0])


def spearman_many(y: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Spearman rho of every column of ``y`` (M, n) with ``ref`` (M,), no NaNs allowed.

    Returns (n,); a constant column gives NaN. Ties get average ranks, as scipy.stats.spearmanr.
    """
    ry = rank_columns(y)
    rr = rank_columns(np.asarray(ref, dtype=float))
    ry = ry - ry.mean(axis=0)
    rr = rr - rr.mean()
    num = rr @ ry
    den = np.sqrt((ry * ry).sum(axis=0) * (rr @ rr))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = num / den
    out[den == 0] = np.nan
    return np.clip(out, -1.0, 1.0)


def kendall(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall tau-b over the entries where both are finite."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 3:
        return float("nan")
    return float(stats.kendalltau(a[ok], b[ok]).statistic)


def top_k_overlap(a: np.ndarray, b: np.ndarray, k: int = 5) -> float:
    """|top-k by a ∩ top-k by b| / k (higher score = better; ties broken by position)."""
    ta = set(np.argsort(-np.asarray(a, dtype=float), kind="stable")[:k])
    tb = set(np.argsort(-np.asarray(b, dtype=float), kind="stable")[:k])
    return len(ta & tb) / k


def nanmean_rows(x: np.ndarray) -> np.ndarray:
    """Per-row mean over finite entries of (M, n); NaN for a row with none."""
    valid = np.isfinite(x)
    s = np.where(valid, x, 0.0).sum(axis=1, dtype=np.float64)
    c = valid.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(c > 0, s / np.maximum(c, 1), np.nan)


def zscore(x: np.ndarray) -> np.ndarray:
    """(x - mean) / sd over finite entries (population sd); a constant vector gives zeros."""
    x = np.asarray(x, dtype=float)
    mu = np.nanmean(x)
    sd = np.nanstd(x)
    return (x - mu) / sd if sd > 0 else np.where(np.isfinite(x), 0.0, np.nan)
