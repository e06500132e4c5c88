"""Model splits: seeded random build/held-out halves and the chronological split."""

from __future__ import annotations

import numpy as np
import pandas as pd

from primebench_tasks.errors import ConfigError


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
