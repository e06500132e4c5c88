"""PRISM paired-bootstrap cost at the paper's scale (a benchmark, not a test).

    python benchmarks/prism_bootstrap.py [--items 6238] [--models 42] [--boot 2000]

Simulated per-item axis scores (7 axes, sc defined on ~60 % of items, ~2 % unanswered) for
42 models × 6,238 items, as in PRISM-VLM §5 / App. E: prints the time of the B = 2,000
replicates (sc_B recomputed per replicate), of the pairwise separation with BH, the peak
replicate memory, and the separated fraction.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from primebench_tasks.prism.scores import bootstrap_pscores
from primebench_tasks.prism.separation import separation


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=6238)
    ap.add_argument("--models", type=int, default=42)
    ap.add_argument("--boot", type=int, default=2000)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    ability = np.linspace(0.35, 0.85, a.models)
    V = (rng.random((a.models, a.items, 7)) < ability[:, None, None]).astype(float)
    V[:, :, 4][rng.random((a.models, a.items)) < 0.4] = np.nan  # sc: turn-0-wrong items
    V[rng.random((a.models, a.items, 7)) < 0.02] = np.nan  # unanswered residual
    t0 = time.perf_counter()
    reps = bootstrap_pscores(V, a.boot, 0)
    t1 = time.perf_counter()
    W = ~np.isnan(V)
    point = 7 / (W.sum(axis=1) / np.where(W, V, 0).sum(axis=1)).sum(axis=1)
    pairs, _ = separation(reps, point, [f"m{i}" for i in range(a.models)])
    t2 = time.perf_counter()
    chunk_mb = 250 * a.items * 8 / 2**20 + 2 * a.items * a.models * 7 * 8 / 2**20
    print(f"{a.models} models × {a.items} items × 7 axes, B = {a.boot}")
    print(
        f"bootstrap replicates: {t1 - t0:.1f} s; separation + BH over {len(pairs)} pairs: "
        f"{t2 - t1:.1f} s; working set ≈ {chunk_mb:.0f} MB"
    )
    print(
        f"separated pairs: {pairs['separated'].mean():.1%} (BH {pairs['separated_bh'].mean():.1%})"
    )


if __name__ == "__main__":
    main()
