"""The sequential design (#89): a benchmark's stratified probability design, **continued** round
by round until the interval the user asks for — no item model.

**Strata.** The pool's items cut into ``n_strata`` strata of (nearly) equal size by the reference
models' item easiness (the mean score over the reference models; an item none of them answered
counts as ½), in easiness order, ties by item position (:func:`easiness_strata`). For one model,
the easy strata are nearly all right and the hard ones nearly all wrong, so their variance is
small: the strata carry what adaptive item choice was for.

**Draws.** Within each stratum the items are taken uniformly without replacement, in an order
fixed per stratum by the seed (a permutation: its first n_h items are a simple random sample
of the stratum, and the union of two rounds' samples is one — the design stays known, each
item's inclusion probability n_h / N_h at the stop). Each round of ``round_size`` items goes to
the strata one item at a time, each to the stratum furthest below its proportional share
N_h / N of the items so far (allocation by the design, never by the answers: allocation that
follows the answers cost coverage and bias in ``../shared/notes/sequential_design.md``).

**Estimate.** The stratified mean ŷ = Σ_h W_h ȳ_h (W_h = N_h / N) with the design variance
Σ_h W_h² (1 − n_h / N_h) s_h² / n_h. Each stratum's s_h² is taken with one pseudo-answer ½ beside
its answers (for 0/1 answers, p shrunk to (y + ½)/(n + 1)), so a stratum answered all one way does
not claim zero variance. The interval: ŷ ± z·SE (``level``, default 90 %), clipped to [0, 1].

**Stop.** The classical fixed-width rule (Chow & Robbins 1965): at the end of the first round
with at least ``min_items`` items whose interval is no wider than ``target_width``; else at
``max_items`` or when the pool is spent. A confidence sequence would cost about 3 × the items
for the same width (the notes): not used for this stop.

Scores are in [0, 1] (a partial-credit score too). Pure NumPy; the same inputs and seed give the
same draws on any CPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from primebench_tasks.adaptive.defaults import ADAPTIVE_LEVEL, ADAPTIVE_TARGET_WIDTH
from primebench_tasks.errors import ConfigError

SEQUENTIAL_STRATA = 10
"""Strata of equal size by the reference models' item easiness. Measured by
``benchmarks/sequential_design.py`` on five panels (docs/results.md, "One design for every
run"): beyond the panel 0.69–0.88 × a random sample's items, inside it 0.65–0.86 ×, intervals
85–93 %; 25 strata were no better and covered less."""

SEQUENTIAL_ROUND = 10
"""Items a round adds (allocated across the strata in proportion to their sizes)."""

SEQUENTIAL_MIN_ITEMS = 30
"""No stop on the width before this many items (the variance of fewer is too uncertain)."""

SEQUENTIAL_MAX_ITEMS = 400
"""Items per benchmark at most: at a 90 % interval of 0.10 a model near 0.5 needs about 170
items of a simple random sample and the design about 0.7–0.9 × that; 0.05 needs about 4 ×."""


def easiness_strata(X_ref: np.ndarray, n_strata: int = SEQUENTIAL_STRATA) -> np.ndarray:
    """(n,) the stratum (0 = hardest) of each item of a benchmark whose reference answers are
    ``X_ref`` (M, n) in [0, 1] (NaN: not answered): ``n_strata`` strata of nearly equal size in
    order of the items' mean reference score, an item nobody answered at ½, ties by position."""
    X = np.asarray(X_ref, float)
    if X.ndim != 2:
        raise ConfigError(f"reference answers must be (models, items), got shape {X.shape}")
    n = X.shape[1]
    if n_strata < 1:
        raise ConfigError(f"n_strata must be >= 1, got {n_strata}")
    answered = np.isfinite(X).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        ease = np.where(answered > 0, np.nansum(X, axis=0) / np.maximum(answered, 1), 0.5)
    order = np.argsort(ease, kind="stable")
    strata = np.empty(n, np.int64)
    for h, part in enumerate(np.array_split(order, min(n_strata, max(n, 1)))):
        strata[part] = h
    return strata


@dataclass(frozen=True)
class SequentialEstimate:
    """The design's estimate after ``n_items`` answers: the stratified mean ``predicted`` and its
    ``level`` interval [``lo``, ``hi``], standard error ``se``, all in [0, 1] score units."""

    n_items: int
    predicted: float
    se: float
    lo: float
    hi: float

    @property
    def width(self) -> float:
        return self.hi - self.lo


def stratified_estimate(
    answers: np.ndarray,
    drawn: np.ndarray,
    strata: np.ndarray,
    pool: np.ndarray,
    level: float = ADAPTIVE_LEVEL,
) -> SequentialEstimate:
    """The stratified mean of ``answers`` (n,) on the ``drawn`` items (bool, n) of the ``pool``
    (bool, n: the items the model can be asked), strata ``strata`` (n,), with the design variance
    (finite-population correction, one pseudo-answer ½ per stratum) and its ``level`` interval.
    Strata of the pool with no drawn item yet are left out and the others' weights renormalised
    (only before every stratum has an item)."""
    from scipy.stats import norm

    y = np.asarray(answers, float)
    est = var = weight = 0.0
    for h in np.unique(strata[pool]):
        in_h = pool & (strata == h)
        got = in_h & drawn
        n_h, N_h = int(got.sum()), int(in_h.sum())
        if n_h == 0:
            continue
        vals = y[got]
        W = N_h
        mean = float(vals.mean())
        aug = np.append(vals, 0.5)
        s2 = float(np.sum((aug - aug.mean()) ** 2) / n_h)  # n_h + 1 values, one degree lost
        est += W * mean
        var += W**2 * (1.0 - n_h / N_h) * s2 / n_h
        weight += W
    if weight == 0:
        return SequentialEstimate(0, float("nan"), float("nan"), float("nan"), float("nan"))
    point, se = est / weight, float(np.sqrt(var)) / weight
    z = float(norm.ppf(0.5 + level / 2))
    lo, hi = max(0.0, point - z * se), min(1.0, point + z * se)
    return SequentialEstimate(int(drawn.sum()), point, se, lo, hi)


@dataclass
class SequentialTest:
    """One model's sequential test on one benchmark: the design (``strata`` (n,), the ``pool``
    of items it can be asked) and the seeded order within each stratum; :meth:`next_round`
    gives the next round's items, :meth:`estimate` the estimate on the answers so far,
    :meth:`stop_reason` why it ends (None: go on).

    ``already``: items answered before the test (a static run's suite items): they count, are
    never asked again, and set each stratum's start."""

    strata: np.ndarray
    pool: np.ndarray
    seed: int | Sequence[int] = 0
    round_size: int = SEQUENTIAL_ROUND
    level: float = ADAPTIVE_LEVEL
    target_width: float | None = ADAPTIVE_TARGET_WIDTH
    min_items: int = SEQUENTIAL_MIN_ITEMS
    max_items: int = SEQUENTIAL_MAX_ITEMS
    already: np.ndarray | None = None
    drawn: np.ndarray = field(init=False)
    _queue: dict[int, list[int]] = field(init=False)
    _sizes: dict[int, int] = field(init=False)

    def __post_init__(self) -> None:
        if self.round_size < 1 or self.min_items < 0 or self.max_items < 1:
            raise ConfigError("round_size >= 1, min_items >= 0 and max_items >= 1")
        if not 0 < self.level < 1:
            raise ConfigError(f"level must be in (0, 1), got {self.level}")
        self.strata = np.asarray(self.strata, np.int64)
        self.pool = np.asarray(self.pool, bool)
        n = len(self.strata)
        self.drawn = np.zeros(n, bool)
        if self.already is not None:
            self.drawn |= np.asarray(self.already, bool) & self.pool
        rng = np.random.default_rng(self.seed)
        self._queue = {}
        for h in np.unique(self.strata[self.pool]):
            left = np.flatnonzero(self.pool & (self.strata == h) & ~self.drawn)
            self._queue[int(h)] = [int(i) for i in rng.permutation(left)]
        self._sizes = {h: int((self.pool & (self.strata == h)).sum()) for h in self._queue}

    def next_round(self) -> np.ndarray:
        """The next round's items (at most ``round_size``, fewer where the budget or the pool
        ends): each item to the stratum furthest below its proportional share N_h / N of the
        items so far, ties to the lower stratum; marked drawn."""
        room = min(self.round_size, self.max_items - int(self.drawn.sum()))
        N, sizes = int(self.pool.sum()), self._sizes
        have = {h: int((self.drawn & (self.strata == h)).sum()) for h in self._queue}
        pick: list[int] = []
        for _ in range(max(room, 0)):
            total = sum(have.values()) + 1
            open_h = [h for h in self._queue if self._queue[h]]
            if not open_h:
                break
            h = max(open_h, key=lambda k: (total * sizes[k] / N - have[k], -k))
            pick.append(self._queue[h].pop(0))
            have[h] += 1
        items = np.array(pick, np.int64)
        self.drawn[items] = True
        return items

    def estimate(self, answers: np.ndarray) -> SequentialEstimate:
        return stratified_estimate(answers, self.drawn, self.strata, self.pool, self.level)

    def stop_reason(self, est: SequentialEstimate) -> str | None:
        """``width`` (the interval is narrow enough, at ``min_items`` or more), ``budget``
        (``max_items`` asked), ``pool`` (every item asked), else None."""
        n = int(self.drawn.sum())
        if (
            self.target_width is not None
            and n >= self.min_items
            and np.isfinite(est.width)
            and est.width <= self.target_width
        ):
            return "width"
        if n >= self.max_items:
            return "budget"
        if n >= int(self.pool.sum()):
            return "pool"
        return None
