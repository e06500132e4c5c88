"""IRT 2PL: a vectorised joint-MAP fit, the paper's binarisation rule, and tinyBenchmarks-style
anchor selection (PRIMEBench App. D.1; Polo et al. 2024; Kipnis et al. 2025).

Model: P(y_mi = 1) = σ(a_i·θ_m − b_i), θ_m ~ N(0, 1), log a_i ~ N(0, σ_a²), b_i ~ N(0, σ_b²).
All parameters are fitted jointly (MAP) by alternating vectorised Fisher-scoring steps on the
observed (non-NaN) responses. The log-normal prior on a shrinks discriminations, which a 30-model panel recovers
poorly (``../shared/notes/anchors.md``: corr 0.57 with the truth at 30 models).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
from sklearn.cluster import KMeans

from primebench_tasks.select.base import ItemFeatures, Selector

SIGMA_LOG_A = 0.5
SIGMA_B = 2.0
CHECK_EVERY = 5


@dataclass(frozen=True)
class IRT2PL:
    """Fitted item parameters a (n,), b (n,) and abilities theta (M,) of the fitting models."""

    a: np.ndarray
    b: np.ndarray
    theta: np.ndarray

    def prob(self, theta: np.ndarray) -> np.ndarray:
        """P(correct) for abilities (M',) on every item: (M', n)."""
        return 1.0 / (1.0 + np.exp(-(np.outer(theta, self.a) - self.b)))


def information(model: IRT2PL, theta: np.ndarray) -> np.ndarray:
    """Fisher information a²·P·(1 − P) of every item at each ability: (V, n)."""
    p = model.prob(np.asarray(theta, float))
    return (model.a[None, :] ** 2) * p * (1.0 - p)


def binarize(X: np.ndarray, thresholds: np.ndarray | None = None) -> np.ndarray:
    """Responses ≥ the per-item threshold → 1, else 0; NaN stays NaN. Default threshold 0.5
    (binary scores pass through unchanged)."""
    t = 0.5 if thresholds is None else np.asarray(thresholds, float)[None, :]
    with np.errstate(invalid="ignore"):
        out = (t <= X).astype(np.float64)
    out[~np.isfinite(X)] = np.nan
    return out


def paper_thresholds(X: np.ndarray, metric_kind: str, metric: str = "") -> np.ndarray:
    """App. D.1's binarisation rule for one benchmark's items (n,): binary scores at 0.5 (they
    are 0/1), VQA-style soft (exact-match continuous) and judge scores at half their scale,
    captioning, referring-expression and the remaining graded scores at the benchmark median."""
    n = X.shape[1]
    if metric_kind == "binary" or metric_kind == "judge" or "exact match" in metric.lower():
        return np.full(n, 0.5)
    med = float(np.nanmedian(X)) if np.isfinite(X).any() else 0.5
    return np.full(n, med)


def fit_2pl(
    Y: np.ndarray,
    max_rounds: int = 100,
    tol: float = 1e-6,
    sigma_log_a: float = SIGMA_LOG_A,
    sigma_b: float = SIGMA_B,
) -> IRT2PL:
    """Joint MAP fit of a 2PL model to binary responses Y (M, n) with NaN = missing.

    Alternates Fisher-scoring steps on all items at once (a 2×2 system per item in
    (log a_i, b_i)) and on all abilities at once, until the log posterior changes by less than
    ``tol`` relative per round (checked every ``CHECK_EVERY`` rounds). Every step is a few vectorised (M, n) array operations.
    """
    Y = np.asarray(Y, dtype=np.float64)
    M, n = Y.shape
    obs = np.isfinite(Y)
    w = obs.astype(np.float64)
    Y0 = np.where(obs, Y, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_item = np.clip(np.nan_to_num(Y0.sum(0) / w.sum(0), nan=0.5), 0.02, 0.98)
        p_model = np.clip(np.nan_to_num(Y0.sum(1) / w.sum(1), nan=0.5), 0.02, 0.98)
    th = np.log(p_model / (1 - p_model))
    th = (th - th.mean()) / (th.std() + 1e-9)
    la = np.zeros(n)
    b = -np.log(p_item / (1 - p_item))
    ia, ib = 1.0 / sigma_log_a**2, 1.0 / sigma_b**2

    def posterior(th: np.ndarray, la: np.ndarray, b: np.ndarray) -> float:
        z = np.outer(th, np.exp(la)) - b
        ll = (w * (Y0 * z - np.logaddexp(0.0, z))).sum()
        return float(ll - 0.5 * (th @ th) - 0.5 * ia * (la @ la) - 0.5 * ib * (b @ b))

    # the log posterior costs as much as a scoring step: it is checked every CHECK_EVERY rounds
    # against CHECK_EVERY·tol (a fit that runs to max_rounds is unchanged by this)
    prev = posterior(th, la, b)
    for rnd in range(1, max_rounds + 1):
        a = np.exp(la)
        p = 1.0 / (1.0 + np.exp(-(np.outer(th, a) - b)))
        r = w * (Y0 - p)
        s = w * p * (1 - p)
        # items: Fisher scoring in (log a, b)
        g_la = a * (r.T @ th) - ia * la
        g_b = -r.sum(axis=0) - ib * b
        h_aa = a * a * (s.T @ (th * th)) + ia
        h_bb = s.sum(axis=0) + ib
        h_ab = -a * (s.T @ th)
        det = h_aa * h_bb - h_ab * h_ab
        d_la = (h_bb * g_la - h_ab * g_b) / det
        d_b = (h_aa * g_b - h_ab * g_la) / det
        la = la + np.clip(d_la, -1.0, 1.0)
        b = b + np.clip(d_b, -2.0, 2.0)
        # abilities
        a = np.exp(la)
        p = 1.0 / (1.0 + np.exp(-(np.outer(th, a) - b)))
        g_th = (w * (Y0 - p)) @ a - th
        h_th = (w * p * (1 - p)) @ (a * a) + 1.0
        th = th + np.clip(g_th / h_th, -2.0, 2.0)
        if rnd % CHECK_EVERY == 0:
            cur = posterior(th, la, b)
            if abs(cur - prev) <= CHECK_EVERY * tol * abs(prev):
                break
            prev = cur
    return IRT2PL(a=np.exp(la), b=b, theta=th)


_FIT_CACHE: dict[str, IRT2PL] = {}


def fit_2pl_cached(Y: np.ndarray) -> IRT2PL:
    """:func:`fit_2pl`, memoised on the bytes of Y (one fit per split and pool, shared by the
    IRT selector and the IRT estimators)."""
    key = hashlib.sha1(
        np.ascontiguousarray(Y, dtype=np.float64).tobytes() + str(Y.shape).encode()
    ).hexdigest()
    if key not in _FIT_CACHE:
        if len(_FIT_CACHE) > 64:
            _FIT_CACHE.clear()
        _FIT_CACHE[key] = fit_2pl(Y)
    return _FIT_CACHE[key]


def estimate_theta(
    model: IRT2PL, Y_seen: np.ndarray, seen: np.ndarray, n_iter: int = 100, tol: float = 1e-10
) -> np.ndarray:
    """MAP ability (N(0, 1) prior) of each row of Y_seen (M', k) binary responses on the items
    ``seen`` (k,), vectorised over models. NaN responses are skipped.

    The log-posterior is strictly concave, so its score g(θ) = Σ a (y − p) − θ decreases and has
    one root, which lies in [−Σ|a|, Σ|a|] (the likelihood part of g is bounded by Σ|a|).
    Safeguarded Newton: a Newton step that leaves the current bracket is replaced by bisection,
    and the bracket shrinks with the sign of g — so large discriminations (a up to 10 and more),
    few items and all-correct / all-wrong patterns converge instead of diverging (undamped Newton
    reached θ of 80–150 there). Probabilities use a stable sigmoid (no overflow)."""
    from scipy.special import expit

    a, b = model.a[seen], model.b[seen]
    obs = np.isfinite(Y_seen)
    w = obs.astype(np.float64)
    aw = w * a  # (M', k): a where observed, 0 where missing
    a2w = aw * a
    ya = (np.where(obs, Y_seen, 0.0) * aw).sum(axis=1)  # Σ a·y over the observed items
    bound = aw.__abs__().sum(axis=1) + 1.0
    lo, hi = -bound, bound.copy()
    th = np.zeros(len(Y_seen))
    # only the rows that have not converged are evaluated (most converge in a few Newton steps;
    # the bracketed ones take bisection steps)
    active = np.arange(len(Y_seen))
    for _ in range(n_iter):
        if len(active) == 0:
            break
        t = th[active]
        p = expit(np.outer(t, a) - b)
        g = ya[active] - (p * aw[active]).sum(axis=1) - t
        h = -(p * (1 - p) * a2w[active]).sum(axis=1) - 1.0
        lo_a = np.where(g > 0, t, lo[active])  # the root is above θ
        hi_a = np.where(g < 0, t, hi[active])  # the root is below θ
        new = t - g / h
        outside = ~((new > lo_a) & (new < hi_a))
        new = np.where(outside, 0.5 * (lo_a + hi_a), new)
        lo[active], hi[active], th[active] = lo_a, hi_a, new
        active = active[np.abs(new - t) >= tol]
    return th


class IRTSelector(Selector):
    """tinyBenchmarks anchors: fit a 2PL on the build models' binarised responses, cluster the
    items' parameters (a, b) with KMeans into ``k`` clusters (seeded), keep the item nearest each
    centroid, and weight it by its cluster's share of the items. ``items.delta`` is ignored;
    per-item binarisation thresholds may be passed as ``thresholds`` (see
    :func:`paper_thresholds`)."""

    def __init__(
        self, k: int, *, random_state: int = 0, thresholds: np.ndarray | None = None
    ) -> None:
        self.k = k
        self.random_state = random_state
        self.thresholds = thresholds

    def fit(self, X: np.ndarray, items: ItemFeatures | None = None) -> IRTSelector:
        X = self._check(X)
        n = X.shape[1]
        if self.k >= n:
            self._set(np.arange(n))
            return self
        model = fit_2pl_cached(binarize(X, self.thresholds))
        feats = np.column_stack([np.log(model.a), model.b])
        feats = (feats - feats.mean(axis=0)) / (feats.std(axis=0) + 1e-12)
        km = KMeans(n_clusters=self.k, n_init=1, random_state=self.random_state).fit(feats)
        d = (
            ((feats[:, None, :] - km.cluster_centers_[None, :, :]) ** 2).sum(axis=2)
            if n * self.k <= 4_000_000
            else None
        )
        anchors, weights = [], []
        taken = np.zeros(n, dtype=bool)
        for c in range(self.k):
            members = np.flatnonzero(km.labels_ == c)
            if len(members) == 0:
                continue
            dist = (
                d[members, c]
                if d is not None
                else ((feats[members] - km.cluster_centers_[c]) ** 2).sum(axis=1)
            )
            order = members[np.argsort(dist, kind="stable")]
            pick = next((i for i in order if not taken[i]), None)
            if pick is None:
                continue
            taken[pick] = True
            anchors.append(pick)
            weights.append(len(members))
        self.model_ = model
        self._set(np.asarray(anchors), np.asarray(weights, float))
        return self
