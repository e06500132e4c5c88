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

Not in the papers (they fix the selector); see docs/results.md, "Which selector".
"""

from __future__ import annotations

import numpy as np

from primebench_tasks.errors import ConfigError
from primebench_tasks.metrics import nanmean_rows, spearman
from primebench_tasks.select.arms import ARMS, SelectorContext
from primebench_tasks.select.base import ItemFeatures, Selector

DEFAULT_CANDIDATES = ("vaw_dc", "vaw_response_cells", "vaw_shares_only", "random")
"""The candidates the default rule compares, preferred first: names of
:data:`primebench_tasks.select.arms.ARMS` (any fixed arm may be given)."""


def _registered() -> dict:
    """The fixed arms a candidate may be (:data:`primebench_tasks.select.arms.ARMS`)."""
    return ARMS


def _candidate(name: str, k: int, random_state: int) -> Selector:
    return ARMS[name](k, random_state, SelectorContext())


N_REPEATS = 6
MIN_HALF = 20
"""Fewer build models than 2·MIN_HALF: no cross-validation, the preferred candidate is used."""


class CrossValidatedSelector(Selector):
    """The candidate that orders held-out build models best (see the module docstring).

    Parameters
    ----------
    k : items to keep.
    random_state : seeds the inner splits and every candidate.
    candidates : registered selector names, preferred first.
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
        known = [n for n in _registered() if n != "cross_validated"]
        unknown = [c for c in self.candidates if c not in known]
        if unknown or not self.candidates:
            raise ConfigError(f"unknown candidate(s) {unknown}; known: {', '.join(known)}")
        M, n = X.shape
        self.cv_rho_: dict[str, float] = {}
        chosen = self.candidates[0]
        if 2 * self.min_half <= M and self.k < n and len(self.candidates) > 1:
            rho = self._inner_rho(X, items)
            self.cv_rho_ = {c: float(np.nanmean(rho[:, j])) for j, c in enumerate(self.candidates)}
            chosen = self._choose(rho)
        sel = _candidate(chosen, self.k, self.random_state).fit(X, items)
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
            X_fit, X_test = X[fit_rows], X[test_rows]
            full = nanmean_rows(X_test)
            for j, c in enumerate(self.candidates):
                sel = _candidate(c, self.k, self.random_state + r).fit(X_fit, items)
                rho[r, j] = spearman(nanmean_rows(X_test[:, sel.indices_]), full)
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
