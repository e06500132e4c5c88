"""The human report of a PRIMEBench build: markdown tables and PNG plots next to the manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from primebench_tasks.data.io import atomic_write_text
from primebench_tasks.data.panel import Panel
from primebench_tasks.pipeline.manifest import write_manifest
from primebench_tasks.pipeline.primebench import PipelineResult
from primebench_tasks.report.plots import ranking_plot, spectrum_plot, sweep_plot
from primebench_tasks.report.tables import markdown_table
from primebench_tasks.suite.manifest import SuiteManifest


def _headroom_md(h: dict[str, Any]) -> list[str]:
    """The suite's headroom at the top of the panel (``pipeline.headroom``) as markdown."""
    if not h:
        return []
    rows = pd.DataFrame(
        [{"benchmark": b, **v} for b, v in h["benchmarks"].items()],
        columns=["benchmark", "suite_mean", "full_mean", "easier_by", "solved_by_all"],
    )
    return [
        "## Headroom at the top of the panel",
        "",
        f"The {len(h['top_models'])} best models: their mean on the suite's items, on all items, "
        "how much easier the suite is for them (suite − full: + easier, − harder; goal ≤ 0.10), "
        "and the share of suite items all "
        f"of them solve. Top-decile ρ (suite vs full score, the best {h['n_top_decile']} "
        f"models): {h['top_decile_rho']:.3f}.",
        "",
        markdown_table(rows),
    ]


PAPER = (
    'the PRIMEBench paper (Ok, Kang and Lee, "Hierarchical Compression of Vision-Language '
    'Model Benchmarks")'
)
"""The paper whose tables and figures the build report's sections are laid out like."""

VAW_ONLY = ("alpha", "cells", "cell_space")
"""Parameters only the ``vaw`` selector reads (Stage 2's variance-aware weighting)."""


def _used_params(manifest: SuiteManifest, res: PipelineResult) -> list[tuple[str, Any]]:
    """The build's parameters as they acted: VAW's knobs only where the selector is ``vaw``, and
    Stage 3's ``k`` as the number of categories it kept (with the number asked where the panel
    had fewer)."""
    params = dict(manifest["params"])
    if params.get("selector") != "vaw":
        for k in VAW_ONLY:
            params.pop(k, None)
    if res.stage3 is not None and "k" in params:
        kept = len(res.stage3.categories)
        if kept != params["k"]:
            params["k"] = f"{kept} (of {params['k']} asked; the panel has fewer categories)"
    return sorted(params.items())


def write_primebench_report(
    out: Path, panel: Panel, res: PipelineResult, manifest: SuiteManifest
) -> list[Path]:
    """Write manifest.json, report.md, the stage CSVs and the plots into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    written = [write_manifest(manifest, out / "manifest.json")]
    md = [
        f"# PRIMEBench build on panel `{panel.name}`",
        "",
        f"Panel hash `{panel.content_hash}`, {len(panel.model_names)} models, "
        f"{len(panel.benchmark_names)} benchmarks, {len(panel.items)} items. "
        f"Manifest version `{manifest['version']}`.",
        "",
        "Parameters: " + ", ".join(f"{k}={v}" for k, v in _used_params(manifest, res)),
        "",
        f'Tables and figures follow {PAPER}; where a section says "Table N layout" it is '
        "that paper's table.",
        "",
        "## Stages (the PRIMEBench paper's Table 2 layout)",
        "",
        markdown_table(res.stage_table),
        f"End-to-end fidelity of the suite: ρ = {res.fidelity:.3f} (suite score = mean of "
        "category means on the kept items, against the mean of category means over all "
        "Stage 0-cleaned benchmarks, same models).",
        "",
        *_headroom_md(manifest.get("headroom") or {}),
        "## Stage 0: cleaning (Table 5 layout)",
        "",
        markdown_table(res.stage0.table),
    ]
    tables: dict[str, pd.DataFrame] = {"stage0": res.stage0.table}
    if res.stage1 is not None:
        md += [
            "## Stage 1: representatives and supplements (Tables 6 and 8 layout)",
            "",
            markdown_table(res.stage1.table()),
            "### Candidates (Table 7 layout)",
            "",
            markdown_table(res.stage1.candidates_table()),
        ]
        tables["stage1"] = res.stage1.table()
    if res.stage2 is not None:
        md += ["## Stage 2: item pruning", "", markdown_table(res.stage2.table)]
        tables["stage2"] = res.stage2.table
    if res.sweep is not None:
        md += [
            "## Stage 3: k-sweep (the PRIMEBench paper's Table 15 layout)",
            "",
            markdown_table(res.sweep),
        ]
        tables["k_sweep"] = res.sweep
        chosen = len(res.stage3.categories) if res.stage3 is not None else None
        written.append(sweep_plot(res.sweep, out / "k_sweep.png", chosen))
        md += ["![k sweep](k_sweep.png)", ""]
    if res.singular_values is not None and res.energy is not None:
        # the k Stage 3 kept (fewer than the parameter where the panel has fewer categories)
        k = len(res.stage3.categories) if res.stage3 is not None else res.params.k
        k = min(k, len(res.energy))
        top = res.energy[k - 1]
        md += [
            "## Spectrum of the category score matrix (the PRIMEBench paper's Fig. 2)",
            "",
            f"Top-{k} cumulative energy: {100 * top:.1f}% (paper: 97.6% on 18 categories).",
            "",
            "![spectrum](spectrum.png)",
            "",
        ]
        written.append(spectrum_plot(res.singular_values, res.energy, out / "spectrum.png", k))
    if res.suite_scores is not None and res.reference is not None:
        written.append(
            ranking_plot(
                res.reference,
                res.suite_scores,
                out / "ranking.png",
                f"suite vs reference, ρ = {res.fidelity:.3f}",
            )
        )
        md += ["![ranking](ranking.png)", ""]
    for name, df in tables.items():
        written.append(atomic_write_text(out / f"{name}.csv", df.to_csv(index=False)))
    written.append(atomic_write_text(out / "report.md", "\n".join(md)))
    return written
