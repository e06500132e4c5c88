"""One adaptive test's procedure (ability, regime, point, next items) and the held-out runs that calibrate its interval."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from primebench_tasks.adaptive.local_gaussian import LocalGaussian
from primebench_tasks.adaptive.policy import (
    LEVEL,
    AdaptivePolicy,
    predict_adaptive,
    predict_full,
    ridge_full,
)
from primebench_tasks.metrics import nanmean_rows
from primebench_tasks.place.benchmark import (
    conformal_bounds,
    placement_position,
    placement_regime,
)
from primebench_tasks.place.calibration import FRONTIER_SHARE
from primebench_tasks.select.irt import (
    binarize,
    estimate_theta,
    fit_2pl_cached,
    information,
)


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
        (:func:`~primebench_tasks.place.benchmark.placement_regime`)."""
        ref = self.full_fit[np.isfinite(self.full_fit)]
        return str(placement_regime(np.array([pirt]), ref)[0])

    def _interior(self, pirt: float) -> bool:
        return self._regime(pirt) == "interior"

    def interior(self, answers: np.ndarray, asked: np.ndarray) -> bool:
        """Whether p-IRT places the model inside the reference panel (``interior``:
        :func:`~primebench_tasks.place.benchmark.placement_regime`), where the ``regime_*``
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


def run_procedure(
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


def calibration_runs(
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
    placement's calibration (:func:`~primebench_tasks.place.calibration.placement_errors`):
    fold j holds out the models ranked ``[j·h, (j+1)·h)`` by full score (h = 15 % of the models)
    and fits on the models ranked below them only, so they stand above their whole reference
    panel. Returns errors (true − predicted full score) and predictions (R, C) — R = M rows of
    the random folds, then the frontier folds' rows — each prediction's placement regime among
    the fitting models' full scores (``""`` where there is none), which rows (R,) come from a
    frontier fold, and each prediction's position among the fitting models (R, C;
    :func:`~primebench_tasks.place.benchmark.placement_position`). ``procedure``: the class
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
        pred, _ = run_procedure(procedure(Y_ref[fit], policy), Y_ref[held], checkpoints, batch)
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
    placement's own :func:`~primebench_tasks.place.benchmark.conformal_bounds`."""
    lo, hi = conformal_bounds(np.array([point], dtype=float), np.asarray(errors, float), level)
    return float(lo[0]), float(hi[0])
