"""What an adaptive test asks next and what its answers predict: the policy and its predictors."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from primebench_tasks.adaptive.defaults import (
    ADAPTIVE_AGREEMENT,
    ADAPTIVE_BANDWIDTH,
    ADAPTIVE_BATCH,
    ADAPTIVE_BEYOND_WEIGHT,
    ADAPTIVE_CHOICE,
    ADAPTIVE_CHOICES,
    ADAPTIVE_LEVEL,
    ADAPTIVE_PIRT_WEIGHT,
    ADAPTIVE_PREDICTOR,
    ADAPTIVE_PREDICTORS,
    ADAPTIVE_RIDGE_ALPHA,
    ADAPTIVE_SHIFT,
    ADAPTIVE_SHIFTS,
)
from primebench_tasks.place.benchmark import (
    placement_regime,
)
from primebench_tasks.select.irt import (
    IRT2PL,
)

BATCH = ADAPTIVE_BATCH
LEVEL = ADAPTIVE_LEVEL


def predict_full(model: IRT2PL, theta: np.ndarray, Y_asked: np.ndarray) -> np.ndarray:
    """p-IRT's full-score prediction from the answers so far: ``Y_asked`` (V, n) holds each
    model's scores on its asked items and NaN elsewhere; the unasked items count P_i(θ̂)."""
    p = model.prob(np.asarray(theta, float))
    asked = np.isfinite(Y_asked)
    return np.where(asked, Y_asked, p).mean(axis=1)


def ridge_full(
    Y_fit: np.ndarray,
    full_fit: np.ndarray,
    items: np.ndarray,
    answers: np.ndarray,
    alpha: float = ADAPTIVE_RIDGE_ALPHA,
) -> float:
    """The full score a ridge regression predicts from the answers to ``items``: fitted on the
    reference models ``Y_fit`` (M, n) → their full scores ``full_fit`` (M,) with the columns
    ``items`` (a missing reference answer counts the item's mean; features and target centred,
    penalty ``alpha``), applied to ``answers`` (n,) (a missing answer counts the item's mean)."""
    items = np.asarray(items, dtype=np.int64)
    ok = np.isfinite(full_fit)
    A = np.asarray(Y_fit, float)[ok][:, items]
    f = np.asarray(full_fit, float)[ok]
    if len(items) == 0 or len(f) < 2:
        return float(np.mean(f)) if len(f) else float("nan")
    with warnings.catch_warnings():  # an item no reference model answered: 0.5
        warnings.simplefilter("ignore", RuntimeWarning)
        mu = np.nanmean(A, axis=0)
    mu = np.where(np.isfinite(mu), mu, 0.5)
    A = np.where(np.isfinite(A), A, mu)
    a_mean, f_mean = A.mean(axis=0), f.mean()
    Ac = A - a_mean
    w = np.linalg.solve(Ac.T @ Ac + alpha * np.eye(len(items)), Ac.T @ (f - f_mean))
    y = np.asarray(answers, float)[items]
    return float(f_mean + (np.where(np.isfinite(y), y, mu) - a_mean) @ w)


def check_predictor(predictor: str) -> str:
    """``predictor``, refused unless it is one of :data:`ADAPTIVE_PREDICTORS`."""
    if predictor not in ADAPTIVE_PREDICTORS:
        raise ValueError(f"predictor must be one of {ADAPTIVE_PREDICTORS}, not {predictor!r}")
    return predictor


def predict_adaptive(
    pirt: float,
    Y_fit: np.ndarray,
    full_fit: np.ndarray,
    items: np.ndarray,
    answers: np.ndarray,
    predictor: str,
    alpha: float = ADAPTIVE_RIDGE_ALPHA,
) -> float:
    """The full-score prediction of the regression predictors from p-IRT's ``pirt`` and the
    answers to ``items``: ``pirt``; ``ridge`` = :func:`ridge_full` (penalty ``alpha``);
    ``blend`` = (p-IRT + ridge)/2; ``regime_blend`` = the blend where p-IRT's prediction is
    inside the reference models' full scores (``interior``:
    :func:`~primebench_tasks.place.benchmark.placement_regime`), else p-IRT. (The local
    predictors are :class:`AdaptivePolicy`'s, through :class:`AdaptiveProcedure`.)"""
    if check_predictor(predictor) == "pirt" or len(items) == 0:
        return float(pirt)
    if predictor in ("local", "local_blend", "regime_local"):
        raise ValueError(f"{predictor!r} needs the local model: use AdaptiveProcedure.point")
    if predictor == "regime_blend":
        ref = np.asarray(full_fit, float)
        regime = placement_regime(np.array([pirt]), ref[np.isfinite(ref)])[0]
        if regime != "interior":
            return float(pirt)
    ridge = ridge_full(Y_fit, full_fit, items, answers, alpha)
    return ridge if predictor == "ridge" else float((pirt + ridge) / 2)


@dataclass(frozen=True)
class AdaptivePolicy:
    """How an adaptive test chooses items and predicts the full score: ``predictor``
    (:data:`ADAPTIVE_PREDICTORS`), ``choice`` (:data:`ADAPTIVE_CHOICES`), the ridge penalty /
    local noise variance ``ridge_alpha``, and the local model's ``bandwidth`` and ``agreement``
    (:class:`~primebench_tasks.adaptive.local_gaussian.LocalGaussian`), and p-IRT's weight in
    the local blend ``pirt_weight`` (in [0, 1]; the local kriging has the rest), where the
    calibrated point moves by its regime's median error, ``shift`` (:data:`ADAPTIVE_SHIFTS`),
    and p-IRT's weight in ``regime_local``'s point where p-IRT places the model above every
    reference model, ``beyond_weight`` (in [0, 1]; the ridge regression has the rest; at the top
    of the panel ½). The defaults are the ones ``research/adaptive/adaptive_choice.py`` chose, and
    ``beyond_weight`` the one ``research/adaptive/adaptive_outside_weight.py`` chose after them."""

    predictor: str = ADAPTIVE_PREDICTOR
    choice: str = ADAPTIVE_CHOICE
    ridge_alpha: float = ADAPTIVE_RIDGE_ALPHA
    bandwidth: float = ADAPTIVE_BANDWIDTH
    agreement: float = ADAPTIVE_AGREEMENT
    pirt_weight: float = ADAPTIVE_PIRT_WEIGHT
    shift: str = ADAPTIVE_SHIFT
    beyond_weight: float = ADAPTIVE_BEYOND_WEIGHT

    def __post_init__(self) -> None:
        check_predictor(self.predictor)
        if self.shift not in ADAPTIVE_SHIFTS:
            raise ValueError(f"shift must be one of {ADAPTIVE_SHIFTS}, not {self.shift!r}")
        if not 0.0 <= self.pirt_weight <= 1.0:
            raise ValueError(f"pirt_weight must be in [0, 1], not {self.pirt_weight!r}")
        if not 0.0 <= self.beyond_weight <= 1.0:
            raise ValueError(f"beyond_weight must be in [0, 1], not {self.beyond_weight!r}")
        if self.choice not in ADAPTIVE_CHOICES:
            raise ValueError(f"choice must be one of {ADAPTIVE_CHOICES}, not {self.choice!r}")

    @property
    def local(self) -> bool:
        """Whether the policy needs the local model."""
        return self.choice != "fisher" or self.predictor in ("local", "local_blend", "regime_local")

    @property
    def label(self) -> str:
        """A short name: ``<predictor> α=… [h=… λ=…] [w=…] [shift=…] [beyond w=…] / <choice>``
        (w: p-IRT's weight in the local blend, named where it is not ½; shift named where it is
        not ``all``; beyond w: ``regime_local``'s :attr:`beyond_weight`, named where it is not
        ½)."""
        extra = f" h={self.bandwidth:g} λ={self.agreement:g}" if self.local else ""
        if self.predictor in ("local_blend", "regime_local") and self.pirt_weight != 0.5:
            extra += f" w={self.pirt_weight:g}"
        if self.shift != "all":
            extra += f" shift={self.shift}"
        if self.predictor == "regime_local" and self.beyond_weight != 0.5:
            extra += f" beyond w={self.beyond_weight:g}"
        alpha = f" α={self.ridge_alpha:g}" if self.predictor != "pirt" or self.local else ""
        return f"{self.predictor}{alpha}{extra} / {self.choice}"
