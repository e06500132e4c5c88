"""Does a placed model's answer pattern look like the reference models' runs? A person-fit check
on every placement (#56): a run made another way than the reference runs — a broken chat
template, a truncated decoding, a position bias, a key mix-up — answers items in a pattern the
reference panel's item model does not expect, while its score alone can look like a plausible
(weaker) model.

The statistic is Snijders' (2001) **lz\\*** under a 2PL fitted to the reference models' binarised
answers on the very items the model answered (scores ≥ 0.5 count as right): with ability θ̂ the
MAP estimate (N(0, 1) prior), item logits ``w_i = a_i θ̂ − b_i`` and ``P_i = σ(w_i)``,

    W   = Σ (u_i − P_i) w_i,
    c   = Σ a_i P_i (1 − P_i) w_i / Σ a_i² P_i (1 − P_i),
    w̃_i = w_i − c a_i,
    lz* = (W − c θ̂) / √(Σ w̃_i² P_i (1 − P_i))

(``r_0(θ̂) = −θ̂``: the prior's term of the MAP equation). lz* is about N(0, 1) for a pattern
that follows the item model at any ability; a low value means right answers on items the model
should miss and wrong ones on items it should get — misfit. High values (too regular a
pattern) are never flagged.

**Calibration on held-out reference models**, not a fixed threshold: the reference models are
split into :data:`~primebench_tasks.evaluate.defaults.MISFIT_FOLDS` folds; each fold's models
get their lz* under a 2PL fitted without them. A placed model's p-value is the conformal rank
of its lz* among those held-out values, ``(1 + #{held-out ≤ lz*}) / (n + 1)``; the placement is
flagged when it is at most :data:`~primebench_tasks.evaluate.defaults.MISFIT_LEVEL` — it fits
the reference models worse than that share of them. A panel with fewer than ``1/level − 1``
answering models cannot flag at that level: the check then says it is not calibrated. The
check adds no item to the run: it reads the answers the placement already has.

What it cannot tell: answers at chance on a random share of items look like a weaker model
(the detection curve of ``benchmarks/misfit_replay.py`` says how much), which is why every
placed run records the conditions it was made under (harness, backend, decoding) beside the
reference panel's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from primebench_tasks.evaluate.defaults import MISFIT_FOLDS, MISFIT_LEVEL, MISFIT_MIN_ITEMS

if TYPE_CHECKING:
    import pandas as pd

    from primebench_tasks.data.panel import Panel

CAUSES = "check the prompt, the chat template and the decoding (what usually causes it)"


def lz_star(a: np.ndarray, b: np.ndarray, theta: np.ndarray, U: np.ndarray) -> np.ndarray:
    """Snijders' lz* (V,) of the binary answers ``U`` (V, k; NaN = not answered) to items with
    2PL parameters ``a``, ``b`` (k,) at abilities ``theta`` (V,) — the module docstring's
    formula over each row's answered items; NaN for a row with fewer than 2 answered items or
    no variance left (every item certain)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    U = np.atleast_2d(np.asarray(U, float))
    theta = np.asarray(theta, float).reshape(-1)
    obs = np.isfinite(U)
    u = np.where(obs, U, 0.0)
    w = np.outer(theta, a) - b[None, :]  # (V, k) logits
    P = 1.0 / (1.0 + np.exp(-w))
    q = np.where(obs, P * (1.0 - P), 0.0)
    W = (np.where(obs, u - P, 0.0) * w).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        c = (q * a * w).sum(axis=1) / (q * a * a).sum(axis=1)
        wt = w - c[:, None] * a[None, :]
        tau2 = (wt * wt * q).sum(axis=1)
        out = (W - c * theta) / np.sqrt(tau2)
    bad = (obs.sum(axis=1) < 2) | ~(tau2 > 1e-12)
    return np.where(bad, np.nan, out)


def _binary(X: np.ndarray) -> np.ndarray:
    from primebench_tasks.select.irt import binarize

    return binarize(np.asarray(X, float))


def _lz_under(Y_fit: np.ndarray, U: np.ndarray) -> np.ndarray:
    """lz* of the rows of ``U`` (binary, V × k) under a 2PL fitted to ``Y_fit`` (binary, M × k:
    the same items), abilities re-estimated on each row's answers."""
    from primebench_tasks.select.irt import estimate_theta, fit_2pl_cached

    model = fit_2pl_cached(Y_fit)
    theta = estimate_theta(model, U, np.arange(U.shape[1]))
    return lz_star(model.a, model.b, theta, U)


def held_out_lz(Y: np.ndarray, folds: int = MISFIT_FOLDS, seed: int = 0) -> np.ndarray:
    """lz* (M,) of every reference model of ``Y`` (binary, M × k) under a 2PL fitted without its
    fold (``folds`` folds of a permutation seeded by ``seed``); NaN for a model with fewer than
    2 answers."""
    M = len(Y)
    order = np.random.default_rng(seed).permutation(M)
    out = np.full(M, np.nan)
    for f in range(folds):
        held = np.sort(order[f::folds])
        if len(held) == 0:
            continue
        fit = np.delete(Y, held, axis=0)
        out[held] = _lz_under(fit, Y[held])
    return out


@dataclass(frozen=True)
class PersonFit:
    """One placed model's fit on one benchmark: ``statistic`` (lz*; None: too few answered
    items), ``p_value`` (its conformal rank among the held-out reference models' lz*, in
    (0, 1]; None when not calibrated), ``worse_than`` (share of those held-out models whose
    pattern fits better, in [0, 1]), ``items`` (answered items it was computed on),
    ``reference`` (held-out reference values), ``level``, ``flagged`` and, when the check could
    not be made, ``why_not``."""

    statistic: float | None
    p_value: float | None
    worse_than: float | None
    items: int
    reference: int
    level: float
    flagged: bool
    why_not: str | None = None

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for k in ("statistic", "p_value", "worse_than"):
            if d[k] is not None:
                d[k] = round(float(d[k]), 6)
        return d

    def line(self, benchmark: str) -> str | None:
        """The stderr/report line of a flagged fit, else None."""
        if not self.flagged or self.worse_than is None:
            return None
        return (
            f"answers on {benchmark} fit the reference models worse than "
            f"{100 * self.worse_than:.0f} % of them (lz* {self.statistic:.2f}, p = "
            f"{self.p_value:.3f}) — {CAUSES}"
        )


def person_fit(
    reference: np.ndarray,
    new: np.ndarray,
    *,
    level: float = MISFIT_LEVEL,
    folds: int = MISFIT_FOLDS,
    seed: int = 0,
    min_items: int = MISFIT_MIN_ITEMS,
) -> list[PersonFit]:
    """The misfit check of each row of ``new`` (V, k: scores in [0, 1] on the k items it was
    asked, NaN = not answered) against ``reference`` (M, k: the reference models' scores on
    the same items, NaN = missing): see the module docstring. A row with fewer than
    ``min_items`` answered items, or a panel with too few answering models to reach ``level``,
    gets no verdict (``why_not``)."""
    R = _binary(reference)
    R = R[np.isfinite(R).sum(axis=1) >= 2]
    U = _binary(np.atleast_2d(new))
    lz = _lz_under(R, U) if len(R) >= 2 else np.full(len(U), np.nan)
    null = held_out_lz(R, folds, seed) if len(R) >= 2 * folds else np.array([])
    null = np.sort(null[np.isfinite(null)])
    n = len(null)
    out = []
    for v in range(len(U)):
        k = int(np.isfinite(U[v]).sum())
        why = None
        if k < min_items:
            why = f"{k} answered items (the check needs {min_items})"
        elif 1.0 / (n + 1) > level:
            why = (
                f"{n} reference models answer these items: too few to tell a misfit at "
                f"{100 * level:g} % (needs {int(np.ceil(1 / level - 1))})"
            )
        elif not np.isfinite(lz[v]):
            why = "no variance left in the answered items"
        if why is not None:
            stat = float(lz[v]) if np.isfinite(lz[v]) and k >= min_items else None
            out.append(PersonFit(stat, None, None, k, n, level, False, why))
            continue
        below = int(np.searchsorted(null, lz[v], side="right"))
        p = (1 + below) / (n + 1)
        out.append(PersonFit(float(lz[v]), p, (n - below) / n, k, n, level, p <= level, None))
    return out


def suite_person_fit(
    manifest: Mapping[str, Any],
    panels: Mapping[str, Panel],
    new: pd.DataFrame,
    seed: int = 0,
) -> dict[str, dict[str, PersonFit]]:
    """model → benchmark → the :func:`person_fit` of each model of ``new`` (models ×
    (benchmark, item_id) scores in [0, 1], NaN = missing) on each suite benchmark's items,
    against that benchmark's reference panel (``panels``: benchmark → panel) answering the same
    items — the check of every placement."""
    from primebench_tasks.suite.manifest import as_suite

    out: dict[str, dict[str, PersonFit]] = {str(m): {} for m in new.index}
    for e in as_suite(manifest).benchmarks:
        p = panels[e.name]
        pos = {str(i): k for k, i in enumerate(p.item_ids(e.name))}
        items = [str(i) for i in e.item_ids]
        X = new.reindex(columns=[(e.name, i) for i in items]).to_numpy(float)
        ref = p.matrix(e.name).astype(float)[:, [pos[i] for i in items]]
        for m, fit in zip(new.index, person_fit(ref, X, seed=seed), strict=True):
            out[str(m)][e.name] = fit
    return out
