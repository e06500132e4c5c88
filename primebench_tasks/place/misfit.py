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

**A directed residual** looks for the signature of a fault users meet where the reference
panel's items say what it is (:class:`ItemFacts`; a panel without question text has none):
``length`` — a truncated decoding: fewer right than the item model expects on long items
(covariate: −log of the question's length).

Each is ``z = Σ c̃_i (u_i − P_i) / √(Σ c̃_i² P_i (1 − P_i))`` over the answered items with a
covariate, where ``c̃`` is the covariate with its ``P(1 − P)``-weighted projection on
``(a_i, 1)`` taken out — what the ability estimate (and a shift of the whole pattern) already
absorbs; about N(0, 1) for a pattern that follows the item model. The check's statistic is the
most extreme of ``−lz*`` (``pattern``) and the directed ``z`` the items allow, each first put
on one scale as its tail share among the held-out reference models' values (the smallest share
wins); its ``signature`` says which, so a flagged run is told what it looks like. Only the
fault's direction counts: a run *more* right on long items is not flagged.

A position bias (the first option on a share of items) was tried the same way — the covariate
"the gold answer is the first option" — and left out: on the replay panels healthy reference
models spread as widely along it (their own position preferences) as the fault moves a run,
so it flagged 0–12 % of biased runs and cost the other signatures power
(``benchmarks/misfit_replay.py``). It needs the responses' letters, not their scores.

**Calibration on held-out reference models**, not a fixed threshold: the reference models are
split into :data:`~primebench_tasks.place.defaults.MISFIT_FOLDS` folds; each fold's models
get their statistics under a 2PL fitted without them. A placed model's p-value is the conformal
rank of its smallest tail share t among the held-out models' own (each computed against the
held-out values, itself included), ``(1 + #{held-out ≤ t}) / (n + 1)`` — with lz* alone, the
rank of its lz* among theirs; the placement is
flagged when it is at most :data:`~primebench_tasks.place.defaults.MISFIT_LEVEL` — it fits
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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from primebench_tasks.data.codec import Document, encoded
from primebench_tasks.place.defaults import (
    MISFIT_FOLDS,
    MISFIT_LEVEL,
    MISFIT_MIN_DIRECTED,
    MISFIT_MIN_ITEMS,
)
from primebench_tasks.suite.manifest import SuiteManifest

if TYPE_CHECKING:
    import pandas as pd

    from primebench_tasks.data.panel import Panel

CAUSES = "check the prompt, the chat template and the decoding (what usually causes it)"

SIGNATURES = {
    "pattern": "right answers on items the reference models miss, wrong ones on items they get",
    "length": "wrong answers gather on the long items (a truncated decoding?)",
}
"""Each statistic of the check and what its misfit looks like, as the report says it."""


@dataclass(frozen=True)
class ItemFacts:
    """What the directed residual reads of k items: ``length`` (k,) the question's length in
    characters, NaN where it has no text."""

    length: np.ndarray

    @classmethod
    def unknown(cls, k: int) -> ItemFacts:
        """k items of which nothing is known (no directed residual)."""
        return cls(np.full(k, np.nan))

    @classmethod
    def of_items(cls, items: pd.DataFrame) -> ItemFacts:
        """From a panel's items table (:meth:`Panel.items_of`: ``question``), in its row
        order."""
        q = items["question"]
        return cls(np.array([float(len(x)) if isinstance(x, str) and x else np.nan for x in q]))

    def take(self, idx: np.ndarray | list[int]) -> ItemFacts:
        """The facts of the items at positions ``idx``."""
        return ItemFacts(self.length[np.asarray(idx, int)])

    def covariates(self) -> dict[str, np.ndarray]:
        """signature → the covariate (k,) whose residual grows with that fault (NaN: item left
        out); a signature whose covariate is unknown on every item is absent."""
        if not np.isfinite(self.length).any():
            return {}
        return {"length": -np.log(np.maximum(self.length, 1.0))}


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


def directed_residual(
    a: np.ndarray,
    b: np.ndarray,
    theta: np.ndarray,
    U: np.ndarray,
    c: np.ndarray,
    min_items: int = MISFIT_MIN_DIRECTED,
) -> np.ndarray:
    """The directed residual z (V,) of the binary answers ``U`` (V, k; NaN = not answered)
    along the covariate ``c`` (k,; NaN = item left out) at abilities ``theta``, under 2PL
    parameters ``a``, ``b``: the module docstring's formula, over each row's answered items
    with a covariate; NaN where fewer than ``min_items`` such items, or fewer than 2 on either
    side of a two-valued covariate, or nothing of ``c`` is left after the projection."""
    a, b, c = np.asarray(a, float), np.asarray(b, float), np.asarray(c, float)
    U = np.atleast_2d(np.asarray(U, float))
    theta = np.asarray(theta, float).reshape(-1)
    P = 1.0 / (1.0 + np.exp(-(np.outer(theta, a) - b[None, :])))
    out = np.full(len(U), np.nan)
    for v in range(len(U)):
        m = np.isfinite(U[v]) & np.isfinite(c)
        cv = c[m]
        if m.sum() < min_items:
            continue
        levels, counts = np.unique(cv, return_counts=True)
        if len(levels) < 2 or (len(levels) == 2 and counts.min() < 2):
            continue
        p = P[v, m]
        q = p * (1.0 - p)
        Z = np.column_stack([a[m], np.ones(m.sum())])
        beta, *_ = np.linalg.lstsq(Z.T @ (q[:, None] * Z), Z.T @ (q * cv), rcond=None)
        ct = cv - Z @ beta
        den = float((q * ct * ct).sum())
        if den > 1e-12:
            out[v] = float((ct * (U[v, m] - p)).sum()) / np.sqrt(den)
    return out


def _binary(X: np.ndarray) -> np.ndarray:
    from primebench_tasks.select.irt import binarize

    return binarize(np.asarray(X, float))


def _statistics_under(Y_fit: np.ndarray, U: np.ndarray, facts: ItemFacts) -> np.ndarray:
    """The check's statistics (V, 1 + d) of the rows of ``U`` (binary, V × k) under a 2PL fitted
    to ``Y_fit`` (binary, M × k: the same items), abilities re-estimated on each row's answers:
    ``−lz*`` then each directed residual of ``facts.covariates()`` (in its order); high =
    misfit, NaN = not computable."""
    from primebench_tasks.select.irt import estimate_theta, fit_2pl_cached

    model = fit_2pl_cached(Y_fit)
    theta = estimate_theta(model, U, np.arange(U.shape[1]))
    cols = [-lz_star(model.a, model.b, theta, U)]
    for c in facts.covariates().values():
        cols.append(directed_residual(model.a, model.b, theta, U, c))
    return np.column_stack(cols)


def held_out_statistics(
    Y: np.ndarray, facts: ItemFacts, folds: int = MISFIT_FOLDS, seed: int = 0
) -> np.ndarray:
    """The statistics (M, 1 + d) of :func:`_statistics_under` for every reference model of ``Y``
    (binary, M × k) under a 2PL fitted without its fold (``folds`` folds of a permutation
    seeded by ``seed``)."""
    M = len(Y)
    order = np.random.default_rng(seed).permutation(M)
    out = np.full((M, 1 + len(facts.covariates())), np.nan)
    for f in range(folds):
        held = np.sort(order[f::folds])
        if len(held) == 0:
            continue
        fit = np.delete(Y, held, axis=0)
        out[held] = _statistics_under(fit, Y[held], facts)
    return out


def _tail_shares(null: np.ndarray, stats: np.ndarray) -> np.ndarray:
    """Per statistic, the share of the held-out reference models whose value is at least each
    row's (``null`` (n, d), ``stats`` (V, d); high = misfit): the statistics on one scale, so
    that none dominates their combination by its spread. A statistic not computable for a row
    is 1 (no evidence), as is a column with no held-out value."""
    out = np.ones(stats.shape)
    for j in range(stats.shape[1]):
        col = np.sort(null[:, j][np.isfinite(null[:, j])])
        if len(col) == 0:
            continue
        ok = np.isfinite(stats[:, j])
        above = len(col) - np.searchsorted(col, stats[ok, j], side="left")
        out[ok, j] = above / len(col)
    return out


def _combined(null: np.ndarray, stats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``stats`` (V, 1 + d): its smallest tail share among ``null``'s statistics
    (:func:`_tail_shares`; the more extreme, the smaller) and the column it came from (NaN, −1
    where ``−lz*`` is not computable: without it there is no verdict)."""
    t = _tail_shares(null, stats)
    col = np.argmin(t, axis=1)
    best = t[np.arange(len(t)), col]
    ok = np.isfinite(stats[:, 0])
    return np.where(ok, best, np.nan), np.where(ok, col, -1)


def _round6(v: Any) -> Any:
    """The statistics as JSON keeps them: rounded to 6 decimals (a mapping's values too)."""
    if isinstance(v, Mapping):
        return {k: round(float(x), 6) for k, x in v.items()}
    return None if v is None else round(float(v), 6)


@dataclass(frozen=True)
class PersonFit(Document):
    """One placed model's fit on one benchmark: ``statistic`` (lz*; None: too few answered
    items), ``p_value`` (the conformal rank of the check's statistic — the smallest tail share
    of ``−lz*`` and the directed residuals — among the held-out reference models' own, in
    (0, 1]; None when not calibrated), ``worse_than`` (share of those held-out models whose pattern fits better,
    in [0, 1]), ``items`` (answered items it was computed on), ``reference`` (held-out
    reference values), ``level``, ``flagged``, when the check could not be made ``why_not``,
    ``signature`` (the statistic with that smallest share: a key of :data:`SIGNATURES`) and
    ``directed`` (signature → directed residual z, where computable)."""

    statistic: float | None = field(metadata=encoded(_round6))
    p_value: float | None = field(metadata=encoded(_round6))
    worse_than: float | None = field(metadata=encoded(_round6))
    items: int
    reference: int
    level: float
    flagged: bool
    why_not: str | None = None
    signature: str | None = None
    directed: Mapping[str, float] | None = field(default=None, metadata=encoded(_round6))

    def line(self, benchmark: str) -> str | None:
        """The stderr/report line of a flagged fit, else None."""
        if not self.flagged or self.worse_than is None:
            return None
        what = SIGNATURES[self.signature or "pattern"]
        return (
            f"answers on {benchmark} fit the reference models worse than "
            f"{100 * self.worse_than:.0f} % of them ({what}; lz* {self.statistic:.2f}, p = "
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
    facts: ItemFacts | None = None,
) -> list[PersonFit]:
    """The misfit check of each row of ``new`` (V, k: scores in [0, 1] on the k items it was
    asked, NaN = not answered) against ``reference`` (M, k: the reference models' scores on
    the same items, NaN = missing), with the directed residuals ``facts`` allows (None: lz*
    alone): see the module docstring. A row with fewer than ``min_items`` answered items, or a
    panel with too few answering models to reach ``level``, gets no verdict (``why_not``)."""
    R = _binary(reference)
    R = R[np.isfinite(R).sum(axis=1) >= 2]
    U = _binary(np.atleast_2d(new))
    facts = facts if facts is not None else ItemFacts.unknown(U.shape[1])
    if len(facts.length) != U.shape[1]:
        raise ValueError(f"facts of {len(facts.length)} items for {U.shape[1]} answered")
    names = ["pattern", *facts.covariates()]
    stats = _statistics_under(R, U, facts) if len(R) >= 2 else np.full((len(U), len(names)), np.nan)
    lz = -stats[:, 0]
    if len(R) >= 2 * folds:
        held = held_out_statistics(R, facts, folds, seed)
        held = held[np.isfinite(held[:, 0])]
    else:
        held = np.full((0, len(names)), np.nan)
    new_t, new_col = _combined(held, stats)
    null = np.sort(_combined(held, held)[0])
    n = len(null)
    out = []
    for v in range(len(U)):
        k = int(np.isfinite(U[v]).sum())
        directed = {
            name: float(stats[v, j])
            for j, name in enumerate(names)
            if j and np.isfinite(stats[v, j])
        }
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
            out.append(PersonFit(stat, None, None, k, n, level, False, why, None, directed))
            continue
        # the smaller the tail share, the worse the fit: p = (1 + #{held-out ≤ t}) / (n + 1)
        below = int(np.searchsorted(null, new_t[v], side="right"))
        p = (1 + below) / (n + 1)
        out.append(
            PersonFit(
                float(lz[v]),
                p,
                (n - below) / n,
                k,
                n,
                level,
                p <= level,
                None,
                names[int(new_col[v])],
                directed,
            )
        )
    return out


def suite_person_fit(
    manifest: SuiteManifest,
    panels: Mapping[str, Panel],
    new: pd.DataFrame,
    seed: int = 0,
) -> dict[str, dict[str, PersonFit]]:
    """model → benchmark → the :func:`person_fit` of each model of ``new`` (models ×
    (benchmark, item_id) scores in [0, 1], NaN = missing) on each suite benchmark's items,
    against that benchmark's reference panel (``panels``: benchmark → panel) answering the same
    items — the check of every placement."""

    out: dict[str, dict[str, PersonFit]] = {str(m): {} for m in new.index}
    for e in manifest.benchmarks:
        p = panels[e.name]
        pos = {str(i): k for k, i in enumerate(p.item_ids(e.name))}
        items = [str(i) for i in e.item_ids]
        X = new.reindex(columns=[(e.name, i) for i in items]).to_numpy(float)
        cols = [pos[i] for i in items]
        ref = p.matrix(e.name).astype(float)[:, cols]
        facts = ItemFacts.of_items(p.items_of(e.name)).take(cols)
        fits = person_fit(ref, X, seed=seed, facts=facts)
        for m, fit in zip(new.index, fits, strict=True):
            out[str(m)][e.name] = fit
    return out
