"""How well `primebench run`'s placement predicts a new model's full-suite score and rank
(a benchmark on real data, not a test).

    python benchmarks/placement_accuracy.py [--default autojudger] [--splits 5] [--held 10]

Per split: hold out ``--held`` random models, build the default PRIMEBench suite on the others,
place the held-out models from their real responses to the suite items, and compare with their
true full-suite score and rank among the reference models. Prints, per estimator, the mean absolute
error of the predicted full-suite score, of the predicted rank and of the suite rank, and how often
the 95 % intervals contain the truth.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from primebench_tasks.data.panel import Panel
from primebench_tasks.evaluate.placement import full_suite_scores, place_models
from primebench_tasks.pipeline.manifest import manifest_items
from primebench_tasks.pipeline.primebench import PipelineParams, run_pipeline


def responses(panel: Panel, manifest: dict, models: list[str]) -> pd.DataFrame:
    rows = [panel.model_names.index(m) for m in models]
    cols, vals = [], []
    for by_b in manifest_items(manifest).values():
        for b, ids in by_b.items():
            pid = {str(i): j for j, i in enumerate(panel.item_ids(b))}
            X = panel.matrix(b)
            for i in ids:
                cols.append((b, str(i)))
                vals.append(X[rows, pid[str(i)]])
    return pd.DataFrame(np.array(vals).T, index=models, columns=pd.MultiIndex.from_tuples(cols))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--default", default="autojudger")
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--held", type=int, default=10)
    ap.add_argument("--n-boot", type=int, default=200)
    args = ap.parse_args()
    panel = Panel.load_default(args.default)
    full = full_suite_scores(panel)
    rng = np.random.default_rng(0)
    out = []
    for s in range(args.splits):
        held = sorted(rng.choice(panel.model_names, args.held, replace=False).tolist())
        ref = panel.subset_models([m for m in panel.model_names if m not in held])
        manifest = run_pipeline(ref, PipelineParams(seed=s)).manifest(ref, "split")
        new = responses(panel, manifest, held)
        ref_full = full_suite_scores(ref).to_numpy()
        true_rank = np.array([1 + int((ref_full > full[m]).sum()) for m in held])
        for est in ("mean", "aipw", "gpirt"):
            r = place_models(ref, manifest, new, est, args.n_boot, seed=s)
            t = full[held].to_numpy()
            out.append({
                "estimator": est, "n_items": int(r.n_items.iloc[0]),
                "score_mae": np.abs(r.predicted_full.to_numpy() - t).mean(),
                "score_cover": ((r.predicted_full_lo <= t) & (t <= r.predicted_full_hi)).mean(),
                "rank_mae": np.abs(r.predicted_rank.to_numpy() - true_rank).mean(),
                "rank_cover": ((r.predicted_rank_lo <= true_rank)
                               & (true_rank <= r.predicted_rank_hi)).mean(),
                "suite_rank_mae": np.abs(r.suite_rank.to_numpy() - true_rank).mean(),
                "suite_rank_cover": ((r.suite_rank_lo <= true_rank)
                                     & (true_rank <= r.suite_rank_hi)).mean()})
        print(f"split {s + 1}/{args.splits} done", flush=True)
    df = pd.DataFrame(out).groupby("estimator").mean().round(3)
    print(f"{args.default}: {len(panel.model_names)} models, {args.held} held out x "
          f"{args.splits} splits")
    print(df.to_string())


if __name__ == "__main__":
    main()
