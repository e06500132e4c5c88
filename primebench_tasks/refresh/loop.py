"""``primebench refresh``: append records, check the frozen suite, refit, publish a version."""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from primebench_tasks.data.io import atomic_write_text, canonical_json
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import ConfigError
from primebench_tasks.metrics import spearman
from primebench_tasks.pipeline.manifest import manifest_items, read_manifest, write_manifest
from primebench_tasks.pipeline.primebench import PipelineParams, run_pipeline, selection_scores
from primebench_tasks.pipeline.stage0_clean import Stage0Result, stage0_clean
from primebench_tasks.pipeline.stage2_prune import pooled_category_scores
from primebench_tasks.refresh.policy import RefreshPolicy
from primebench_tasks.refresh.records import append_records, partial_models, read_records
from primebench_tasks.refresh.shelf_life import FrozenCheck, check_frozen, positions
from primebench_tasks.refresh.store import (
    SuiteLock,
    clean_temporaries,
    latest_manifest,
    publish,
    versions,
)
from primebench_tasks.report.tables import markdown_table
from primebench_tasks.suite.manifest import SuiteManifest


@dataclass
class RefreshResult:
    frozen: FrozenCheck
    refit_rho: float
    refit: bool
    reasons: list[str]
    published: Path | None
    report: str


def pipeline_params(manifest: SuiteManifest) -> PipelineParams:
    """The PipelineParams a PRIMEBench manifest was built with."""
    p = manifest.get("params", {})
    if "retention" not in p:
        raise ConfigError("refresh needs a PRIMEBench suite manifest (params.retention missing)")
    names = {f.name for f in dataclasses.fields(PipelineParams)}
    kw = {k: v for k, v in p.items() if k in names}
    if kw.get("cell_space") == "none":
        kw["cell_space"] = "auto"
    return PipelineParams(**kw)


def save_panel(root: Path, panel: Panel) -> Path:
    """Store ``panel`` under ``root/panels/<hash>`` (written aside, then renamed into place)."""
    target = root / "panels" / panel.content_hash
    if (target / "panel.json").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=target.parent))
    try:
        panel.save(tmp)
        if target.exists():  # an earlier, interrupted attempt
            shutil.rmtree(target)
        os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def category_fidelity(
    panel: Panel, s0: Stage0Result, selected: dict[str, dict[str, np.ndarray]]
) -> dict[str, float]:
    """Per category: ρ between the selected items' pooled score and the pooled score over all of
    the category's cleaned items."""
    full = pooled_category_scores(
        panel, {c: {b: np.flatnonzero(s0.keep[b]) for b in panel.categories()[c]} for c in selected}
    )
    sel = pooled_category_scores(panel, selected)
    return {c: spearman(sel[c].to_numpy(), full[c].to_numpy()) for c in selected}


def manifest_diff(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    fid_old: dict[str, float],
    fid_new: dict[str, float],
) -> str:
    """Markdown: categories and items added and removed, per-category fidelity old vs new."""
    a, b = manifest_items(old), manifest_items(new)
    lines = [
        f"# Suite {old['version']} → {new['version']}",
        "",
        f"categories added: {', '.join(sorted(set(b) - set(a))) or 'none'}; removed: "
        f"{', '.join(sorted(set(a) - set(b))) or 'none'}",
        "",
    ]
    rows = []
    for cat in sorted(set(a) | set(b)):
        ia = {(bb, i) for bb, ids in a.get(cat, {}).items() for i in ids}
        ib = {(bb, i) for bb, ids in b.get(cat, {}).items() for i in ids}
        rows.append(
            {
                "category": cat,
                "items_old": len(ia),
                "items_new": len(ib),
                "added": len(ib - ia),
                "removed": len(ia - ib),
                "rho_old": fid_old.get(cat, float("nan")),
                "rho_new": fid_new.get(cat, float("nan")),
            }
        )
    lines.append(markdown_table(pd.DataFrame(rows)))
    return "\n".join(lines)


def exploration_sample(
    panel: Panel, s0: Stage0Result, selected: dict[str, dict[str, np.ndarray]], n: int, seed: int
) -> dict[str, list[str]]:
    """Per suite benchmark, ``n`` random cleaned items outside the suite (seeded): the runner adds
    them to each new model's run so the pool keeps learning."""
    rng = np.random.default_rng(seed)
    out = {}
    for by_b in selected.values():
        for b, pos in by_b.items():
            rest = np.setdiff1d(np.flatnonzero(s0.keep[b]), pos)
            pick = np.sort(rng.choice(rest, size=min(n, len(rest)), replace=False))
            out[b] = [str(x) for x in panel.item_ids(b)[pick]]
    return out


def refresh(
    panel: Panel,
    record_files: list[str | Path],
    suite: str | Path | None,
    out: Path,
    policy: RefreshPolicy | None = None,
    explore: int = 0,
    n_random: int = 200,
    progress: Callable[[str], None] | None = None,
) -> RefreshResult:
    """One refresh of the suite directory ``out`` (see the module docstrings)."""
    say = progress or (lambda _m: None)
    pol = policy or RefreshPolicy()
    with SuiteLock(out):
        clean_temporaries(out)
        first = None
        if not versions(out):
            if suite is None:
                raise ConfigError(f"{out} has no published suite; pass --suite MANIFEST")
            first = read_manifest(suite)
        lines = []
        known = {read_manifest(v / "manifest.json")["version"] for v in versions(out)}
        known |= {first["version"]} if first is not None else set()
        # every record is read and checked before anything is written: bad records leave the
        # suite directory as it was
        for f in record_files:
            panel, rep = append_records(panel, read_records(f, known), str(f))
            lines += rep.lines()
        if first is not None:
            publish(out, lambda d: write_manifest(first, d / "manifest.json"))
            say(f"published the given suite as {versions(out)[-1].name}")
        current = latest_manifest(out)
        assert current is not None
        say(f"panel now {panel}")
        save_panel(out, panel)
        partial = set(partial_models(panel))
        full_models = [m for m in panel.model_names if m not in partial]
        pfull = panel.subset_models(full_models)
        s0 = stage0_clean(pfull)
        frozen_sel = positions(pfull, manifest_items(current))
        check = check_frozen(pfull, s0, frozen_sel, n_random=n_random)
        params = pipeline_params(current)
        res = run_pipeline(pfull, params, stage0=s0)
        published_rho = current.get("fidelity", {}).get("rho")
        need, reasons = pol.needs_refit(published_rho, check.rho, check.percentile)
        better = res.fidelity - check.rho >= pol.min_gain
        new_manifest = res.manifest(pfull, current["name"])
        refit = need and better and new_manifest["version"] != current["version"]
        if need and not better:
            reasons.append(
                f"refit ρ {res.fidelity:.3f} does not beat the frozen suite by "
                f"{pol.min_gain}: no new version"
            )
        rank_rows = _rank_prediction(panel, frozen_sel, full_models, sorted(partial))
        report = [
            f"# Refresh of suite {current['name']} {current['version']}",
            "",
            f"panel {panel.name} (hash {panel.content_hash}): {len(panel.model_names)} "
            f"models, {len(full_models)} fully evaluated",
            "",
            *lines,
            "",
            "| check | value |",
            "|---|---|",
            f"| frozen suite ρ (published {published_rho}) | {check.rho:.4f} |",
            f"| random suites of the same size, mean ρ | {check.random_mean:.4f} |",
            f"| frozen percentile among {n_random} random suites | {check.percentile:.1f} |",
            f"| best refitted suite ρ | {res.fidelity:.4f} |",
            f"| decision | {decision_text(refit, reasons)} |",
            "",
        ]
        if rank_rows is not None:
            report += [
                "## Predicted rank of partially evaluated models (suite score among the "
                "fully evaluated models)",
                "",
                markdown_table(rank_rows),
            ]
        published = None
        if refit:
            old_fid = category_fidelity(pfull, s0, frozen_sel)
            new_fid = category_fidelity(pfull, s0, res.selected)
            diff = manifest_diff(current, new_manifest, old_fid, new_fid)
            frontier = _frontier_note(pfull, s0)

            def fill(d: Path) -> None:
                write_manifest(new_manifest, d / "manifest.json")
                atomic_write_text(d / "diff.md", diff + "\n" + frontier)
                atomic_write_text(d / "report.md", "\n".join(report))

            published = publish(out, fill)
            report.append(f"published {published.name}")
        if explore:
            latest = latest_manifest(out)
            assert latest is not None
            sample = exploration_sample(
                pfull,
                s0,
                positions(pfull, manifest_items(latest)),
                explore,
                seed=int(latest["version"], 16) % 2**32,
            )
            atomic_write_text(
                out / "exploration.json",
                canonical_json({"suite_version": latest["version"], "items": sample}),
            )
        text = "\n".join(report) + "\n"
        atomic_write_text(out / "last_refresh.md", text)
        return RefreshResult(check, res.fidelity, refit, reasons, published, text)


def decision_text(refit: bool, reasons: list[str]) -> str:
    """The refresh's verdict first, then why: "refit: drift: …", "keep: no drift", or "keep
    despite drift: …" where the refit would not beat the frozen suite."""
    if refit:
        return "refit: " + "; ".join(reasons)
    if not reasons:
        return "keep: no drift"
    return "keep despite " + "; ".join(reasons)


def _rank_prediction(
    panel: Panel, selected: dict[str, dict[str, np.ndarray]], full: list[str], partial: list[str]
) -> pd.DataFrame | None:
    if not partial:
        return None
    scores = selection_scores(panel, selected)
    ref = np.sort(scores[full].to_numpy())[::-1]
    rows = []
    for m in partial:
        s = float(scores[m])
        rows.append(
            {
                "model": m,
                "suite_score": round(s, 4),
                "predicted_rank": int((ref > s).sum()) + 1,
                "of": len(full) + 1,
            }
        )
    return pd.DataFrame(rows)


def _frontier_note(panel: Panel, s0: Stage0Result) -> str:
    from primebench_tasks.pipeline.frontier import capability_frontier

    try:
        fr = capability_frontier(panel, s0.keep)
    except ValueError as exc:
        return f"\n## Capability Frontier\n\nnot refreshed: {exc}\n"
    return (
        f"\n## Capability Frontier (refreshed)\n\n{fr.n_candidates} candidates, "
        f"{fr.n_in_band} in band, {fr.budget} kept\n\n" + markdown_table(fr.axes)
    )


def history(root: Path) -> pd.DataFrame:
    """One row per published version: panel, parameters, fidelity, size."""
    rows = []
    for v in versions(root):
        m = read_manifest(v / "manifest.json")
        p = m.get("params", {})
        rows.append(
            {
                "version": v.name,
                "suite": m["version"],
                "panel": m["built_from"]["panel"],
                "panel_hash": m["built_from"]["panel_hash"],
                "models": len(m["built_from"]["models"]),
                "items": m["n_items"],
                "categories": len(m["categories"]),
                "selector": p.get("selector"),
                "retention": p.get("retention"),
                # the categories Stage 3 kept (the k asked may exceed what the panel has)
                "k": min(int(p["k"]), len(m["categories"])) if p.get("k") else None,
                "rho": m.get("fidelity", {}).get("rho"),
            }
        )
    return pd.DataFrame(rows)
