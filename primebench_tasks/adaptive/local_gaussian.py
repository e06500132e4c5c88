"""The locally weighted linear-Gaussian model of a new model's answers, for adaptive tests: which
items to ask next, and the full score the answers so far predict.

A new model's answers y (n,) are modelled as the reference models' weighted mean answers plus a
combination of their deviations from it:

    y = μ_w + B_wᵀ z + ε,   z ~ N(0, I_M),   ε ~ N(0, α·I_n),   B_w = diag(√w)·(Y − μ_w)

(Y (M, n): the reference models' answers, a missing one filled with the item's mean; μ_w their
w-weighted mean). The weight of reference model m says how close it stands to the new model:

    w_m ∝ exp(−(θ_m − θ̂)² / (2·(h² + s²)) + λ·agree_m),   normalised to mean 1,

θ_m the reference model's MAP ability under the benchmark's 2PL, θ̂ and s the new model's MAP
ability and posterior sd from its answers so far, agree_m the asked items on which the two give the
same (binarised) answer; h = ``bandwidth``, λ = ``agreement``. So the model is local: a strong
model is compared with strong reference models, on whose easy items it has nothing left to tell.

Prediction (kriging): given the answers y_S on the asked items S, the posterior mean of an unasked
answer is ŷ_U = μ_U + B_Uᵀ·B_S·(α·I + B_SᵀB_S)⁻¹·(y_S − μ_S) — with w = 1 the push-through identity
makes the predicted mean exactly the ridge regression of the reference models' full scores on their
answers to S (``adaptive.ridge_full``). The full score is (Σ_S y + Σ_U clip(ŷ_U, 0, 1)) / n: the
asked items count as answered.

Item choice: the items whose answers most reduce the posterior variance of the unasked answers' sum
T = Σ_U y. Asking item i reduces it by cov(T, y_i | S)² / var(y_i | S) = (gᵀP·b_i + α)² /
(α + b_iᵀP·b_i), g = B_U·1, P = (I + B_S B_Sᵀ/α)⁻¹ the posterior covariance of z; a round's items
are chosen greedily, P updated by rank one after each. It is Fluid Benchmarking's idea (ask where
the answer is uncertain and matters) with the full score, not the ability, as the target, and with
the reference panel's item correlations instead of one ability dimension.

Not in the papers: this module is the project's (``research/adaptive/adaptive_choice.py`` chose it and its
constants by leave-one-panel-out against p-IRT + Fisher information; docs/results.md). The
choice's criterion is put on a 2⁻³⁰ grid before the arg-max, so a last-bit difference between BLAS
kernels does not change which item is asked (ties → the lower index).
"""

from __future__ import annotations

import numpy as np

from primebench_tasks.select.irt import IRT2PL, binarize, estimate_theta, information

GRID_BITS = 30
"""The choice criterion's resolution relative to its largest value (2⁻³⁰ ≈ 1e-9)."""


class LocalGaussian:
    """The model above on one benchmark's reference answers ``Y_ref`` (M, n; NaN = no answer)
    and its fitted 2PL ``model``; ``alpha`` (> 0) the answers' noise variance against a unit
    prior on the reference models' combination, ``bandwidth`` h (> 0, ability units),
    ``agreement`` λ (≥ 0, per shared answer)."""

    def __init__(
        self,
        Y_ref: np.ndarray,
        model: IRT2PL,
        *,
        alpha: float,
        bandwidth: float,
        agreement: float,
    ) -> None:
        if not alpha > 0 or not bandwidth > 0 or not agreement >= 0:
            raise ValueError(
                f"alpha and bandwidth must be > 0 and agreement ≥ 0, not "
                f"{alpha!r}, {bandwidth!r}, {agreement!r}"
            )
        Y = np.asarray(Y_ref, dtype=float)
        self.alpha, self.bandwidth, self.agreement = (
            float(alpha),
            float(bandwidth),
            float(agreement),
        )
        self.model = model
        self.M, self.n = Y.shape
        with np.errstate(all="ignore"):
            mu = np.nanmean(Y, axis=0) if len(Y) else np.full(self.n, np.nan)
        mu = np.where(np.isfinite(mu), mu, 0.5)  # an item no reference model answered
        self.Y = np.where(np.isfinite(Y), Y, mu)
        self.Y_bin = binarize(self.Y)
        self.theta_ref = estimate_theta(model, binarize(Y), np.arange(self.n))
        self._last: tuple[bytes, np.ndarray, np.ndarray] | None = None

    def weights(self, answers: np.ndarray, asked: np.ndarray, theta: float) -> np.ndarray:
        """The reference models' weights (M,), mean 1, for a model of ability ``theta`` with
        ``answers`` (n,) on the items ``asked`` (n,) bool (a NaN answer counts as not asked)."""
        seen = np.flatnonzero(np.asarray(asked, bool) & np.isfinite(answers))
        info = float(information(self.model, np.array([theta]))[0][seen].sum())
        log_w = -((self.theta_ref - theta) ** 2) / (2.0 * (self.bandwidth**2 + 1.0 / (1.0 + info)))
        if self.agreement > 0 and len(seen):
            y = binarize(np.asarray(answers, float)[None, seen])[0]
            log_w = log_w + self.agreement * (self.Y_bin[:, seen] == y).sum(axis=1)
        w = np.exp(log_w - log_w.max())
        return w / w.mean()

    def _basis(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(μ_w (n,), B_w (M, n)), kept for the last ``w`` (a round predicts and chooses with
        the same weights)."""
        key = np.asarray(w, float).tobytes()
        if self._last is None or self._last[0] != key:
            mu = w @ self.Y / w.sum()
            self._last = (key, mu, np.sqrt(w)[:, None] * (self.Y - mu))
        return self._last[1], self._last[2]

    def predict(self, answers: np.ndarray, asked: np.ndarray, w: np.ndarray) -> float:
        """The predicted full score (mean over the n items) of a model with ``answers`` on the
        items ``asked``, under weights ``w`` (:meth:`weights`)."""
        answers = np.asarray(answers, float)
        asked = np.asarray(asked, bool)
        S = np.flatnonzero(asked & np.isfinite(answers))
        mu, B = self._basis(w)
        if len(S) == 0:
            return float(np.clip(mu, 0.0, 1.0).mean())
        BS = B[:, S]
        K = self.alpha * np.eye(len(S)) + BS.T @ BS
        y_hat = mu + B.T @ (BS @ np.linalg.solve(K, answers[S] - mu[S]))
        known = asked & np.isfinite(answers)
        return float(np.where(known, answers, np.clip(y_hat, 0.0, 1.0)).mean())

    def choose(
        self,
        answers: np.ndarray,
        asked: np.ndarray,
        k: int,
        w: np.ndarray,
        exclude: np.ndarray | None = None,
    ) -> np.ndarray:
        """The ``k`` unasked items (greedy, in order) that most reduce the posterior variance of
        the unasked answers' sum, under weights ``w``; ``exclude`` (n,) bool: items that cannot be
        asked. Fewer than ``k`` when fewer are left."""
        answers = np.asarray(answers, float)
        asked = np.asarray(asked, bool)
        S = np.flatnonzero(asked & np.isfinite(answers))
        _, B = self._basis(w)
        a = self.alpha
        BS = B[:, S]
        # P·B = B − B_S (αI + B_SᵀB_S)⁻¹ B_Sᵀ B  (Woodbury: P = (I + B_S B_Sᵀ/α)⁻¹)
        PB = (
            B - BS @ np.linalg.solve(a * np.eye(len(S)) + BS.T @ BS, BS.T @ B)
            if len(S)
            else B.copy()
        )
        blocked = asked.copy()
        if exclude is not None:
            blocked |= np.asarray(exclude, bool)
        g = B[:, ~asked].sum(axis=1)
        # per item: den_i = α + b_iᵀP b_i and gᵀP b_i, kept current by the rank-one updates
        den = a + np.einsum("mi,mi->i", B, PB)
        gPB = g @ PB
        picks: list[int] = []
        for _ in range(int(k)):
            if blocked.all():
                break
            crit = np.where(blocked, -np.inf, (gPB + a) ** 2 / den)
            top = float(crit.max())
            if top > 0:
                crit = np.where(blocked, -np.inf, np.rint(np.ldexp(crit / top, GRID_BITS)))
            i = int(np.argmax(crit))  # the first of the largest: ties → the lower index
            picks.append(i)
            blocked[i] = True
            Pb, c = PB[:, i].copy(), float(den[i])
            u = B[:, i] @ PB  # b_iᵀP b_j for every j
            gPb = float(g @ Pb)
            PB -= np.outer(Pb, u / c)
            den -= u * u / c
            # g loses b_i (item i is asked now): gᵀP'B − b_iᵀP'B, with b_iᵀP'B = u·α/c
            gPB -= (gPb + a) * u / c
            g = g - B[:, i]
        return np.array(picks, dtype=np.int64)
