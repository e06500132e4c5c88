"""``primebench validate``: run a fidelity protocol for many selectors and write the tables,
the markdown report and the plot."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from primebench_tasks.data.io import atomic_write_text
from primebench_tasks.data.panel import Panel
from primebench_tasks.evaluate.protocols import (
    ESTIMATORS,
    RETENTIONS,
    default_meets_bar,
    run_end_to_end,
    run_protocol,
    summarise,
)
from primebench_tasks.report.plots import retention_plot
from primebench_tasks.report.tables import markdown_table
from primebench_tasks.select.registry import resolve


def default_pair(panel: Panel) -> tuple[str, str]:
    """The pair the pipeline uses by default: its Stage 2 selector with subset-mean scoring (the
    suite is scored by its item means)."""
    from primebench_tasks.pipeline.stage2_prune import DEFAULT_SELECTOR

    return (DEFAULT_SELECTOR, "mean")


def validate(panel: Panel, out: Path, protocol: str = "heldout", selectors: str = "all",
             retentions: Sequence[float] = RETENTIONS, n_splits: int = 20, seed: int = 0,
             estimators: Sequence[str] = ESTIMATORS,
             progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    names, skipped = resolve(selectors, bool(panel.embedding_spaces))
    if protocol == "e2e":
        cats, splits = run_end_to_end(panel, names, retentions, n_splits, seed,
                                      progress=progress)
    else:
        cats, splits = run_protocol(panel, protocol, names, retentions, n_splits, seed,
                                    estimators, progress)
    default = default_pair(panel)
    summary = summarise(splits, default)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "splits.csv", splits.to_csv(index=False))
    atomic_write_text(out / "summary.csv", summary.to_csv(index=False))
    if "category" in cats.columns:
        by_cat = cats.groupby(["category", "selector", "estimator", "retention"], sort=False).agg(
            mean_rho=("rho", "mean"), sd_rho=("rho", "std"), n=("rho", "count"),
            mean_mae=("mae", "mean")).reset_index()
        atomic_write_text(out / "summary_by_category.csv", by_cat.to_csv(index=False))
    bar = default_meets_bar(summary, default)
    wide = summary[summary["estimator"] == "mean"].pivot_table(
        index="selector", columns="retention", values="mean_rho").reset_index()
    wide.columns = ["selector"] + [f"{100 * c:g}%" for c in wide.columns[1:]]
    lines = [f"# Fidelity: {protocol} protocol on `{panel.name}`", "",
             f"{len(panel.model_names)} models, {n_splits if protocol in ('heldout', 'e2e') else 1}"
             f" split(s), seed {seed}. Default pair: `{default[0]}` / `{default[1]}`.",
             f"Skipped (need embeddings): {', '.join(skipped) or 'none'}.", "",
             "## Mean Spearman ρ on held-out models, subset-mean scoring (Tables 10-11 layout)",
             "", markdown_table(wide.sort_values(wide.columns[-1], ascending=False)),
             "## Every selector × estimator × retention", "",
             markdown_table(summary.round(4)), "## The default against the best other pair", "",
             markdown_table(bar) if len(bar) else "(not applicable)\n"]
    atomic_write_text(out / "table.md", "\n".join(lines))
    retention_plot(summary[summary["estimator"] == "mean"], out / "rho_vs_retention.png",
                   f"{panel.name}: {protocol}")
    return summary
