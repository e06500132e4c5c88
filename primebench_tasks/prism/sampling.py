"""PRISM item sampling (§3): R = 5 seeds × K = 100 items per benchmark, the deduplicated union."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

SEEDS = (0, 1, 42, 1234, 2026)
K = 100


def sample_items(
    pool: Mapping[str, Sequence[str]], seeds: Sequence[int] = SEEDS, k: int = K
) -> dict[str, list[str]]:
    """Per benchmark: each seed draws min(k, n) items without replacement from the benchmark's
    item list (``numpy.random.default_rng(seed)``); the union keeps first-draw order."""
    out: dict[str, list[str]] = {}
    for b, items in pool.items():
        items = list(items)
        chosen: dict[str, None] = {}
        for s in seeds:
            rng = np.random.default_rng(s)
            for i in rng.choice(len(items), size=min(k, len(items)), replace=False):
                chosen.setdefault(str(items[int(i)]), None)
        out[b] = list(chosen)
    return out
