"""Score estimators: predict each model's full-pool mean score from its responses on the selected
items. Contract (docs/architecture.md, "Estimators and selectors"): ``ScoreEstimator.fit(Y_source, indices, weights) -> self`` on the
source (build) models' full responses (M_s, n), then ``.predict(Y_subset)`` with a new model's
responses on the selected items (M', k) → (M',) predicted full-pool means in [0, 1].
"""

from __future__ import annotations

import numpy as np

from primebench_tasks.errors import ConfigError
from primebench_tasks.metrics import nanmean_rows
from primebench_tasks.select.irt import binarize, estimate_theta, fit_2pl_cached

RIDGE_ALPHA = 10.0
INTERVAL_LEVEL = 0.90
"""The level of :meth:`GREG.interval` when none is given."""


class ScoreEstimator:
    """Base: stores the selection; subclasses implement ``predict``."""

    name = "base"

    def fit(
        self, Y_source: np.ndarray, indices: np.ndarray, weights: np.ndarray | None = None
    ) -> ScoreEstimator:
        self.indices_ = np.asarray(indices, dtype=np.int64)
        w = np.ones(len(self.indices_)) if weights is None else np.asarray(weights, float)
        self.weights_ = w / w.sum()
        self.n_items_ = Y_source.shape[1]
        return self

    def predict(self, Y_subset: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class SubsetMean(ScoreEstimator):
    """The papers' scoring: the mean over the selected items (valid records only)."""

    name = "mean"

    def predict(self, Y_subset: np.ndarray) -> np.ndarray:
        return nanmean_rows(np.asarray(Y_subset, float))


class WeightedMean(ScoreEstimator):
    """Σ_j w_j·y_j over the anchors (AnchorPoints' weighted mean; tinyBenchmarks' "IRT" anchor
    estimate), renormalised over each model's valid records."""

    name = "weighted"

    def predict(self, Y_subset: np.ndarray) -> np.ndarray:
        Y = np.asarray(Y_subset, float)
        v = np.isfinite(Y)
        w = np.where(v, self.weights_[None, :], 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (w * np.where(v, Y, 0.0)).sum(axis=1) / w.sum(axis=1)


class PIRT(ScoreEstimator):
    """tinyBenchmarks' p-IRT: fit a 2PL on the source models' binarised responses; for a new
    model estimate θ (MAP) from its selected items, and predict
    λ·mean(seen y) + (1 − λ)·mean(P̂(θ) on the unseen items), λ = n_seen / N.
    On graded scores P̂ is the probability of reaching the binarisation threshold."""

    name = "pirt"

    def __init__(self, thresholds: np.ndarray | None = None) -> None:
        self.thresholds = thresholds

    def fit(
        self, Y_source: np.ndarray, indices: np.ndarray, weights: np.ndarray | None = None
    ) -> PIRT:
        super().fit(Y_source, indices, weights)
        self.model_ = fit_2pl_cached(binarize(np.asarray(Y_source, float), self.thresholds))
        self.unseen_ = np.setdiff1d(np.arange(self.n_items_), self.indices_)
        return self

    def _ability(self, Y: np.ndarray) -> np.ndarray:
        """MAP ability (M',) of each new model from its (binarised) responses ``Y`` (M', k) to the
        selected items."""
        th_sel = None if self.thresholds is None else np.asarray(self.thresholds)[self.indices_]
        return estimate_theta(self.model_, binarize(Y, th_sel), self.indices_)

    def _pirt(self, Y_subset: np.ndarray) -> np.ndarray:
        Y = np.asarray(Y_subset, float)
        theta = self._ability(Y)
        lam = len(self.indices_) / self.n_items_
        seen = nanmean_rows(Y)
        if len(self.unseen_) == 0:
            return seen
        p_unseen = self.model_.prob(theta)[:, self.unseen_].mean(axis=1)
        return lam * np.nan_to_num(seen, nan=0.0) + (1 - lam) * p_unseen

    def predict(self, Y_subset: np.ndarray) -> np.ndarray:
        return self._pirt(Y_subset)


class GPIRT(PIRT):
    """tinyBenchmarks' gp-IRT: λ*·(weighted anchor mean) + (1 − λ*)·p-IRT with
    λ* = b² / (v + b²), where b² is p-IRT's mean squared error on the source models (predicting
    their own full means from their selected items) and v the mean sampling variance of the anchor
    estimate, Σ_j w_j²·ȳ(1 − ȳ) averaged over the source models."""

    name = "gpirt"

    def fit(
        self, Y_source: np.ndarray, indices: np.ndarray, weights: np.ndarray | None = None
    ) -> GPIRT:
        super().fit(Y_source, indices, weights)
        Y = np.asarray(Y_source, float)
        full = nanmean_rows(Y)
        pred = self._pirt(Y[:, self.indices_])
        b2 = float(np.nanmean((pred - full) ** 2))
        p = np.clip(full, 0, 1)
        v = float(np.nanmean(p * (1 - p)) * (self.weights_**2).sum())
        self.lambda_ = b2 / (v + b2) if v + b2 > 0 else 0.5
        self._anchor = WeightedMean().fit(Y, self.indices_, self.weights_)
        return self

    def predict(self, Y_subset: np.ndarray) -> np.ndarray:
        return self.lambda_ * self._anchor.predict(Y_subset) + (1 - self.lambda_) * self._pirt(
            Y_subset
        )


class AIPW(ScoreEstimator):
    """BenchPred-style regression with the observed subset kept: Ridge(α = 10) from the selected
    items' responses to the mean of the unselected items, fitted on the source models;
    prediction = (Σ observed + n_rest·ŷ_rest) / N. Missing responses are imputed with the source
    mean of that item. (BenchPred's residual term vanishes here because the selected items are
    observed, not predicted.)"""

    name = "aipw"

    def __init__(self, alpha: float = RIDGE_ALPHA) -> None:
        self.alpha = alpha

    def fit(
        self, Y_source: np.ndarray, indices: np.ndarray, weights: np.ndarray | None = None
    ) -> AIPW:
        super().fit(Y_source, indices, weights)
        Y = np.asarray(Y_source, float)
        rest = np.setdiff1d(np.arange(self.n_items_), self.indices_)
        self.n_rest_ = len(rest)
        Xs = Y[:, self.indices_]
        self.fill_ = np.nan_to_num(np.nanmean(Xs, axis=0), nan=0.0)
        Xs = np.where(np.isfinite(Xs), Xs, self.fill_)
        target = nanmean_rows(Y[:, rest]) if len(rest) else np.zeros(len(Y))
        ok = np.isfinite(target)
        self.mu_x_ = Xs[ok].mean(axis=0)
        self.mu_y_ = float(target[ok].mean()) if ok.any() else 0.0
        Xc = Xs[ok] - self.mu_x_
        t = target[ok] - self.mu_y_
        # the same ridge solution in whichever form has the smaller system: primal (k × k) when
        # there are more source models than selected items, else dual (M × M) — cost
        # O(M·k·min(M, k)), linear in the number of models at a fixed budget
        if Xc.shape[1] <= Xc.shape[0]:
            A = Xc.T @ Xc + self.alpha * np.eye(Xc.shape[1])
            self.coef_ = np.linalg.solve(A, Xc.T @ t)
        else:
            G = Xc @ Xc.T + self.alpha * np.eye(len(Xc))
            self.coef_ = Xc.T @ np.linalg.solve(G, t)
        return self

    def predict(self, Y_subset: np.ndarray) -> np.ndarray:
        Y = np.asarray(Y_subset, float)
        Xs = np.where(np.isfinite(Y), Y, self.fill_)
        rest_hat = np.clip(self.mu_y_ + (Xs - self.mu_x_) @ self.coef_, 0.0, 1.0)
        return (Xs.sum(axis=1) + self.n_rest_ * rest_hat) / (Xs.shape[1] + self.n_rest_)


def model_assisted(
    p_mean: np.ndarray, resid: np.ndarray, weights: np.ndarray, n_pool: int
) -> tuple[np.ndarray, np.ndarray]:
    """The model-assisted (difference) estimate of a pool's mean score and its design variance.

    ``p_mean`` (M',): each model's mean predicted score over the pool's ``n_pool`` items;
    ``resid`` (M', k): y − p̂ on the drawn items, NaN where the model has no response;
    ``weights`` (M', k): the drawn items' design weights normalised to sum to 1 over each model's
    answered items (0 elsewhere). Point: p_mean + Σ w_i e_i, clipped to [0, 1] (NaN for a model
    with no answered item). Variance, with n answered items: n/(n − 1) · Σ w_i² (e_i − ē_w)² ·
    (1 − n/n_pool), ē_w = Σ w_i e_i — the with-replacement form with the finite-population
    correction (it ignores strata: conservative for a stratified draw); NaN with n < 2."""
    ok = np.isfinite(resid)
    n = ok.sum(axis=1)
    e = np.where(ok, resid, 0.0)
    w = np.where(ok, weights, 0.0)
    mean = (w * e).sum(axis=1)
    point = np.where(n > 0, np.clip(p_mean + mean, 0.0, 1.0), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        v = (w**2 * (e - mean[:, None]) ** 2).sum(axis=1) * n / (n - 1.0)
    v = v * np.clip(1.0 - n / n_pool, 0.0, 1.0)
    return point, np.where(n >= 2, v, np.nan)


def normal_interval(
    point: np.ndarray, variance: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """point ± z·√variance at ``level`` (z the normal quantile at ½ + level/2), each end clipped
    to a score's range [0, 1]; NaN where either is NaN."""
    from scipy.stats import norm

    half = float(norm.ppf(0.5 + level / 2)) * np.sqrt(np.asarray(variance, float))
    return np.clip(point - half, 0.0, 1.0), np.clip(point + half, 0.0, 1.0)


class GREG(PIRT):
    """The model-assisted (generalised regression) estimator of survey sampling, with the 2PL as
    the model: for a new model, θ (MAP) from its drawn items, p̂_i = P̂(θ) on every item of the
    pool, and

        ŷ = (1/N) Σ_{i ∈ U} p̂_i + Σ_{i ∈ s} w_i (y_i − p̂_i),

    where ``weights`` are the design weights 1/π_i of the drawn items normalised to sum to 1
    (uniform for a simple random sample; ``select.stratified`` gives them for its design). The
    residual term makes ŷ design-unbiased (to first order) whatever the 2PL says of the model:
    a model unlike the reference models — a new generation above all of them — gets at least a
    random sample's accuracy, never the item model's extrapolation; where the 2PL fits, the
    residuals are small and so is the error. A drawn item without a response is left out and the
    weights of the others renormalised (missing at random within the draw).

    :meth:`variance` is the design variance of ŷ, estimated from the residuals' weighted spread
    (with-replacement form, the finite-population correction 1 − n/N applied; it ignores the
    strata, so it is conservative for a stratified draw: :func:`model_assisted`); :meth:`interval`
    the normal interval. Another item predictor overrides :meth:`_item_probabilities` (the
    cross-fitted ridge one compared in ``research/placement/design_comparison.py``)."""

    name = "greg"

    def _item_probabilities(self, Y: np.ndarray) -> np.ndarray:
        """p̂ (M', n): each new model's predicted score on every item of the pool — the 2PL at
        its MAP ability from its drawn items (the model the residual term corrects)."""
        return self.model_.prob(self._ability(Y))

    def _parts(self, Y_subset: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mean p̂ over the pool (M',), residuals on the drawn items (M', k) with NaN where no
        response, the weights renormalised per model over the answered items (M', k))."""
        Y = np.asarray(Y_subset, float)
        p = self._item_probabilities(Y)
        resid = Y - p[:, self.indices_]
        ok = np.isfinite(resid)
        w = np.where(ok, self.weights_[None, :], 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            w = w / w.sum(axis=1, keepdims=True)
        return p.mean(axis=1), resid, w

    def predict(self, Y_subset: np.ndarray) -> np.ndarray:
        return model_assisted(*self._parts(Y_subset), self.n_items_)[0]

    def variance(self, Y_subset: np.ndarray) -> np.ndarray:
        """The estimated design variance of :meth:`predict` (M',); see :func:`model_assisted`."""
        return model_assisted(*self._parts(Y_subset), self.n_items_)[1]

    def interval(
        self, Y_subset: np.ndarray, level: float = INTERVAL_LEVEL
    ) -> tuple[np.ndarray, np.ndarray]:
        """The normal interval ŷ ± z·√V̂ at ``level``, clipped to [0, 1] (M',) each."""
        return normal_interval(*model_assisted(*self._parts(Y_subset), self.n_items_), level)


ESTIMATORS: dict[str, type[ScoreEstimator]] = {
    "mean": SubsetMean,
    "weighted": WeightedMean,
    "pirt": PIRT,
    "gpirt": GPIRT,
    "aipw": AIPW,
    "greg": GREG,
}


def make_estimator(name: str, thresholds: np.ndarray | None = None) -> ScoreEstimator:
    if name not in ESTIMATORS:
        raise ConfigError(f"unknown estimator {name!r}; known: {', '.join(ESTIMATORS)}")
    if name in ("pirt", "gpirt", "greg"):
        return ESTIMATORS[name](thresholds)  # type: ignore[call-arg]
    return ESTIMATORS[name]()
