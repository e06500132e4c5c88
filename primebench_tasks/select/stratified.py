"""A probability design: items drawn at random within strata of difficulty, so that every
item's inclusion probability is known and an estimate built on them stays unbiased for any model
— one like the reference models, one at their top, or one beyond every one of them (a new
generation whose item profile the reference models do not share).

Strata: within each benchmark (its share of the budget in proportion to its size, as
ResampledBench's random baseline), the items are ordered by their mean score over the build
models (easiest first; an item no build model answered sorts last; ties by position) and cut into
``H`` strata of (nearly) equal size, H = ⌊k_b / ``per_stratum``⌋ (at least 1). Each stratum
gets its share of the benchmark's budget in proportion to its size (largest remainder) and its
items are drawn uniformly without replacement: item i of stratum h has inclusion probability
π_i = n_h / N_h. ``weights_`` are the design weights 1/π_i, normalised to sum to 1; ``strata_``
the stratum of each selected item (0 … S − 1 over the drawn strata, in draw order);
``stratum_sizes_`` (S,) each drawn stratum's size N_h; ``inclusion_`` each item's π_i.

An estimator that reads ``weights_`` as design weights (``place.estimators.GREG``) then has a
design-unbiased full score whatever the item model says of the model placed."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from primebench_tasks.select.base import ItemFeatures, Selector

PER_STRATUM = 4
"""Items drawn per stratum (on average): strata of two or more drawn items let the design
variance be estimated within them; four keep the strata fine enough to follow difficulty."""


@dataclass(frozen=True)
class Draw:
    """The probability design of one benchmark's drawn items, aligned with its selected
    positions: each item's inclusion probability π_i (n,), its stratum's label (n,, any
    integers) and its stratum's size N_h (n,). π_i = n_h / N_h, n_h the items drawn from the
    stratum; what a manifest stores as the benchmark's ``design`` (``pipeline.manifest``)."""

    inclusion: np.ndarray
    stratum: np.ndarray
    stratum_size: np.ndarray

    def take(self, idx: np.ndarray) -> Draw:
        """The draw of the items at positions ``idx`` (a subset, reordered)."""
        return Draw(self.inclusion[idx], self.stratum[idx], self.stratum_size[idx])

    @classmethod
    def of(cls, selector: StratifiedSelector, mask: np.ndarray, order: np.ndarray) -> Draw:
        """The draw of the selected items ``mask`` (over ``selector.indices_``) in ``order``."""
        stratum = np.asarray(selector.strata_)
        whole = cls(
            np.asarray(selector.inclusion_, float),
            stratum,
            np.asarray(selector.stratum_sizes_)[stratum],
        )
        return whole.take(np.flatnonzero(mask)[order])


def easiness(X: np.ndarray) -> np.ndarray:
    """Each item's mean score over the build models that answered it (n,) — its classical
    difficulty, computed exactly (a sum of scores over a count: the same order on every CPU,
    unlike a fitted item model's); −inf for an item no model answered (it sorts last)."""
    ok = np.isfinite(X)
    n = ok.sum(axis=0)
    total = np.where(ok, X, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, total / np.maximum(n, 1), -np.inf)


def equal_strata(order: np.ndarray, n_strata: int) -> list[np.ndarray]:
    """``order`` (positions sorted by the stratifying variable) cut into ``n_strata`` contiguous
    groups whose sizes differ by at most one (the larger ones first)."""
    return [np.sort(g) for g in np.array_split(order, max(1, min(n_strata, len(order))))]


class StratifiedSelector(Selector):
    """``k`` items drawn with known inclusion probabilities: per benchmark, proportional
    stratified random sampling on the items' mean score (see the module docstring)."""

    def __init__(
        self,
        k: int,
        *,
        random_state: int = 0,
        per_stratum: int = PER_STRATUM,
    ) -> None:
        self.k = k
        self.random_state = random_state
        self.per_stratum = per_stratum

    def fit(self, X: np.ndarray, items: ItemFeatures | None = None) -> StratifiedSelector:
        from primebench_tasks.select.vaw import benchmark_groups, benchmark_shares

        X = self._check(X)
        n = X.shape[1]
        k = min(self.k, n)
        rng = np.random.default_rng(self.random_state)
        e = easiness(X)
        if items is None or items.benchmark is None:
            groups = [np.arange(n)]
        else:
            _, groups = benchmark_groups(items.benchmark)
        shares = benchmark_shares(k, np.array([len(g) for g in groups]))
        picked: list[np.ndarray] = []
        pi: list[np.ndarray] = []
        stratum: list[np.ndarray] = []
        sizes_drawn: list[int] = []
        for pos, k_b in zip(groups, shares, strict=True):
            if k_b == 0:
                continue
            order = pos[np.lexsort((pos, -e[pos]))]  # easiest first; ties by position
            strata = equal_strata(order, max(1, int(k_b) // max(1, self.per_stratum)))
            sizes = np.array([len(s) for s in strata])
            for s, n_h in zip(strata, benchmark_shares(int(k_b), sizes), strict=True):
                if n_h == 0:
                    continue
                draw = rng.choice(s, size=int(n_h), replace=False)
                picked.append(draw)
                pi.append(np.full(len(draw), n_h / len(s)))
                stratum.append(np.full(len(draw), len(stratum)))
                sizes_drawn.append(len(s))
        idx = np.concatenate(picked)
        incl = np.concatenate(pi)
        order = np.argsort(idx, kind="stable")
        self._set(idx[order], 1.0 / incl[order])
        self.inclusion_ = incl[order]
        self.strata_ = np.concatenate(stratum)[order]
        self.stratum_sizes_ = np.asarray(sizes_drawn, np.int64)
        return self
