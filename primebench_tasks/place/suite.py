"""Placement on a suite whose benchmarks come from different reference panels (a multi-source
suite such as the released ``primebench``), or from one panel.

Few or no reference models have every benchmark of such a suite, so "rank among the reference
models" is stated at three levels (schema ``primebench.placement/1``):

- **benchmark** (always): the model's score on the benchmark's suite items, the predicted score
  on all of the benchmark's items (the default estimator of
  :func:`~primebench_tasks.place.benchmark.place_models`, fitted on the benchmark's own source
  panel) and the predicted rank among that panel's models, with 95 % intervals from a bootstrap
  over the suite items;
- **category**: the item-pooled score on the category's suite items and the predicted full
  category score (the mean of its benchmarks' predicted full scores); a rank among the reference
  models that have every benchmark of the category — given only when at least
  ``MIN_RANKED_REFERENCE`` models do, else ``None`` with the reason;
- **leaderboard** (every benchmark a leaderboard has; another harness's with its caveat): the
  predicted full score's rank among the leaderboard's models and among those of its own year,
  and the suite's on their mean (:mod:`~primebench_tasks.place.standing`);
- **suite**: the suite score (mean of category means of the suite items), the predicted
  full-suite score (mean of category means of the predicted full benchmark scores), and a rank
  among the reference models that have every benchmark of the suite when at least
  ``MIN_COMPLETE_REFERENCE`` do, or when every reference model does (a one-panel suite; at least
  ``MIN_RANKED_REFERENCE`` of them); otherwise among reference models whose missing benchmark
  scores are imputed (:mod:`~primebench_tasks.place.imputation`), on the benchmarks
  whose imputation validated (``rank_basis`` says which, which were left out and why, how many
  models and imputed cells, and the model's predicted score on that basis).

Intervals: scores on the suite items from resampling the items of each benchmark independently;
predicted full scores and ranks from the estimator's held-out (cross-conformal) residuals on each
benchmark's reference models — per benchmark the conformal interval of
:func:`~primebench_tasks.place.benchmark.place_models`; for a category or the suite, the
percentiles of the mean of independent predictive draws (point + a held-out residual) of its
benchmarks. Measured coverage: ``benchmarks/placement_accuracy.py``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from primebench_tasks.data.panel import Panel
from primebench_tasks.place.benchmark import DEFAULT_ESTIMATOR, place_models
from primebench_tasks.place.defaults import (
    MIN_COMPLETE_REFERENCE,
    MIN_SCORED_ITEMS,
    N_BOOT,
    min_scored_items,
)
from primebench_tasks.place.design_only import DesignAnswers, place_design_only
from primebench_tasks.place.imputation import (
    ImputedReference,
    benchmark_scores,
    category_mean,
    impute_reference,
    restrict,
)
from primebench_tasks.place.misfit import suite_person_fit
from primebench_tasks.place.responses import check_responses, pooled_chance_line
from primebench_tasks.place.result import (
    BenchmarkPlacement,
    CategoryPlacement,
    Estimate,
    ModelPlacement,
    Placement,
    Rank,
    SuitePlacement,
)
from primebench_tasks.suite.manifest import SuiteManifest

MIN_RANKED_REFERENCE = 3
_Q = (2.5, 97.5)
_NOTHING_SCORED = "no item scored (every item failed or is missing): no score and no rank"


def _unplaced_because(n_scored: int, n_items: int) -> str:
    """Why a benchmark of a placement has no score, prediction or rank."""
    if n_scored == 0:
        return _NOTHING_SCORED
    return (
        f"{n_scored} of {n_items} items scored, fewer than the {min_scored_items(n_items)} a "
        "benchmark is placed on (a bootstrap over so few items is no interval): no score, no "
        "prediction and no rank"
    )


def _unplaced_category(bench: Mapping[str, BenchmarkPlacement], bs: list[str]) -> str:
    """Why a category with no placed benchmark has no rank."""
    if all(bench[b].n_scored == 0 for b in bs):
        return _NOTHING_SCORED
    return "; ".join(f"{b}: {bench[b].no_prediction_because or 'not placed'}" for b in bs)


def _num(x: float | None) -> float:
    return float("nan") if x is None else float(x)


def _interval(draws: np.ndarray) -> tuple[float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanpercentile(draws, _Q)
    return float(lo), float(hi)


def _consistent(point: float, lo: float, hi: float) -> tuple[float, float]:
    """An interval that contains its point (a point estimate refitted on all items can lie
    outside the percentile interval of the resamples; widen it rather than report both)."""
    return (min(lo, point), max(hi, point)) if np.isfinite(point) else (lo, hi)


def _finite(x: float) -> float | None:
    return None if not np.isfinite(x) else float(x)


def _value(point: float, draws: np.ndarray) -> Estimate:
    lo, hi = _consistent(point, *_interval(draws))
    return Estimate(_finite(point), _finite(lo), _finite(hi))


def _fixed(point: float, lo: float, hi: float) -> Estimate:
    lo, hi = _consistent(point, lo, hi)
    return Estimate(_finite(point), _finite(lo), _finite(hi))


def _rank(
    value: float,
    draws: np.ndarray,
    reference: np.ndarray,
    reference_draws: np.ndarray | None = None,
) -> Rank | None:
    """The rank (1 = best) of ``value`` among ``reference`` (shape (R,)) with its interval from
    ``draws`` (shape (B,)) — each draw ranked among ``reference``, or among the same row of
    ``reference_draws`` (shape (B, R)) where the reference scores are uncertain too; None for a
    model with no predicted score (nothing scored: no rank, not rank 1)."""
    if not np.isfinite(value):
        return None
    ok = np.isfinite(reference)
    ref = reference[ok]
    point = float(1 + (ref > value).sum())
    ref_rows = ref[None, :] if reference_draws is None else reference_draws[:, ok]
    r = 1 + (ref_rows > draws[:, None]).sum(axis=1).astype(float)
    out = _value(point, r)
    return Rank(out.value, out.lo, out.hi, int(len(ref) + 1))


def _reference_full(panels: Mapping[str, Panel], benchmarks: list[str]) -> pd.Series:
    """Full score (mean of benchmark means) of the reference models that have every one of
    ``benchmarks`` (joined on model name across panels)."""
    return benchmark_scores(panels, benchmarks).dropna().mean(axis=1)


def place_on_suite(
    manifest: SuiteManifest,
    panels: Mapping[str, Panel],
    new: pd.DataFrame,
    estimator: str = DEFAULT_ESTIMATOR,
    n_boot: int = N_BOOT,
    seed: int = 0,
    responses: pd.DataFrame | None = None,
    guessing: bool = False,
    leaderboard: Any = None,
    design: Mapping[str, DesignAnswers] | None = None,
) -> Placement:
    """Place the models of ``new`` (index: model names; columns: MultiIndex (benchmark,
    item_id); values in [0, 1], NaN = missing) on ``manifest``; ``panels``: benchmark → the
    reference panel of that benchmark. ``responses``: the run's raw answers (model, benchmark,
    item_id, response; optional finish_reason, score), read by the response check
    (:mod:`~primebench_tasks.place.responses`; ``guessing``: scored by lmms-eval's task code).
    ``leaderboard``: the snapshot the standing is given on
    (:func:`~primebench_tasks.place.standing.add_leaderboard_standing`; default the embedded one).
    ``design``: the run's answers to the suite's design-only benchmarks
    (:func:`~primebench_tasks.place.design_only.design_answers`), each model's placed by its
    design (``ModelPlacement.design_only``), outside the suite score. Returns the :class:`~primebench_tasks.place.result.Placement` (see the module docstring)."""
    # 1. each benchmark on its own reference panel, with its own placement calibration
    per_b = _place_benchmarks(manifest, panels, new, estimator, n_boot, seed)
    # 2. does each model's answer pattern look like the reference runs? (no item is added) —
    # and do its answers read like theirs? (empty, unreadable, truncated)
    fits = suite_person_fit(manifest, panels, new, seed)
    answers = _check_answers(manifest, panels, responses, guessing)
    # 3. the model on each benchmark
    placed = {
        str(model): _benchmark_placements(per_b, panels, fits, answers, str(model), v, n_boot, seed)
        for v, model in enumerate(new.index)
    }
    return _on_suite(
        manifest, panels, placed, estimator, n_boot, seed, leaderboard, design, list(per_b)
    )


@dataclass(frozen=True)
class GivenBenchmark:
    """One model's placement on one benchmark made by another test (an adaptive test: its items
    drawn per model, its estimate guarded by their design): the :class:`BenchmarkPlacement` and
    ``n_boot`` draws of its full score (``full_draws``) and of its score on the items asked
    (``score_draws``), which the category and the suite combine as they combine the static
    placements' (independent across benchmarks)."""

    placement: BenchmarkPlacement
    full_draws: np.ndarray
    score_draws: np.ndarray


def place_given(
    manifest: SuiteManifest,
    panels: Mapping[str, Panel],
    given: Mapping[str, Mapping[str, GivenBenchmark]],
    estimator: str,
    n_boot: int = N_BOOT,
    seed: int = 0,
    leaderboard: Any = None,
) -> Placement:
    """Place models whose benchmarks were each placed by another test (model → benchmark →
    :class:`GivenBenchmark`, every benchmark of ``manifest`` for every model) on ``manifest``'s
    categories, suite and leaderboard — the same steps 4–6, ranks and checks as
    :func:`place_on_suite`: one placement document whatever test placed the benchmarks.
    ``estimator`` names that test in the document."""
    names = [e.name for e in manifest.benchmarks]
    placed = {}
    for model, by_b in given.items():
        lacking = [b for b in names if b not in by_b]
        if lacking:
            raise ValueError(f"{model} has no placement on {', '.join(lacking)}")
        placed[model] = (
            {b: by_b[b].placement for b in names},
            {b: np.asarray(by_b[b].full_draws, float) for b in names},
            {b: np.asarray(by_b[b].score_draws, float) for b in names},
        )
    return _on_suite(manifest, panels, placed, estimator, n_boot, seed, leaderboard, None, names)


def _on_suite(
    manifest: SuiteManifest,
    panels: Mapping[str, Panel],
    placed: Mapping[
        str, tuple[dict[str, BenchmarkPlacement], dict[str, np.ndarray], dict[str, np.ndarray]]
    ],
    estimator: str,
    n_boot: int,
    seed: int,
    leaderboard: Any,
    design: Mapping[str, DesignAnswers] | None,
    benchmarks: Sequence[str],
) -> Placement:
    """Steps 4–6 of every placement: each model (its benchmarks placed: the placements, the
    draws of their full scores and of their scores on the items asked) on each category, on
    the suite, and on the leaderboard; the :class:`Placement` document."""
    items = manifest.item_ids()
    ref_suite = _reference_full_suite(panels, items)
    # one panel, or panels of the same models: nothing to impute, every model is ranked
    every_complete = len(ref_suite) == len({m for p in panels.values() for m in p.model_names})
    imputed: list[ImputedReference] = []  # built once, when a suite rank needs it
    out: dict[str, ModelPlacement] = {}
    for model, (bench, draws_t, draws_s) in placed.items():
        # 4. the model on each category, 5. on the suite
        cats, cat_draws = _category_placements(items, panels, bench, draws_s, draws_t, n_boot)
        suite = _suite_placement(
            items, panels, bench, cat_draws, draws_t, ref_suite, every_complete, imputed,
            n_boot, seed,
        )  # fmt: skip
        out[model] = ModelPlacement(
            suite=suite,
            categories=cats,
            benchmarks=bench,
            design_only={
                b: place_design_only(a, model)
                for b, a in (design or {}).items()
                if model in a.scores
            },
        )
    doc = Placement(
        suite=manifest.version,
        suite_name=manifest.name,
        estimator=estimator,
        n_boot=n_boot,
        seed=seed,
        reference={
            b: {"panel": panels[b].name, "panel_hash": panels[b].content_hash} for b in benchmarks
        },
        models=out,
    )
    # 6. the benchmarks a leaderboard has: their standing among its models and its year's
    from primebench_tasks.place.standing import add_leaderboard_standing

    add_leaderboard_standing(doc, manifest, leaderboard)
    return doc


def _place_benchmarks(
    manifest: SuiteManifest,
    panels: Mapping[str, Panel],
    new: pd.DataFrame,
    estimator: str,
    n_boot: int,
    seed: int,
) -> dict[str, pd.DataFrame]:
    """Step 1: every model on each benchmark, on that benchmark's reference panel with its own
    placement calibration (:func:`~primebench_tasks.place.benchmark.place_models`: one row per
    model; its bootstrap and held-out residuals in ``attrs``)."""
    from primebench_tasks.data.importers import panel_with_benchmarks

    per_b: dict[str, pd.DataFrame] = {}
    for k, e in enumerate(manifest.benchmarks, start=1):
        sub = panel_with_benchmarks(panels[e.name], [e.name])
        cols = [c for c in new.columns if c[0] == e.name]
        per_b[e.name] = place_models(
            sub, manifest.of_benchmark(e.name), new[cols], estimator, n_boot, seed + k
        )
    return per_b


def _check_answers(
    manifest: SuiteManifest,
    panels: Mapping[str, Panel],
    responses: pd.DataFrame | None,
    guessing: bool,
) -> dict[str, dict[str, Any]]:
    """Step 2: the response check of the run's answers to the suite's items (model →
    benchmark → :class:`~primebench_tasks.place.responses.ResponseCheck`); empty where the run
    kept no answers."""
    if responses is None or responses.empty:
        return {}
    wanted = {(e.name, str(i)) for e in manifest.benchmarks for i in e.item_ids}
    keys = list(
        zip(responses["benchmark"].astype(str), responses["item_id"].astype(str), strict=True)
    )
    asked = responses[[k in wanted for k in keys]]
    return check_responses(asked, {e.name: panels[e.name] for e in manifest.benchmarks}, guessing)


def _benchmark_placements(
    per_b: Mapping[str, pd.DataFrame],
    panels: Mapping[str, Panel],
    fits: Mapping[str, Any],
    answers: Mapping[str, Mapping[str, Any]],
    model: str,
    v: int,
    n_boot: int,
    seed: int,
) -> tuple[dict[str, BenchmarkPlacement], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Step 3: model ``model`` (row ``v``) on each benchmark, and its draws of each full
    benchmark score (the point plus a held-out residual, as the conformal interval uses) and
    of each score on the suite's items (the bootstrap)."""
    bench: dict[str, BenchmarkPlacement] = {}
    draws_s: dict[str, np.ndarray] = {}
    draws_t: dict[str, np.ndarray] = {}
    for b, rows in per_b.items():
        r = rows.loc[model]
        boot = rows.attrs["boot"]
        resid = rows.attrs["residuals_by_model"][v]
        # predictive draws of the full benchmark score: the point plus a held-out residual
        # of the estimator (independent across benchmarks), as the conformal interval uses
        rng = np.random.default_rng([seed, v, sum(map(ord, b))])
        draws_s[b] = boot[:, 0, v]
        draws_t[b] = (
            np.clip(float(r.predicted_full) + rng.choice(resid, n_boot), 0.0, 1.0)
            if len(resid)
            else np.full(n_boot, np.nan)
        )
        out_of = int(r.n_reference) + 1
        on_items = _value(float(r.suite_rank), boot[:, 1, v])
        rank = _fixed(
            float(r.predicted_rank), float(r.predicted_rank_lo), float(r.predicted_rank_hi)
        )
        bench[b] = BenchmarkPlacement(
            source=panels[b].name,
            n_items=int(r.n_items),
            n_scored=int(r.n_scored),
            n_reference=int(r.n_reference),
            score=_value(float(r.suite_score), boot[:, 0, v]),
            rank_on_suite_items=Rank(on_items.value, on_items.lo, on_items.hi, out_of),
            predicted_full=_fixed(
                float(r.predicted_full), float(r.predicted_full_lo), float(r.predicted_full_hi)
            ),
            predicted_rank=Rank(rank.value, rank.lo, rank.hi, out_of),
            regime=str(r.regime),
            above_all_reference=bool(r.above_all),
            interval_from=str(r.residuals_from),
            misfit=fits[model][b],
            no_prediction_because=(
                _unplaced_because(int(r.n_scored), int(r.n_items))
                if r.regime in ("none", "too_few")
                else None
            ),
            responses=answers.get(model, {}).get(b),
            reference_range=_reference_range(panels, b),
        )
    return bench, draws_t, draws_s


def _reference_range(panels: Mapping[str, Panel], b: str) -> list[float] | None:
    """[lowest, highest] full score of ``b`` among its reference models (rounded to 6
    decimals), None without any."""
    full = _reference_full(panels, [b]).to_numpy(dtype=float)
    if not len(full):
        return None
    return [round(float(full.min()), 6), round(float(full.max()), 6)]


def _category_placements(
    items: Mapping[str, Mapping[str, Any]],
    panels: Mapping[str, Panel],
    bench: Mapping[str, BenchmarkPlacement],
    draws_s: Mapping[str, np.ndarray],
    draws_t: Mapping[str, np.ndarray],
    n_boot: int,
) -> tuple[dict[str, CategoryPlacement], list[tuple[float, float, np.ndarray, np.ndarray]]]:
    """Step 4: the model on each category — the item-weighted score over its benchmarks, the
    mean of their predicted full scores and the rank among reference models that have every
    one of them — and per category (score, predicted full, their draws) for the suite."""
    cats: dict[str, CategoryPlacement] = {}
    per_cat: list[tuple[float, float, np.ndarray, np.ndarray]] = []
    for cat, by_b in items.items():
        bs = list(by_b)
        w = np.array([bench[b].n_scored for b in bs], dtype=float)
        pts = np.array([_num(bench[b].score.value) for b in bs])
        ok = np.isfinite(pts) & (w > 0)
        s = float(np.average(pts[ok], weights=w[ok])) if ok.any() else float("nan")
        ds = (
            np.column_stack([draws_s[b] for b in bs])[:, ok] @ w[ok] / w[ok].sum()
            if ok.any()
            else np.full(n_boot, np.nan)
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            t = float(np.nanmean([_num(bench[b].predicted_full.value) for b in bs]))
            dt = np.nanmean(np.column_stack([draws_t[b] for b in bs]), axis=1)
        cat_entry = CategoryPlacement(
            benchmarks=bs,
            score=_value(s, ds),
            predicted_full=_value(t, dt),
            predicted_rank=None,
        )
        if len(bs) == 1:
            # one benchmark: its placement is the category's (the same estimate, with the
            # interval it was placed with — the design's — not a second one from draws)
            cat_entry.predicted_full = bench[bs[0]].predicted_full
            cat_entry.predicted_rank = bench[bs[0]].predicted_rank
        else:
            ref = _reference_full(panels, bs)
            cat_entry.predicted_rank = (
                _rank(t, dt, ref.to_numpy()) if len(ref) >= MIN_RANKED_REFERENCE else None
            )
            if not np.isfinite(t):
                cat_entry.no_rank_because = _unplaced_category(bench, bs)
            elif cat_entry.predicted_rank is None:
                cat_entry.no_rank_because = (
                    f"{len(ref)} reference models have every benchmark of the category "
                    f"({', '.join(bs)}; sources "
                    f"{', '.join(sorted({panels[b].name for b in bs}))})"
                )
        if cat_entry.predicted_rank is None and cat_entry.no_rank_because is None:
            cat_entry.no_rank_because = _unplaced_category(bench, bs)
        cats[cat] = cat_entry
        per_cat.append((s, t, ds, dt))
    return cats, per_cat


def _suite_placement(
    items: Mapping[str, Mapping[str, Any]],
    panels: Mapping[str, Panel],
    bench: Mapping[str, BenchmarkPlacement],
    per_cat: Sequence[tuple[float, float, np.ndarray, np.ndarray]],
    draws_t: Mapping[str, np.ndarray],
    ref_suite: pd.Series,
    every_complete: bool,
    imputed: list[ImputedReference],
    n_boot: int,
    seed: int,
) -> SuitePlacement:
    """Step 5: the model on the suite — the mean of its category scores and predicted full
    scores, its rank among the reference models with every benchmark (or on imputed reference
    scores: ``imputed`` holds the imputation once built), and the lines the report says of it
    (misfit, answers, not comparable, beyond the reference)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        S = float(np.nanmean([c[0] for c in per_cat]))
        T = float(np.nanmean([c[1] for c in per_cat]))
        dS = np.nanmean(np.column_stack([c[2] for c in per_cat]), axis=1)
        dT = np.nanmean(np.column_stack([c[3] for c in per_cat]), axis=1)
    all_b = [b for by_b in items.values() for b in by_b]
    suite = SuitePlacement(
        n_items=sum(bench[b].n_items for b in all_b),
        n_scored=sum(bench[b].n_scored for b in all_b),
        score=_value(S, dS),
        # a one-benchmark suite is that benchmark: the same estimate and interval
        predicted_full=bench[all_b[0]].predicted_full if len(all_b) == 1 else _value(T, dT),
        predicted_rank=None,
    )
    if suite.n_scored == 0:
        suite.no_rank_because = _NOTHING_SCORED
    elif not np.isfinite(T):
        suite.no_rank_because = (
            "no benchmark has the items a placement needs "
            f"(at least {MIN_SCORED_ITEMS} scored, or half of a smaller benchmark's)"
        )
    elif len(ref_suite) >= MIN_COMPLETE_REFERENCE or (
        every_complete and len(ref_suite) >= MIN_RANKED_REFERENCE
    ):
        suite.predicted_rank = _rank(T, dT, ref_suite.to_numpy())
        suite.rank_basis = {
            "benchmarks": all_b,
            "n_reference": len(ref_suite),
            "n_complete": len(ref_suite),
            "imputed_cells": 0,
        }
    else:
        if not imputed:  # a property of the reference: its own seed, kept per process
            imputed.append(impute_reference(panels, all_b))
        _rank_on_imputed(suite, imputed[0], items, bench, draws_t, len(ref_suite), n_boot, seed)
    if len(all_b) == 1 and suite.predicted_rank is not None:
        suite.predicted_rank = bench[all_b[0]].predicted_rank  # the same rank, said once
    suite.misfit = [line for b in all_b if (line := bench[b].misfit.line(b)) is not None]
    suite.answers = [
        f"{b}: {flag}"
        for b in all_b
        if (check := bench[b].responses) is not None
        for flag in check.flags
    ]
    suite.not_comparable = [b for b in all_b if not bench[b].comparable]
    suite.at_chance = [b for b in all_b if bench[b].at_chance]
    suite.chance = pooled_chance_line(
        [c.profile for b in all_b if (c := bench[b].responses) is not None]
    )
    above = [b for b in all_b if bench[b].above_all_reference]
    suite.beyond_reference = [
        f"predicted above all {bench[b].n_reference} reference models on {b} "
        + (
            "(its interval is the design's: it rests on the drawn items, not on the "
            "reference models)"
            if bench[b].interval_from == "design"
            else "(its interval from held-out placements that were beyond their panel)"
        )
        for b in above
    ]
    return suite


def _rank_on_imputed(
    suite: SuitePlacement,
    imputed: ImputedReference,
    items: Mapping[str, Mapping[str, Any]],
    bench: Mapping[str, BenchmarkPlacement],
    draws_t: Mapping[str, np.ndarray],
    n_complete: int,
    n_boot: int,
    seed: int,
) -> None:
    """Set ``suite``'s ``predicted_rank`` (and ``rank_basis``) on the imputed reference: the
    basis is the benchmarks whose imputation validated and which this model has a predicted full
    score on; the model's score on it is :func:`category_mean` of its predicted full scores (its
    draws likewise); else ``no_rank_because`` says why."""
    scored = [b for b in imputed.basis if bench[b].predicted_full.value is not None]
    cats = restrict({c: list(by_b) for c, by_b in items.items()}, scored)
    ranked = imputed.ranked(scored) if scored else []
    if len(ranked) < MIN_RANKED_REFERENCE:
        left = "; ".join(f"{b}: {why}" for b, why in imputed.excluded.items())
        suite.no_rank_because = (
            f"{n_complete} reference models have every benchmark of the suite, and "
            f"{len(ranked)} can be ranked on the benchmarks whose scores impute"
            + (f" ({left})" if left else "")
        )
        return
    point = float(
        category_mean(pd.DataFrame({b: [bench[b].predicted_full.value] for b in scored}), cats)[0]
    )
    draws = category_mean(pd.DataFrame({b: draws_t[b] for b in scored}), cats)
    ref = imputed.suite_scores(cats)
    ref_draws = imputed.suite_draws(cats, n_boot, seed)
    suite.predicted_rank = _rank(point, draws, ref.to_numpy(), ref_draws)
    suite.rank_basis = {
        **imputed.summary(scored),
        "predicted_full": _value(point, draws).to_json(),
        "not_scored": [b for b in imputed.basis if b not in scored],
    }


def _reference_full_suite(
    panels: Mapping[str, Panel], items: Mapping[str, Mapping[str, Any]]
) -> pd.Series:
    """Full-suite score (mean of category means of benchmark means) of the reference models that
    have every benchmark of the suite."""
    cats = {c: _reference_full(panels, list(by_b)) for c, by_b in items.items()}
    return pd.DataFrame(cats).dropna().mean(axis=1)
