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
"""

from __future__ import annotations

import warnings
from statistics import NormalDist

import numpy as np

from primebench_tasks.adaptive.result import AdaptiveTest
from primebench_tasks.place.result import BenchmarkPlacement, Estimate, Rank
from primebench_tasks.place.suite import GivenBenchmark

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
    with warnings.catch_warnings():  # a reference model with none of these items: NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        ref_items = np.nanmean(np.asarray(reference_on_items, float)[:, ok], axis=1)
    ref_items = ref_items[np.isfinite(ref_items)]
    out_of_items = len(ref_items) + 1
    if len(scored):
        s = float(scored.mean())
        boot = scored[rng.integers(0, len(scored), (n_boot, len(scored)))].mean(axis=1)
        s_lo, s_hi = _percentiles(boot, s)
        r_boot = 1 + (ref_items[None, :] > boot[:, None]).sum(axis=1)
        r = float(1 + (ref_items > s).sum())
        r_lo, r_hi = _percentiles(r_boot.astype(float), r)
        score = Estimate(s, s_lo, s_hi)
        on_items = Rank(r, r_lo, r_hi, out_of_items)
    else:
        boot = np.full(n_boot, np.nan)
        score = Estimate(None, None, None)
        on_items = Rank(None, None, None, out_of_items)
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
        rank = Rank(
            float(1 + (ref_full > p).sum()),
            float(1 + (ref_full > hi95).sum()),
            float(1 + (ref_full > lo95).sum()),
            out_of,
        )
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


def unasked_benchmark(source: str, n_reference: int, n_boot: int) -> GivenBenchmark:
    """The placement of a benchmark the run did not ask (no pool for it here): no score, no
    prediction, said why."""
    from primebench_tasks.place.defaults import MISFIT_LEVEL
    from primebench_tasks.place.misfit import PersonFit

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
            misfit=PersonFit(None, None, None, 0, 0, MISFIT_LEVEL, False, "not asked in this run"),
            no_prediction_because="not asked in this run",
        ),
        np.full(n_boot, np.nan),
        np.full(n_boot, np.nan),
    )
