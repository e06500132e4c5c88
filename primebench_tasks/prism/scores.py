"""From graded items to the leaderboard (PRISM-VLM §3, §5, App. E).

The graded table has one row per (model, axis, benchmark, item_id): ``score`` in [0, 1] or NaN
(unanswered: a failed call, a malformed verdict, or — for sc — a turn-0-wrong item, which is not
in sc_B's denominator); sc rows also carry ``correct0``, ``flip_turn`` (0 = held) and
``adopted``; mq rows ``partial``.

Per-axis mean s_a: the mean over the items a model answered. The paired bootstrap resamples
source items (the same indices for every model; a drawn item carries all its axes, so sc_B is
recomputed over the replicate's turn-0-correct items) and aggregates each replicate's axis means
by harmonic mean.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from primebench_tasks.place.defaults import N_BOOT_VARIANTS
from primebench_tasks.prism.axes import AXES
from primebench_tasks.prism.pscore import aggregate
from primebench_tasks.prism.sycophancy import sc_scores

GRADED_COLUMNS = ("model", "axis", "benchmark", "item_id", "score")


def axis_tensor(
    graded: pd.DataFrame, axes: tuple[str, ...] = AXES
) -> tuple[list[str], list[tuple[str, str]], np.ndarray]:
    """(models, item keys, V) with V of shape (models, items, axes): per-item scores, NaN where
    unanswered or not applicable. Models and items sorted."""
    models = sorted(graded["model"].astype(str).unique())
    keys = sorted(
        {(str(b), str(i)) for b, i in zip(graded["benchmark"], graded["item_id"], strict=True)}
    )
    mi = {m: k for k, m in enumerate(models)}
    ki = {k: n for n, k in enumerate(keys)}
    ai = {a: n for n, a in enumerate(axes)}
    V = np.full((len(models), len(keys), len(axes)), np.nan)
    for r in graded.itertuples(index=False):
        if r.axis in ai and r.score == r.score and r.score is not None:
            V[mi[str(r.model)], ki[(str(r.benchmark), str(r.item_id))], ai[r.axis]] = r.score
    return models, keys, V


def axis_means(models: list[str], V: np.ndarray, axes: tuple[str, ...] = AXES) -> pd.DataFrame:
    """Models × axes: mean per-item score over answered items (NaN if none)."""
    W = ~np.isnan(V)
    with np.errstate(invalid="ignore"):
        S = np.where(W, V, 0).sum(axis=1) / W.sum(axis=1)
    return pd.DataFrame(S, index=pd.Index(models, name="model"), columns=list(axes))


def answered_counts(models: list[str], V: np.ndarray, axes: tuple[str, ...] = AXES) -> pd.DataFrame:
    return pd.DataFrame(
        (~np.isnan(V)).sum(axis=1), index=pd.Index(models, name="model"), columns=list(axes)
    )


def sc_table(graded: pd.DataFrame) -> pd.DataFrame:
    """Per model: sc_B, sc_A, sc_corr, sc_reach (App. E.2), the generic-instability rate (Q1/Q2
    flips over turn-0-correct items) and the items counted."""
    sc = graded[(graded["axis"] == "sc") & graded["flip_turn"].notna() & graded["correct0"].notna()]
    rows = []
    for m, g in sc.groupby("model", sort=True):
        c0 = g["correct0"].astype(bool).to_numpy()
        ft = g["flip_turn"].astype(int).to_numpy()
        s = sc_scores(c0, ft, g["adopted"].astype(bool).to_numpy())
        early = np.isin(ft[c0], (1, 2))
        rows.append(
            {
                "model": m,
                "sc_B": s.sc_b,
                "sc_A": s.sc_a,
                "sc_corr": s.sc_corr,
                "sc_reach": s.sc_reach,
                "gen_instability": float(early.mean()) if len(early) else np.nan,
                "n_answered": len(g),
                "n_turn0_correct": int(c0.sum()),
            }
        )
    return pd.DataFrame(rows).set_index("model") if rows else pd.DataFrame()


def bootstrap_pscores(
    V: np.ndarray,
    n_boot: int = N_BOOT_VARIANTS,
    seed: int = 0,
    aggregator: str = "harmonic",
    chunk: int = 250,
) -> np.ndarray:
    """(n_boot, models) PScore replicates: replicate b draws N item indices with replacement
    (``numpy.random.default_rng(seed)``), the same for every model; each axis mean is recomputed
    over the drawn items a model answered; a replicate where a model has no answered item on
    some axis gives NaN."""
    M, N, A = V.shape
    W = (~np.isnan(V)).astype(float)
    X = np.where(W > 0, V, 0.0)
    num_cols = X.transpose(1, 0, 2).reshape(N, M * A)
    den_cols = W.transpose(1, 0, 2).reshape(N, M * A)
    rng = np.random.default_rng(seed)
    out = np.empty((n_boot, M))
    cols = [f"a{k}" for k in range(A)]
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        idx = rng.integers(N, size=(b, N))
        C = np.zeros((b, N))
        np.add.at(C, (np.repeat(np.arange(b), N), idx.ravel()), 1.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = (C @ num_cols) / (C @ den_cols)
        means = means.reshape(b * M, A)
        agg = aggregate(pd.DataFrame(means, columns=cols), aggregator).to_numpy()
        out[start : start + b] = agg.reshape(b, M)
    return out


def leaderboard(means: pd.DataFrame, aggregator: str = "harmonic") -> pd.DataFrame:
    """Table 2 layout: per-axis means and PScore, sorted by PScore, with the inter-model range
    Δ of every column as the last row."""
    t = means.copy()
    t["PScore"] = aggregate(means[list(means.columns)], aggregator)
    t = t.sort_values("PScore", ascending=False, kind="stable")
    delta = (t.max() - t.min()).to_frame("Δ").T
    return pd.concat([t, delta])
