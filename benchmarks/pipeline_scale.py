"""Paper-scale speed and memory of the PRIMEBench pipeline (a benchmark, not a test).

    python benchmarks/pipeline_scale.py [--panel DIR] [--scale 1.0] [--ref-scale 0.1]

1. Simulates (or loads) the paper-scale panel: 386,324 items, 30 models plus 12 blind runs,
   43 benchmarks, 64-d embeddings; runs Stages 0-3 and prints per-stage seconds and peak RSS.
2. On a 10 % panel, compares the two hot spots with plain references: one
   ``scipy.stats.spearmanr`` call per supplementation step against the all-prefixes computation,
   and full-batch scikit-learn ``KMeans`` (its defaults) per benchmark share against the bounded
   Lloyd cells. Prints the ratios.
Targets (issue 3): Stages 0-3 ≤ 60 s wall and ≤ 4 GB peak RSS on 2 cores.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
from scipy import stats


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def run_stages(panel):  # type: ignore[no-untyped-def]
    from primebench_tasks.pipeline.primebench import cleaned_reference
    from primebench_tasks.pipeline.stage0_clean import stage0_clean
    from primebench_tasks.pipeline.stage1_representatives import stage1_representatives
    from primebench_tasks.pipeline.stage2_prune import pooled_category_scores, stage2_prune
    from primebench_tasks.pipeline.stage3_categories import stage3_select

    times = {}
    t = time.perf_counter()
    s0 = stage0_clean(panel)
    times["stage0"] = time.perf_counter() - t
    t = time.perf_counter()
    s1 = stage1_representatives(panel, s0.keep)
    times["stage1"] = time.perf_counter() - t
    t = time.perf_counter()
    s2 = stage2_prune(panel, s1.pools)
    times["stage2"] = time.perf_counter() - t
    t = time.perf_counter()
    S = pooled_category_scores(panel, s2.selected)
    s3 = stage3_select(S, 5)
    cleaned_reference(panel, s0.keep)
    times["stage3"] = time.perf_counter() - t
    return times, s0, s1, s2, s3


def reference_ratios(panel) -> None:  # type: ignore[no-untyped-def]
    from sklearn.cluster import KMeans

    from primebench_tasks.pipeline.stage0_clean import stage0_clean
    from primebench_tasks.pipeline.stage1_representatives import (
        benchmark_scores,
        choose_representative,
        stage1_representatives,
        supplement,
    )
    from primebench_tasks.pipeline.stage2_prune import pool_data, resolve_cell_space
    from primebench_tasks.select.vaw import benchmark_shares, category_budget, kmeans_labels

    s0 = stage0_clean(panel)
    s = benchmark_scores(panel, s0.keep)
    t_fast = t_ref = 0.0
    steps = 0
    for benches in panel.categories().values():
        if len(benches) < 2:
            continue
        rep, rho, _, sc = choose_representative(s, benches)
        t = time.perf_counter()
        _, added, avail, _, prefix = supplement(panel, s0.keep, benches, rep, sc)
        t_fast += time.perf_counter() - t
        # reference: the same candidate order, one spearmanr per step, up to the same stop
        t = time.perf_counter()
        X_rep = panel.matrix(rep)[:, s0.keep[rep]].astype(float)
        cands = np.concatenate(
            [panel.matrix(b)[:, s0.keep[b]] for b in benches if b != rep], axis=1
        ).astype(float)
        order = np.argsort(-np.nanvar(cands, axis=0), kind="stable")
        n_steps = added if rho < 0.95 and prefix[added] >= 0.95 else avail
        pool_sum = np.nansum(X_rep, axis=1)
        pool_cnt = np.isfinite(X_rep).sum(axis=1)
        for j in order[:n_steps]:
            col = cands[:, j]
            pool_sum = pool_sum + np.nan_to_num(col)
            pool_cnt = pool_cnt + np.isfinite(col)
            stats.spearmanr(pool_sum / pool_cnt, sc)
        t_ref += time.perf_counter() - t
        steps += n_steps
    print(
        f"supplementation ({steps} steps): all-prefixes {t_fast:.2f}s vs one spearmanr per "
        f"step {t_ref:.2f}s -> {t_ref / max(t_fast, 1e-9):.1f}x"
    )

    pools = stage1_representatives(panel, s0.keep).pools
    space = resolve_cell_space(panel, "auto")
    t_fast = t_ref = 0.0
    for pool in pools:
        data = pool_data(panel, pool, space)
        k = category_budget(data.X.shape[1], 0.05)
        labels = data.benchmark
        names = list(dict.fromkeys(labels))
        shares = benchmark_shares(k, np.array([(labels == b).sum() for b in names]))
        for b, share in zip(names, shares, strict=True):
            e = data.features.embedding[labels == b]
            if share < 2 or share >= len(e):
                continue
            t = time.perf_counter()
            kmeans_labels(e, int(share), 0)
            t_fast += time.perf_counter() - t
            t = time.perf_counter()
            KMeans(n_clusters=int(share), random_state=0).fit(e)
            t_ref += time.perf_counter() - t
    print(
        f"k-means cells: bounded Lloyd {t_fast:.2f}s vs scikit-learn KMeans defaults "
        f"{t_ref:.2f}s -> {t_ref / max(t_fast, 1e-9):.1f}x"
    )


def main() -> None:
    from primebench_tasks.data.panel import Panel
    from primebench_tasks.data.simulate import simulate_panel

    ap = argparse.ArgumentParser()
    ap.add_argument("--panel", help="a saved paper-scale panel (else simulated)")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--ref-scale", type=float, default=0.1)
    args = ap.parse_args()
    t = time.perf_counter()
    panel = Panel.load(args.panel) if args.panel else simulate_panel(scale=args.scale)
    print(
        f"panel: {panel} ({time.perf_counter() - t:.1f}s to {'load' if args.panel else 'simulate'})"
    )
    times, s0, s1, s2, s3 = run_stages(panel)
    total = sum(times.values())
    for k, v in times.items():
        print(f"  {k}: {v:6.2f}s")
    print(
        f"Stages 0-3: {total:.1f}s wall (target <= 60s); peak RSS {peak_rss_gb():.2f} GB "
        "(target <= 4 GB)"
    )
    print(
        f"  kept {s0.n_out} after Stage 0, pools {sum(p.size for p in s1.pools)}, "
        f"Stage 2 {s2.n_items}, Stage 3 {', '.join(s3.categories)}"
    )
    ref = simulate_panel(scale=args.ref_scale, seed=1)
    print(f"reference comparison on {ref}")
    reference_ratios(ref)


if __name__ == "__main__":
    main()
