"""A suite rank when few reference models have every benchmark of the suite: the reference
models' missing benchmark scores imputed, the imputation validated per benchmark, and its error
carried into the rank's interval.

No reference model has all seven benchmarks of the released flagship (their panels come from
different sources), so a rank "among the models that have every benchmark" would be among none.
When fewer than :data:`~primebench_tasks.place.defaults.MIN_COMPLETE_REFERENCE` have them,
:func:`impute_reference` builds the rank's reference instead:

- **Table** (rows: every model of the suite's reference panels, joined by name; sorted). One
  column per benchmark: the model's full score on the benchmark's panel (mean over its items;
  NaN where the model is not in that panel). Covariates only: the model's scores on the embedded
  OpenVLM leaderboard (284 VLMs × 8 benchmarks, in [0, 1]), joined by
  :func:`~primebench_tasks.data.model_dates.folded_name` where exactly one leaderboard model
  folds the same; its HallusionBench column is left out (held out for independent checks).
- **Imputer**: scikit-learn's ``IterativeImputer`` with ``BayesianRidge`` (each column regressed
  on all others, in turns), seeded; imputed scores clipped to [0, 1].
- **Validation per benchmark** (:data:`~primebench_tasks.place.defaults.IMPUTE_FOLDS` folds
  over the models that have it): a fold's scores hidden and imputed from the rest; residual =
  observed − imputed. The benchmark enters the rank's **basis** when at least
  :data:`~primebench_tasks.place.defaults.IMPUTE_MIN_MODELS` models have it and its MAE is at
  most :data:`~primebench_tasks.place.defaults.IMPUTE_MAX_ERROR_RATIO` × the MAE of imputing
  its mean on the same folds; otherwise it is left out of the rank, with the figures.
- **Ranked reference models**: those with at least half of the basis observed.
- **Suite score on a basis**: the mean over categories (those holding a basis benchmark) of the
  mean of their basis benchmarks (:func:`category_mean`), the same formula for the placed model's
  predicted full scores and for the reference models'.
- **Intervals**: every imputed cell gets a cross-validated residual of its benchmark drawn from
  the models with the same leaderboard coverage (a leaderboard row or none) when that pool holds
  at least ``IMPUTE_MIN_MODELS // 2`` residuals, else from all of the benchmark's. The residuals
  come from models that have the benchmark; a model that lacks it may differ (missing cells are
  not missing at random). Measured: ``benchmarks/suite_rank_imputation.py``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from primebench_tasks.data.panel import Panel
from primebench_tasks.metrics import nanmean_rows
from primebench_tasks.place.defaults import IMPUTE_FOLDS, IMPUTE_MAX_ERROR_RATIO, IMPUTE_MIN_MODELS

LEADERBOARD = "openvlm"
"""The embedded leaderboard whose scores are the imputation's covariates."""

LEFT_OUT_COVARIATES = ("HallusionBench",)
"""Leaderboard columns never used (held out for independent checks)."""


def category_mean(scores: pd.DataFrame, categories: Mapping[str, Sequence[str]]) -> np.ndarray:
    """Mean over ``categories`` (category → its benchmarks, each a column of ``scores``) of the
    mean of each category's benchmarks, per row of ``scores``; shape (rows,). A category with
    no listed benchmark is skipped; NaN propagates (a row missing a benchmark has no mean)."""
    means = [scores[list(bs)].to_numpy(float).mean(axis=1) for bs in categories.values() if len(bs)]
    if not means:
        return np.full(len(scores), np.nan)
    return np.column_stack(means).mean(axis=1)


def restrict(
    categories: Mapping[str, Sequence[str]], benchmarks: Sequence[str]
) -> dict[str, list[str]]:
    """``categories`` keeping only ``benchmarks`` (and the categories left with one)."""
    keep = set(benchmarks)
    out = {c: [b for b in bs if b in keep] for c, bs in categories.items()}
    return {c: bs for c, bs in out.items() if bs}


def benchmark_scores(panels: Mapping[str, Panel], benchmarks: Sequence[str]) -> pd.DataFrame:
    """(models × ``benchmarks``) full scores, each from the benchmark's own panel (mean over its
    items; NaN where the model is not in that panel); models sorted by name."""
    cols = {
        b: pd.Series(nanmean_rows(panels[b].matrix(b)), index=panels[b].model_names)
        for b in benchmarks
    }
    frame = pd.DataFrame(cols)
    return frame.loc[sorted(frame.index)]


def leaderboard_covariates(models: Sequence[str], scores: pd.DataFrame) -> pd.DataFrame:
    """(``models`` × leaderboard columns, prefixed ``leaderboard:``): a model's row of the
    leaderboard ``scores`` where exactly one leaderboard name folds as its name does, else NaN;
    :data:`LEFT_OUT_COVARIATES` dropped."""
    from primebench_tasks.data.model_dates import folded_name

    scores = scores.drop(columns=[c for c in LEFT_OUT_COVARIATES if c in scores.columns])
    by_fold: dict[str, list[str]] = {}
    for n in scores.index:
        by_fold.setdefault(folded_name(str(n)), []).append(str(n))
    rows = []
    for m in models:
        hits = by_fold.get(folded_name(m), [])
        rows.append(
            scores.loc[hits[0]].to_numpy(float)
            if len(hits) == 1
            else np.full(scores.shape[1], np.nan)
        )
    return pd.DataFrame(
        np.array(rows).reshape(len(models), scores.shape[1]),
        index=list(models),
        columns=[f"leaderboard:{c}" for c in scores.columns],
    )


def _impute(table: pd.DataFrame, seed: int) -> pd.DataFrame:
    """``table`` with every NaN filled by the seeded iterative imputer (columns with no value at
    all stay NaN); values clipped to [0, 1]."""
    from sklearn.experimental import enable_iterative_imputer  # noqa: F401
    from sklearn.impute import IterativeImputer
    from sklearn.linear_model import BayesianRidge

    has = table.columns[table.notna().any()]
    out = table.copy()
    imputer = IterativeImputer(
        estimator=BayesianRidge(), max_iter=15, random_state=seed, keep_empty_features=False
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "early stopping criterion not reached": still usable
        out[has] = np.clip(imputer.fit_transform(table[has].to_numpy(float)), 0.0, 1.0)
    return out


def _folds(n: int, k: int, seed: int, salt: int) -> list[np.ndarray]:
    perm = np.random.default_rng([seed, salt]).permutation(n)
    return [np.sort(perm[f::k]) for f in range(min(k, n))]


@dataclass(frozen=True)
class ImputedReference:
    """Reference models' benchmark scores, observed and imputed.

    ``observed`` / ``imputed``: (models × benchmarks) in [0, 1] — NaN in ``observed`` where the
    model is not in the benchmark's panel; ``imputed`` fills the basis benchmarks' cells.
    ``basis``: the benchmarks whose imputation validated; ``excluded``: benchmark → why not.
    ``validation``: benchmark → ``{"models", "mae", "mean_mae"}`` (cross-validated MAE of the
    imputer and of the mean, in score units). ``on_leaderboard``: which models have a row of
    ``leaderboard`` (its name; None: no covariates). ``residuals``: (benchmark, on the
    leaderboard or None for all) → cross-validated residuals."""

    observed: pd.DataFrame
    imputed: pd.DataFrame
    basis: tuple[str, ...]
    excluded: dict[str, str]
    validation: dict[str, dict[str, float]]
    on_leaderboard: pd.Series
    residuals: dict[tuple[str, bool | None], np.ndarray] = field(repr=False)
    leaderboard: str | None = None

    def ranked(self, benchmarks: Sequence[str]) -> list[str]:
        """The reference models ranked on ``benchmarks`` (basis benchmarks): those with at least
        half of them observed."""
        obs = self.observed[list(benchmarks)].notna().sum(axis=1)
        return [str(m) for m in self.observed.index[obs >= len(benchmarks) / 2]]

    def suite_scores(self, categories: Mapping[str, Sequence[str]]) -> pd.Series:
        """The ranked reference models' suite scores on ``categories`` (basis benchmarks only),
        observed where they can be, imputed elsewhere."""
        bs = [b for v in categories.values() for b in v]
        models = self.ranked(bs)
        return pd.Series(category_mean(self.imputed.loc[models], categories), index=models)

    def suite_draws(
        self, categories: Mapping[str, Sequence[str]], n_boot: int, seed: int
    ) -> np.ndarray:
        """(``n_boot`` × ranked models) suite scores with every imputed cell redrawn as imputed +
        a cross-validated residual (see the module docstring); observed cells fixed."""
        bs = [b for v in categories.values() for b in v]
        models = self.ranked(bs)
        rng = np.random.default_rng([seed, 55])
        cols = {}
        for b in bs:
            point = self.imputed.loc[models, b].to_numpy(float)
            missing = self.observed.loc[models, b].isna().to_numpy()
            draws = np.repeat(point[None, :], n_boot, axis=0)
            for j in np.flatnonzero(missing):
                pool = self.residuals.get((b, bool(self.on_leaderboard[models[j]])))
                if pool is None or len(pool) < IMPUTE_MIN_MODELS // 2:
                    pool = self.residuals[(b, None)]
                draws[:, j] = np.clip(point[j] + rng.choice(pool, n_boot), 0.0, 1.0)
            cols[b] = draws
        # category_mean over the draws: mean of each category's benchmarks, then of categories
        cats = [np.mean([cols[b] for b in v], axis=0) for v in categories.values() if len(v)]
        return np.mean(cats, axis=0)

    def summary(self, benchmarks: Sequence[str]) -> dict[str, Any]:
        """What the report says of a rank on ``benchmarks``: how many reference models, how many
        have every one of them, how many cells were imputed, and each one's validation."""
        models = self.ranked(benchmarks)
        obs = self.observed.loc[models, list(benchmarks)].notna()
        return {
            "benchmarks": list(benchmarks),
            "left_out": dict(self.excluded),
            "n_reference": len(models),
            "n_complete": int(obs.all(axis=1).sum()),
            "cells": int(obs.size),
            "imputed_cells": int((~obs).to_numpy().sum()),
            "imputation": {b: self.validation[b] for b in benchmarks},
            "covariates": (
                f"leaderboard `{self.leaderboard}` "
                f"({int(self.on_leaderboard.loc[models].sum())} of the models on it)"
                if self.leaderboard
                else "no leaderboard"
            ),
        }


_CACHE: dict[tuple[Any, ...], ImputedReference] = {}


def impute_reference(
    panels: Mapping[str, Panel],
    benchmarks: Sequence[str],
    *,
    leaderboard: Any = LEADERBOARD,
    seed: int = 0,
) -> ImputedReference:
    """The reference models of ``panels`` (benchmark → its panel) on ``benchmarks``, imputed and
    validated as the module docstring says; ``leaderboard``: an embedded leaderboard's name, a
    :class:`~primebench_tasks.data.leaderboard.Leaderboard`, or None (no covariates). Kept for
    the process by the panels' content hashes when ``leaderboard`` is a name or None (the
    imputation's 1 + folds × benchmarks fits take seconds)."""
    key = None
    if leaderboard is None or isinstance(leaderboard, str):
        key = (tuple((b, panels[b].content_hash) for b in benchmarks), leaderboard, seed)
        if key in _CACHE:
            return _CACHE[key]
    out = impute_table(benchmark_scores(panels, benchmarks), leaderboard=leaderboard, seed=seed)
    if key is not None:
        _CACHE.clear()  # one suite's reference at a time
        _CACHE[key] = out
    return out


def impute_table(
    observed: pd.DataFrame, *, leaderboard: Any = LEADERBOARD, seed: int = 0
) -> ImputedReference:
    """:func:`impute_reference` on a table of benchmark scores already read: ``observed``
    (models × benchmarks, in [0, 1], NaN = the model does not have it)."""
    benchmarks = [str(b) for b in observed.columns]
    models = [str(m) for m in observed.index]
    if leaderboard is None:
        cov = pd.DataFrame(index=models)
    else:
        if isinstance(leaderboard, str):
            from primebench_tasks.data.leaderboard import Leaderboard

            leaderboard = Leaderboard.load_default(leaderboard)
        cov = leaderboard_covariates(models, leaderboard.scores)
    table = pd.concat([observed, cov], axis=1)
    imputed = _impute(table, seed)[list(benchmarks)]
    validation: dict[str, dict[str, float]] = {}
    residuals: dict[tuple[str, bool | None], np.ndarray] = {}
    excluded: dict[str, str] = {}
    on_lb = cov.notna().any(axis=1) if cov.shape[1] else pd.Series(False, index=models)
    for k, b in enumerate(benchmarks):
        have = np.flatnonzero(observed[b].notna().to_numpy())
        if len(have) < IMPUTE_MIN_MODELS:
            excluded[b] = (
                f"{len(have)} reference models have it (an imputation is measured on at least "
                f"{IMPUTE_MIN_MODELS})"
            )
            continue
        res = np.full(len(models), np.nan)
        base = np.full(len(models), np.nan)
        for fold in _folds(len(have), IMPUTE_FOLDS, seed, k):
            hide = have[fold]
            masked = table.copy()
            masked.iloc[hide, table.columns.get_loc(b)] = np.nan
            filled = _impute(masked, seed)
            truth = observed[b].to_numpy(float)[hide]
            res[hide] = truth - filled[b].to_numpy(float)[hide]
            base[hide] = truth - np.nanmean(masked[b].to_numpy(float))
        mae, mean_mae = float(np.nanmean(np.abs(res))), float(np.nanmean(np.abs(base)))
        validation[b] = {"models": len(have), "mae": mae, "mean_mae": mean_mae}
        if mae > IMPUTE_MAX_ERROR_RATIO * mean_mae:
            excluded[b] = (
                f"imputed no better than its mean (cross-validated MAE {mae:.3f} vs "
                f"{mean_mae:.3f} over its {len(have)} reference models)"
            )
            continue
        r = res[have]
        residuals[(b, None)] = r
        lb = on_lb.to_numpy()[have]
        residuals[(b, True)], residuals[(b, False)] = r[lb], r[~lb]
    basis = tuple(b for b in benchmarks if b not in excluded)
    return ImputedReference(
        observed=observed,
        imputed=imputed,
        basis=basis,
        excluded=excluded,
        validation=validation,
        on_leaderboard=on_lb.astype(bool),
        residuals=residuals,
        leaderboard=None if leaderboard is None else str(leaderboard.name),
    )
