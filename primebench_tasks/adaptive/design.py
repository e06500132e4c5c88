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


def design_terms(draws: Sequence[Draw], answers: np.ndarray) -> np.ndarray:
    """Z_t (T,) of the draws, in answer units (totals over the pool), from ``answers`` (n,): the
    items drawn before t count their answer (an item whose answer is missing — it failed —
    counts its prediction at its draw), and a draw whose own answer is missing gives no term."""
    answers = np.asarray(answers, float)
    known = 0.0
    out = []
    for d in draws:
        y = answers[d.item]
        if np.isfinite(y):
            out.append(known + d.rest + (y - d.m) / d.q)
            known += y
        else:
            known += d.m
    return np.asarray(out, float)


def design_estimate(draws: Sequence[Draw], answers: np.ndarray, n: int) -> tuple[float, float]:
    """(estimate, standard error) of the full score (mean over the ``n`` pool items) from the
    draws' terms (:func:`design_terms`): their mean / n and sd / (n·√T); (NaN, NaN) without a term,
    (estimate, NaN) with one."""
    z = design_terms(draws, answers) / float(n)
    if len(z) == 0:
        return float("nan"), float("nan")
    if len(z) == 1:
        return float(z[0]), float("nan")
    return float(z.mean()), float(z.std(ddof=1) / np.sqrt(len(z)))


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
