"""Where new models stand: their suite score, predicted full-suite score and predicted rank among a
reference panel's models, each with a bootstrap interval over the suite's items.

Definitions (shapes: M reference models, V new models, k_c suite items in category c):

- *suite score*: mean over the suite's categories of the item-pooled category mean (the manifest's
  ``mean_of_category_means``); a new model's missing items are skipped, not scored 0.
- *full-suite score* of a reference model: mean over all panel categories of the mean of the
  category's benchmark means, over every item of every panel benchmark (App. D.3's end-to-end
  reference, without Stage 0 cleaning: the full suite a user would otherwise run).
- *predicted full-suite score*: per suite category, a score estimator (``mean``, ``weighted``,
  ``pirt``, ``gpirt``, ``aipw``, ``greg``; default ``greg``, the model-assisted estimator, with
  the suite's design weights where its items were drawn by a probability design) fitted on the
  reference models' responses to all items of the category's suite benchmarks predicts the new
  model's pooled mean over those items from its suite responses; the category predictions map to
  the full-suite score by their mean when the suite covers every panel benchmark with one benchmark
  per category, else by a ridge regression (α = ``RIDGE_ALPHA``) fitted on the reference models.
- *ranks* (1 = best, among the M reference models plus the new one): ``suite_rank`` compares the
  suite score with the reference models' suite scores on the same items; ``predicted_rank``
  compares the predicted full-suite score with the reference models' full-suite scores.
- *intervals*: the suite score and suite rank: percentile [2.5, 97.5] of ``n_boot`` resamples of
  the suite items with replacement within each category (the same resample for every model). The
  predicted full-suite score: a conformal interval — the point plus the quantiles (finite-sample
  ranks) of held-out placement errors: those stored in the manifest at build time
  (``placement_calibration``, the selection redone in every fold: ``place.calibration``), else
  the estimator's ``CONFORMAL_FOLDS``-fold cross-fitted residuals on the fixed suite (which miss
  the selection's optimism); they hold the estimator's error and the model-to-model variation; 95 %
  (``_lo``/``_hi``) and 90 % (``_lo90``/``_hi90``); the predicted rank interval is the rank of its
  ends. Every interval contains its point (measured coverage: ``benchmarks/placement_accuracy.py``).
  On a suite drawn by a probability design (every category's items with inclusion probabilities)
  with the ``greg`` estimator, the predicted full score's interval is instead the **design
  interval** (``residuals_from = "design"``): the point ± z·√V, V the design variance of the
  estimate (``place.estimators.model_assisted``), mapped to the full suite — it holds for a
  model unlike every reference model, which held-out errors of the reference models cannot vouch
  for (``research/placement/design_comparison.py``). Predicted scores and their intervals lie in
  [0, 1].
- *beyond the panel*: a new model is usually stronger than every reference model. The manifest's
  calibration also holds nested frontier folds (the strongest models held out, the suite built on
  weaker ones) and stores every held-out error by the *regime* its prediction fell in
  (:data:`REGIMES`); a new model's interval uses the errors of its own regime, so a model predicted
  above every reference model gets the (wider) interval that such placements have needed, and
  ``above_all`` says so. (A deviation from the papers, which place only within the panel.)
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError
from primebench_tasks.metrics import nanmean_rows
from primebench_tasks.place.defaults import DEFAULT_ESTIMATOR, N_BOOT, min_scored_items
from primebench_tasks.place.estimators import make_estimator, normal_interval
from primebench_tasks.suite.manifest import SuiteManifest

RIDGE_ALPHA = 1e-2

REGIMES = ("interior", "top", "beyond")
"""Where a predicted full score falls among the reference models' full scores: ``beyond`` (above
every reference model), ``top`` (at or above the reference models' ``1 − TOP_SHARE`` quantile),
else ``interior``. Placement errors grow toward and beyond the top of a panel (a new model is
usually stronger than every reference model), so each regime's interval comes from the held-out
errors of its own regime (Mondrian conformal prediction: coverage holds within each regime)."""
TOP_SHARE = 0.15
MIN_REGIME_RESIDUALS = 20
"""A regime with fewer held-out residuals borrows those of the next regimes outward first
(``top`` ← ``beyond``, ``beyond`` ← ``top``), then inward."""
_BORROW = {
    "beyond": ("beyond", "top", "interior"),
    "top": ("top", "beyond", "interior"),
    "interior": ("interior", "top", "beyond"),
}


def _top_cut(ref: np.ndarray) -> float:
    """The order statistic of the sorted finite ``ref`` at the (1 − TOP_SHARE) quantile, without
    interpolation: where the ``top`` regime starts."""
    return float(ref[min(len(ref) - 1, int(np.floor((1 - TOP_SHARE) * len(ref))))])


def placement_regime(point: np.ndarray, reference_full: np.ndarray) -> np.ndarray:
    """The regime (:data:`REGIMES`) of each predicted full score (V,) among the reference
    models' full scores (M,); a NaN point is ``interior``."""
    ref = np.sort(np.asarray(reference_full, float)[np.isfinite(reference_full)])
    point = np.asarray(point, float)
    out = np.full(len(point), "interior", dtype=object)
    if len(ref) == 0:
        return out
    cut = _top_cut(ref)
    out[point >= cut] = "top"
    out[point > ref[-1]] = "beyond"
    return out


def placement_position(point: np.ndarray, reference_full: np.ndarray) -> np.ndarray:
    """Where each predicted full score (any shape) stands among the reference models' full
    scores (M,), in units of the panel's top: z = (point − cut) / (best − cut), cut the start of
    :func:`placement_regime`'s ``top`` — z < 0 inside the panel, 0 ≤ z ≤ 1 at its top, z > 1
    beyond it (NaN where the point is NaN or there is no reference model; a top of zero width
    counts as 1e-12)."""
    ref = np.sort(np.asarray(reference_full, float)[np.isfinite(reference_full)])
    point = np.asarray(point, float)
    if len(ref) == 0:
        return np.full(point.shape, np.nan)
    cut = _top_cut(ref)
    return (point - cut) / max(float(ref[-1]) - cut, 1e-12)


def regime_residuals(regimes: dict[str, list[float]], regime: str) -> np.ndarray:
    """The calibration residuals of ``regime``, with those of neighbouring regimes added
    (outward first) while fewer than :data:`MIN_REGIME_RESIDUALS`."""
    pooled: list[float] = []
    for g in _BORROW[regime]:
        pooled += list(regimes.get(g, []))
        if len(pooled) >= MIN_REGIME_RESIDUALS:
            break
    return np.sort(np.asarray(pooled, dtype=float))


def full_suite_scores(panel: Panel) -> pd.Series:
    """Full-suite score of every panel model (see the module docstring), indexed by model."""
    bench = pd.DataFrame(
        {b: nanmean_rows(panel.matrix(b)) for b in panel.benchmark_names}, index=panel.model_names
    )
    cats = pd.DataFrame(
        {c: bench[bs].mean(axis=1, skipna=True) for c, bs in panel.categories().items()}
    )
    return cats.mean(axis=1, skipna=True)


@dataclass
class _Category:
    name: str
    Y: np.ndarray  # (M, n_c) reference responses over the category's suite benchmarks
    sel: np.ndarray  # (k_c,) positions of the suite items in Y's columns
    new: np.ndarray  # (V, k_c) new models' responses to the suite items (NaN = missing)
    weights: np.ndarray | None = None  # (k_c,) design weights 1/π of a drawn suite, else None


def _categories(panel: Panel, suite: SuiteManifest, new: pd.DataFrame) -> list[_Category]:
    out = []
    for cat, by_b in suite.item_ids().items():
        mats, sel, cols = [], [], []
        weights: list[float] | None = []
        offset = 0
        for b, ids in by_b.items():
            inclusion = suite.entry(b).inclusion
            if inclusion is None or weights is None:
                weights = None
            else:
                weights += [1.0 / inclusion[str(i)] for i in ids]
            if b not in panel.benchmark_names:
                raise InputError(
                    f"suite benchmark {b!r} is not in reference panel {panel.name!r}",
                    field="benchmark",
                )
            pid = {str(i): j for j, i in enumerate(panel.item_ids(b))}
            design = suite.entry(b).design
            if design is not None and design.pool > len(pid):
                raise InputError(
                    f"the design of {b!r} draws from a pool of {design.pool} items (Σ N_h), "
                    f"but reference panel {panel.name!r} holds {len(pid)} of its items: its "
                    "weights would stand for items that do not exist",
                    field="design",
                )
            missing = [i for i in ids if str(i) not in pid]
            if missing:
                raise InputError(
                    f"suite items of {b!r} not in panel {panel.name!r}: {missing[:5]}",
                    field="item_id",
                )
            X = panel.matrix(b)
            mats.append(X)
            sel += [offset + pid[str(i)] for i in ids]
            cols += [(b, str(i)) for i in ids]
            offset += X.shape[1]
        wide = new.reindex(columns=pd.MultiIndex.from_tuples(cols, names=["benchmark", "item_id"]))
        out.append(
            _Category(
                cat,
                np.concatenate(mats, axis=1),
                np.asarray(sel, np.int64),
                wide.to_numpy(float),
                None if weights is None else np.asarray(weights, float),
            )
        )
    return out


def _rank(value: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """1 + number of reference scores strictly above each value (V,); NaN for a NaN value (a
    model with nothing scored has no rank, not rank 1)."""
    ref = reference[np.isfinite(reference)]
    value = np.asarray(value, dtype=float)
    rank = (1 + (ref[None, :] > value[:, None]).sum(axis=1)).astype(float)
    return np.where(np.isfinite(value), rank, np.nan)


class _Predictor:
    """Per-category estimators plus the category → full-suite map, for one item resample."""

    def __init__(
        self, cats: list[_Category], full: np.ndarray, exact_mean: bool, estimator: str
    ) -> None:
        self.cats, self.exact_mean, self.estimator = cats, exact_mean, estimator
        ok = np.isfinite(full)
        P = np.column_stack([nanmean_rows(c.Y) for c in cats])
        ok &= np.isfinite(P).all(axis=1)
        if not exact_mean:
            if ok.sum() < 3:
                raise InputError(
                    "fewer than 3 reference models with a full-suite score: "
                    "cannot map suite categories to the full suite"
                )
            Pc, mu_p, mu_t = P[ok] - P[ok].mean(0), P[ok].mean(0), full[ok].mean()
            self.beta_ = np.linalg.solve(
                Pc.T @ Pc + RIDGE_ALPHA * np.eye(P.shape[1]), Pc.T @ (full[ok] - mu_t)
            )
            self.mu_p_, self.mu_t_ = mu_p, mu_t

    def _map(self, P: np.ndarray) -> np.ndarray:
        if self.exact_mean:
            return np.nanmean(P, axis=1)
        return self.mu_t_ + (P - self.mu_p_) @ self.beta_

    def predict(self, picks: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Suite scores (V,), per-category suite means (V, C), predicted full scores (V,), for
        the resampled suite positions ``picks[c]`` (indices into each category's suite items)."""
        cat_means, preds = [], []
        for c, pick in zip(self.cats, picks, strict=True):
            idx = c.sel[pick]
            w = None if c.weights is None else c.weights[pick]
            est = make_estimator(self.estimator).fit(c.Y, idx, w)
            preds.append(est.predict(c.new[:, pick]))
            cat_means.append(nanmean_rows(c.new[:, pick]))
        C = np.column_stack(cat_means)
        with warnings.catch_warnings():  # a model with no scored item in a resample: NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmean(C, axis=1), C, self._map(np.column_stack(preds))

    def design_variance(self) -> np.ndarray | None:
        """The design variance (V,) of the predicted full score where every category's items
        were drawn by a probability design and the estimator is the model-assisted one
        (:class:`~primebench_tasks.place.estimators.GREG`): Σ_c β_c² V_c over the categories
        (independent draws; β_c = 1/C for the mean map, the ridge map's coefficients else);
        None otherwise."""
        if self.estimator != "greg" or any(c.weights is None for c in self.cats):
            return None
        V = []
        for c in self.cats:
            est = make_estimator("greg").fit(c.Y, c.sel, c.weights)
            V.append(est.variance(c.new))  # type: ignore[attr-defined]
        beta = np.full(len(self.cats), 1.0 / len(self.cats)) if self.exact_mean else self.beta_
        return np.column_stack(V) @ (beta**2)


DESIGN_DRAWS = 1000
"""Predictive draws of a design interval: the normal quantiles at (j + ½)/DESIGN_DRAWS, times
the model's standard error (what a suite or category interval combines across benchmarks)."""


def design_residuals(se: float) -> np.ndarray:
    """``DESIGN_DRAWS`` draws of N(0, se²) at evenly spaced quantiles (NaN se: none)."""
    from scipy.stats import norm

    if not np.isfinite(se):
        return np.zeros(0)
    return se * norm.ppf((np.arange(DESIGN_DRAWS) + 0.5) / DESIGN_DRAWS)


CONFORMAL_FOLDS = 10


def conformal_residuals(
    cats: list[_Category],
    full: np.ndarray,
    exact_mean: bool,
    estimator: str,
    folds: int = CONFORMAL_FOLDS,
    seed: int = 0,
) -> np.ndarray:
    """Held-out residuals ``true − predicted`` full-suite score of the reference models
    (``folds``-fold cross-fitting over the models with a full score: each fold's models are
    predicted from their suite responses by estimators and a map fitted on the other folds)."""
    ok = np.flatnonzero(np.isfinite(full))
    rng = np.random.default_rng(seed)
    order = rng.permutation(ok)
    k = max(2, min(folds, len(ok)))
    out = np.full(len(full), np.nan)
    for f in range(k):
        held = order[f::k]
        train = np.setdiff1d(ok, held)
        if len(train) < 3 or len(held) == 0:
            continue
        fold_cats = [_Category(c.name, c.Y[train], c.sel, c.Y[held][:, c.sel]) for c in cats]
        try:
            pred = _Predictor(fold_cats, full[train], exact_mean, estimator)
        except InputError:
            continue
        _, _, t = pred.predict([np.arange(len(c.sel)) for c in cats])
        out[held] = full[held] - t
    return out[np.isfinite(out)]


def conformal_bounds(
    point: np.ndarray, residuals: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Split-conformal interval ``point + [q_lo, q_hi]`` from held-out residuals, with the
    finite-sample rank k = ⌈(n + 1)(1 − a)⌉ for each tail (a = (1 − level)/2). With fewer
    residuals than the level needs (k > n: n < 39 at 95 %), the extreme residuals are used, whose
    guaranteed two-sided coverage is 1 − 2/(n + 1) (92 % for 24 models); NaN with none."""
    r = np.sort(residuals[np.isfinite(residuals)])
    n, a = len(r), (1 - level) / 2
    if n == 0:
        nan = np.full_like(point, np.nan, dtype=float)
        return nan, nan
    k = min(n, int(np.ceil((n + 1) * (1 - a))))
    return point + r[n - k], point + r[k - 1]


def place_models(
    panel: Panel,
    manifest: SuiteManifest,
    new: pd.DataFrame,
    estimator: str = DEFAULT_ESTIMATOR,
    n_boot: int = N_BOOT,
    seed: int = 0,
    residuals: np.ndarray | None = None,
) -> pd.DataFrame:
    """Place new models on the reference ``panel``.

    ``new``: new models' item scores, index = model names, columns = MultiIndex (benchmark,
    item_id), values in [0, 1] or NaN (missing). Returns one row per new model with
    ``n_items``, ``n_scored``, ``suite_score`` (+ ``_lo``/``_hi``), ``suite_rank`` (+ interval),
    ``predicted_full`` (+ interval), ``predicted_rank`` (+ interval), ``n_reference`` and one
    ``cat:<category>`` column per suite category."""
    cats = _categories(panel, manifest, new)
    full_s = full_suite_scores(panel)
    full = full_s.to_numpy(float)
    exact = {e.name for e in manifest.benchmarks} == set(panel.benchmark_names) and all(
        len(bs) == 1 for bs in manifest.categories.values()
    )
    pred = _Predictor(cats, full, exact, estimator)
    ref_suite = [_Category(c.name, c.Y, c.sel, c.Y[:, c.sel]) for c in cats]

    def ref_scores(picks: list[np.ndarray]) -> np.ndarray:
        return np.nanmean(
            np.column_stack(
                [nanmean_rows(c.new[:, p]) for c, p in zip(ref_suite, picks, strict=True)]
            ),
            axis=1,
        )

    whole = [np.arange(len(c.sel)) for c in cats]
    S, C, T = pred.predict(whole)
    T = np.clip(T, 0.0, 1.0)  # a predicted score, like a score, lies in [0, 1]
    S_ref = ref_scores(whole)
    rng = np.random.default_rng(seed)
    boots = np.empty((n_boot, 4, len(new)))
    for b in range(n_boot):
        picks = [rng.integers(len(c.sel), size=len(c.sel)) for c in cats]
        s, _, t = pred.predict(picks)
        t = np.clip(t, 0.0, 1.0)
        boots[b] = [s, _rank(s, ref_scores(picks)), t, _rank(t, full)]
    with warnings.catch_warnings():  # a model with nothing scored has all-NaN resamples
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanpercentile(boots, [2.5, 97.5], axis=0).reshape(2, 4, len(new))
    # the predicted full score and its rank: conformal intervals from the estimator's held-out
    # residuals on the reference models (they hold the estimator's error, which an item
    # bootstrap leaves out: its intervals covered ~70 % for a nominal 95 %)
    cal = manifest.calibration() or {}
    regime = placement_regime(T, full)
    if residuals is not None:
        resid = np.asarray(residuals, dtype=float)
        source = "given"
    elif cal.get("estimator") == estimator and cal.get("residuals"):
        # errors measured at build time with the selection inside the cross-validation
        # (place.calibration): they hold the selection's optimism too
        resid = np.asarray(cal["residuals"], dtype=float)
        source = "manifest"
    else:
        resid = conformal_residuals(cats, full, exact, estimator, seed=seed)
        source = "cross-fit"
    by_model = [resid] * len(T)
    design = pred.design_variance() if residuals is None else None
    if design is not None:
        # a drawn suite and the model-assisted estimator: the interval is the design's — it
        # holds for any model, also one beyond every reference model, where held-out errors
        # of the reference models say nothing
        by_model = [design_residuals(float(np.sqrt(v))) for v in design]
        source = "design"
    elif source == "manifest" and cal.get("regimes"):
        # Mondrian: each model's interval from the errors of its own regime (random and nested
        # frontier folds of the build), so a model beyond the panel gets the wider intervals
        # that placements beyond the panel have had
        pools = {g: regime_residuals(cal["regimes"], g) for g in REGIMES}
        by_model = [pools[g] for g in regime]
        source = "manifest-regime"
    extra: dict[str, np.ndarray] = {}
    for level, tag in ((0.95, ""), (0.90, "90")):
        t_lo, t_hi = np.full(len(T), np.nan), np.full(len(T), np.nan)
        for v, r in enumerate(by_model):
            if design is not None:
                lo_v, hi_v = normal_interval(T[v : v + 1], design[v : v + 1], level)
            else:
                lo_v, hi_v = conformal_bounds(T[v : v + 1], r, level)
            # a score lies in [0, 1]: an interval end beyond it claims nothing more
            t_lo[v], t_hi[v] = np.clip(lo_v[0], 0.0, 1.0), np.clip(hi_v[0], 0.0, 1.0)
        if tag:
            extra["predicted_full_lo90"], extra["predicted_full_hi90"] = t_lo, t_hi
            extra["predicted_rank_lo90"] = _rank(t_hi, full).astype(float)
            extra["predicted_rank_hi90"] = _rank(t_lo, full).astype(float)
        else:
            lo[2], hi[2] = t_lo, t_hi
            lo[3], hi[3] = _rank(t_hi, full), _rank(t_lo, full)
    # the point is refitted on all items and can fall outside its resamples' percentile interval
    # (the estimator is not linear in the items): widen the interval to hold it, so that every
    # reported interval contains its point
    points = np.vstack([S, _rank(S, S_ref), T, _rank(T, full)]).astype(float)
    ok = np.isfinite(points)
    lo = np.where(ok, np.fmin(lo, points), lo)
    hi = np.where(ok, np.fmax(hi, points), hi)
    n_scored = np.asarray(sum(np.isfinite(c.new).sum(axis=1) for c in cats)).reshape(len(new))
    # a model with no scored item (every request failed), or fewer than the stated minimum: no
    # score, no prediction, no rank
    none = n_scored < min_scored_items(sum(len(c.sel) for c in cats))
    if none.any():
        S, T = np.where(none, np.nan, S), np.where(none, np.nan, T)
        lo[:, none], hi[:, none] = np.nan, np.nan
        for key in extra:
            extra[key] = np.where(none, np.nan, extra[key])
        regime = np.where(none, np.where(n_scored == 0, "none", "too_few"), regime)
    rows = pd.DataFrame(
        {
            "n_items": sum(len(c.sel) for c in cats),
            "n_scored": n_scored,
            "suite_score": S,
            "suite_score_lo": lo[0],
            "suite_score_hi": hi[0],
            "suite_rank": _rank(S, S_ref),
            "suite_rank_lo": lo[1],
            "suite_rank_hi": hi[1],
            "predicted_full": T,
            "predicted_full_lo": lo[2],
            "predicted_full_hi": hi[2],
            "predicted_rank": _rank(T, full),
            "predicted_rank_lo": lo[3],
            "predicted_rank_hi": hi[3],
            **extra,
            "n_reference": int(np.isfinite(full).sum()),
            "regime": regime,
            "above_all": regime == "beyond",  # above every reference model's full score
            "n_residuals": [len(r) for r in by_model],
            "residuals_from": source,
            "estimator": estimator,
        },
        index=new.index,
    )
    for j, c in enumerate(cats):
        rows[f"cat:{c.name}"] = C[:, j]
    rows.index.name = "model"
    # the resamples themselves (n_boot, [suite score, suite rank, predicted full, predicted
    # rank], V), for callers that combine placements (pipeline.multi_source suites)
    rows.attrs["boot"] = boots
    rows.attrs["residuals"] = resid
    rows.attrs["residuals_by_model"] = by_model
    return rows
