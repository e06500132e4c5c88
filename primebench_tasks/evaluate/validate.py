"""``primebench validate``: run a fidelity protocol for many selectors and write the tables,
the markdown report and the plot."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from primebench_tasks.data.io import atomic_write_text
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import ConfigError
from primebench_tasks.evaluate.protocols import (
    ESTIMATORS,
    RETENTIONS,
    default_meets_bar,
    run_end_to_end,
    run_protocol,
    summarise,
)
from primebench_tasks.report.plots import budget_plot, retention_plot
from primebench_tasks.report.tables import markdown_table
from primebench_tasks.select.default import DEFAULT_SELECTOR, FLOOR
from primebench_tasks.select.registry import resolve


def _binary(panel: Panel) -> bool:
    """Whether every score of the panel is 0 or 1."""
    import numpy as np

    for b in panel.benchmark_names:
        X = panel.matrix(b)
        v = X[np.isfinite(X)]
        if not np.isin(v, (0.0, 1.0)).all():
            return False
    return True


def default_pair(panel: Panel, estimators: Sequence[str] = ESTIMATORS) -> tuple[str, str]:
    """The pair ``build`` ships: its Stage 2 selector with the placement's default estimator
    (``greg``), or the first estimator run where that one was not asked for."""
    from primebench_tasks.place.defaults import DEFAULT_ESTIMATOR

    return (
        DEFAULT_SELECTOR,
        DEFAULT_ESTIMATOR if DEFAULT_ESTIMATOR in estimators else estimators[0],
    )


def rho_estimator(summary: pd.DataFrame) -> str:
    """The estimator whose ρ :func:`rho_table` shows: the library's default full-score estimator
    where it was run (what a placement uses), else subset-mean scoring, else the first estimator
    of the summary."""
    from primebench_tasks.place.defaults import DEFAULT_ESTIMATOR

    names = list(dict.fromkeys(summary["estimator"]))
    for name in (DEFAULT_ESTIMATOR, "mean"):
        if name in names:
            return name
    return str(names[0])


VERDICT_SE = 2.0
"""A held-out ρ difference beyond this many standard errors is a difference; within, none."""


def verdict_lines(summary: pd.DataFrame, n_splits: int) -> list[str]:
    """Per budget, whether the shipped selector beats random items on held-out models, by
    :func:`rho_estimator`'s scoring: the difference of mean ρ and its standard error over the
    ``n_splits`` splits (√(sd₁² + sd₂²)/√splits); empty where either was not run."""
    from primebench_tasks.select.default import DEFAULT_SELECTOR

    rows = summary[summary["estimator"] == rho_estimator(summary)]
    mine, rand = (
        rows[rows["selector"] == s].set_index("budget") for s in (DEFAULT_SELECTOR, "random")
    )
    if mine.empty or rand.empty:
        return []
    out = []
    for budget in [b for b in dict.fromkeys(rows["budget"]) if b in mine.index and b in rand.index]:
        a, r = mine.loc[budget], rand.loc[budget]
        diff = float(a["mean_rho"] - r["mean_rho"])
        sds = [float(x) for x in (a.get("sd_rho", np.nan), r.get("sd_rho", np.nan))]
        se = float(np.sqrt(np.nansum(np.square(sds)) / max(n_splits, 1)))
        if n_splits > 1 and np.isfinite(se) and se > 0 and abs(diff) <= VERDICT_SE * se:
            word = "is no better than random items"
        elif diff > 0:
            word = "beats random items"
        else:
            word = "is worse than random items"
        out.append(
            f"budget {budget}: the shipped selection ({DEFAULT_SELECTOR}) {word} on held-out "
            f"models (ρ {a['mean_rho']:.3f} vs {r['mean_rho']:.3f}, difference {diff:+.3f}, "
            f"standard error {se:.3f} over {n_splits} splits)"
        )
    return out


def validate_text(summary: pd.DataFrame, n_splits: int) -> str:
    """What ``validate`` prints: the held-out ρ table whole (:func:`rho_table`, headed by its
    scoring) and a verdict line per budget (:func:`verdict_lines`)."""
    table = rho_table(summary).round(3).to_string()
    lines = [f"held-out ρ, {rho_estimator(summary)} scoring:", table]
    return "\n".join(lines + [f"verdict: {v}" for v in verdict_lines(summary, n_splits)])


def rho_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Mean held-out Spearman ρ with :func:`rho_estimator`'s scoring (subset mean where run):
    selectors (index) × budgets (columns ``"<budget> (<mean items> items)"``, in the summary's
    order)."""
    mean_rows = summary[summary["estimator"] == rho_estimator(summary)]
    order = list(dict.fromkeys(mean_rows["budget"]))
    items = mean_rows.groupby("budget", sort=False)["n_items"].mean()
    wide = mean_rows.pivot_table(index="selector", columns="budget", values="mean_rho").reindex(
        columns=order
    )
    wide.columns = [f"{b} ({items[b]:.0f} items)" for b in order]
    return wide


def validate(
    panel: Panel,
    out: Path,
    protocol: str = "heldout",
    selectors: str = "all",
    retentions: Sequence[float] = RETENTIONS,
    n_splits: int = 20,
    seed: int = 0,
    estimators: Sequence[str] = ESTIMATORS,
    progress: Callable[[str], None] | None = None,
    floor: int = FLOOR,
    budgets: Sequence[int] = (),
) -> pd.DataFrame:
    """Run ``protocol`` for the selectors at every retention (with ``floor`` items at least per
    category pool) and every item-count budget; write splits.csv, summary.csv (with
    ``n_items``), table.md and rho_vs_retention.png into ``out``."""
    names, skipped = resolve(selectors, bool(panel.embedding_spaces), binary=_binary(panel))
    if protocol == "e2e":
        if budgets:
            raise ConfigError(
                "--budgets: the end-to-end protocol (App. D.3) prunes by retention with the "
                "floor; give --retentions (and --floor) instead"
            )
        cats, splits = run_end_to_end(
            panel, names, retentions, n_splits, seed, progress=progress, floor=floor
        )
    else:
        cats, splits = run_protocol(
            panel, protocol, names, retentions, n_splits, seed, estimators, progress, floor, budgets
        )
    default = default_pair(panel, estimators)
    summary = summarise(splits, default)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "splits.csv", splits.to_csv(index=False))
    atomic_write_text(out / "summary.csv", summary.to_csv(index=False))
    if "category" in cats.columns:
        by_cat = (
            cats.groupby(["category", "selector", "estimator", "budget"], sort=False)
            .agg(
                n_items=("k", "mean"),
                mean_rho=("rho", "mean"),
                sd_rho=("rho", "std"),
                n=("rho", "count"),
                mean_mae=("mae", "mean"),
            )
            .reset_index()
        )
        atomic_write_text(out / "summary_by_category.csv", by_cat.to_csv(index=False))
    bar = default_meets_bar(summary, default)
    wide = rho_table(summary).reset_index()
    lines = [
        f"# Fidelity: {protocol} protocol on `{panel.name}`",
        "",
        f"{len(panel.model_names)} models, {n_splits if protocol in ('heldout', 'e2e') else 1}"
        f" split(s), seed {seed}. Default pair: `{default[0]}` / `{default[1]}`.",
        f"Skipped (need embeddings): {', '.join(skipped) or 'none'}.",
        "",
        "## Mean Spearman ρ on held-out models, subset-mean scoring (Tables 10-11 layout)",
        "",
        markdown_table(_default_first(wide, default[0])),
        "## Every selector × estimator × retention",
        "",
        markdown_table(summary.round(4)),
        "## The default against the best other pair",
        "",
        markdown_table(bar) if len(bar) else "(not applicable)\n",
    ]
    atomic_write_text(out / "table.md", "\n".join(lines))
    by_ret = summary[(summary["estimator"] == "mean") & summary["retention"].notna()]
    if len(by_ret):
        retention_plot(
            by_ret, out / "rho_vs_retention.png", f"{panel.name}: {protocol}", default=default[0]
        )
    by_items = summary[summary["retention"].isna()]
    if by_items["budget"].nunique() > 1:
        for value, name, label in (
            ("mean_mae", "mae_vs_items.png", "mean absolute error of the full score"),
            ("mean_rho", "rho_vs_items.png", "mean Spearman ρ on held-out models (±1 SE)"),
        ):
            if value in by_items.columns and by_items[value].notna().any():
                budget_plot(
                    by_items, out / name, value, label, f"{panel.name}: {protocol}", default
                )
    return summary


def _default_first(wide: pd.DataFrame, default: str) -> pd.DataFrame:
    """The default selector's row first, then the others by their last column (best first)."""
    rest = wide[wide["selector"] != default].sort_values(wide.columns[-1], ascending=False)
    return pd.concat([wide[wide["selector"] == default], rest], ignore_index=True)
