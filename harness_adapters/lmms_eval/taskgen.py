"""Generate lmms-eval task configs from a suite manifest (``primebench tasks lmms-eval``).

Per benchmark a task ``primebench_<benchmark>``; per category a group ``primebench_<category>``
(the pooled item mean: ``weight_by_size: true``); and the suite group named after the manifest
(mean of category means: ``weight_by_size: false``), matching the manifest's ``aggregate``.

Benchmarks whose items (text, options, answer, image) are in the Panel — e.g. the embedded
MATH-Vision testmini — become local tasks: a JSONL data file next to the YAML, a MATH-Vision-style
prompt and an exact-answer scorer. A benchmark that would need an upstream lmms-eval task is refused
unless its row key is known (none is yet: upstream datasets' row order is not tied to the panel's
item ids), so nothing runs on the wrong items.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from harness_adapters.suite_docs import GENERATION, PROMPT_KWARGS, benchmark_rows
from primebench_tasks.data.io import atomic_write_text, canonical_json
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError
from primebench_tasks.pipeline.manifest import manifest_items

KNOWN_UPSTREAM_KEYS: dict[str, str] = {}
"""lmms-eval task → dataset field that holds the panel's item id (none verified yet)."""

ITEM_KEY = "id"
METRIC = "exact_match"


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _yaml_value(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)


def _local_rows(panel: Panel, benchmark: str, out: Path) -> list[dict[str, Any]]:
    """The benchmark's documents with image paths relative to ``out`` (portable with the
    checkout)."""
    try:
        rows = benchmark_rows(panel, benchmark)
    except InputError as exc:
        raise InputError(f"{exc}; no lmms-eval row key is known for its upstream task either: "
                         "it cannot be generated") from None
    for r in rows:
        if r["image"] is not None:
            r["image"] = os.path.relpath(r["image"], out.resolve())
    return rows


def generate_tasks(manifest: dict[str, Any], panel: Panel, out: str | Path) -> list[Path]:
    """Write the task YAMLs, data files, ``primebench_items.json`` and ``primebench_suite.py``
    for ``manifest`` into ``out``; returns the written paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    suite = slug(manifest["name"])
    if not suite.startswith(("primebench", "resampledbench")):
        suite = f"primebench_{suite}"  # lmms-eval's built-in tasks win over included ones
    items = manifest_items(manifest)
    written: list[Path] = []
    funcs = ["import json", "from pathlib import Path", "",
             "from harness_adapters.lmms_eval.task_functions import (  # noqa: F401",
             "    doc_to_text, item_aggregation, make_doc_to_visual, make_process_docs,",
             "    make_process_results)", "",
             "_HERE = Path(__file__).parent",
             "_ITEMS = json.loads((_HERE / 'primebench_items.json').read_text())",
             "doc_to_visual = make_doc_to_visual(_HERE)", ""]
    item_map: dict[str, list[str]] = {}
    cat_groups = []
    for cat, by_b in items.items():
        tasks = []
        for b, ids in by_b.items():
            if b not in panel.benchmark_names:
                raise ValueError(f"manifest benchmark {b!r} is not in panel {panel.name!r}")
            t = f"{suite}_{slug(b)}"
            rows = _local_rows(panel, b, out)
            data = out / f"{t}.jsonl"
            written.append(atomic_write_text(data, "".join(
                json.dumps(r, ensure_ascii=False) + "\n" for r in rows)))
            item_map[t] = list(ids)
            funcs += [f"process_docs_{slug(b)} = make_process_docs(_ITEMS[{t!r}], "
                      f"{ITEM_KEY!r}, {t!r})",
                      f"process_results_{slug(b)} = make_process_results({ITEM_KEY!r}, "
                      f"{METRIC!r})"]
            yaml = [
                f"task: {t}", "dataset_path: json", "dataset_kwargs:", "  data_files:",
                f"    test: {data.name}", "test_split: test", "output_type: generate_until",
                "doc_to_visual: !function primebench_suite.doc_to_visual",
                "doc_to_text: !function primebench_suite.doc_to_text", "doc_to_target: answer",
                f"process_docs: !function primebench_suite.process_docs_{slug(b)}",
                f"process_results: !function primebench_suite.process_results_{slug(b)}",
                "generation_kwargs:",
                *[f"  {k}: {_yaml_value(v)}" for k, v in GENERATION.items()],
                "metric_list:", f"  - metric: {METRIC}",
                "    aggregation: mean", "    higher_is_better: true",
                "  - metric: primebench_item",
                "    aggregation: !function primebench_suite.item_aggregation",
                "    higher_is_better: true", "lmms_eval_specific_kwargs:", "  default:",
                *[f"    {k}: {_yaml_value(v)}" for k, v in PROMPT_KWARGS.items()],
                "metadata:", "  version: 1.0", f"  primebench_suite: {manifest['version']}",
                f"  benchmark: {_yaml_value(b)}", f"  category: {_yaml_value(cat)}", ""]
            written.append(atomic_write_text(out / f"{t}.yaml", "\n".join(yaml)))
            tasks.append(t)
        g = f"{suite}_{slug(cat)}"
        written.append(atomic_write_text(out / f"{g}.yaml", "\n".join(
            [f"group: {g}", "task:", *[f"  - {t}" for t in tasks], "aggregate_metric_list:",
             f"  - metric: {METRIC}", "    aggregation: mean", "    weight_by_size: true",
             "metadata:", "  version: 1.0", ""])))
        cat_groups.append(g)
    weight = "false" if manifest.get("aggregate") == "mean_of_category_means" else "true"
    written.append(atomic_write_text(out / f"{suite}.yaml", "\n".join(
        [f"group: {suite}", "task:", *[f"  - {g}" for g in cat_groups],
         "aggregate_metric_list:", f"  - metric: {METRIC}", "    aggregation: mean",
         f"    weight_by_size: {weight}", "metadata:", "  version: 1.0",
         f"  primebench_suite: {manifest['version']}", ""])))
    written.append(atomic_write_text(out / "primebench_items.json", canonical_json(item_map)))
    written.append(atomic_write_text(out / "primebench_suite.py",
                                     f'"""Generated by primebench from suite {manifest["version"]}'
                                     '; do not edit."""\n' + "\n".join(funcs) + "\n"))
    written.append(atomic_write_text(out / "primebench_manifest.json", canonical_json(manifest)))
    return written
