"""The adaptive test's design: items drawn at random with known probabilities, the design-unbiased
estimate their answers give, and the guard that keeps the model-based estimate near it.

A test draws its items one at a time. Before draw t, the remaining items R_t (not asked, askable)
have a prediction m_t(i) of their answer and a probability q_t(i) > 0 of being drawn
(:func:`draw_probabilities`: a share ε spread uniformly, the rest in proportion to a preference —
the 2PL's Fisher information at the ability so far, which favours the items that tell the most).
With the answers y of the items asked before t, the drawn item I_t gives

    Z_t = Σ_{asked before t} y + Σ_{R_t} m_t + (y_{I_t} − m_t(I_t)) / q_t(I_t),

whose expectation over the draw is the benchmark's total Σ_i y_i whatever m_t and q_t were (they
depend only on what came before): each Z_t/N is unbiased for the full score, and their mean
(:func:`design_estimate`) is the adaptive analogue of the static suite's GREG — the sequential
augmented inverse-probability-weighted estimate of active inference (Zrnic & Candès, ICML 2024)
and active testing's (Kossen et al., ICML 2021). Its standard error is the spread of the Z_t/N
over √(T(T − 1)).

The model-based estimate (the policy's prediction) is far more precise inside the reference panel
and biased beyond it. :func:`guard` reports the model-based one moved toward the design-based one
as far as their difference exceeds ``k`` design standard errors: the reported score is never
further than k·SE from a design-unbiased estimate, so its bias is at most k·SE whatever the
model's; its interval holds the model's calibrated interval and that bound, and — where the guard
moved the point (the two disagree beyond the design's noise) — the design's own interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from primebench_tasks.adaptive.defaults import ADAPTIVE_GUARD_K, ADAPTIVE_UNIFORM_SHARE


@dataclass(frozen=True)
class Draw:
    """One item drawn at random: its position ``item`` in the pool, the probability ``q`` it had
    of being drawn (in (0, 1]), the prediction ``m`` of its answer at the draw (in [0, 1]) and
    ``rest`` = Σ m_t over the items remaining at the draw (it included), in answer units."""

    item: int
    q: float
    m: float
    rest: float

    def __post_init__(self) -> None:
        if not (0.0 < self.q <= 1.0 and 0.0 <= self.m <= 1.0 and self.rest >= 0.0):
            raise ValueError(f"not a draw: {self!r}")

    def as_list(self) -> list[float]:
        """[item, q, m, rest], the form run documents keep (q, m and rest to 12 significant
        digits: a re-placement reads them back as written)."""
        return [self.item, *(float(f"{x:.12g}") for x in (self.q, self.m, self.rest))]

    @classmethod
    def from_list(cls, row: Sequence[float]) -> Draw:
        item, q, m, rest = row
        if int(item) != item:
            raise ValueError(f"a draw's item must be a whole number, not {item!r}")
        return cls(int(item), float(q), float(m), float(rest))


def draw_probabilities(
    preference: np.ndarray, remaining: np.ndarray, uniform_share: float = ADAPTIVE_UNIFORM_SHARE
) -> np.ndarray:
    """q (n,) over the ``remaining`` (n,) bool items: ε/R + (1 − ε)·s_i/Σ_R s (ε =
    ``uniform_share`` in (0, 1]; s = ``preference`` (n,), ≥ 0; R remaining items), 0 elsewhere.
    Every remaining item keeps at least ε/R; with no preference (Σ s = 0) q is uniform."""
    if not 0.0 < uniform_share <= 1.0:
        raise ValueError(f"uniform_share must be in (0, 1], not {uniform_share!r}")
    remaining = np.asarray(remaining, bool)
    q = np.zeros(len(remaining))
    R = int(remaining.sum())
    if R == 0:
        return q
    s = np.where(remaining, np.clip(np.nan_to_num(np.asarray(preference, float)), 0.0, None), 0.0)
    total = s.sum()
    eps = uniform_share if total > 0 else 1.0
    q[remaining] = eps / R
    if total > 0:
        q += (1.0 - eps) * s / total
    return q / q.sum()


def draw_round(
    q: np.ndarray, m: np.ndarray, remaining: np.ndarray, k: int, rng: np.random.Generator
) -> list[Draw]:
    """``k`` draws without replacement (fewer when fewer items remain), one at a time from the
    base probabilities ``q`` (n,) renormalised over the items still remaining, with the round's
    predictions ``m`` (n,): each :class:`Draw` keeps the probability it had given the draws
    before it."""
    left = np.asarray(remaining, bool).copy()
    q = np.where(left, np.asarray(q, float), 0.0)
    m = np.clip(np.asarray(m, float), 0.0, 1.0)
    out: list[Draw] = []
    for _ in range(int(k)):
        mass = float(q[left].sum())
        if not left.any() or mass <= 0:
            break
        p = np.where(left, q, 0.0) / mass
        i = int(rng.choice(len(p), p=p))
        out.append(Draw(i, float(min(1.0, p[i])), float(m[i]), float(m[left].sum())))
        left[i] = False
    return out


def design_terms(draws: Sequence[Draw], answers: np.ndarray, known: float = 0.0) -> np.ndarray:
    """Z_t (T,) of the draws, in answer units (totals over the pool), from ``answers`` (n,):
    ``known`` is the sum of the answers of the items asked before the first draw (a static run's
    items that a test continues); the items drawn before t count their answer (an item whose
    answer is missing — it failed — counts its prediction at its draw), and a draw whose own
    answer is missing gives no term."""
    answers = np.asarray(answers, float)
    out = []
    for d in draws:
        y = answers[d.item]
        if np.isfinite(y):
            out.append(known + d.rest + (y - d.m) / d.q)
            known += y
        else:
            known += d.m
    return np.asarray(out, float)


def answered_before(answers: np.ndarray, asked: np.ndarray, draws: Sequence[Draw]) -> np.ndarray:
    """(n,) bool: the answered items that are not draws — asked before a test's first draw (a
    static run's items that it continues)."""
    before = np.asarray(asked, bool) & np.isfinite(np.asarray(answers, float))
    before[[d.item for d in draws]] = False
    return before


@dataclass(frozen=True)
class StaticRound:
    """Items asked before a test's draws as a stratified draw of known design — a static run's
    suite items that an adaptive test continues: their pool positions ``items`` (n0,), each one's
    stratum ``stratum`` (n0,) and the strata's sizes ``sizes`` (H,) = N_h, and ``m0`` (n,): a
    prediction of every pool item fixed before their answers (the reference models' item means).
    Within a stratum the answered items are an equal-probability draw, each weighing N_h / n_h."""

    items: np.ndarray
    stratum: np.ndarray
    sizes: np.ndarray
    m0: np.ndarray

    def term(self, answers: np.ndarray) -> tuple[float, float, int]:
        """(Z_0, its variance, n0) in answer units: Z_0 = Σ_pool m0 + Σ_h (N_h/n_h) Σ_{i∈h} r_i
        (r = y − m0, the Horvitz–Thompson estimate of the pool's total, unbiased under the
        stratified draw), its variance Σ_h N_h²(1 − n_h/N_h)·s_h²/n_h (s_h² the residuals'
        sample variance in the stratum; one with a single answered item takes the pooled one);
        n0 the items answered. Items whose answer is missing are left out of their stratum's
        sample (n_h counts the answered ones)."""
        y = np.asarray(answers, float)[self.items]
        ok = np.isfinite(y)
        r = y[ok] - self.m0[self.items][ok]
        h = self.stratum[ok]
        if len(r) == 0:
            return float("nan"), float("nan"), 0
        pooled = float(np.var(r, ddof=1)) if len(r) > 1 else 0.25
        z, v = float(self.m0.sum()), 0.0
        for k in np.unique(h):
            rk = r[h == k]
            N, n = float(self.sizes[k]), len(rk)
            z += N / n * float(rk.sum())
            s2 = float(np.var(rk, ddof=1)) if n > 1 else pooled
            v += N * N * max(0.0, 1.0 - n / N) * s2 / n
        return z, v, int(ok.sum())


def design_estimate(
    draws: Sequence[Draw],
    answers: np.ndarray,
    n: int,
    known: float = 0.0,
    static: StaticRound | None = None,
) -> tuple[float, float]:
    """(estimate, standard error) of the full score (mean over the ``n`` pool items) from the
    draws' terms (:func:`design_terms`; ``known``: the answers asked before the first draw, summed):
    their mean / n and sd / (n·√T); (NaN, NaN) without a term, (estimate, NaN) with one. With a
    ``static`` round before the draws, its term Z_0 (:meth:`StaticRound.term`) joins them
    weighted by its n0 items: (n0·Z_0 + Σ Z_t)/(n0 + T), a fixed weighting of unbiased terms,
    with variance (n0²·V_0 + Σ (Z_t − Z̄)²·T/(T − 1))/(n0 + T)² (the draws' part where T ≥ 2)."""
    z = design_terms(draws, answers, known) / float(n)
    z0 = static.term(answers) if static is not None else (float("nan"), float("nan"), 0)
    if z0[2] == 0:
        if len(z) == 0:
            return float("nan"), float("nan")
        if len(z) == 1:
            return float(z[0]), float("nan")
        return float(z.mean()), float(z.std(ddof=1) / np.sqrt(len(z)))
    n0, T = z0[2], len(z)
    est = (n0 * z0[0] / n + float(z.sum())) / (n0 + T)
    var = n0 * n0 * z0[1] / (n * n)
    if T >= 2:
        var += float(((z - z.mean()) ** 2).sum()) * T / (T - 1)
    return float(est), float(np.sqrt(var) / (n0 + T))


@dataclass(frozen=True)
class Guarded:
    """The guarded point ``value``, its interval ``lo``/``hi``, and whether the guard ``moved``
    the model-based point (the model-based and the design estimates disagree by more than k·SE)."""

    value: float
    lo: float
    hi: float
    moved: bool


def guard(
    model: float,
    model_lo: float,
    model_hi: float,
    design: float,
    design_se: float,
    z: float,
    k: float = ADAPTIVE_GUARD_K,
) -> Guarded:
    """The model-based point ``model`` (with its calibrated interval ``model_lo``/``model_hi``)
    guarded by the design estimate ``design`` ± ``design_se``: value = design + clip(model −
    design, ±k·SE), so |value − design| ≤ k·SE. Interval: the model's, moved with the point and
    widened by k·SE on each side (the bias the guard cannot see); where the guard moved the point,
    its hull with the design's own interval design ± ``z``·SE. Clipped to [0, 1]. Without a design
    SE (fewer than two draws) the model's point and interval are returned as they are."""
    if not (np.isfinite(design) and np.isfinite(design_se)):
        return Guarded(model, model_lo, model_hi, False)
    bound = k * design_se
    value = design + float(np.clip(model - design, -bound, bound))
    moved = bool(abs(model - design) > bound)
    shift = value - model
    lo, hi = model_lo + shift - bound, model_hi + shift + bound
    if moved:
        lo, hi = min(lo, design - z * design_se), max(hi, design + z * design_se)
    lo, hi = max(0.0, lo), min(1.0, hi)
    value = float(np.clip(value, 0.0, 1.0))
    return Guarded(value, float(lo), float(hi), moved)
