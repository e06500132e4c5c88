"""The released flagship's suite rank on imputed reference scores: is the imputation worth
trusting, and how well are held-out models ranked on the whole suite? (A benchmark, not a test.)

    python benchmarks/suite_rank_imputation.py [--repeats 5] [--splits 3]
        [--out benchmarks/results/suite_rank_imputation.md] [--floor N]

No reference model has all seven flagship benchmarks, so ``place`` ranks a model's suite score
among reference models whose missing benchmark scores are imputed
(:mod:`primebench_tasks.place.imputation`). Three tables:

1. **Which benchmarks impute** — the product's own rule, as ``place`` computes it: each
   benchmark's cross-validated imputation MAE beside that of imputing its mean.
2. **Hidden scores of complete models** — the 66 reference models that have all five basis
   benchmarks get 1 or 2 of them hidden at random (``--repeats`` seeded rounds), then imputed:
   the error of their suite score, the 90 % coverage of its draws, Spearman ρ of imputed vs true
   suite scores, and the shift of their rank among all ranked reference models; beside the same
   with each hidden score replaced by its benchmark's mean.
3. **Held-out models placed on the suite** — ``--splits`` seeded splits holding out 20 % of those
   66 models from every panel; each benchmark's suite is rebuilt on the rest as the release
   builds it, the held-out models placed from their answers to its items. Reported: ρ of the
   predicted suite score with the true one (the issue's goal: ≥ 0.95), ρ of the suite items'
   mean beside random items of the same counts, and the error of the predicted suite rank among
   the imputed reference with its 95 % coverage. ``--floor 0`` reruns this table with the suites
   at 5 % of each benchmark's items (no 100-item floor): what the floor buys.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from primebench_tasks.pipeline.manifest import manifest_items
from primebench_tasks.pipeline.multi_source import source_panels
from primebench_tasks.pipeline.primebench import PipelineParams, run_pipeline
from primebench_tasks.place.benchmark import place_models
from primebench_tasks.place.calibration import calibration_entry, suite_responses
from primebench_tasks.place.defaults import DEFAULT_ESTIMATOR
from primebench_tasks.place.imputation import (
    benchmark_scores,
    category_mean,
    impute_table,
    restrict,
)
from primebench_tasks.place.suite import _rank

FLAGSHIP = Path("task_configs/suites/primebench.json")
RESULTS = Path("benchmarks/results")


def flagship() -> tuple[dict, dict, pd.DataFrame, dict[str, list[str]]]:
    manifest = json.loads(FLAGSHIP.read_text("utf-8"))
    panels = source_panels(manifest)
    observed = benchmark_scores(panels, list(panels))
    categories = {c: list(v) for c, v in manifest_items(manifest).items()}
    return manifest, panels, observed, categories


def which_impute(observed: pd.DataFrame) -> pd.DataFrame:
    """One row per benchmark: its reference models, the imputation's and the mean's
    cross-validated MAE (NaN where too few to measure), and whether it is in the rank."""
    imp = impute_table(observed, seed=0)
    rows = []
    for b in observed.columns:
        v = imp.validation.get(b, {})
        rows.append(
            {
                "benchmark": b,
                "models": int(observed[b].notna().sum()),
                "mae": v.get("mae", np.nan),
                "mean_mae": v.get("mean_mae", np.nan),
                "in_rank": b in imp.basis,
            }
        )
    return pd.DataFrame(rows)


def render_which(df: pd.DataFrame) -> str:
    lines = [
        "| benchmark | reference models | imputation MAE | mean's MAE | ratio | in the rank |",
        "|---|---|---|---|---|---|",
    ]
    for r in df.itertuples():
        if not np.isfinite(r.mae):
            lines.append(f"| {r.benchmark} | {r.models} | — | — | — | no (too few) |")
            continue
        lines.append(
            f"| {r.benchmark} | {r.models} | {r.mae:.3f} | {r.mean_mae:.3f} | "
            f"{r.mae / r.mean_mae:.2f} | {'yes' if r.in_rank else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def hidden_scores(
    observed: pd.DataFrame, cats: dict[str, list[str]], basis: tuple[str, ...], repeats: int
) -> pd.DataFrame:
    complete = observed.index[observed[list(basis)].notna().all(axis=1)]
    truth = pd.Series(category_mean(observed.loc[complete], cats), index=complete)
    rows = []
    for r in range(repeats):
        rng = np.random.default_rng([r, 55])
        masked = observed.copy()
        for m in complete:
            hide = rng.choice(list(basis), rng.integers(1, 3), replace=False)
            masked.loc[m, list(hide)] = np.nan
        imp = impute_table(masked, seed=r)
        ref = imp.suite_scores(cats)
        draws = imp.suite_draws(cats, 1000, seed=r)
        lo, hi = np.percentile(draws, [5, 95], axis=0)
        at = [ref.index.get_loc(m) for m in complete]
        # the mean's imputation: each hidden score replaced by its benchmark's observed mean
        naive = masked[list(basis)].fillna(masked[list(basis)].mean())
        naive_suite = pd.Series(category_mean(naive.loc[complete], cats), index=complete)
        full_ref = ref.copy()
        full_ref[complete] = truth  # the reference as it would be with nothing hidden
        for name, est in (("imputed", ref[complete]), ("benchmark mean", naive_suite)):
            err = est - truth
            true_rank = np.array([1 + (full_ref.drop(m) > truth[m]).sum() for m in complete])
            est_rank = np.array(
                [1 + (full_ref.drop(m) > est[m]).sum() for m in complete]
            )  # the others as they truly are: the shift is this model's imputation alone
            rows.append(
                {
                    "repeat": r,
                    "method": name,
                    "mae": float(err.abs().mean()),
                    "bias": float(err.mean()),
                    "rho": float(spearmanr(est, truth).statistic),
                    "rank_shift": float(np.abs(est_rank - true_rank).mean()),
                    "cover90": (
                        float(np.mean((lo[at] <= truth) & (truth <= hi[at])))
                        if name == "imputed"
                        else np.nan
                    ),
                }
            )
    df = pd.DataFrame(rows)
    df["complete"], df["basis"], df["ranked"] = len(complete), len(basis), len(ref)
    return df


def render_hidden(df: pd.DataFrame) -> str:
    lines = [
        f"{df.complete.iloc[0]} complete models, 1–2 of their {df.basis.iloc[0]} basis scores "
        f"hidden, {df.repeat.nunique()} rounds; ranks among the {df.ranked.iloc[0]} ranked "
        "reference models.",
        "",
        "| hidden scores filled by | suite-score MAE | bias | 90 % covers | ρ with the true "
        "suite score | mean rank shift |",
        "|---|---|---|---|---|---|",
    ]
    for name, d in df.groupby("method", sort=False):
        cov = f"{100 * d.cover90.mean():.0f} %" if d.cover90.notna().any() else "—"
        lines.append(
            f"| {name} | {d.mae.mean():.4f} | {d.bias.mean():+.4f} | {cov} | "
            f"{d.rho.mean():.3f} | {d.rank_shift.mean():.1f} |"
        )
    return "\n".join(lines) + "\n"


def held_out(
    panels: dict,
    observed: pd.DataFrame,
    cats: dict[str, list[str]],
    basis: tuple[str, ...],
    splits: int,
    n_boot: int,
    floor: int | None = None,
) -> pd.DataFrame:
    from primebench_tasks.data.importers import panel_with_benchmarks

    complete = sorted(observed.index[observed[list(basis)].notna().all(axis=1)])
    truth = pd.Series(category_mean(observed.loc[complete], cats), index=complete)
    rows = []
    t0 = time.time()
    for s in range(splits):
        rng = np.random.default_rng([s, 57])
        held = sorted(rng.choice(complete, round(0.2 * len(complete)), replace=False).tolist())
        pred, draws, item_mean, random_mean, counts = {}, {}, {}, [], {}
        for k, b in enumerate(basis):
            panel = panel_with_benchmarks(panels[b], [b])
            ref = panel.subset_models([m for m in panel.model_names if m not in held])
            params = PipelineParams(until="stage2", seed=s)
            if floor is not None:  # the share goal's question: what the 100-item floor buys
                params = PipelineParams(until="stage2", seed=s, floor=floor)
            res = run_pipeline(ref, params)
            cal = calibration_entry(ref, params, DEFAULT_ESTIMATOR, seed=s)
            manifest = res.manifest(ref, "split", cal)
            new = suite_responses(panel, manifest, held)
            r = place_models(ref, manifest, new, DEFAULT_ESTIMATOR, n_boot, seed=s)
            pred[b] = r.predicted_full.to_numpy(float)
            resid = r.attrs["residuals_by_model"]
            draws[b] = np.stack(
                [
                    pred[b][j] + np.random.default_rng([s, j, k]).choice(resid[j], n_boot)
                    for j in range(len(held))
                ],
                axis=1,
            )
            item_mean[b] = np.nanmean(new.to_numpy(float), axis=1)
            counts[b] = new.shape[1]
            X = panel.matrix(b)
            rows_h = [panel.model_names.index(m) for m in held]
            random_mean.append(
                [
                    np.nanmean(X[rows_h][:, rng.choice(X.shape[1], counts[b], replace=False)], 1)
                    for _ in range(20)
                ]
            )
            print(f"split {s} {b}: {time.time() - t0:.0f} s", flush=True)
        p_suite = category_mean(pd.DataFrame(pred), cats)
        d_suite = np.stack(
            [
                category_mean(pd.DataFrame({b: draws[b][:, j] for b in basis}), cats)
                for j in range(len(held))
            ],
            axis=1,
        )
        t = truth[held].to_numpy()
        # the item-pooled mean over the suite's items vs random items of the same counts
        w = np.array([counts[b] for b in basis], dtype=float)
        pooled = np.column_stack([item_mean[b] for b in basis]) @ w / w.sum()
        rand = [
            spearmanr(
                np.column_stack([random_mean[k][i] for k in range(len(basis))]) @ w / w.sum(), t
            ).statistic
            for i in range(20)
        ]
        # the predicted suite rank among the imputed reference without the held-out models
        imp = impute_table(observed.drop(index=held), seed=s)
        ref_scores = imp.suite_scores(cats)
        ref_draws = imp.suite_draws(cats, n_boot, seed=s)
        for j, m in enumerate(held):
            rk = _rank(float(p_suite[j]), d_suite[:, j], ref_scores.to_numpy(), ref_draws)
            true_rank = 1 + int((ref_scores > t[j]).sum())
            rows.append(
                {
                    **{f"error:{b}": float(pred[b][j] - observed.loc[m, b]) for b in basis},
                    **{f"items:{b}": counts[b] for b in basis},
                    "split": s,
                    "model": m,
                    "error": float(p_suite[j] - t[j]),
                    "rank_error": float(rk["value"] - true_rank),
                    "rank_cover95": rk["lo"] <= true_rank <= rk["hi"],
                    "out_of": rk["out_of"],
                    "rho": float(spearmanr(p_suite, t).statistic),
                    "rho_items": float(spearmanr(pooled, t).statistic),
                    "rho_random": float(np.mean(rand)),
                    "items": int(w.sum()),
                }
            )
    df = pd.DataFrame(rows)
    df["complete"] = len(complete)
    df["share"] = df["items"] / sum(panels[b].matrix(b).shape[1] for b in basis)
    df["basis"] = len(basis)
    return df


def render_held_out(df: pd.DataFrame) -> str:
    by = df.groupby("split").first()
    lines = [
        f"{df.split.nunique()} splits × {len(df) // df.split.nunique()} held-out models (of the "
        f"{df.complete.iloc[0]} with all {df.basis.iloc[0]} basis benchmarks); "
        f"{df['items'].iloc[0]} suite items ({100 * df.share.iloc[0]:.1f} % of those benchmarks' "
        "items).",
        "",
        "| ρ predicted suite score | ρ suite items' mean · random items | suite-score MAE | bias "
        "| rank: mean abs error | rank: 95 % covers | out of |",
        "|---|---|---|---|---|---|---|",
        f"| {by.rho.mean():.3f} | {by.rho_items.mean():.3f} · {by.rho_random.mean():.3f} | "
        f"{df.error.abs().mean():.4f} | {df.error.mean():+.4f} | "
        f"{df.rank_error.abs().mean():.1f} | {100 * df.rank_cover95.mean():.0f} % | "
        f"{int(df.out_of.iloc[0])} |",
        "",
        "| benchmark | suite items | full-score MAE of the held-out models |",
        "|---|---|---|",
    ]
    for c in df.columns:
        if c.startswith("error:"):
            b = c.split(":", 1)[1]
            lines.append(f"| {b} | {df[f'items:{b}'].iloc[0]} | {df[c].abs().mean():.3f} |")
    return "\n".join(lines) + "\n"


def render(which: pd.DataFrame, hidden: pd.DataFrame, held: pd.DataFrame) -> str:
    return (
        "#### Which benchmarks impute\n\n"
        + render_which(which)
        + "\n#### Hidden scores of complete models\n\n"
        + render_hidden(hidden)
        + "\n#### Held-out models placed on the suite\n\n"
        + render_held_out(held)
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--splits", type=int, default=3)
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--out", default=str(RESULTS / "suite_rank_imputation.md"))
    ap.add_argument(
        "--floor",
        type=int,
        help="only the held-out table, the suites rebuilt with this per-benchmark floor "
        "(0: 5 %% of each benchmark's items), written beside --out as _floor<N>",
    )
    args = ap.parse_args()
    _, panels, observed, categories = flagship()
    which = which_impute(observed)
    basis = tuple(which.benchmark[which.in_rank])
    cats = restrict(categories, basis)
    if args.floor is not None:
        held = held_out(panels, observed, cats, basis, args.splits, args.n_boot, args.floor)
        out = Path(args.out)
        out = out.with_name(f"{out.stem}_floor{args.floor}")
        held.to_csv(out.with_suffix(".csv"), index=False, float_format="%.6f")
        out.with_suffix(".md").write_text(render_held_out(held), encoding="utf-8")
        print(render_held_out(held))
        return
    hidden = hidden_scores(observed, cats, basis, args.repeats)
    print(render_which(which), render_hidden(hidden), flush=True)
    held = held_out(panels, observed, cats, basis, args.splits, args.n_boot)
    out = Path(args.out)
    for name, df in (("which", which), ("hidden", hidden), ("held_out", held)):
        df.to_csv(out.with_name(f"{out.stem}_{name}.csv"), index=False, float_format="%.6f")
    text = render(which, hidden, held)
    out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
