"""Choose the selector from the build models themselves: cross-validation on the build split.

A fixed selector chosen on a few panels does not carry to every panel: ``vaw_dc`` (discrimination
in response cells) is the best arm on the VLM panels but loses to random on a panel whose models
are bimodal (a cluster of near-chance models beside a dense cluster of competent ones, as on the
text-LLM leaderboards): the items with the highest item-rest correlation are the ones that
separate the two clusters, and they do not order the models inside the large one
(:func:`primebench_tasks.data.simulate.simulate_leaderboard` reproduces it). The models of a new
suite are known at build time, so the choice can be measured on them.

Rule (:class:`CrossValidatedSelector`): ``n_repeats`` seeded random halves of the build models;
on each, every candidate selects ``k`` items on one half and is scored by the Spearman ρ, over the
other half, between the mean on its items and the mean on all items (the fidelity protocol's
metric). The first candidate (the preferred one) is kept unless another candidate's mean ρ beats
it by more than one standard error of their paired differences — so a small panel, where the
inner ρ are noisy, keeps the preferred selector. The chosen candidate is then fitted on all the
build models with the same ``k`` and ``random_state``: when the preferred one is kept, the
selection is exactly the preferred selector's.

Not in the papers (they fix the selector); see README, "Which selector".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from primebench_tasks.errors import ConfigError
from primebench_tasks.metrics import nanmean_rows, spearman
from primebench_tasks.select.anchor_points import AnchorPointsSelector
from primebench_tasks.select.base import ItemFeatures, Selector
from primebench_tasks.select.datbench import DatBenchSelector
from primebench_tasks.select.random import RandomSelector
from primebench_tasks.select.vaw import VAWSelector

CandidateFactory = Callable[[int, int], Selector]

CANDIDATES: Mapping[str, CandidateFactory] = {
    "vaw_dc": lambda k, rs: VAWSelector(
        k, random_state=rs, signal="discrimination", cells="responses", cell_quantile=0.5
    ),
    "vaw_response_cells": lambda k, rs: VAWSelector(k, random_state=rs, cells="responses"),
    "vaw_shares_only": lambda k, rs: VAWSelector(k, random_state=rs, cells="none"),
    "random": lambda k, rs: RandomSelector(k, random_state=rs),
    "datbench": lambda k, rs: DatBenchSelector(k, random_state=rs),
    "anchor_points": lambda k, rs: AnchorPointsSelector(k, random_state=rs),
}
"""The candidates, preferred first (the same arms as in :mod:`primebench_tasks.select.registry`)."""

DEFAULT_CANDIDATES = ("vaw_dc", "vaw_response_cells", "vaw_shares_only", "random")
"""The candidates the default rule compares, preferred first."""

N_REPEATS = 6
MIN_HALF = 20
"""Fewer build models than 2·MIN_HALF: no cross-validation, the preferred candidate is used."""


class CrossValidatedSelector(Selector):
    """The candidate that orders held-out build models best (see the module docstring).

    Parameters
    ----------
    k : items to keep.
    random_state : seeds the inner splits and every candidate.
    candidates : names of :data:`CANDIDATES`, preferred first.
    n_repeats : inner random halves of the build models.

    Learned: ``indices_``, ``weights_``, ``n_cells_`` (the chosen candidate's), ``chosen_`` (its
    name), ``cv_rho_`` (name → mean inner ρ; empty when the panel is too small to cross-validate).
    """

    def __init__(
        self,
        k: int,
        *,
        random_state: int = 0,
        candidates: tuple[str, ...] = DEFAULT_CANDIDATES,
        n_repeats: int = N_REPEATS,
        min_half: int = MIN_HALF,
    ) -> None:
        self.k = k
        self.random_state = random_state
        self.candidates = candidates
        self.n_repeats = n_repeats
        self.min_half = min_half

    def fit(self, X: np.ndarray, items: ItemFeatures | None = None) -> CrossValidatedSelector:
        X = self._check(X)
        unknown = [c for c in self.candidates if c not in CANDIDATES]
        if unknown or not self.candidates:
            raise ConfigError(f"unknown candidate(s) {unknown}; known: {', '.join(CANDIDATES)}")
        M, n = X.shape
        self.cv_rho_: dict[str, float] = {}
        chosen = self.candidates[0]
        if 2 * self.min_half <= M and self.k < n and len(self.candidates) > 1:
            rho = self._inner_rho(X, items)
            self.cv_rho_ = {c: float(np.nanmean(rho[:, j])) for j, c in enumerate(self.candidates)}
            chosen = self._choose(rho)
        sel = CANDIDATES[chosen](self.k, self.random_state).fit(X, items)
        self.chosen_ = chosen
        self.n_cells_ = dict(getattr(sel, "n_cells_", {}))
        self._set(sel.indices_, sel.weights_)
        return self

    def _inner_rho(self, X: np.ndarray, items: ItemFeatures | None) -> np.ndarray:
        """(n_repeats, n_candidates) inner ρ."""
        M = X.shape[0]
        rng = np.random.default_rng([self.random_state, 0x5E1EC7])
        rho = np.full((self.n_repeats, len(self.candidates)), np.nan)
        for r in range(self.n_repeats):
            perm = rng.permutation(M)
            fit_rows, test_rows = np.sort(perm[: M // 2]), np.sort(perm[M // 2 :])
            full = nanmean_rows(X[test_rows])
            for j, c in enumerate(self.candidates):
                sel = CANDIDATES[c](self.k, self.random_state + r).fit(X[fit_rows], items)
                rho[r, j] = spearman(nanmean_rows(X[test_rows][:, sel.indices_]), full)
        return rho

    def _choose(self, rho: np.ndarray) -> str:
        """The preferred candidate unless another beats it by more than one paired SE."""
        best, best_gain = self.candidates[0], 0.0
        for j in range(1, len(self.candidates)):
            d = rho[:, j] - rho[:, 0]
            d = d[np.isfinite(d)]
            if len(d) < 2:
                continue
            gain, se = float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d)))
            if gain > se and gain > best_gain:
                best, best_gain = self.candidates[j], gain
        return best
