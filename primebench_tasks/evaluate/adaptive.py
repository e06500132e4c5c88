"""Adaptive evaluation: ask each model the items that tell the most about it, stop when its
predicted full score is known well enough (after Fluid Benchmarking's 2PL + maximum Fisher
information, COLM 2025, and the stopping rule of "Stop Guessing When to Stop Testing", 2026).

Per benchmark, a 2PL (P(correct) = σ(a_i·θ − b_i)) is fitted on the reference models' binarised
responses (:func:`~primebench_tasks.select.irt.fit_2pl_cached`). A model is asked in rounds of
``batch`` items; its MAP ability θ̂ (N(0, 1) prior) is re-estimated from every answer so far. The
policy (:class:`AdaptivePolicy`; the default chosen by leave-one-panel-out in
``research/adaptive/adaptive_choice.py``) says which items a round asks and what the answers predict:

- ``regime`` / ``regime_local`` (the default): while p-IRT's prediction, (Σ answers +
  Σ_{unasked} P_i(θ̂)) / n, places the model inside the reference panel, the locally weighted
  linear-Gaussian model of :mod:`~primebench_tasks.evaluate.local_gaussian` chooses the items
  (those that most reduce the full score's posterior variance) and predicts (its kriging and
  p-IRT, weighted ¾ and ¼ by default); at the top of the panel or beyond it, maximum Fisher
  information a_i²·P_i(θ̂)·(1 − P_i(θ̂)) and the mean of p-IRT and a ridge regression of the
  reference full scores on the asked items (``blend``), because the 2PL extrapolates where
  neighbours cannot — above every reference model p-IRT weighted ``beyond_weight`` (0.6 by
  default; the ridge under-predicts there, p-IRT errs less; chosen in
  ``research/adaptive/adaptive_outside_weight.py``);
- ``fisher`` with ``pirt``/``ridge``/``blend``/``regime_blend``, or ``local`` with ``local`` /
  ``local_blend``: one rule everywhere.

The interval is conformal: the point plus quantiles of the errors that the same procedure made,
at the same number of items, on reference models held out of the 2PL fit (:func:`_calibration_runs`;
``folds``-fold over the reference models, and frontier folds) — so it holds the 2PL's misfit,
not only the ability's posterior spread; :meth:`AdaptiveBenchmark.stop_reason` ends a test when
it is narrow enough. :func:`race_variants` compares variants on the same items, drawn with
known probabilities so the comparison is of their full scores.

:func:`replay` is the measurement protocol: held-out models' recorded answers stand in for the
model, so the policy is scored without running one (``benchmarks/adaptive_replay.py``).
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from primebench_tasks.data.io import (
    atomic_write_text,
    canonical_json,
    content_hash,
    json_scalar,
    read_json_document,
)
from primebench_tasks.errors import InputError
from primebench_tasks.evaluate.calibration import FRONTIER_FOLDS, FRONTIER_SHARE
from primebench_tasks.evaluate.defaults import (
    ADAPTIVE_AGREEMENT,
    ADAPTIVE_BANDWIDTH,
    ADAPTIVE_BATCH,
    ADAPTIVE_BEYOND_WEIGHT,
    ADAPTIVE_CHOICE,
    ADAPTIVE_CHOICES,
    ADAPTIVE_FOLDS,
    ADAPTIVE_LEVEL,
    ADAPTIVE_NEAREST_SHIFT,
    ADAPTIVE_PIRT_WEIGHT,
    ADAPTIVE_PREDICTOR,
    ADAPTIVE_PREDICTORS,
    ADAPTIVE_RIDGE_ALPHA,
    ADAPTIVE_SHIFT,
    ADAPTIVE_SHIFTS,
    N_BOOT_VARIANTS,
)
from primebench_tasks.evaluate.local_gaussian import LocalGaussian
from primebench_tasks.evaluate.placement import (
    REGIMES,
    conformal_bounds,
    placement_position,
    placement_regime,
    regime_residuals,
)
from primebench_tasks.evaluate.variants import SEPARATION_LEVEL
from primebench_tasks.metrics import nanmean_rows
from primebench_tasks.select.irt import (
    IRT2PL,
    binarize,
    estimate_theta,
    fit_2pl_cached,
    information,
)

BATCH = ADAPTIVE_BATCH
LEVEL = ADAPTIVE_LEVEL

CALIBRATION_SCHEMA = "primebench.adaptive_calibration/3"
"""The stored calibration's schema (:attr:`AdaptiveBenchmark.calibration_file`); its version is
raised when :func:`_calibration_runs` changes what it computes, so no run reads an older one's
(the schema is part of :attr:`AdaptiveBenchmark.calibration_key`). Version 2: the errors are
rounded to :data:`CALIBRATION_DECIMALS`; version 3 adds each prediction's position among its
fitting models (``positions``, rounded alike)."""

CALIBRATION_DECIMALS = 7
"""The calibration's errors are rounded to this many decimals, in memory and in the kept file
alike: they come from a 2PL fit, MAP abilities and linear solves whose last bits depend on the
BLAS kernel, so unrounded the kept file had other bytes on another CPU. Measured on the five
replay panels' calibrations (22,680 errors; OpenBLAS's native kernel against Sandybridge): 16,949
differ, by up to 1.6e-11; an error crosses a rounding boundary with probability |δ|/10⁻⁷, so the
expected number of changed values in all five files is Σ|δ|/10⁻⁷ = 0.03 (at 8 decimals 0.3 — one
did change —, at 9 decimals 3.1). 1e-7 is far below the intervals' widths (≥ 0.05) and the
report's precision (6 decimals)."""

RACE_UNIFORM_SHARE = 0.5
"""A race draws each item with probability (1 − ρ)/n + ρ·s_i/Σs (ρ = this share; s_i the
variants' answer spread): the uniform part bounds every draw's weight 1/(n·q_i) by 1/(1 − ρ)."""


def predict_full(model: IRT2PL, theta: np.ndarray, Y_asked: np.ndarray) -> np.ndarray:
    """p-IRT's full-score prediction from the answers so far: ``Y_asked`` (V, n) holds each
    model's scores on its asked items and NaN elsewhere; the unasked items count P_i(θ̂)."""
    p = model.prob(np.asarray(theta, float))
    asked = np.isfinite(Y_asked)
    return np.where(asked, Y_asked, p).mean(axis=1)


def ridge_full(
    Y_fit: np.ndarray,
    full_fit: np.ndarray,
    items: np.ndarray,
    answers: np.ndarray,
    alpha: float = ADAPTIVE_RIDGE_ALPHA,
) -> float:
    """The full score a ridge regression predicts from the answers to ``items``: fitted on the
    reference models ``Y_fit`` (M, n) → their full scores ``full_fit`` (M,) with the columns
    ``items`` (a missing reference answer counts the item's mean; features and target centred,
    penalty ``alpha``), applied to ``answers`` (n,) (a missing answer counts the item's mean)."""
    items = np.asarray(items, dtype=np.int64)
    ok = np.isfinite(full_fit)
    A = np.asarray(Y_fit, float)[ok][:, items]
    f = np.asarray(full_fit, float)[ok]
    if len(items) == 0 or len(f) < 2:
        return float(np.mean(f)) if len(f) else float("nan")
    with warnings.catch_warnings():  # an item no reference model answered: 0.5
        warnings.simplefilter("ignore", RuntimeWarning)
        mu = np.nanmean(A, axis=0)
    mu = np.where(np.isfinite(mu), mu, 0.5)
    A = np.where(np.isfinite(A), A, mu)
    a_mean, f_mean = A.mean(axis=0), f.mean()
    Ac = A - a_mean
    w = np.linalg.solve(Ac.T @ Ac + alpha * np.eye(len(items)), Ac.T @ (f - f_mean))
    y = np.asarray(answers, float)[items]
    return float(f_mean + (np.where(np.isfinite(y), y, mu) - a_mean) @ w)


def check_predictor(predictor: str) -> str:
    """``predictor``, refused unless it is one of :data:`ADAPTIVE_PREDICTORS`."""
    if predictor not in ADAPTIVE_PREDICTORS:
        raise ValueError(f"predictor must be one of {ADAPTIVE_PREDICTORS}, not {predictor!r}")
    return predictor


def predict_adaptive(
    pirt: float,
    Y_fit: np.ndarray,
    full_fit: np.ndarray,
    items: np.ndarray,
    answers: np.ndarray,
    predictor: str,
    alpha: float = ADAPTIVE_RIDGE_ALPHA,
) -> float:
    """The full-score prediction of the regression predictors from p-IRT's ``pirt`` and the
    answers to ``items``: ``pirt``; ``ridge`` = :func:`ridge_full` (penalty ``alpha``);
    ``blend`` = (p-IRT + ridge)/2; ``regime_blend`` = the blend where p-IRT's prediction is
    inside the reference models' full scores (``interior``:
    :func:`~primebench_tasks.evaluate.placement.placement_regime`), else p-IRT. (The local
    predictors are :class:`AdaptivePolicy`'s, through :class:`AdaptiveProcedure`.)"""
    if check_predictor(predictor) == "pirt" or len(items) == 0:
        return float(pirt)
    if predictor in ("local", "local_blend", "regime_local"):
        raise ValueError(f"{predictor!r} needs the local model: use AdaptiveProcedure.point")
    if predictor == "regime_blend":
        ref = np.asarray(full_fit, float)
        regime = placement_regime(np.array([pirt]), ref[np.isfinite(ref)])[0]
        if regime != "interior":
            return float(pirt)
    ridge = ridge_full(Y_fit, full_fit, items, answers, alpha)
    return ridge if predictor == "ridge" else float((pirt + ridge) / 2)


@dataclass(frozen=True)
class AdaptivePolicy:
    """How an adaptive test chooses items and predicts the full score: ``predictor``
    (:data:`ADAPTIVE_PREDICTORS`), ``choice`` (:data:`ADAPTIVE_CHOICES`), the ridge penalty /
    local noise variance ``ridge_alpha``, and the local model's ``bandwidth`` and ``agreement``
    (:class:`~primebench_tasks.evaluate.local_gaussian.LocalGaussian`), and p-IRT's weight in
    the local blend ``pirt_weight`` (in [0, 1]; the local kriging has the rest), where the
    calibrated point moves by its regime's median error, ``shift`` (:data:`ADAPTIVE_SHIFTS`),
    and p-IRT's weight in ``regime_local``'s point where p-IRT places the model above every
    reference model, ``beyond_weight`` (in [0, 1]; the ridge regression has the rest; at the top
    of the panel ½). The defaults are the ones ``research/adaptive/adaptive_choice.py`` chose, and
    ``beyond_weight`` the one ``research/adaptive/adaptive_outside_weight.py`` chose after them."""

    predictor: str = ADAPTIVE_PREDICTOR
    choice: str = ADAPTIVE_CHOICE
    ridge_alpha: float = ADAPTIVE_RIDGE_ALPHA
    bandwidth: float = ADAPTIVE_BANDWIDTH
    agreement: float = ADAPTIVE_AGREEMENT
    pirt_weight: float = ADAPTIVE_PIRT_WEIGHT
    shift: str = ADAPTIVE_SHIFT
    beyond_weight: float = ADAPTIVE_BEYOND_WEIGHT

    def __post_init__(self) -> None:
        check_predictor(self.predictor)
        if self.shift not in ADAPTIVE_SHIFTS:
            raise ValueError(f"shift must be one of {ADAPTIVE_SHIFTS}, not {self.shift!r}")
        if not 0.0 <= self.pirt_weight <= 1.0:
            raise ValueError(f"pirt_weight must be in [0, 1], not {self.pirt_weight!r}")
        if not 0.0 <= self.beyond_weight <= 1.0:
            raise ValueError(f"beyond_weight must be in [0, 1], not {self.beyond_weight!r}")
        if self.choice not in ADAPTIVE_CHOICES:
            raise ValueError(f"choice must be one of {ADAPTIVE_CHOICES}, not {self.choice!r}")

    @property
    def local(self) -> bool:
        """Whether the policy needs the local model."""
        return self.choice != "fisher" or self.predictor in ("local", "local_blend", "regime_local")

    @property
    def label(self) -> str:
        """A short name: ``<predictor> α=… [h=… λ=…] [w=…] [shift=…] [beyond w=…] / <choice>``
        (w: p-IRT's weight in the local blend, named where it is not ½; shift named where it is
        not ``all``; beyond w: ``regime_local``'s :attr:`beyond_weight`, named where it is not
        ½)."""
        extra = f" h={self.bandwidth:g} λ={self.agreement:g}" if self.local else ""
        if self.predictor in ("local_blend", "regime_local") and self.pirt_weight != 0.5:
            extra += f" w={self.pirt_weight:g}"
        if self.shift != "all":
            extra += f" shift={self.shift}"
        if self.predictor == "regime_local" and self.beyond_weight != 0.5:
            extra += f" beyond w={self.beyond_weight:g}"
        alpha = f" α={self.ridge_alpha:g}" if self.predictor != "pirt" or self.local else ""
        return f"{self.predictor}{alpha}{extra} / {self.choice}"


class AdaptiveProcedure:
    """The adaptive procedure on one reference panel ``Y_fit`` (M, n), uncalibrated: its 2PL,
    the reference full scores and — for a local policy — the local model. :meth:`point` is where
    a model stands after its answers so far, :meth:`pick` the next items to ask it."""

    def __init__(self, Y_fit: np.ndarray, policy: AdaptivePolicy) -> None:
        self.policy = policy
        self.Y_fit = np.asarray(Y_fit, float)
        self.n = self.Y_fit.shape[1]
        self.model = fit_2pl_cached(binarize(self.Y_fit))
        self.full_fit = nanmean_rows(self.Y_fit)
        self.local = (
            LocalGaussian(
                self.Y_fit,
                self.model,
                alpha=policy.ridge_alpha,
                bandwidth=policy.bandwidth,
                agreement=policy.agreement,
            )
            if policy.local
            else None
        )
        self._memo: tuple[bytes, float, np.ndarray | None] | None = None

    def theta(self, answers: np.ndarray, asked: np.ndarray) -> float:
        """The MAP ability (N(0, 1) prior) from the answers (n,; NaN = not asked or failed) on
        the items ``asked`` (n,) bool."""
        answers, asked = np.asarray(answers, float), np.asarray(asked, bool)
        seen = np.flatnonzero(asked & np.isfinite(answers))
        if len(seen) == 0:
            return 0.0
        return float(estimate_theta(self.model, binarize(answers[None, seen]), seen)[0])

    def state(self, answers: np.ndarray, asked: np.ndarray) -> tuple[float, np.ndarray | None]:
        """:meth:`theta` and the local model's weights (None without one), kept for the last
        (answers, asked): a round predicts and chooses from the same state."""
        answers, asked = np.asarray(answers, float), np.asarray(asked, bool)
        key = asked.tobytes() + np.nan_to_num(answers, nan=-1.0).tobytes()
        if self._memo is not None and self._memo[0] == key:
            return self._memo[1], self._memo[2]
        theta = self.theta(answers, asked)
        w = None if self.local is None else self.local.weights(answers, asked, theta)
        self._memo = (key, theta, w)
        return theta, w

    def _pirt(self, answers: np.ndarray, asked: np.ndarray, theta: float) -> float:
        scored = asked & np.isfinite(answers)
        return float(
            predict_full(self.model, np.array([theta]), np.where(scored, answers, np.nan))[0]
        )

    def _regime(self, pirt: float) -> str:
        """Where p-IRT's prediction ``pirt`` falls among the reference full scores
        (:func:`~primebench_tasks.evaluate.placement.placement_regime`)."""
        ref = self.full_fit[np.isfinite(self.full_fit)]
        return str(placement_regime(np.array([pirt]), ref)[0])

    def _interior(self, pirt: float) -> bool:
        return self._regime(pirt) == "interior"

    def interior(self, answers: np.ndarray, asked: np.ndarray) -> bool:
        """Whether p-IRT places the model inside the reference panel (``interior``:
        :func:`~primebench_tasks.evaluate.placement.placement_regime`), where the ``regime_*``
        policies trust the local model; at the top or beyond it the 2PL extrapolates."""
        answers, asked = np.asarray(answers, float), np.asarray(asked, bool)
        return self._interior(self._pirt(answers, asked, self.state(answers, asked)[0]))

    def point(self, answers: np.ndarray, asked: np.ndarray) -> tuple[float, float]:
        """(ability, predicted full score) of the policy's predictor, uncalibrated."""
        answers, asked = np.asarray(answers, float), np.asarray(asked, bool)
        theta, w = self.state(answers, asked)
        scored = asked & np.isfinite(answers)
        pirt = self._pirt(answers, asked, theta)
        regime = self._regime(pirt)
        predictor = self.policy.predictor
        if predictor == "regime_local":
            predictor = "local_blend" if regime == "interior" else "blend"
        if predictor in ("local", "local_blend"):
            assert self.local is not None and w is not None
            local = self.local.predict(answers, scored, w)
            if predictor == "local":
                return theta, local
            w_pirt = self.policy.pirt_weight
            return theta, w_pirt * pirt + (1.0 - w_pirt) * local
        items = np.flatnonzero(scored)
        pred = predict_adaptive(
            pirt, self.Y_fit, self.full_fit, items, answers, predictor, self.policy.ridge_alpha
        )
        w_beyond = self.policy.beyond_weight
        if self.policy.predictor == "regime_local" and w_beyond != 0.5 and regime == "beyond":
            # above every reference model the ridge under-predicts and p-IRT errs less:
            # blend + (w − ½)·(p-IRT − ridge) (research/adaptive/adaptive_outside_weight.py's form)
            ridge = ridge_full(self.Y_fit, self.full_fit, items, answers, self.policy.ridge_alpha)
            pred = float(pred + (w_beyond - 0.5) * (pirt - ridge))
        return theta, pred

    def pick(
        self, answers: np.ndarray, asked: np.ndarray, k: int, exclude: np.ndarray | None = None
    ) -> np.ndarray:
        """The next ``k`` items to ask (fewer when fewer are left): the policy's choice."""
        answers, asked = np.asarray(answers, float), np.asarray(asked, bool)
        theta, w = self.state(answers, asked)
        choice = self.policy.choice
        if choice == "regime":
            choice = "local" if self._interior(self._pirt(answers, asked, theta)) else "fisher"
        if choice == "local":
            assert self.local is not None and w is not None
            return self.local.choose(answers, asked, k, w, exclude)
        info = information(self.model, np.array([theta]))[0]
        info[asked] = -np.inf
        if exclude is not None:
            info[np.asarray(exclude, bool)] = -np.inf
        pick = np.argsort(-info, kind="stable")[: int(k)]  # ties → the lower index
        return pick[np.isfinite(info[pick])]


def _run(
    procedure: AdaptiveProcedure, Y_true: np.ndarray, checkpoints: Sequence[int], batch: int
) -> tuple[np.ndarray, np.ndarray]:
    """Ask every row of ``Y_true`` (V, n; NaN = the model has no answer there, never asked)
    adaptively up to max(checkpoints), ``batch`` items a round. Returns the uncalibrated
    predictions (V, len(checkpoints)) and the asked order (V, max_items; −1 = none)."""
    V, n = Y_true.shape
    max_items = min(max(checkpoints), n)
    order = np.full((V, max_items), -1, dtype=np.int64)
    out = np.full((V, len(checkpoints)), np.nan)
    for v in range(V):
        y = Y_true[v]
        missing = ~np.isfinite(y)
        asked = np.zeros(n, bool)
        answers = np.full(n, np.nan)
        count = 0
        while count < max_items:
            pick = procedure.pick(answers, asked, min(batch, max_items - count), missing)
            order[v, count : count + len(pick)] = pick
            asked[pick], answers[pick] = True, y[pick]
            count += len(pick)
            done = len(pick) == 0 or count >= max_items
            for j, c in enumerate(checkpoints):
                if c == count or (c > count and done):
                    out[v, j] = procedure.point(answers, asked)[1]
            if done:
                break
    return out, order


def _calibration_runs(
    Y_ref: np.ndarray,
    checkpoints: Sequence[int],
    batch: int,
    folds: int,
    seed: int,
    frontier_folds: int = 0,
    policy: AdaptivePolicy | None = None,
    procedure: type[AdaptiveProcedure] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The adaptive procedure replayed on reference models held out of the 2PL fit: ``folds``
    random folds (every model once), then ``frontier_folds`` nested frontier folds as the static
    placement's calibration (:func:`~primebench_tasks.evaluate.calibration.placement_errors`):
    fold j holds out the models ranked ``[j·h, (j+1)·h)`` by full score (h = 15 % of the models)
    and fits on the models ranked below them only, so they stand above their whole reference
    panel. Returns errors (true − predicted full score) and predictions (R, C) — R = M rows of
    the random folds, then the frontier folds' rows — each prediction's placement regime among
    the fitting models' full scores (``""`` where there is none), which rows (R,) come from a
    frontier fold, and each prediction's position among the fitting models (R, C;
    :func:`~primebench_tasks.evaluate.placement.placement_position`). ``procedure``: the class
    replayed (:class:`AdaptiveProcedure` by default; a comparison script's variant)."""
    policy = AdaptivePolicy() if policy is None else policy
    procedure = AdaptiveProcedure if procedure is None else procedure
    M = len(Y_ref)
    full = nanmean_rows(Y_ref)
    order = np.random.default_rng(seed).permutation(M)
    k = max(2, min(folds, M))
    splits: list[tuple[np.ndarray, np.ndarray | None]] = [
        (np.sort(order[f::k]), None) for f in range(k)
    ]
    ranked = np.lexsort((np.arange(M), -np.nan_to_num(full, nan=-np.inf)))
    h = max(1, int(round(FRONTIER_SHARE * M)))
    for j in range(frontier_folds):
        held, below = np.sort(ranked[j * h : (j + 1) * h]), ranked[(j + 1) * h :]
        if len(below) < max(4, h) or len(held) == 0:
            break
        splits.append((held, np.sort(below)))
    rows_e, rows_p, rows_g, rows_f, rows_z = [], [], [], [], []
    for held, fit in splits:
        frontier = fit is not None
        fit = np.setdiff1d(np.arange(M), held) if fit is None else fit
        if len(fit) < 4 or len(held) == 0:
            continue
        pred, _ = _run(procedure(Y_ref[fit], policy), Y_ref[held], checkpoints, batch)
        rows_f.append(np.full(len(held), frontier))
        rows_e.append(full[held, None] - pred)
        rows_p.append(pred)
        rows_g.append(
            np.stack([placement_regime(pred[:, j], full[fit]) for j in range(len(checkpoints))], 1)
        )
        rows_z.append(placement_position(pred, full[fit]))
    if not rows_e:
        shape = (0, len(checkpoints))
        empty = np.empty(shape)
        return empty, empty, np.empty(shape, dtype=object), np.empty(0, bool), empty
    return (
        np.vstack(rows_e),
        np.vstack(rows_p),
        np.vstack(rows_g).astype(object),
        np.concatenate(rows_f),
        np.vstack(rows_z),
    )


def nearest_shift(errors: np.ndarray, positions: np.ndarray, z: float, k: int) -> float:
    """The median of the calibration ``errors`` (R,; NaN = none) of the ``k`` rows whose
    ``positions`` (R,) are nearest to ``z`` (ties → the lower row; fewer rows: all of them; no
    finite error: 0)."""
    rows = np.flatnonzero(np.isfinite(errors) & np.isfinite(positions))
    if len(rows) == 0:
        return 0.0
    near = rows[np.argsort(np.abs(positions[rows] - z), kind="stable")[: int(k)]]
    return float(np.median(errors[near]))


def conformal(point: float, errors: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """``point`` + the finite-sample quantiles of held-out ``errors`` (two-sided ``level``): the
    placement's own :func:`~primebench_tasks.evaluate.placement.conformal_bounds`."""
    lo, hi = conformal_bounds(np.array([point], dtype=float), np.asarray(errors, float), level)
    return float(lo[0]), float(hi[0])


@dataclass(frozen=True)
class AdaptiveEstimate:
    """Where one model stands on one benchmark after ``count`` answers: its ability ``theta``,
    its mean ``score`` on the items asked, the predicted full-benchmark score (the policy's, moved by
    the median calibration error of its regime) with its ``level`` conformal interval
    (``lo``/``hi``; NaN before the first calibrated count), the placement regime, and the predicted rank among the
    ``n_reference`` reference models (1 = best) with the rank interval."""

    count: int
    theta: float
    score: float
    predicted: float
    lo: float
    hi: float
    regime: str
    rank: float
    rank_lo: float
    rank_hi: float
    n_reference: int

    @property
    def width(self) -> float:
        return self.hi - self.lo if np.isfinite(self.lo) and np.isfinite(self.hi) else np.inf


class AdaptiveBenchmark:
    """One benchmark's adaptive test, shared by every model asked on it: the 2PL of the reference
    panel's answers ``Y_ref`` (M, n), the reference full scores, and the calibration of the
    interval at every count ``batch``, 2·``batch``, ... up to ``max_items``.

    The calibration replays the procedure on reference models held out of the 2PL fit
    (``folds`` random folds, :data:`~primebench_tasks.evaluate.defaults.ADAPTIVE_FOLDS` by
    default, and 3 nested frontier folds, whose models stand above their whole fitting panel). The
    errors a model is given are those of the held-out models it resembles: predicted inside the
    panel, the random folds' (a model drawn like the reference ones); beyond the panel's best,
    the frontier folds' (a model above its panel, as a new one usually is); at the top, where
    both kinds land, every one. The interval is the hull of two conformal intervals at that
    count: one Mondrian by placement regime as the static placement's
    (:func:`~primebench_tasks.evaluate.placement.placement_regime`: errors of those models'
    predictions that fell in the same regime — interior / top / beyond the fitting models —
    neighbours borrowed while fewer than 20), one from all of those models' errors (inside the
    panel) or every held-out error (at the top or beyond: a regime's errors alone were too few
    to hold once a test stops where they happen to be narrow); at the top (``frontier_at_top``)
    the hull also holds the frontier folds' own interval — so the stopping rule
    (:meth:`stop_reason`) depends on where the model stands (:meth:`interval`). The point moves
    by a median error: inside the panel, of the random folds' interior errors; at the top or
    beyond it, of the ``nearest_shift`` calibration rows (either kind) whose predictions stood
    nearest in position among their fitting models
    (:data:`~primebench_tasks.evaluate.defaults.ADAPTIVE_NEAREST_SHIFT`; None: of the regime's
    errors, as inside)."""

    procedure_class: type[AdaptiveProcedure] = AdaptiveProcedure
    """The procedure asked and calibrated: the library's; a comparison script's subclass may
    replace it (``research/adaptive/adaptive_slip_probe.py``), and it then enters
    :attr:`calibration_key`."""

    def __init__(
        self,
        Y_ref: np.ndarray,
        *,
        max_items: int,
        batch: int = BATCH,
        level: float = LEVEL,
        folds: int = ADAPTIVE_FOLDS,
        seed: int = 0,
        policy: AdaptivePolicy | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        frontier_at_top: bool = True,
        nearest_shift: int | None = ADAPTIVE_NEAREST_SHIFT,
    ) -> None:
        if nearest_shift is not None and not int(nearest_shift) >= 1:
            raise ValueError(f"nearest_shift must be ≥ 1 or None, not {nearest_shift!r}")
        self.frontier_at_top = bool(frontier_at_top)
        self.nearest_shift = None if nearest_shift is None else int(nearest_shift)
        self.policy = AdaptivePolicy() if policy is None else policy
        self.Y_ref = np.asarray(Y_ref, float)
        self.n = self.Y_ref.shape[1]
        self.batch, self.level = int(batch), float(level)
        self.max_items = int(min(max_items, self.n))
        self.procedure = self.procedure_class(self.Y_ref, self.policy)
        self.model = self.procedure.model
        self.reference_full = self.procedure.full_fit
        self.counts = tuple(range(self.batch, self.max_items + 1, self.batch)) or (self.max_items,)
        self._folds, self._seed = int(folds), int(seed)
        self.cache_dir = None if cache_dir is None else Path(cache_dir)

    @cached_property
    def calibration_key(self) -> str:
        """What the calibration depends on, hashed (32 hex digits): the reference answers (NaN
        included), the counts, the round size, the folds and their seed, the frontier folds, the
        policy, :data:`CALIBRATION_SCHEMA` and the library's version."""
        from primebench_tasks import __version__

        finite = np.isfinite(self.Y_ref)
        spec = {
            "schema": CALIBRATION_SCHEMA,
            "library": __version__,
            "shape": list(self.Y_ref.shape),
            "counts": list(self.counts),
            "batch": self.batch,
            "folds": self._folds,
            "seed": self._seed,
            "frontier_folds": FRONTIER_FOLDS,
            "frontier_share": FRONTIER_SHARE,
            "policy": asdict(self.policy),
        }
        if self.procedure_class is not AdaptiveProcedure:  # a comparison's variant
            cls = self.procedure_class
            spec["procedure"] = f"{cls.__module__}.{cls.__qualname__}"
        data = (
            json.dumps(spec, sort_keys=True).encode()
            + np.packbits(finite).tobytes()
            + np.where(finite, self.Y_ref, 0.0).astype("<f8").tobytes()
        )
        return content_hash(data, 32)

    @property
    def calibration_file(self) -> Path | None:
        """Where the calibration is kept (``cache_dir``/``adaptive-calibration-<key>.json``,
        canonical JSON of schema :data:`CALIBRATION_SCHEMA`), or None without a ``cache_dir``."""
        if self.cache_dir is None:
            return None
        return self.cache_dir / f"adaptive-calibration-{self.calibration_key}.json"

    @cached_property
    def calibration(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The intervals' calibration: held-out errors (true − predicted) and placement regimes
        (R, len(counts)) of :func:`_calibration_runs`, which rows (R,) come from a frontier
        fold, and the predictions' positions among their fitting models (R, len(counts)).
        Replayed when first needed (the first :meth:`estimate` after ``batch`` answers), not
        when the test is built: a race (:func:`race_variants`) needs only the 2PL. With a
        ``cache_dir`` it is read from :attr:`calibration_file` when there (a resumed run does not
        replay it), else replayed and written there atomically."""
        path = self.calibration_file
        if path is not None and path.exists():
            return self._read_calibration(path)
        errors, _, regimes, frontier, positions = _calibration_runs(
            self.Y_ref,
            self.counts,
            self.batch,
            self._folds,
            self._seed,
            FRONTIER_FOLDS,
            self.policy,
            self.procedure_class,
        )
        errors = np.round(errors, CALIBRATION_DECIMALS)
        positions = np.round(positions, CALIBRATION_DECIMALS)
        if path is not None:
            doc = {
                "schema": CALIBRATION_SCHEMA,
                "key": self.calibration_key,
                "counts": list(self.counts),
                "errors": [[json_scalar(x) for x in row] for row in errors],
                "regimes": [[str(g) for g in row] for row in regimes],
                "frontier": [bool(f) for f in frontier],
                "positions": [[json_scalar(x) for x in row] for row in positions],
            }
            atomic_write_text(path, canonical_json(doc))
        return errors, regimes, frontier, positions

    def _read_calibration(
        self, path: Path
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        doc = read_json_document(path, "adaptive calibration", CALIBRATION_SCHEMA)
        C = len(self.counts)
        for field, want in (("key", self.calibration_key), ("counts", list(self.counts))):
            if doc.get(field) != want:
                raise InputError(
                    f"adaptive calibration of other inputs ({field} {doc.get(field)!r}, expected "
                    f"{want!r}); delete it to replay the calibration",
                    file=str(path),
                    field=field,
                )
        frontier = doc.get("frontier")
        if not isinstance(frontier, list) or not all(isinstance(f, bool) for f in frontier):
            raise InputError("not a list of true/false", file=str(path), field="frontier")
        rows: dict[str, Any] = {}
        for field, ok in (
            ("errors", lambda x: x is None or type(x) in (int, float)),
            ("regimes", lambda x: x in ("", *REGIMES)),  # "": no fitting model to place among
            ("positions", lambda x: x is None or type(x) in (int, float)),
        ):
            got = doc.get(field)
            if not isinstance(got, list) or len(got) != len(frontier):
                raise InputError(
                    f"expected {len(frontier)} rows (one per held-out model)",
                    file=str(path),
                    field=field,
                )
            for r, row in enumerate(got):
                if not isinstance(row, list) or len(row) != C or not all(map(ok, row)):
                    raise InputError(
                        f"expected {C} values of the right type",
                        file=str(path),
                        row=f"{field}[{r}]",
                        field=field,
                    )
            rows[field] = got
        errors, positions = (
            np.array(
                [[np.nan if x is None else float(x) for x in row] for row in rows[field]], float
            ).reshape(len(frontier), C)
            for field in ("errors", "positions")
        )
        regimes = np.array(rows["regimes"], dtype=object).reshape(len(frontier), C)
        return errors, regimes, np.array(frontier, bool), positions

    def next_items(
        self,
        answers: np.ndarray,
        asked: np.ndarray,
        k: int,
        exclude: np.ndarray | None = None,
    ) -> np.ndarray:
        """The ``k`` unasked items to ask next (answers (n,) with NaN where not asked): the
        policy's choice (:meth:`AdaptiveProcedure.pick`). ``exclude`` (n,) bool: items that cannot be asked
        (no content; no recorded answer in a replay)."""
        return self.procedure.pick(answers, asked, k, exclude)

    def race_probabilities(
        self, answers: np.ndarray, asked: np.ndarray, exclude: np.ndarray | None = None
    ) -> np.ndarray:
        """The probabilities (n,) with which a race between variants draws its next items:
        (1 − ρ)/n' + ρ·s_i/Σs over the n' items that can be asked (``exclude`` (n,) bool: not),
        s_i = √(mean_v P_v,i·(1 − P_v,i)) the variants' answer spread under the 2PL at each
        one's ability from its ``answers`` (V, n) on the items ``asked`` (n,) by all
        (ρ = :data:`RACE_UNIFORM_SHARE`). Already asked items keep their probability: a draw
        of one costs no new answer."""
        ok = np.ones(self.n, bool) if exclude is None else ~np.asarray(exclude, bool)
        q = np.zeros(self.n)
        if not ok.any():
            return q
        thetas = np.array([self.procedure.theta(row, asked) for row in np.atleast_2d(answers)])
        p = self.model.prob(thetas)
        spread = np.sqrt((p * (1.0 - p)).mean(axis=0)) * ok
        rho = RACE_UNIFORM_SHARE if spread.sum() > 0 else 0.0
        q[ok] = (1.0 - rho) / ok.sum()
        if rho:
            q += rho * spread / spread.sum()
        return q / q.sum()

    def interval(self, pred: float, count: int) -> tuple[float, float, float, str]:
        """(point, lo, hi, regime) of an uncalibrated prediction ``pred`` after ``count``
        answers: the calibrated point and its ``level`` interval (NaN before the first
        calibrated count), and the placement regime of ``pred`` among the reference models."""
        ref = self.reference_full[np.isfinite(self.reference_full)]
        regime = str(placement_regime(np.array([pred]), ref)[0])
        lo = hi = float("nan")
        j = int(np.searchsorted(self.counts, count, side="right")) - 1
        if j < 0:
            return pred, lo, hi, regime
        errors, regimes, frontier, positions = self.calibration
        col = errors[:, j]
        ok = np.isfinite(col)
        # the held-out models a new model resembles (replay: pooling both kinds gave a
        # prediction beyond the panel the random folds' overshoots and the frontier folds'
        # shortfalls at once, and one inside it the frontier folds' wide errors)
        alike = {"interior": ~frontier, "top": np.ones(len(col), bool), "beyond": frontier}[regime]
        if not (ok & alike).any():  # a panel too small for frontier folds
            alike = np.ones(len(col), bool)
        by_regime = {
            g: list(col[(regimes[:, j] == g) & ok & alike]) for g in ("interior", "top", "beyond")
        }
        errs = regime_residuals(by_regime, regime)
        pooled = col[ok & alike] if regime == "interior" else col[ok]
        if not (len(errs) and len(pooled)):
            return pred, lo, hi, regime
        lo, hi = conformal(pred, errs, self.level)
        # the hull with the pooled interval: a regime's errors alone were too few to hold at
        # the frontier once the test stops where they happen to be narrow (replay: 58-72 %
        # coverage at stop, against 100 % with the hull)
        hulls = [pooled]
        if regime == "top" and self.frontier_at_top and (ok & frontier).any():
            # at the top both kinds land, and a new model may be either: the hull also holds
            # the frontier folds' own interval, which the random folds' many smaller errors
            # narrowed in the pooled one (replay: 80 % coverage at stop on AI2D's frontier
            # hold-out with 10 folds, 96 % with it; adaptive_interval_choice.py)
            hulls.append(col[ok & frontier])
        for other in hulls:
            plo, phi = conformal(pred, other, self.level)
            lo, hi = min(lo, plo), max(hi, phi)
        lo, hi = max(0.0, lo), min(1.0, hi)
        # the point moves by the regime's median error — the predictor's bias there —
        # everywhere, or (shift "outside") only at the top or beyond the panel
        if regime != "interior" and self.nearest_shift is not None:
            # at the top both kinds of held-out model land (random folds' errors centre near
            # 0, frontier folds' fall short), and one regime's median gave a random model at
            # the top the frontier's correction: the rows whose predictions stood nearest in
            # position (replay: mean log MAE ratio −0.566 → −0.585; adaptive_top_shift.py)
            z = float(placement_position(np.array([pred]), ref)[0])
            shift = nearest_shift(col, positions[:, j], z, self.nearest_shift)
        elif self.policy.shift == "all" or regime != "interior":
            shift = float(np.median(errs))
        else:
            shift = 0.0
        pred = float(np.clip(pred + shift, lo, hi))
        return pred, lo, hi, regime

    def estimate(self, answers: np.ndarray, asked: np.ndarray) -> AdaptiveEstimate:
        """:class:`AdaptiveEstimate` from the answers so far (answers (n,), NaN = not asked or
        failed; asked (n,) bool)."""
        answers = np.asarray(answers, float)
        scored = np.asarray(asked, bool) & np.isfinite(answers)
        count = int(scored.sum())
        theta, raw = self.procedure.point(answers, asked)
        pred, lo, hi, regime = self.interval(raw, count)
        ref = self.reference_full[np.isfinite(self.reference_full)]
        rank = 1 + float((ref > pred).sum())
        rank_lo = 1 + float((ref > hi).sum()) if np.isfinite(hi) else 1.0
        rank_hi = 1 + float((ref > lo).sum()) if np.isfinite(lo) else float(len(ref) + 1)
        return AdaptiveEstimate(
            count,
            theta,
            float(answers[scored].mean()) if count else float("nan"),
            pred,
            lo,
            hi,
            regime,
            rank,
            rank_lo,
            rank_hi,
            len(ref),
        )

    def stop_reason(
        self, est: AdaptiveEstimate, asked: np.ndarray, target_width: float | None
    ) -> str | None:
        """Why the test of this model ends now, or None: the interval is narrower than
        ``target_width``; ``max_items`` were asked; no item is left to ask."""
        if target_width is not None and est.width <= target_width:
            return f"interval narrower than {target_width:g}"
        if int(np.asarray(asked, bool).sum()) >= self.max_items:
            return f"item budget ({self.max_items}) spent"
        if bool(np.asarray(asked, bool).all()):
            return "every item asked"
        return None


def replay(
    Y_ref: np.ndarray,
    Y_new: np.ndarray,
    checkpoints: Sequence[int] = (25, 50, 100),
    batch: int = BATCH,
    level: float = LEVEL,
    seed: int = 0,
    target_width: float | None = None,
    policy: AdaptivePolicy | None = None,
    nearest_shift: int | None = ADAPTIVE_NEAREST_SHIFT,
    cache_dir: str | os.PathLike[str] | None = None,
) -> dict[str, np.ndarray]:
    """The replay protocol on one benchmark, with the policy the runner uses
    (:class:`AdaptiveBenchmark`, its point rule outside the panel ``nearest_shift``): the
    reference models' responses ``Y_ref`` (M, n) fit the 2PL
    and calibrate the intervals; the new models' recorded responses ``Y_new`` (V, n) answer the
    adaptive questions (an item a model has no answer for is never asked). Returns
    ``predicted``, ``lo``, ``hi`` (V, C) at each checkpoint, ``true`` (V,) full scores, and — with
    ``target_width`` — where the stopping rule ends each test: ``stop_items``, ``stop_predicted``,
    ``stop_lo``, ``stop_hi`` (V,) (up to max(checkpoints) items); ``order`` (V, max items) the items
    asked, in order (−1: none). ``cache_dir``: where the interval's calibration is kept
    (:attr:`AdaptiveBenchmark.calibration_file`)."""
    Y_new = np.asarray(Y_new, float)
    bench = AdaptiveBenchmark(
        Y_ref,
        max_items=max(checkpoints),
        batch=batch,
        level=level,
        seed=seed,
        policy=policy,
        nearest_shift=nearest_shift,
        cache_dir=cache_dir,
    )
    V, C = len(Y_new), len(checkpoints)
    out = {k: np.full((V, C), np.nan) for k in ("predicted", "lo", "hi")}
    stop = {k: np.full(V, np.nan) for k in ("stop_items", "stop_predicted", "stop_lo", "stop_hi")}
    order = np.full((V, bench.max_items), -1, dtype=np.int64)
    for v in range(V):
        y = Y_new[v]
        missing = ~np.isfinite(y)
        asked = np.zeros(len(y), bool)
        answers = np.full(len(y), np.nan)
        stopped = target_width is None
        while True:
            count = int(asked.sum())
            est = bench.estimate(answers, asked)
            if not stopped and bench.stop_reason(est, asked | missing, target_width) is not None:
                stopped = True
                stop["stop_items"][v], stop["stop_predicted"][v] = count, est.predicted
                stop["stop_lo"][v], stop["stop_hi"][v] = est.lo, est.hi
            for j, c in enumerate(checkpoints):
                if c == count or (c > count and bool((asked | missing).all())):
                    out["predicted"][v, j], out["lo"][v, j], out["hi"][v, j] = (
                        est.predicted,
                        est.lo,
                        est.hi,
                    )
            if count >= max(checkpoints) or (asked | missing).all():
                if not stopped:
                    stop["stop_items"][v], stop["stop_predicted"][v] = count, est.predicted
                    stop["stop_lo"][v], stop["stop_hi"][v] = est.lo, est.hi
                break
            pick = bench.next_items(answers, asked, min(batch, max(checkpoints) - count), missing)
            order[v, count : count + len(pick)] = pick
            asked[pick] = True
            answers[pick] = y[pick]
    res: dict[str, np.ndarray] = {**out, "true": nanmean_rows(Y_new), "order": order}
    if target_width is not None:
        res.update(stop)
    return res


@dataclass
class RaceResult:
    """Where a sequential comparison of variants ended: per benchmark the distinct items asked
    (in order) and every variant's scores on them (V, asked; NaN = failed), the draws (item,
    weight 1/(n·q)) the comparison rests on, the ranking table and pairwise P(A beats B) of
    :func:`~primebench_tasks.evaluate.variants.rank_variants` over the weighted draws (a
    variant's ``suite_score`` is its estimated full score), the verdict
    (:func:`~primebench_tasks.evaluate.variants.variant_verdict`), the rounds run and why it
    stopped."""

    asked: list[list[int]]
    scores: list[np.ndarray]
    draws: list[list[tuple[int, float]]]
    table: Any
    pairwise: Any
    verdict: dict[str, Any]
    rounds: int
    reason: str


def _race_verdict(
    names: Sequence[str],
    categories: Sequence[str],
    draws: list[list[tuple[int, float]]],
    known: list[dict[int, np.ndarray]],
    level: float,
    n_boot: int,
    seed: int,
) -> tuple[Any, Any, dict[str, Any]]:
    import pandas as pd

    from primebench_tasks.evaluate.variants import rank_variants, variant_verdict

    cols, cats, blocks = [], [], []
    for b, bench_draws in enumerate(draws):
        for j, (item, weight) in enumerate(bench_draws):
            cols.append((b, j, item))
            cats.append(categories[b])
            blocks.append(known[b][item] * weight)
    if not cols:
        return None, None, {"fully_ordered": False, "text": "no item asked yet"}
    X = np.column_stack(blocks)
    frame = pd.DataFrame(X, index=list(names), columns=pd.MultiIndex.from_tuples(cols))
    table, pairwise, _ = rank_variants(frame, pd.Series(cats, index=frame.columns), n_boot, seed)
    return table, pairwise, variant_verdict(table, pairwise, level)


def race_variants(
    benches: Sequence[AdaptiveBenchmark],
    categories: Sequence[str],
    names: Sequence[str],
    ask: Any,
    *,
    max_items: int,
    batch: int = BATCH,
    level: float = SEPARATION_LEVEL,
    n_boot: int = N_BOOT_VARIANTS,
    seed: int = 0,
    start: tuple[list[list[int]], list[np.ndarray]] | None = None,
    exclude: Sequence[np.ndarray | None] | None = None,
) -> RaceResult:
    """Rank the variants ``names`` sequentially on the same items. Each round draws ``batch``
    items of each benchmark with replacement, with probabilities that favour the items whose
    answers the variants are unsure of (:meth:`AdaptiveBenchmark.race_probabilities`), asks
    every variant the drawn items not asked yet through ``ask({b: items}) -> {b: (V,
    len(items)) scores}``, and ranks the variants on all draws so far, each answer weighted by
    1/(n·q) (Hansen–Hurwitz: the weighted mean is an unbiased estimate of the full-benchmark
    score, and the paired bootstrap over draws within categories tests the full scores' order —
    a mean over items chosen for their information would test the order on those items only:
    6.1 % wrong separations on OCRBench's replay). It stops when every adjacent pair of the
    ranking is separated at ``level`` — Bonferroni-corrected for the looks after every round
    (each look at 1 − (1 − level)/L) — or after L = ⌈``max_items``/``batch``⌉ rounds (so at most
    ``max_items`` distinct items per benchmark are asked; fewer when draws repeat an item). ``start``: (items, (V, items) scores) already
    recorded — a resumed race draws what the interrupted one drew (the draws depend only on
    ``seed`` and the answers) and asks only what it lacks; ``exclude``: per benchmark, items
    that cannot be asked."""
    V = len(names)
    # the verdict is looked at after every round: Bonferroni over the race's possible looks
    # keeps the chance of any wrong separation at the level (one look: the static verdict's)
    looks = max(1, max(-(-min(max_items, b.n) // batch) for b in benches))
    per_look = 1 - (1 - level) / looks
    known: list[dict[int, np.ndarray]] = [{} for _ in benches]
    if start is not None:
        for b, (items, sc) in enumerate(zip(*start, strict=True)):
            sc = np.asarray(sc, float).reshape(V, len(items))
            for j, i in enumerate(items):
                known[b][int(i)] = sc[:, j]
    asked: list[list[int]] = [[] for _ in benches]
    draws: list[list[tuple[int, float]]] = [[] for _ in benches]
    rng = np.random.default_rng(seed)
    rounds, reason, drawn = 0, "", 0
    while True:
        table, pairwise, verdict = _race_verdict(
            names, categories, draws, known, per_look, n_boot, seed
        )
        if any(draws) and verdict["fully_ordered"]:
            reason = f"every adjacent pair separated at {level:.0%}"
            break
        if drawn >= looks:  # every round the budget allows was drawn
            reason = f"item budget ({max_items} per benchmark) spent"
            break
        drawn += 1
        new: dict[int, list[int]] = {}
        for b, bench in enumerate(benches):
            if drawn > -(-min(max_items, bench.n) // batch):
                continue  # this benchmark's rounds are spent
            mask = np.zeros(bench.n, bool)
            mask[asked[b]] = True
            answers = np.full((V, bench.n), np.nan)
            for i in asked[b]:
                answers[:, i] = known[b][i]
            q = bench.race_probabilities(answers, mask, None if exclude is None else exclude[b])
            n_ok = int((q > 0).sum())
            if n_ok == 0:
                continue
            seen = set(asked[b])
            for i in rng.choice(bench.n, size=batch, p=q).tolist():
                if i not in seen:
                    seen.add(i)
                    asked[b].append(i)
                    if i not in known[b]:
                        new.setdefault(b, []).append(i)
                draws[b].append((i, 1.0 / (n_ok * float(q[i]))))
        if new:
            answered = ask({b: np.array(items, dtype=np.int64) for b, items in new.items()})
            for b, items in new.items():
                sc = np.asarray(answered[b], float).reshape(V, len(items))
                for j, i in enumerate(items):
                    known[b][i] = sc[:, j]
            rounds += 1
    scores = [
        np.column_stack([known[b][i] for i in a]) if a else np.empty((V, 0))
        for b, a in enumerate(asked)
    ]
    return RaceResult(asked, scores, draws, table, pairwise, verdict, rounds, reason)
