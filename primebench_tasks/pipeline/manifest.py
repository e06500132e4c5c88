"""Suite manifests (DESIGN.md, schema ``primebench.suite/1``): the one output of every builder.

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
    content_hash,
    read_json_document,
)
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import ConfigError, InputError

SCHEMA = "primebench.suite/1"
AGGREGATES = ("mean_of_category_means", "item_mean")


def clean_for_json(obj: Any) -> Any:
    """numpy scalars → Python, non-finite floats → None, floats rounded to 6 places."""
    if isinstance(obj, dict):
        return {str(k): clean_for_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean_for_json(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        x = float(obj)
        return None if not np.isfinite(x) else round(x, 6)
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


def build_manifest(
    name: str,
    panel: Panel,
    selected: dict[str, dict[str, np.ndarray]],
    params: dict[str, Any],
    stages: list[dict[str, Any]],
    fidelity: dict[str, Any],
    aggregate: str = "mean_of_category_means",
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Assemble a manifest from selected item positions (category → benchmark → positions);
    ``extra`` fields (e.g. ``placement_calibration``) are part of the hashed body."""
    if aggregate not in AGGREGATES:
        raise ConfigError(f"aggregate must be one of {AGGREGATES}")
    bench = panel.benchmarks.set_index("benchmark")
    cats: dict[str, Any] = {}
    for cat, by_b in selected.items():
        entry = {}
        for b, pos in by_b.items():
            ids = panel.item_ids(b)[np.sort(np.asarray(pos, dtype=np.int64))]
            row = bench.loc[b]
            entry[b] = {
                "item_ids": [str(i) for i in ids],
                "lmms_eval_task": row["lmms_eval_task"],
                "vlmeval_dataset": row["vlmeval_dataset"],
                "metric": row["metric"],
                "score_range": [float(row["score_min"]), float(row["score_max"])],
            }
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
    body["version"] = content_hash(canonical_json(body))
    return body


def write_manifest(manifest: dict[str, Any], path: str | Path) -> Path:
    """Write atomically as canonical JSON."""
    return atomic_write_text(path, canonical_json(manifest))


def read_manifest(path: str | Path) -> dict[str, Any]:
    """Read and check a manifest (schema, version hash, structure)."""
    p = Path(path)
    m = read_json_document(p, "manifest", SCHEMA)
    body = {k: v for k, v in m.items() if k != "version"}
    if m.get("version") != content_hash(canonical_json(body)):
        raise InputError(
            "version does not match the manifest's content (edited by hand?)",
            file=str(p),
            field="version",
        )
    for cat, c in m["categories"].items():
        for b, e in c["benchmarks"].items():
            if not isinstance(e.get("item_ids"), list):
                raise InputError(
                    "item_ids must be a list", file=str(p), row=f"{cat}/{b}", field="item_ids"
                )
    return m


def manifest_items(manifest: Mapping[str, Any]) -> dict[str, dict[str, list[str]]]:
    """category → benchmark → item ids."""
    return {
        c: {b: list(e["item_ids"]) for b, e in v["benchmarks"].items()}
        for c, v in manifest["categories"].items()
    }
