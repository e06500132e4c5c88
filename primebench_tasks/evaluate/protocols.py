"""Fidelity protocols (PRIMEBench App. D.3, H.2, I.4): Stage-2 held-out (random splits),
chronological, end-to-end refit, same-model; and variant ranking with a bootstrap ceiling.

Stages 0 and 1 use the whole panel and run once, so the category pools are fixed before any
split; every selector and estimator reads only the build models' scores. For each category the
Spearman ρ over the held-out models between their full-pool mean and the estimate from the
selected items is computed; a category whose ρ is undefined in a split (every held-out model gets
the same estimate) is left out of that split's mean and counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import ConfigError
from primebench_tasks.evaluate.defaults import RETENTIONS
from primebench_tasks.evaluate.splits import (
    chronological_split,
    frontier_split,
    gap_split,
    random_splits,
)
from primebench_tasks.metrics import kendall, nanmean_rows, spearman, top_k_overlap
from primebench_tasks.pipeline.params import K
from primebench_tasks.pipeline.stage0_clean import stage0_clean
from primebench_tasks.pipeline.stage1_representatives import stage1_representatives
from primebench_tasks.pipeline.stage2_prune import PoolData, pool_data, resolve_cell_space
from primebench_tasks.place.defaults import FRONTIER_SHARE, N_BOOT_VARIANTS
from primebench_tasks.place.estimators import make_estimator
from primebench_tasks.place.variants import CEILING_BAR, bootstrap_suite_scores, ceiling_of
from primebench_tasks.progress import progress_bar
from primebench_tasks.select.default import DEFAULT_SELECTOR, FLOOR
from primebench_tasks.select.irt import paper_thresholds
from primebench_tasks.select.registry import SELECTORS, WEIGHTED, SelectorContext
from primebench_tasks.select.vaw import category_budget

ESTIMATORS = ("mean", "greg", "pirt", "gpirt", "aipw")
MIN_HELDOUT = 8


@dataclass
class Pool:
    data: PoolData
    metric_kind: dict[str, str]
    metric: dict[str, str]


def prepare_pools(panel: Panel, cell_space: str = "auto") -> list[Pool]:
    """Stage 0 and Stage 1 on the whole panel, then each pool laid out for the selectors."""
    s0 = stage0_clean(panel)
    s1 = stage1_representatives(panel, s0.keep)
    space = resolve_cell_space(panel, cell_space)
    b = panel.benchmarks.set_index("benchmark")
    return [
        Pool(
            pool_data(panel, p, space),
            {x: str(b.loc[x, "metric_kind"]) for x in p.items},
            {x: str(b.loc[x, "metric"]) for x in p.items},
        )
        for p in s1.pools
    ]


def _thresholds(pool: Pool, X_build: np.ndarray) -> np.ndarray:
    th = np.empty(X_build.shape[1])
    for b in pool.metric_kind:
        m = pool.data.benchmark == b
        th[m] = paper_thresholds(X_build[:, m], pool.metric_kind[b], pool.metric[b])
    return th


def budget_label(retention: float | None, items: int | None) -> str:
    """The budget column's label: ``5%`` (a retention) or ``25 items`` (an item count)."""
    return f"{100 * retention:g}%" if retention is not None else f"{items} per category"


def score_split(
    pools: Sequence[Pool],
    build: np.ndarray,
    held: np.ndarray,
    selectors: Sequence[str],
    retentions: Sequence[float],
    seed: int,
    estimators: Sequence[str] = ESTIMATORS,
    floor: int = FLOOR,
    budgets: Sequence[int] = (),
) -> list[dict]:
    """One split: every selector × estimator × budget × category → a row with ρ, τ, top-5
    overlap, MAE and ``k`` (items kept) on the held-out models. Budgets: each retention r
    (K = max(⌊r·n⌋, min(n, floor)) per category pool) and each item count in ``budgets`` (K =
    min(count, n), no floor)."""
    rows: list[dict] = []
    arms = [(float(r), None) for r in retentions] + [(None, int(b)) for b in budgets]
    for pool in pools:
        X = pool.data.X
        Xb, Xh = X[build], X[held]
        full_h = nanmean_rows(Xh)
        ctx = SelectorContext(thresholds=_thresholds(pool, Xb))
        # budgets that give the same K (retentions below the floor) select and score the same
        # items: computed once per (selector, K) and reported under each budget
        done: dict[tuple[str, int], list[dict]] = {}
        for r, items in arms:
            k = category_budget(X.shape[1], r, floor) if r is not None else min(items, X.shape[1])
            label = {"retention": np.nan if r is None else r, "budget": budget_label(r, items)}
            for name in selectors:
                if (name, k) not in done:
                    done[(name, k)] = _score_selection(
                        name, k, seed, ctx, pool, Xb, Xh, full_h, estimators
                    )
                rows.extend({**row, **label} for row in done[(name, k)])
    return rows


def _score_selection(
    name: str,
    k: int,
    seed: int,
    ctx: SelectorContext,
    pool: Pool,
    Xb: np.ndarray,
    Xh: np.ndarray,
    full_h: np.ndarray,
    estimators: Sequence[str],
) -> list[dict]:
    """One selector at budget k on one pool: a row per estimator (without the budget label)."""
    sel = SELECTORS[name](k, seed, ctx).fit(Xb, pool.data.features)
    out = []
    for est_name in list(estimators) + (["weighted"] if name in WEIGHTED else []):
        est = make_estimator(est_name, ctx.thresholds).fit(Xb, sel.indices_, sel.weights_)
        pred = est.predict(Xh[:, sel.indices_])
        out.append(
            {
                "category": pool.data.category,
                "selector": name,
                "estimator": est_name,
                "retention": None,  # set per budget by the caller (keeps the column order)
                "budget": None,
                "k": int(len(sel.indices_)),
                # the arm a cross-validated selector kept (the selector itself otherwise)
                "chosen": str(getattr(sel, "chosen_", name)),
                "rho": spearman(pred, full_h),
                "kendall": kendall(pred, full_h),
                "top5": top_k_overlap(pred, full_h, 5),
                "mae": float(np.nanmean(np.abs(pred - full_h))),
            }
        )
    return out


def _split_means(cat_rows: pd.DataFrame) -> pd.DataFrame:
    keys = ["split", "selector", "estimator", "budget"]
    g = cat_rows.groupby(keys, sort=False)
    out = g.agg(
        retention=("retention", "first"),
        rho=("rho", "mean"),
        kendall=("kendall", "mean"),
        top5=("top5", "mean"),
        mae=("mae", "mean"),
        k=("k", "sum"),
    ).reset_index()
    out["n_undefined"] = g["rho"].apply(lambda s: int(s.isna().sum())).to_numpy()
    if "chosen" in cat_rows.columns:
        out["chosen"] = (
            g[["category", "chosen"]]
            .apply(
                lambda d: "; ".join(f"{c}: {a}" for c, a in zip(d.category, d.chosen, strict=True))
            )
            .to_numpy()
        )
    return out


def run_protocol(
    panel: Panel,
    protocol: str,
    selectors: Sequence[str],
    retentions: Sequence[float] = RETENTIONS,
    n_splits: int = 20,
    seed: int = 0,
    estimators: Sequence[str] = ESTIMATORS,
    progress: Callable[[str], None] | None = None,
    floor: int = FLOOR,
    budgets: Sequence[int] = (),
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``heldout`` | ``chrono`` (release dates: the panel's, else the shipped ones) |
    ``frontier`` (the strongest ``FRONTIER_SHARE`` of the models by full-suite score held out,
    at least ``MIN_HELDOUT``) | ``gap`` (built below a score cut, placed 0.05-0.10 above it:
    ``evaluate.splits.gap_split``) | ``same``: returns (per-category rows, per-split rows), one
    budget per retention (with ``floor``) and per item count in ``budgets``."""
    say = progress or (lambda _m: None)
    M = len(panel.model_names)
    if protocol == "heldout":
        splits = random_splits(M, n_splits, seed)
    elif protocol == "chrono":
        # the panel's own release dates, else the shipped ones (a records panel's models are
        # dated by the OpenVLM leaderboard)
        from primebench_tasks.data.model_dates import release_dates

        dates = release_dates(panel)
        table = panel.model_table.assign(release_date=[dates.get(m) for m in panel.model_names])
        splits = [chronological_split(table)]
    elif protocol in ("frontier", "gap"):
        # models stronger than the build ones held out: the strongest (fidelity among models at
        # the top, top-decile rho), or those 0.05-0.10 above a score cut
        from primebench_tasks.place.benchmark import full_suite_scores

        strength = full_suite_scores(panel).reindex(panel.model_names).to_numpy(float)
        if protocol == "frontier":
            splits = [frontier_split(strength, FRONTIER_SHARE, minimum=MIN_HELDOUT)]
        else:
            splits = [gap_split(strength)[:2]]
    elif protocol == "same":
        allm = np.arange(M)
        splits = [(allm, allm)]
    else:
        raise ConfigError(
            f"unknown protocol {protocol!r} (heldout, chrono, frontier, gap, same, e2e)"
        )
    if protocol != "same" and min(len(h) for _, h in splits) < MIN_HELDOUT:
        have = min(len(h) for _, h in splits)
        raise ConfigError(
            f"{protocol}: {have} held-out models, fewer than the {MIN_HELDOUT} a split needs: "
            f"the panel holds {M} models"
            + (
                f"; half are held out, so it needs at least {2 * MIN_HELDOUT}"
                if protocol in ("heldout", "chrono")
                else ""
            )
            + " (add models: primebench panel import, ingest)"
        )
    pools = prepare_pools(panel)
    largest = max(p.data.X.shape[1] for p in pools)
    too_big = [b for b in budgets if b > largest]
    if too_big:  # a budget no pool can fill would be reported as a pool's whole size
        raise ConfigError(
            f"--budgets {','.join(map(str, too_big))}: more items than any category pool "
            f"holds (the largest: {largest}); give at most {largest}"
        )
    rows = []
    with progress_bar(len(splits), f"validate ({protocol})", unit="split") as bar:
        for i, (build, held) in enumerate(splits):
            for row in score_split(
                pools, build, held, selectors, retentions, seed + i, estimators, floor, budgets
            ):
                row["split"] = i
                rows.append(row)
            bar.update(1)
    say(f"{protocol}: {len(splits)} split(s) done")
    cats = pd.DataFrame(rows)
    return cats, _split_means(cats)


def run_end_to_end(
    panel: Panel,
    selectors: Sequence[str],
    retentions: Sequence[float],
    n_splits: int = 20,
    seed: int = 0,
    k: int = K,
    progress: Callable[[str], None] | None = None,
    floor: int = FLOOR,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """App. D.3: Stage 0 once on all models; per split Stages 1-3 refit on the build models with
    each selector; ρ over the held-out models between the ranking by the mean of category means
    over all Stage 0-cleaned benchmarks and the pruned k-category leaderboard. Also reported:
    ``no_stage3`` (all pruned categories) and the ``stage3_only`` arm (no item pruning)."""
    from primebench_tasks.pipeline.primebench import (
        PipelineParams,
        cleaned_reference,
        run_pipeline,
        selection_scores,
    )

    say = progress or (lambda _m: None)
    s0 = stage0_clean(panel)
    names = np.array(panel.model_names)
    rows = []
    bar = progress_bar(n_splits, "validate (e2e)", unit="split")
    for i, (build, held) in enumerate(random_splits(len(names), n_splits, seed)):
        pb = panel.subset_models(names[build])
        ph = panel.subset_models(names[held])
        ref = cleaned_reference(ph, s0.keep)
        arms: list[tuple[str, float, object]] = [("stage3_only", 1.0, None)]
        arms += [(s, r, s) for s in selectors for r in retentions]
        for name, r, sel in arms:
            factory = (
                None
                if sel is None
                else (lambda kk, s=sel, ii=i: SELECTORS[s](kk, seed + ii, SelectorContext()))
            )
            params = PipelineParams(
                retention=r, k=k, seed=seed + i, floor=0 if sel is None else floor
            )
            res = run_pipeline(pb, params, selector=factory, stage0=s0)
            assert res.category_scores is not None
            score = selection_scores(ph, res.selected)
            all_cats = selection_scores(ph, res.stage2.selected) if res.stage2 else score
            rows.append(
                {
                    "split": i,
                    "selector": name,
                    "estimator": "mean",
                    "retention": r,
                    "budget": budget_label(r, None),
                    "k": int(sum(len(v) for d in res.selected.values() for v in d.values())),
                    "rho": spearman(score.to_numpy(), ref.reindex(score.index).to_numpy()),
                    "rho_no_stage3": spearman(
                        all_cats.to_numpy(), ref.reindex(all_cats.index).to_numpy()
                    ),
                    "categories": ", ".join(res.selected),
                }
            )
        bar.update(1)

    bar.close()
    say(f"e2e: {n_splits} split(s) done")
    df = pd.DataFrame(rows)
    return df, df


def summarise(
    split_rows: pd.DataFrame, default: tuple[str, str] = (DEFAULT_SELECTOR, "mean")
) -> pd.DataFrame:
    """One row per selector × estimator × budget: the retention (NaN for an item-count budget),
    ``n_items`` (items kept, mean over splits), mean, sd, se, min, max of the split ρ,
    n_splits, wins (splits where the pair has the highest ρ among all pairs at that budget),
    mean Kendall τ, top-5 overlap, MAE, undefined categories, and ``is_default``."""
    df = split_rows.copy()
    if "budget" not in df.columns:  # end-to-end rows: retentions only
        df["budget"] = [budget_label(r, None) for r in df["retention"]]
    keys = ["selector", "estimator", "budget"]
    best = df.groupby(["split", "budget"])["rho"].transform("max")
    df["win"] = np.isclose(df["rho"], best)
    agg = {
        "retention": ("retention", "first"),
        "n_items": ("k", "mean"),
        "mean_rho": ("rho", "mean"),
        "sd_rho": ("rho", "std"),
        "min_rho": ("rho", "min"),
        "max_rho": ("rho", "max"),
        "n_splits": ("rho", "count"),
        "wins": ("win", "sum"),
    }
    for c, out in (
        ("kendall", "mean_kendall"),
        ("top5", "mean_top5"),
        ("mae", "mean_mae"),
        ("n_undefined", "undefined_categories"),
        ("rho_no_stage3", "mean_rho_no_stage3"),
    ):
        if c in df.columns:
            agg[out] = (c, "mean") if c != "n_undefined" else (c, "sum")
    s = df.groupby(keys, sort=False).agg(**agg).reset_index()
    s["sd_rho"] = s["sd_rho"].fillna(0.0)
    s["se_rho"] = s["sd_rho"] / np.sqrt(s["n_splits"].clip(lower=1))
    s["is_default"] = (s["selector"] == default[0]) & (s["estimator"] == default[1])
    return s


def default_meets_bar(
    summary: pd.DataFrame,
    default: tuple[str, str],
    retentions: Sequence[float] = (0.02, 0.05, 0.10),
) -> pd.DataFrame:
    """Per retention: the default pair's mean ρ, the best other pair's mean ρ and its standard
    error, and whether default ≥ best − SE (the issue's bar)."""
    if "budget" not in summary.columns:
        summary = summary.assign(budget=[budget_label(r, None) for r in summary["retention"]])
    out = []
    labels = [budget_label(r, None) for r in retentions] + [
        b for b in dict.fromkeys(summary["budget"]) if b.endswith(" per category")
    ]
    for label in labels:
        s = summary[summary["budget"] == label]
        if s.empty:
            continue
        r = s["retention"].iloc[0]
        d = s[(s["selector"] == default[0]) & (s["estimator"] == default[1])]
        others = s[~((s["selector"] == default[0]) & (s["estimator"] == default[1]))]
        if d.empty:
            continue
        dv = float(d["mean_rho"].iloc[0])
        # an arm that the default kept selects the same items: the same estimator then gives
        # exactly the default's mean rho; comparing with it would pass by construction
        same = (others["estimator"] == default[1]) & ((others["mean_rho"] - dv).abs() < 1e-12)
        others = others[~same]
        if others.empty:
            continue
        best = others.loc[others["mean_rho"].idxmax()]
        out.append(
            {
                "budget": label,
                "retention": r,
                "n_items": float(d["n_items"].iloc[0]) if "n_items" in d else None,
                "default_rho": dv,
                "best_other": f"{best.selector}/{best.estimator}",
                "best_rho": float(best.mean_rho),
                "best_se": float(best.se_rho),
                "meets_bar": bool(dv >= best.mean_rho - best.se_rho - 1e-12),
            }
        )
    return pd.DataFrame(out)


def bootstrap_ceiling(X_full: np.ndarray, n_boot: int = N_BOOT_VARIANTS, seed: int = 0) -> float:
    """App. I.4: how stable the full-test ranking of a variant set is. Resample the items with
    replacement ``n_boot`` times and return the mean Spearman ρ between the bootstrap ranking and
    the full ranking of the variants (rows of X_full, (V, N)). A variant set supports a conclusion
    only if this is ≥ 0.90."""
    one = np.zeros(X_full.shape[1], dtype=object)
    return ceiling_of(bootstrap_suite_scores(X_full, one, n_boot, seed), nanmean_rows(X_full))


def variant_ranking(
    X_full: np.ndarray, indices: np.ndarray, n_boot: int = N_BOOT_VARIANTS, seed: int = 0
) -> dict[str, float | bool]:
    """Fidelity of ranking close variants on the selected items vs the full set (§7(5), I.4),
    with the bootstrap ceiling that decides whether the set supports a conclusion."""
    full = nanmean_rows(X_full)
    sel = nanmean_rows(X_full[:, indices])
    ceiling = bootstrap_ceiling(X_full, n_boot, seed)
    return {
        "rho": spearman(sel, full),
        "ceiling": ceiling,
        "supports_conclusion": ceiling >= CEILING_BAR,
    }
