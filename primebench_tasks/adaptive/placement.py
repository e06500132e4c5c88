"""An adaptive test placed like the static suite (#80): each test's guarded estimate becomes the
benchmark's :class:`~primebench_tasks.place.result.BenchmarkPlacement`, and
:func:`~primebench_tasks.place.suite.place_given` puts the benchmarks together into the same
categories, suite score, ranks and leaderboard standing as a static run's — one placement
document (``report.json``) whatever test asked the items.

Per benchmark, from the test's ``level`` interval [lo, hi] around its point p (asymmetric where
the item model's interval and the guard make it so):

- the **predicted full score**'s 95 % interval is the split normal's, each side's standard
  deviation read off the test's interval: σ₋ = (p − lo)/z_level, σ₊ = (hi − p)/z_level,
  [p − 1.96 σ₋, p + 1.96 σ₊] clipped to [0, 1];
- its **draws** (what a category and the suite combine, independent across benchmarks) are that
  split normal's: p + σ₋·z for z < 0, p + σ₊·z for z ≥ 0, clipped;
- the **score on the items asked** is their mean, its interval the bootstrap over them; its
  rank is among the reference models' means on the same items;
- the **predicted rank** is the point's among the reference models' full scores, its interval
  the ranks of the 95 % interval's ends.

Hand case: p = 0.6, a 90 % interval [0.5, 0.7] (z = 1.645): σ = 0.0608, the 95 % interval
[0.481, 0.719].

A **race** (``rank-variants --adaptive``: every variant asked the same items, drawn with
replacement with known probabilities q) places each variant by its draws' Hansen–Hurwitz
estimate (:func:`race_benchmark`): the mean of y·w over the draws, w = 1/(N·q) — unbiased for the
full-benchmark mean whatever the probabilities favoured (each round's draws unbiased given the
rounds before) — its 95 % interval and draws the bootstrap over the draws. Hand case: draws of
items with answers 1, 0, 1 and weights 0.5, 2.0, 1.5 estimate (0.5 + 0 + 1.5)/3 = 0.667.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import TYPE_CHECKING

import numpy as np

from primebench_tasks.adaptive.result import AdaptiveTest
from primebench_tasks.place.result import BenchmarkPlacement, Estimate, Rank
from primebench_tasks.place.suite import GivenBenchmark

if TYPE_CHECKING:
    from primebench_tasks.place.misfit import PersonFit

Z95 = NormalDist().inv_cdf(0.975)
"""The two-sided 95 % normal quantile (1.960): placements state 95 % intervals."""


def split_normal_sds(point: float, lo: float, hi: float, level: float) -> tuple[float, float]:
    """(σ₋, σ₊): each side's standard deviation of a ``level`` interval [lo, hi] around
    ``point`` (see the module docstring)."""
    z = NormalDist().inv_cdf(0.5 + level / 2)
    return max(point - lo, 0.0) / z, max(hi - point, 0.0) / z


def interval_95(point: float, lo: float, hi: float, level: float) -> tuple[float, float]:
    """The 95 % interval of the split normal behind a ``level`` interval, clipped to [0, 1]."""
    down, up = split_normal_sds(point, lo, hi, level)
    return max(0.0, point - Z95 * down), min(1.0, point + Z95 * up)


def split_normal_draws(
    point: float, lo: float, hi: float, level: float, rng: np.random.Generator, n: int
) -> np.ndarray:
    """(n,) draws of the split normal behind a ``level`` interval, clipped to [0, 1]."""
    down, up = split_normal_sds(point, lo, hi, level)
    z = rng.standard_normal(n)
    return np.clip(point + np.where(z < 0, down, up) * z, 0.0, 1.0)


def _percentiles(draws: np.ndarray, point: float) -> tuple[float, float]:
    lo, hi = np.nanpercentile(draws, [2.5, 97.5])
    return min(float(lo), point), max(float(hi), point)


def given_benchmark(
    test: AdaptiveTest,
    *,
    source: str,
    answers: np.ndarray,
    reference_on_items: np.ndarray,
    reference_full: np.ndarray,
    level: float,
    n_boot: int,
    seed: int | list[int],
) -> GivenBenchmark:
    """One adaptive test as the benchmark's placement (see the module docstring). ``answers``
    (k,): the model's scores on the items it was asked (NaN: failed); ``reference_on_items``
    (M, k): the reference models' scores on the same items (NaN: missing); ``reference_full``
    (M,): their full-benchmark scores; ``level``: the test's interval level; the draws seeded
    by ``seed``."""
    rng = np.random.default_rng(seed)
    answers = np.asarray(answers, float)
    ok = np.isfinite(answers)
    scored = answers[ok]
    ref_full = np.asarray(reference_full, float)
    ref_full = ref_full[np.isfinite(ref_full)]
    score, on_items, boot = _on_items(
        scored, np.asarray(reference_on_items, float)[:, ok], rng, n_boot
    )
    p, lo, hi = test.predicted_full.value, test.predicted_full.lo, test.predicted_full.hi
    out_of = len(ref_full) + 1
    if p is None or lo is None or hi is None:
        full = Estimate(None, None, None)
        rank = Rank(None, None, None, out_of)
        draws = np.full(n_boot, np.nan)
        why: str | None = "no scored item" if not len(scored) else "no calibrated interval yet"
    else:
        lo95, hi95 = interval_95(p, lo, hi, level)
        full = Estimate(p, lo95, hi95)
        rank = _rank_of(p, lo95, hi95, ref_full, out_of)
        draws = split_normal_draws(p, lo, hi, level, rng, n_boot)
        why = None
    placement = BenchmarkPlacement(
        source=source,
        n_items=test.items,
        n_scored=len(scored),
        n_reference=test.reference_models,
        score=score,
        rank_on_suite_items=on_items,
        predicted_full=full,
        predicted_rank=rank,
        regime=test.regime or "none",
        above_all_reference=test.above_all_reference,
        interval_from="adaptive",
        misfit=test.misfit,
        no_prediction_because=why,
        responses=test.responses,
    )
    return GivenBenchmark(placement, draws, boot)


def race_benchmark(
    draws: Sequence[tuple[int, float]],
    *,
    source: str,
    answers: Mapping[int, float],
    reference_on_items: np.ndarray,
    reference_full: np.ndarray,
    n_reference: int,
    n_boot: int,
    seed: int | list[int],
) -> GivenBenchmark:
    """One variant's race on one benchmark as the benchmark's placement (see the module
    docstring). ``draws``: (pool position, weight 1/(N·q)) of every draw in order (an item drawn
    twice counts twice); ``answers``: the variant's score on each distinct item asked (NaN:
    failed — its draws are left out, and the count says so); ``reference_on_items`` (M, k): the
    reference models' scores on the k distinct items asked, in ``answers``' order;
    ``reference_full`` (M,): their full-benchmark scores. The point is clipped to [0, 1] (a
    weighted mean can leave it), the interval and draws are the bootstrap's over the draws."""
    from primebench_tasks.place.benchmark import placement_regime

    rng = np.random.default_rng(seed)
    items = list(answers)
    y = np.array([answers[i] for i in items], float)
    ok = np.isfinite(y)
    score, on_items, boot = _on_items(
        y[ok], np.asarray(reference_on_items, float)[:, ok], rng, n_boot
    )
    yw = np.array([answers[i] * w for i, w in draws], float)
    yw = yw[np.isfinite(yw)]
    ref_full = np.asarray(reference_full, float)
    ref_full = ref_full[np.isfinite(ref_full)]
    out_of = len(ref_full) + 1
    if len(yw):
        p = float(np.clip(yw.mean(), 0.0, 1.0))
        full_draws = np.clip(yw[rng.integers(0, len(yw), (n_boot, len(yw)))].mean(axis=1), 0, 1)
        lo, hi = _percentiles(full_draws, p)
        full = Estimate(p, lo, hi)
        rank = _rank_of(p, lo, hi, ref_full, out_of)
        regime = str(placement_regime(np.array([p]), ref_full)[0])
        why: str | None = None
    else:
        full, rank = Estimate(None, None, None), Rank(None, None, None, out_of)
        full_draws, regime, why = np.full(n_boot, np.nan), "none", "no scored item"
    placement = BenchmarkPlacement(
        source=source,
        n_items=len(items),
        n_scored=int(ok.sum()),
        n_reference=n_reference,
        score=score,
        rank_on_suite_items=on_items,
        predicted_full=full,
        predicted_rank=rank,
        regime=regime,
        above_all_reference=bool(regime == "beyond"),
        interval_from="design",
        misfit=_unchecked("a race's items are not the suite's: no misfit check"),
        no_prediction_because=why,
    )
    return GivenBenchmark(placement, full_draws, boot)


def _on_items(
    scored: np.ndarray, reference_on_items: np.ndarray, rng: np.random.Generator, n_boot: int
) -> tuple[Estimate, Rank, np.ndarray]:
    """The score on the items asked (``scored``: the model's finite answers; the reference
    models' (M, k) on the same items), its bootstrap draws, and its rank among the reference
    models' means on those items."""
    with warnings.catch_warnings():  # a reference model with none of these items: NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        ref_items = np.nanmean(reference_on_items, axis=1)
    ref_items = ref_items[np.isfinite(ref_items)]
    out_of = len(ref_items) + 1
    if not len(scored):
        return Estimate(None, None, None), Rank(None, None, None, out_of), np.full(n_boot, np.nan)
    s = float(scored.mean())
    boot = scored[rng.integers(0, len(scored), (n_boot, len(scored)))].mean(axis=1)
    s_lo, s_hi = _percentiles(boot, s)
    r_boot = 1 + (ref_items[None, :] > boot[:, None]).sum(axis=1)
    r = float(1 + (ref_items > s).sum())
    r_lo, r_hi = _percentiles(r_boot.astype(float), r)
    return Estimate(s, s_lo, s_hi), Rank(r, r_lo, r_hi, out_of), boot


def _rank_of(p: float, lo95: float, hi95: float, ref_full: np.ndarray, out_of: int) -> Rank:
    """The predicted rank of the point among the reference full scores, its interval the ranks
    of the 95 % interval's ends."""
    return Rank(
        float(1 + (ref_full > p).sum()),
        float(1 + (ref_full > hi95).sum()),
        float(1 + (ref_full > lo95).sum()),
        out_of,
    )


def _unchecked(why: str) -> PersonFit:
    from primebench_tasks.place.defaults import MISFIT_LEVEL
    from primebench_tasks.place.misfit import PersonFit

    return PersonFit(None, None, None, 0, 0, MISFIT_LEVEL, False, why)


def unasked_benchmark(source: str, n_reference: int, n_boot: int) -> GivenBenchmark:
    """The placement of a benchmark the run did not ask (no pool for it here): no score, no
    prediction, said why."""
    nothing = Estimate(None, None, None)
    return GivenBenchmark(
        BenchmarkPlacement(
            source=source,
            n_items=0,
            n_scored=0,
            n_reference=n_reference,
            score=nothing,
            rank_on_suite_items=Rank(None, None, None, n_reference + 1),
            predicted_full=nothing,
            predicted_rank=Rank(None, None, None, n_reference + 1),
            regime="none",
            above_all_reference=False,
            interval_from="adaptive",
            misfit=_unchecked("not asked in this run"),
            no_prediction_because="not asked in this run",
        ),
        np.full(n_boot, np.nan),
        np.full(n_boot, np.nan),
    )
