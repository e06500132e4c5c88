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


def reference_ratios(panel) -> dict:  # type: ignore[no-untyped-def]
    from sklearn.cluster import KMeans, MiniBatchKMeans

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
    out = {
        "supplementation": {
            "steps": steps,
            "all_prefixes_s": round(t_fast, 3),
            "spearmanr_per_step_s": round(t_ref, 3),
        }
    }

    pools = stage1_representatives(panel, s0.keep).pools
    space = resolve_cell_space(panel, "auto")
    # the same cells four ways: the bounded Lloyd (4 rounds from distinct random items) and
    # scikit-learn with its defaults, with the same bounded settings, and mini-batch
    arms = {
        "bounded Lloyd (ours)": lambda e, k: kmeans_labels(e, k, 0),
        "sklearn KMeans defaults": lambda e, k: KMeans(n_clusters=k, random_state=0).fit(e),
        "sklearn KMeans(init='random', n_init=1, max_iter=4)": lambda e, k: KMeans(
            n_clusters=k, init="random", n_init=1, max_iter=4, random_state=0
        ).fit(e),
        "sklearn MiniBatchKMeans defaults": lambda e, k: MiniBatchKMeans(
            n_clusters=k, random_state=0
        ).fit(e),
    }
    seconds = dict.fromkeys(arms, 0.0)
    shares_done = 0
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
            shares_done += 1
            for name, run in arms.items():
                t = time.perf_counter()
                run(e, int(share))
                seconds[name] += time.perf_counter() - t
    out["kmeans"] = {"shares": shares_done, "seconds": {k: round(v, 3) for k, v in seconds.items()}}
    return out


def main() -> None:
    import json
    import os
    from pathlib import Path

    from primebench_tasks.data.panel import Panel
    from primebench_tasks.data.simulate import simulate_panel
    from primebench_tasks.select.default import DEFAULT_SELECTOR

    ap = argparse.ArgumentParser(description="paper-scale speed and memory of the pipeline")
    ap.add_argument("--panel", help="a saved paper-scale panel (else simulated)")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--ref-scale", type=float, default=0.1)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = ap.parse_args()
    t = time.perf_counter()
    panel = Panel.load(args.panel) if args.panel else simulate_panel(scale=args.scale)
    t_panel = time.perf_counter() - t
    times, s0, s1, s2, s3 = run_stages(panel)
    res = {
        "cpus": os.cpu_count(),
        "selector": DEFAULT_SELECTOR,
        "panel": {
            "items": len(panel.items),
            "models": len(panel.model_names),
            "how": "load" if args.panel else "simulate",
            "seconds": round(t_panel, 1),
        },
        "stages_s": {k: round(v, 2) for k, v in times.items()},
        "peak_rss_gb": round(peak_rss_gb(), 2),
        "kept": {
            "stage0": s0.n_out,
            "pools": sum(p.size for p in s1.pools),
            "stage2": s2.n_items,
            "stage3": list(s3.categories),
        },
    }
    ref = simulate_panel(scale=args.ref_scale, seed=1)
    res["reference"] = {"items": len(ref.items), **reference_ratios(ref)}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "pipeline_scale.json").write_text(json.dumps(res, indent=1) + "\n", "utf-8")
    (args.out / "pipeline_scale.md").write_text(render(res), "utf-8")
    print(render(res))


def render(res: dict) -> str:
    st = res["stages_s"]
    total = sum(st.values())
    p = res["panel"]
    ref = res["reference"]
    sup = ref["supplementation"]
    km = ref["kmeans"]["seconds"]
    ours = km["bounded Lloyd (ours)"]
    lines = [
        f"Generated by `python benchmarks/pipeline_scale.py` ({res['cpus']} CPUs; Stage 2 "
        f"selector `{res['selector']}`).",
        "",
        "| | measured | target |",
        "|---|---|---|",
        f"| {p['how']} the {p['items']:,}-item, {p['models']}-model panel (blind runs, 2 × 64-d "
        f"embeddings) | {p['seconds']} s | |",
        f"| Stages 0–3 | {total:.1f} s ("
        + ", ".join(f"{k.replace('stage', 'stage ')} {v} s" for k, v in st.items())
        + ") | ≤ 60 s |",
        f"| peak RSS, panel + Stages 0–3 | {res['peak_rss_gb']} GB | ≤ 4 GB |",
        f"| items kept: Stage 0 / pools / suite | {res['kept']['stage0']:,} / "
        f"{res['kept']['pools']:,} / {res['kept']['stage2']:,} | |",
        f"| supplementation on a {ref['items']:,}-item panel ({sup['steps']:,} steps): "
        f"all prefixes at once vs one `spearmanr` per step | {sup['all_prefixes_s']} s vs "
        f"{sup['spearmanr_per_step_s']} s | |",
    ]
    for name, v in km.items():
        if name == "bounded Lloyd (ours)":
            continue
        lines.append(
            f"| k-means cells ({ref['kmeans']['shares']} benchmark shares): bounded Lloyd vs "
            f"{name} | {ours} s vs {v} s ({v / max(ours, 1e-9):.1f}×) | |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
