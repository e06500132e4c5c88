"""``primebench prism build``: the PRISM item set and its per-axis artifacts.

Items: R = 5 seeds × K = 100 per benchmark, the deduplicated union (§3), drawn from a suite
manifest's items (default) or from every item of the panel's benchmarks. Artifacts: one per
(item, axis) for if, sc, h, mq, c and vis, in ``OUT/artifacts`` (see
``primebench_tasks.prism.artifacts``); q needs none. ``OUT/prism.json`` (schema
``primebench.prism/1``) indexes the build: the items with their documents, the seeds, the
builders and generator, and per axis how many artifacts are built / rejected / unbuilt / failed.
A second build into the same directory reuses every built or rejected artifact (no judge call).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness_adapters.suites.documents import SuiteDoc, benchmark_rows, suite_docs
from primebench_tasks.data.io import atomic_write_text, canonical_json
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError
from primebench_tasks.prism.artifacts import ArtifactStore
from primebench_tasks.prism.builders import BUILDERS
from primebench_tasks.prism.judging import Judge
from primebench_tasks.prism.sampling import SEEDS, K, sample_items
from primebench_tasks.suite.manifest import SuiteManifest

PRISM_SCHEMA = "primebench.prism/1"
BUILT_AXES = ("if", "sc", "h", "mq", "c", "vis")


def pool_docs(
    panel: Panel, manifest: SuiteManifest | None, benchmarks: Sequence[str] | None = None
) -> list[SuiteDoc]:
    """The pool: the manifest's items, or every item of ``benchmarks`` (default: all of the
    panel's benchmarks) with its category."""
    if manifest is not None:
        return suite_docs(manifest, panel)
    names = list(benchmarks or panel.benchmark_names)
    cats = panel.benchmarks.set_index("benchmark")["category"]
    out = []
    for b in names:
        if b not in panel.benchmark_names:
            raise InputError(f"benchmark {b!r} is not in panel {panel.name!r}", field="benchmark")
        out += [SuiteDoc(r["id"], b, str(cats[b]), r) for r in benchmark_rows(panel, b)]
    return out


def build(
    panel: Panel,
    out: Path,
    judge: Judge | None,
    manifest: SuiteManifest | None = None,
    benchmarks: Sequence[str] | None = None,
    seeds: Sequence[int] = SEEDS,
    k: int = K,
    axes: Sequence[str] = BUILT_AXES,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    docs = pool_docs(panel, manifest, benchmarks)
    by_b: dict[str, list[str]] = {}
    for d in docs:
        by_b.setdefault(d.benchmark, []).append(d.item_id)
    chosen = sample_items(by_b, seeds, k)
    index = {(d.benchmark, d.item_id): d for d in docs}
    items = [index[(b, i)] for b in by_b for i in chosen[b]]
    store = ArtifactStore(out / "artifacts")
    status: dict[str, dict[str, int]] = {}
    for axis in axes:
        arts = store.build_axis(
            BUILDERS[axis], [(d.benchmark, d.item_id, d.doc) for d in items], judge, progress
        )
        status[axis] = dict(sorted(Counter(a["status"] for a in arts.values()).items()))
        if progress:
            progress(f"{axis}: {status[axis]}")
    doc = {
        "schema": PRISM_SCHEMA,
        "suite": None
        if manifest is None
        else {"name": manifest["name"], "version": manifest["version"]},
        "panel": {"name": panel.name, "hash": panel.content_hash},
        "seeds": list(seeds),
        "k": k,
        "generator": None if judge is None else judge.id,
        "builders": {a: BUILDERS[a].id for a in axes},
        "axes": status,
        "items": [
            {"benchmark": d.benchmark, "item_id": d.item_id, "category": d.category, "doc": d.doc}
            for d in items
        ],
    }
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "prism.json", canonical_json(doc))
    return doc


def read_build(root: str | Path) -> tuple[dict[str, Any], ArtifactStore]:
    p = Path(root) / "prism.json"
    if not p.exists():
        raise InputError("not a PRISM build (run `primebench prism build` first)", file=str(p))
    doc = json.loads(p.read_text("utf-8"))
    if doc.get("schema") != PRISM_SCHEMA:
        raise InputError(
            f"schema {doc.get('schema')!r}, expected {PRISM_SCHEMA}", file=str(p), field="schema"
        )
    return doc, ArtifactStore(Path(root) / "artifacts")
