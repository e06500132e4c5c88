"""Generate lmms-eval task configs from a suite manifest (``primebench tasks lmms-eval``).

Per benchmark a task ``primebench_<benchmark>``; per category a group ``primebench_<category>``
(the pooled item mean: ``weight_by_size: true``); and the suite group named after the manifest
(mean of category means: ``weight_by_size: false``), matching the manifest's ``aggregate``.

A benchmark whose upstream lmms-eval task has a known row key (``upstream_keys``: task → the
dataset field that holds the panel's item ids) becomes a task that ``include`` s the upstream
YAML (its dataset, prompt, filters and generation settings), applies the upstream
``process_docs`` and then keeps exactly the manifest's items, and wraps the upstream
``process_results`` to add the stable item id and the item's scaled score; the metric list is the
upstream one plus ``primebench_item``. Otherwise, benchmarks whose items (text, options, answer,
image) are in the Panel — e.g. the embedded MATH-Vision testmini — become local tasks: a JSONL
data file next to the YAML, a MATH-Vision-style prompt and an exact-answer scorer. Anything else is
refused: no row key is verified for the upstream datasets of the embedded panels (their item ids
are VLMEvalKit indexes; lmms-eval's datasets live on the HF hub, unreachable here to check), so
nothing runs on the wrong items. A user who has checked a key passes ``--upstream-key TASK=FIELD``.
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
_METRIC_FIELDS = ("metric", "aggregation", "higher_is_better")

ITEM_KEY = "id"
METRIC = "exact_match"
ITEM_METRIC = "primebench_item"
"""Every task reports it (the item mean on [0, 1]); the groups aggregate it, so a suite mixing
local and upstream tasks (whose own metrics differ) has one score."""


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _yaml_value(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)


def _local_rows(panel: Panel, benchmark: str, out: Path, upstream: str | None
                ) -> list[dict[str, Any]]:
    """The benchmark's documents with image paths relative to ``out`` (portable with the
    checkout)."""
    try:
        rows = benchmark_rows(panel, benchmark)
    except InputError as exc:
        task = f"upstream task {upstream!r}" if upstream else "no upstream lmms-eval task"
        raise InputError(f"{exc}; no lmms-eval row key is known for its upstream task either "
                         f"({task}; pass --upstream-key TASK=FIELD once you have checked which "
                         "dataset field holds the panel's item ids): it cannot be generated"
                         ) from None
    for r in rows:
        if r["image"] is not None:
            r["image"] = os.path.relpath(r["image"], out.resolve())
    return rows


def _upstream_task(manifest: dict[str, Any], b: str, t: str, ids: list[str], cat: str,
                   key: str, upstream_yaml: Path, funcs: list[str]) -> list[str]:
    """The YAML lines of a task that includes ``upstream_yaml``; appends its bindings."""
    from harness_adapters.lmms_eval.upstream import FunctionRef, load_task_config

    cfg = load_task_config(upstream_yaml)
    pr = cfg.get("process_results")
    metrics = cfg.get("metric_list") or []
    if not isinstance(pr, FunctionRef) or not metrics:
        raise InputError(f"upstream task {cfg.get('task')} ({upstream_yaml}) has no "
                         "process_results function or no metric_list to wrap")
    entry = next(v for c in manifest["categories"].values() for k, v in
                 c["benchmarks"].items() if k == b)
    lo, hi = entry.get("score_range") or [0.0, 1.0]
    sb = slug(b)
    pd_ref = cfg.get("process_docs")
    up_docs = (f"({pd_ref.ref!r}, {pd_ref.directory!r})" if isinstance(pd_ref, FunctionRef)
               else "None")
    funcs += [f"process_docs_{sb} = make_process_docs(_ITEMS[{t!r}], {key!r}, {t!r}, "
              f"{up_docs})",
              f"process_results_{sb} = make_upstream_process_results({key!r}, "
              f"{metrics[0]['metric']!r}, {float(lo)!r}, {float(hi)!r}, "
              f"({pr.ref!r}, {pr.directory!r}))"]
    lines = ["metric_list:"]
    for k, m in enumerate(metrics):
        lines.append(f"  - metric: {_yaml_value(m['metric'])}")
        agg = m.get("aggregation")
        if isinstance(agg, FunctionRef):
            funcs.append(f"aggregation_{sb}_{k} = load_function(({agg.ref!r}, "
                         f"{agg.directory!r}))")
            lines.append(f"    aggregation: !function primebench_suite.aggregation_{sb}_{k}")
        elif agg is not None:
            lines.append(f"    aggregation: {_yaml_value(agg)}")
        for f, v in m.items():
            if f not in ("metric", "aggregation") and not isinstance(v, FunctionRef):
                lines.append(f"    {f}: {_yaml_value(v)}")
    return [f"include: {upstream_yaml.resolve()}", f"task: {t}",
            f"process_docs: !function primebench_suite.process_docs_{sb}",
            f"process_results: !function primebench_suite.process_results_{sb}", *lines,
            f"  - metric: {ITEM_METRIC}",
            "    aggregation: !function primebench_suite.item_aggregation",
            "    higher_is_better: true", "metadata:", "  version: 1.0",
            f"  primebench_suite: {manifest['version']}", f"  benchmark: {_yaml_value(b)}",
            f"  category: {_yaml_value(cat)}", f"  upstream_task: {_yaml_value(cfg['task'])}",
            ""]


def generate_tasks(manifest: dict[str, Any], panel: Panel, out: str | Path,
                   upstream_keys: dict[str, str] | None = None,
                   upstream_paths: list[str | Path] | tuple[()] = ()) -> list[Path]:
    """Write the task YAMLs, data files, ``primebench_items.json`` and ``primebench_suite.py``
    for ``manifest`` into ``out``; returns the written paths. ``upstream_keys`` adds checked
    row keys (lmms-eval task → field holding the panel's item ids) to ``KNOWN_UPSTREAM_KEYS``;
    ``upstream_paths`` are searched for upstream task YAMLs before the installed lmms-eval."""
    from harness_adapters.lmms_eval.upstream import find_task_yaml

    keys = {**KNOWN_UPSTREAM_KEYS, **(upstream_keys or {})}
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
             "    make_process_results, make_upstream_process_results)",
             "from harness_adapters.lmms_eval.upstream import load_function  # noqa: F401", "",
             "_HERE = Path(__file__).parent",
             "_ITEMS = json.loads((_HERE / 'primebench_items.json').read_text())",
             "doc_to_visual = make_doc_to_visual(_HERE)", ""]
    item_map: dict[str, list[str]] = {}
    cat_groups = []
    bench = panel.benchmarks.set_index("benchmark")
    for cat, by_b in items.items():
        tasks = []
        for b, ids in by_b.items():
            if b not in panel.benchmark_names:
                raise ValueError(f"manifest benchmark {b!r} is not in panel {panel.name!r}")
            t = f"{suite}_{slug(b)}"
            item_map[t] = list(ids)
            upstream = bench.loc[b, "lmms_eval_task"]
            if upstream and upstream in keys:
                yaml = _upstream_task(manifest, b, t, list(ids), cat, keys[upstream],
                                      find_task_yaml(upstream, upstream_paths), funcs)
                written.append(atomic_write_text(out / f"{t}.yaml", "\n".join(yaml)))
                tasks.append(t)
                continue
            rows = _local_rows(panel, b, out, upstream)
            data = out / f"{t}.jsonl"
            written.append(atomic_write_text(data, "".join(
                json.dumps(r, ensure_ascii=False) + "\n" for r in rows)))
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
                f"  - metric: {ITEM_METRIC}",
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
             f"  - metric: {ITEM_METRIC}", "    aggregation: mean", "    weight_by_size: true",
             "metadata:", "  version: 1.0", ""])))
        cat_groups.append(g)
    weight = "false" if manifest.get("aggregate") == "mean_of_category_means" else "true"
    written.append(atomic_write_text(out / f"{suite}.yaml", "\n".join(
        [f"group: {suite}", "task:", *[f"  - {g}" for g in cat_groups],
         "aggregate_metric_list:", f"  - metric: {ITEM_METRIC}", "    aggregation: mean",
         f"    weight_by_size: {weight}", "metadata:", "  version: 1.0",
         f"  primebench_suite: {manifest['version']}", ""])))
    written.append(atomic_write_text(out / "primebench_items.json", canonical_json(item_map)))
    written.append(atomic_write_text(out / "primebench_suite.py",
                                     f'"""Generated by primebench from suite {manifest["version"]}'
                                     '; do not edit."""\n' + "\n".join(funcs) + "\n"))
    written.append(atomic_write_text(out / "primebench_manifest.json", canonical_json(manifest)))
    return written
