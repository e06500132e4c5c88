"""Model splits: seeded random build/held-out halves and the chronological split."""

from __future__ import annotations

import numpy as np
import pandas as pd

from primebench_tasks.errors import ConfigError
from primebench_tasks.place.defaults import FRONTIER_SHARE


def random_splits(
    n_models: int, n_splits: int, seed: int = 0, build_fraction: float = 0.5
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n_splits`` seeded random partitions into build and held-out model positions."""
    rng = np.random.default_rng(seed)
    n_build = int(round(n_models * build_fraction))
    out = []
    for _ in range(n_splits):
        perm = rng.permutation(n_models)
        out.append((np.sort(perm[:n_build]), np.sort(perm[n_build:])))
    return out


def chronological_split(
    models: pd.DataFrame, build_fraction: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """Build on the oldest models, score the newest. Models sort by release date (then name);
    undated models sort last and never enter the build set."""
    dated = models["release_date"].notna().to_numpy()
    if dated.sum() < 2:
        raise ConfigError("the chronological split needs release dates (model metadata)")
    order = np.lexsort(
        (models["model"].to_numpy(), models["release_date"].fillna("9999").to_numpy())
    )
    n_build = min(int(dated.sum()), int(round(len(models) * build_fraction)))
    build = np.sort(order[:n_build])
    held = np.sort(order[n_build:])
    return build, held


GAP = (0.05, 0.10)
"""The gap hold-out's band: models scoring this far above the cut (the best build model)."""
GAP_MIN_HELD = 8


def gap_split(
    strength: np.ndarray, band: tuple[float, float] = GAP, minimum: int = GAP_MIN_HELD
) -> tuple[np.ndarray, np.ndarray, float]:
    """(build, held, cut) positions for a *gap* hold-out: built on the models whose ``strength``
    (M,) is at most a cut c, placed on those scoring c + band[0] to c + band[1] (the models in
    between left out) — a new model clearly above every reference model. c is the model score
    that holds out the most models (the highest among ties); at least ``minimum`` held out, else
    a ``ConfigError``. NaN strength is never used."""
    s = np.asarray(strength, float)
    ok = np.flatnonzero(np.isfinite(s))
    best: tuple[int, float] | None = None
    for c in np.unique(s[ok]):
        n = int(((s[ok] >= c + band[0] - 1e-12) & (s[ok] <= c + band[1] + 1e-12)).sum())
        if best is None or n >= best[0]:
            best = (n, float(c))
    if best is None or best[0] < minimum:
        got = 0 if best is None else best[0]
        raise ConfigError(
            f"gap hold-out: at most {got} models score {band[0]:g}-{band[1]:g} above a cut "
            f"(needs {minimum})"
        )
    c = best[1]
    build = ok[s[ok] <= c]
    held = ok[(s[ok] >= c + band[0] - 1e-12) & (s[ok] <= c + band[1] + 1e-12)]
    return build, held, c


HOLDOUT_PROTOCOLS = ("random", "frontier", "chronological", "gap")
"""How placement accuracy is measured (``benchmarks/placement_accuracy.py``):

- ``random``: a seeded random ``share`` of the models is held out;
- ``frontier``: the strongest ``share`` by full-suite score is held out — the user's new model,
  stronger than every reference model;
- ``chronological``: the newest ``share`` of the dated models is held out and the suite is built
  on the dated models released before them only (undated models are left out: their date is
  unknown);
- ``gap``: built on the models below a score cut, placed on those 0.05-0.10 above the best of
  them (:func:`gap_split`)."""


def frontier_split(
    strength: np.ndarray, share: float = FRONTIER_SHARE, minimum: int = 3
) -> tuple[np.ndarray, np.ndarray]:
    """(build, held) positions: the ``share`` strongest by ``strength`` (M,) held out (at least
    ``minimum``); NaN strength never held out. Ties broken by position."""
    s = np.asarray(strength, float)
    ok = np.flatnonzero(np.isfinite(s))
    n_held = max(minimum, int(round(share * len(ok))))
    if n_held >= len(ok):
        raise ConfigError(f"frontier split: {len(ok)} models, cannot hold out {n_held}")
    order = ok[np.lexsort((ok, -s[ok]))]
    held = np.sort(order[:n_held])
    return np.setdiff1d(np.arange(len(s)), held), held


def newest_split(
    models: pd.DataFrame, share: float = 0.15, minimum: int = 3
) -> tuple[np.ndarray, np.ndarray]:
    """(build, held) positions of ``models`` (columns ``model``, ``release_date``): the newest
    ``share`` of the dated models held out (at least ``minimum``; every model of the cut-off date
    with them), built on the dated models released strictly before that date."""
    dates = models["release_date"].astype("string").to_numpy()
    dated = np.flatnonzero(pd.notna(dates))
    n_held = max(minimum, int(round(share * len(dated))))
    if len(dated) < n_held + 4:
        raise ConfigError(f"the chronological split needs release dates: {len(dated)} dated models")
    names = models["model"].astype(str).to_numpy()
    order = dated[np.lexsort((names[dated], dates[dated].astype(str)))]
    cutoff = str(dates[order[-n_held]])
    held = np.sort([i for i in dated if str(dates[i]) >= cutoff])
    build = np.sort([i for i in dated if str(dates[i]) < cutoff])
    return np.asarray(build, dtype=np.int64), np.asarray(held, dtype=np.int64)
