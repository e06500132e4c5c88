"""Adaptive evaluation: ask each model the items that tell the most about it, stop when its
predicted full score is known well enough (Fluid Benchmarking's 2PL + maximum Fisher information,
COLM 2025; the stopping rule of "Stop Guessing When to Stop Testing", 2026).

Per benchmark, a 2PL (P(correct) = σ(a_i·θ − b_i)) is fitted on the reference models' binarised
responses (:func:`~primebench_tasks.select.irt.fit_2pl_cached`). A model is asked in rounds of
``batch`` items: each round takes the not-yet-asked items of highest Fisher information
a_i²·P_i(θ̂)·(1 − P_i(θ̂)) at its current MAP ability θ̂ (N(0, 1) prior), then θ̂ is re-estimated
from every answer so far. The predicted full score is p-IRT's: (Σ answers + Σ_{unasked}
P_i(θ̂)) / n. Its interval is conformal: the point plus quantiles of the errors that the same
procedure made, at the same number of items, on reference models held out of the 2PL fit
(:func:`calibrate`; ``folds``-fold over the reference models) — so it holds the 2PL's misfit, not
only the ability's posterior spread. (No stopping rule yet: the replay reports every checkpoint.)

:func:`replay` is the measurement protocol: held-out models' recorded answers stand in for the
model, so the policy is scored without running one (``benchmarks/adaptive_replay.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from primebench_tasks.evaluate.placement import conformal_bounds
from primebench_tasks.metrics import nanmean_rows
from primebench_tasks.select.irt import IRT2PL, binarize, estimate_theta, fit_2pl_cached

BATCH = 5
"""Items asked per round (one engine batch per round per model)."""
LEVEL = 0.90


def information(model: IRT2PL, theta: np.ndarray) -> np.ndarray:
    """Fisher information a²·P·(1 − P) of every item at each ability: (V, n)."""
    p = model.prob(np.asarray(theta, float))
    return (model.a[None, :] ** 2) * p * (1.0 - p)


def predict_full(model: IRT2PL, theta: np.ndarray, Y_asked: np.ndarray) -> np.ndarray:
    """p-IRT's full-score prediction from the answers so far: ``Y_asked`` (V, n) holds each
    model's scores on its asked items and NaN elsewhere; the unasked items count P_i(θ̂)."""
    p = model.prob(np.asarray(theta, float))
    asked = np.isfinite(Y_asked)
    return np.where(asked, Y_asked, p).mean(axis=1)


def _run(
    model: IRT2PL,
    Y_true: np.ndarray,
    checkpoints: Sequence[int],
    batch: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Ask every row of ``Y_true`` (V, n; NaN = the model has no answer there, never asked)
    adaptively up to max(checkpoints). Returns predictions (V, len(checkpoints)) and the asked
    order (V, max_items; −1 = none)."""
    V, n = Y_true.shape
    answerable = np.isfinite(Y_true)
    Y_bin = binarize(Y_true)
    asked = np.zeros((V, n), dtype=bool)
    theta = np.zeros(V)
    max_items = min(max(checkpoints), n)
    order = np.full((V, max_items), -1, dtype=np.int64)
    out = np.full((V, len(checkpoints)), np.nan)
    count = 0
    idx = np.arange(n)
    while count < max_items:
        take = min(batch, max_items - count)
        info = information(model, theta)
        info[asked | ~answerable] = -np.inf
        # the `take` most informative items per model; ties → the lower index
        pick = np.argsort(-info, axis=1, kind="stable")[:, :take]
        valid = np.take_along_axis(info, pick, axis=1) > -np.inf
        rows = np.repeat(np.arange(V), take)
        asked[rows[valid.ravel()], pick.ravel()[valid.ravel()]] = True
        order[:, count : count + take] = np.where(valid, pick, -1)
        count += take
        theta = estimate_theta(model, np.where(asked, Y_bin, np.nan), idx)
        for j, c in enumerate(checkpoints):
            if c == count or (c > count and count == max_items):
                out[:, j] = predict_full(model, theta, np.where(asked, Y_true, np.nan))
    return out, order


def calibrate(
    Y_ref: np.ndarray,
    checkpoints: Sequence[int],
    batch: int = BATCH,
    folds: int = 5,
    seed: int = 0,
) -> np.ndarray:
    """Held-out errors (true − predicted full score) of the adaptive procedure at each checkpoint:
    ``folds``-fold over the reference models (the 2PL fitted without the fold, the fold replayed).
    Returns (M, len(checkpoints)); NaN for a model without a full score."""
    M = len(Y_ref)
    order = np.random.default_rng(seed).permutation(M)
    k = max(2, min(folds, M))
    full = nanmean_rows(Y_ref)
    out = np.full((M, len(checkpoints)), np.nan)
    for f in range(k):
        held = np.sort(order[f::k])
        fit = np.setdiff1d(np.arange(M), held)
        if len(fit) < 4 or len(held) == 0:
            continue
        model = fit_2pl_cached(binarize(Y_ref[fit]))
        pred, _ = _run(model, Y_ref[held], checkpoints, batch)
        out[held] = full[held, None] - pred
    return out


def conformal(point: float, errors: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """``point`` + the finite-sample quantiles of held-out ``errors`` (two-sided ``level``): the
    placement's own :func:`~primebench_tasks.evaluate.placement.conformal_bounds`."""
    lo, hi = conformal_bounds(np.array([point], dtype=float), np.asarray(errors, float), level)
    return float(lo[0]), float(hi[0])


def replay(
    Y_ref: np.ndarray,
    Y_new: np.ndarray,
    checkpoints: Sequence[int] = (25, 50, 100),
    batch: int = BATCH,
    level: float = LEVEL,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """The replay protocol on one benchmark: the reference models' responses ``Y_ref`` (M, n)
    fit the 2PL and calibrate the intervals; the new models' recorded responses ``Y_new`` (V, n)
    answer the adaptive questions. Returns ``predicted``, ``lo``, ``hi`` (V, C) at each checkpoint,
    ``true`` (V,) full scores and ``order`` (V, max items asked)."""
    model = fit_2pl_cached(binarize(Y_ref))
    pred, order = _run(model, Y_new, checkpoints, batch)
    errors = calibrate(Y_ref, checkpoints, batch, seed=seed)
    lo = np.full_like(pred, np.nan)
    hi = np.full_like(pred, np.nan)
    for v in range(len(Y_new)):
        for j in range(len(checkpoints)):
            lo[v, j], hi[v, j] = conformal(pred[v, j], errors[:, j], level)
    return {"predicted": pred, "lo": lo, "hi": hi, "true": nanmean_rows(Y_new), "order": order}
