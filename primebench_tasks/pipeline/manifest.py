"""Suite manifests (docs/architecture.md, "Suite manifest"; schema ``primebench.suite/1``): the one output of every builder.

Written atomically; byte-identical for identical inputs and seed (canonical JSON, no time
stamps); ``version`` is the content hash of everything else in the manifest.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from primebench_tasks.data.io import (
    atomic_write_text,
    canonical_json,
)
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import ConfigError
from primebench_tasks.select.stratified import Draw
from primebench_tasks.suite.manifest import (
    AGGREGATES,
    DESIGN_SCHEME,
    SCHEMA,
    SuiteManifest,
    as_suite,
    versioned,
)

__all__ = [
    "build_manifest",
    "manifest_items",
    "read_manifest",
    "write_manifest",
]


def clean_for_json(obj: Any) -> Any:
    """numpy scalars → Python, non-finite floats → None, floats rounded to 6 places (−0.0 as
    0.0)."""
    if isinstance(obj, dict):
        return {str(k): clean_for_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean_for_json(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        x = float(obj)
        # + 0.0: a -0.0 (a residual of ±1e-17 rounded) is written as 0.0 — its sign is the
        # BLAS kernel's rounding, and the version hash must not depend on the CPU
        return None if not np.isfinite(x) else round(x, 6) + 0.0
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


def design_entry(ids: Any, draw: Draw) -> dict[str, Any]:
    """The manifest fields of one benchmark's probability design: ``inclusion`` (item id → π_i,
    stored like every manifest float to 6 places: a relative error of 1/π below 1e-5) and
    ``design`` (``strata``: each stratum's size ``N`` and drawn count ``n``, numbered in the
    order of ``draw``'s labels; ``stratum``: item id → its stratum's number), from which every
    π_i = n_h / N_h follows (``suite.manifest`` checks it when the manifest is read)."""
    ids = [str(i) for i in ids]
    labels = np.asarray(draw.stratum)
    kept, first, drawn = np.unique(labels, return_index=True, return_counts=True)
    numbers = {int(h): j for j, h in enumerate(kept)}
    strata = [
        {"N": int(draw.stratum_size[f]), "n": int(n)} for f, n in zip(first, drawn, strict=True)
    ]
    return {
        "inclusion": {i: float(p) for i, p in zip(ids, draw.inclusion, strict=True)},
        "design": {
            "scheme": DESIGN_SCHEME,
            "strata": strata,
            "stratum": {i: numbers[int(h)] for i, h in zip(ids, labels, strict=True)},
        },
    }


def build_manifest(
    name: str,
    panel: Panel,
    selected: dict[str, dict[str, np.ndarray]],
    params: dict[str, Any],
    stages: list[dict[str, Any]],
    fidelity: dict[str, Any],
    aggregate: str = "mean_of_category_means",
    extra: dict[str, Any] | None = None,
    draws: Mapping[str, Mapping[str, Draw]] | None = None,
) -> SuiteManifest:
    """Assemble a suite from selected item positions (category → benchmark → positions);
    ``extra`` fields (e.g. ``placement_calibration``) are part of the hashed body;
    ``draws`` (category → benchmark → its :class:`Draw`, aligned with ``selected``): the design
    of a drawn suite, stored per benchmark (``inclusion`` and ``design``: :func:`design_entry`)."""
    if aggregate not in AGGREGATES:
        raise ConfigError(f"aggregate must be one of {AGGREGATES}")
    bench = panel.benchmarks.set_index("benchmark")
    cats: dict[str, Any] = {}
    for cat, by_b in selected.items():
        entry = {}
        for b, pos in by_b.items():
            pos = np.asarray(pos, dtype=np.int64)
            order = np.argsort(pos, kind="stable")
            ids = panel.item_ids(b)[pos[order]]
            row = bench.loc[b]
            entry[b] = {
                "item_ids": [str(i) for i in ids],
                "lmms_eval_task": row["lmms_eval_task"],
                "vlmeval_dataset": row["vlmeval_dataset"],
                "metric": row["metric"],
                "score_range": [float(row["score_min"]), float(row["score_max"])],
            }
            draw = (draws or {}).get(cat, {}).get(b)
            if draw is not None:
                entry[b].update(design_entry(ids, draw.take(order)))
        cats[cat] = {
            "benchmarks": entry,
            "n_items": sum(len(v["item_ids"]) for v in entry.values()),
        }
    body = clean_for_json(
        {
            "schema": SCHEMA,
            "name": name,
            "built_from": {
                "panel": panel.name,
                "panel_hash": panel.content_hash,
                "models": panel.model_names,
            },
            "params": params,
            "stages": stages,
            "categories": cats,
            "aggregate": aggregate,
            "fidelity": fidelity,
            "n_items": sum(c["n_items"] for c in cats.values()),
            **(extra or {}),
        }
    )
    return SuiteManifest.from_document(versioned(body), f"suite {name!r}")


def write_manifest(manifest: Mapping[str, Any], path: str | Path) -> Path:
    """Write atomically as canonical JSON (a document or a :class:`SuiteManifest`)."""
    return atomic_write_text(path, canonical_json(dict(manifest)))


def read_manifest(path: str | Path) -> SuiteManifest:
    """Read and check a manifest (:meth:`SuiteManifest.read`: schema, version hash, every
    entry)."""
    return SuiteManifest.read(path)


def manifest_items(manifest: Mapping[str, Any]) -> dict[str, dict[str, list[str]]]:
    """category → benchmark → item ids (:meth:`SuiteManifest.item_ids`)."""
    return as_suite(manifest).item_ids()
