"""A suite built from several item-level panels that come from different sources (different model
sets, partial or no overlap): the released ``primebench`` suite (MathVista and MMMU from M3IRT,
BLINK from its authors' predictions, MATH-Vision from its authors' outputs).

What each stage does here (a departure from the single-panel pipeline, recorded in the manifest):

- Stage 0 and Stage 2 run per benchmark on *that benchmark's own models* (its source panel), with
  the single-panel defaults (τ, floor, retention, selector).
- Stage 1 (one representative per category) needs the benchmarks of a category scored by the
  same models. When fewer than ``min_shared_models`` models of the sources have every benchmark
  of a category, no representative can be chosen from evidence, so every benchmark is kept and the
  manifest says so (``stage1.kept_all_benchmarks``); with enough shared models the category's
  representative would be chosen as in the single-panel pipeline — not the case for any released
  source today, so multi-source categories keep every benchmark.
- Stage 3 keeps every category when the suite has no more than ``k`` categories (true for the
  released suite: 3 categories, k = 5); otherwise it is refused, since the category scores of
  different model sets cannot be compared.

Each benchmark entry of the manifest records its source panel (name, content hash) and the models
it was built from; ``built_from`` lists the sources. ``annotations`` (e.g. the verified upstream
lmms-eval task and row key, which only the harness adapter knows) are merged into the benchmark
entries before the manifest's version hash is taken.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from primebench_tasks.data.io import content_hash
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError
from primebench_tasks.pipeline.manifest import clean_for_json, design_entry
from primebench_tasks.pipeline.params import K
from primebench_tasks.pipeline.primebench import PipelineParams, run_pipeline
from primebench_tasks.suite.manifest import SCHEMA, SuiteManifest, versioned

MIN_SHARED_MODELS = 10
"""Fewer models than this with every benchmark of a category: Stage 1 keeps every benchmark."""


@dataclass(frozen=True)
class Source:
    """One benchmark of the suite and the panel its responses come from."""

    panel: Panel
    benchmark: str


def _shared_models(sources: list[Source]) -> int:
    sets = []
    for s in sources:
        X = s.panel.matrix(s.benchmark)
        names = np.asarray(s.panel.model_names, dtype=object)
        sets.append(set(names[np.isfinite(X).any(axis=1)]))
    return len(set.intersection(*sets)) if sets else 0


def build_multi_source_suite(
    name: str,
    sources: list[Source],
    params: PipelineParams | None = None,
    annotations: Mapping[str, Mapping[str, Any]] | None = None,
    min_shared_models: int = MIN_SHARED_MODELS,
    calibrate: Callable[[Panel, PipelineParams], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The suite manifest (schema ``primebench.suite/1``) of ``sources``.

    ``params.until`` must be ``stage2`` or ``stage3`` (Stage 3 keeps every category, see the
    module docstring). Benchmark names must be unique across sources. ``calibrate(panel,
    params)`` returns a benchmark's ``placement_calibration`` entry (the placement layer's
    :func:`~primebench_tasks.place.calibration.calibration_entry`, passed in by the caller
    so that the pipeline never imports the evaluation layer); None leaves it out."""
    from primebench_tasks.data.importers import panel_with_benchmarks

    p = params or PipelineParams()
    names = [s.benchmark for s in sources]
    dup = sorted({b for b in names if names.count(b) > 1})
    if dup:
        raise InputError(f"benchmarks given by more than one source: {dup}")
    for s in sources:
        if s.benchmark not in s.panel.benchmark_names:
            raise InputError(
                f"benchmark {s.benchmark!r} is not in panel {s.panel.name!r}", field="benchmark"
            )
    by_cat: dict[str, list[Source]] = {}
    for s in sources:
        by_cat.setdefault(s.panel.category_of(s.benchmark), []).append(s)
    if p.until not in ("stage2", "stage3"):
        raise InputError("a multi-source suite is built with until=stage2 or stage3")
    if len(by_cat) > min(p.k, K) and p.until == "stage3":
        raise InputError(
            f"{len(by_cat)} categories from different model sets: Stage 3 cannot "
            "compare their scores; build with until=stage2 or fewer categories"
        )
    ann = annotations or {}
    cats: dict[str, Any] = {}
    stage_rows: list[dict[str, Any]] = []
    fidelity: dict[str, Any] = {}
    stage1: dict[str, Any] = {}
    for cat, srcs in by_cat.items():
        shared = _shared_models(srcs)
        stage1[cat] = {
            "benchmarks": [s.benchmark for s in srcs],
            "shared_models": shared,
            "kept_all_benchmarks": True,
            "why": (
                "one benchmark"
                if len(srcs) == 1
                else f"{shared} models have every benchmark of the category "
                f"(< {min_shared_models}): no representative from evidence"
            ),
        }
        if len(srcs) > 1 and shared >= min_shared_models:
            raise InputError(
                f"category {cat!r}: {shared} models share its benchmarks; build "
                "it from one panel with the single-panel pipeline (Stage 1)"
            )
        entry: dict[str, Any] = {}
        for s in srcs:
            sub = panel_with_benchmarks(s.panel, [s.benchmark])
            stage2_params = PipelineParams(**{**p.__dict__, "until": "stage2"})
            res = run_pipeline(sub, stage2_params)
            pos = res.selected[cat][s.benchmark]
            ids = sub.item_ids(s.benchmark)[np.sort(np.asarray(pos, dtype=np.int64))]
            row = s.panel.benchmarks.set_index("benchmark").loc[s.benchmark]
            models = [
                m
                for m, ok in zip(
                    sub.model_names, np.isfinite(sub.matrix(s.benchmark)).any(axis=1), strict=True
                )
                if ok
            ]
            entry[s.benchmark] = {
                **(
                    {"placement_calibration": calibrate(sub, stage2_params)}
                    if calibrate is not None
                    else {}
                ),
                "item_ids": [str(i) for i in ids],
                "lmms_eval_task": row["lmms_eval_task"],
                "vlmeval_dataset": row["vlmeval_dataset"],
                "metric": row["metric"],
                "score_range": [float(row["score_min"]), float(row["score_max"])],
                **(
                    design_entry(ids, res.draws[cat][s.benchmark])
                    if s.benchmark in res.draws.get(cat, {})
                    else {}
                ),
                "source": {
                    "panel": s.panel.name,
                    "panel_hash": s.panel.content_hash,
                    "models": models,
                },
                **dict(ann.get(s.benchmark, {})),
            }
            assert res.stage_table is not None
            for r in res.stage_table.to_dict("records"):
                stage_rows.append({"benchmark": s.benchmark, **r})
            fidelity[s.benchmark] = {"rho": res.fidelity, "n_models": len(models)}
        cats[cat] = {
            "benchmarks": entry,
            "n_items": sum(len(v["item_ids"]) for v in entry.values()),
        }
    panels = {s.panel.name: s.panel for s in sources}
    body = clean_for_json(
        {
            "schema": SCHEMA,
            "name": name,
            "built_from": {
                "panel": "+".join(panels),
                "panel_hash": content_hash("".join(pn.content_hash for pn in panels.values())),
                "sources": [
                    {
                        "panel": pn.name,
                        "panel_hash": pn.content_hash,
                        "benchmarks": [s.benchmark for s in sources if s.panel is pn],
                    }
                    for pn in panels.values()
                ],
                "models": sorted(
                    {
                        m
                        for c in cats.values()
                        for e in c["benchmarks"].values()
                        for m in e["source"]["models"]
                    }
                ),
            },
            "params": {
                **p.as_dict(next(iter(panels.values()))),
                "until": p.until,
                "multi_source": True,
                "min_shared_models": min_shared_models,
            },
            "stage1": stage1,
            "stage3": {"kept_all_categories": True, "categories": len(cats)},
            "stages": stage_rows,
            "categories": cats,
            "aggregate": "mean_of_category_means",
            "fidelity": {
                "per_benchmark": fidelity,
                "protocol": "same-models, per benchmark: "
                "selected-item mean vs the Stage 0-cleaned benchmark mean on the "
                "benchmark's own models",
            },
            "n_items": sum(c["n_items"] for c in cats.values()),
        }
    )
    return versioned(body)


def benchmark_sources(manifest: SuiteManifest) -> dict[str, str | None]:
    """benchmark → the name of the panel it was built from (None: the manifest's one panel)."""
    return {e.name: None if e.source is None else e.source.panel for e in manifest.benchmarks}


def source_panels(manifest: SuiteManifest) -> dict[str, Panel]:
    """benchmark → its source panel, loaded from the embedded data and checked against the
    manifest's content hash (a multi-source manifest names embedded panels)."""
    from primebench_tasks.data.defaults import default_names

    out: dict[str, Panel] = {}
    loaded: dict[str, Panel] = {}
    for e in manifest.benchmarks:
        src = e.source
        if src is None:
            raise InputError(
                f"benchmark {e.name!r} has no source panel in the manifest; give "
                "--panel or --default",
                field="source",
            )
        if src.panel not in loaded:
            if src.panel not in default_names():
                raise InputError(
                    f"source panel {src.panel!r} of {e.name!r} is not embedded; give --panel",
                    field="source.panel",
                )
            loaded[src.panel] = Panel.load_default(src.panel)
        if loaded[src.panel].content_hash != src.panel_hash:
            raise InputError(
                f"embedded panel {src.panel!r} (hash {loaded[src.panel].content_hash}) "
                f"is not the one {e.name!r} was built from ({src.panel_hash})",
                field="source.panel_hash",
            )
        out[e.name] = loaded[src.panel]
    return out
