"""Generate lmms-eval task configs from a suite manifest (``primebench tasks lmms-eval``).

Names: per benchmark a task ``<suite>_<benchmark>`` (a group of that name when the upstream
benchmark is a group of subtasks, e.g. BLINK: one task ``<suite>_<benchmark>_<subtask>`` per
subtask); per category a group ``<suite>_<category>`` (the pooled item mean:
``weight_by_size: true``); the suite group ``<suite>`` (mean of category means:
``weight_by_size: false``, the manifest's ``aggregate``). Two names that slug alike are an error.

Upstream tasks. A benchmark whose catalogue task has a verified row key
(:data:`~harness_adapters.lmms_eval_upstream.tasks.VERIFIED_UPSTREAM`, or ``--upstream-key TASK=FIELD``
checked by the user) becomes a *flattened copy* of the upstream task's configuration (its dataset,
prompt functions, filters, generation settings and metrics; ``include:`` resolved at generation):
upstream functions are referenced by their module path in the installed lmms-eval, so nothing
machine-specific is written. Its ``process_docs`` applies the upstream one, then keeps exactly the
manifest's items; its ``process_results`` wraps the upstream one and adds ``primebench_item``:
the stable item id and the item's score from a registered item scorer
(:mod:`~harness_adapters.lmms_eval_upstream.item_scorers`). For a group of alternative variants
(MathVista testmini) the variant named in the mapping is used; for a group of subtasks (BLINK)
each item runs in its subtask. ``datasets`` points a benchmark's upstream task at a local copy
(``datasets.save_to_disk`` folder; one sub-folder per ``dataset_name`` for subtask groups) — for
offline mirrors and the tests' stand-ins.

Local tasks. Benchmarks whose items (text, options, answer, image) are in the panel — the
embedded MATH-Vision testmini — become local tasks: a JSONL data file next to the YAML, a
MATH-Vision-style prompt and an exact-answer scorer; images of the embedded data are written as
``embedded:<panel>/...`` and resolved in the installed package at run time.

Anything else is refused. The folder is written as a whole: into a temporary folder renamed at
the end, replacing an earlier generated folder (one with ``primebench_manifest.json``) and
refusing any other existing folder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness_adapters.lmms_eval_upstream.tasks import (
    VERIFIED_UPSTREAM,
    FunctionRef,
    UpstreamBenchmark,
    find_task_yaml,
    load_task_config,
    portable_ref,
    relative_ref,
    resolve_members,
)
from harness_adapters.suites.documents import benchmark_rows
from harness_adapters.suites.prompt import GENERATION, PROMPT_KWARGS
from primebench_tasks.data.defaults import embedded_root
from primebench_tasks.data.io import (
    atomic_write_text,
    canonical_json,
    content_hash,
    current_umask,
)
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError
from primebench_tasks.suite.manifest import DesignOnlyEntry, SuiteManifest

ITEM_KEY = "id"
METRIC = "exact_match"
ITEM_METRIC = "primebench_item"
"""Every task reports it (the item mean on [0, 1]); the groups aggregate it, so a suite mixing
local and upstream tasks (whose own metrics differ) has one score."""
MANIFEST_FILE = "primebench_manifest.json"
RELEASE_FILE = "primebench_release.json"
"""In a released suite's folder instead of the manifest copy: the suite's name, version and the
path (relative to the folder) of the one committed manifest, ``task_configs/suites/<name>.json``."""
_DROPPED = (
    "task",
    "tag",
    "group",
    "process_docs",
    "process_results",
    "metric_list",
    "metadata",
    "include",
    "task_alias",
    "group_alias",
)
_LOCAL_BUILDERS = ("csv", "json", "parquet", "text", "pandas", "arrow")


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def suite_task_name(manifest: SuiteManifest) -> str:
    """The suite group's name: the manifest's name, slugged, prefixed ``primebench_`` unless it
    starts with ``primebench``/``resampledbench`` (lmms-eval's built-in tasks win over included
    ones of the same name)."""
    suite = slug(manifest["name"])
    return suite if suite.startswith(("primebench", "resampledbench")) else f"primebench_{suite}"


class _Fn(str):
    """A ``!function`` reference in the YAML written."""


def _yaml_dump(obj: Any) -> str:
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(_Fn, lambda d, v: d.represent_scalar("!function", str(v)))
    return str(yaml.dump(obj, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=100))


class _Names:
    """Generated task/group names and Python bindings, refusing collisions."""

    def __init__(self) -> None:
        self.owner: dict[str, str] = {}

    def claim(self, name: str, what: str) -> str:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or name.endswith("_"):
            raise InputError(
                f"{what} gives the task name {name!r}, which is empty or not a "
                "valid name after slugging; rename it",
                field="name",
            )
        if name in self.owner:
            raise InputError(
                f"{what} and {self.owner[name]} both become the lmms-eval task "
                f"{name!r}; rename one of them",
                field="name",
            )
        self.owner[name] = what
        return name


class _Suite:
    """What one generation writes: files by name and the lines of ``primebench_suite.py``."""

    def __init__(self, out: Path, upstream_paths: list[Path], shared_data: Path | None) -> None:
        self.out = out
        self.shared_data = shared_data
        self.shared_files: dict[Path, str] = {}
        self.upstream_paths = upstream_paths
        self.files: dict[str, str] = {}
        self.funcs: list[str] = []
        self.aliases: dict[tuple[str, str], str] = {}
        self.items: dict[str, list[str]] = {}
        self.content_keys: dict[str, str] = {}
        self.designs: dict[str, dict[str, Any]] = {}

    def fn_expr(self, ref: FunctionRef) -> str:
        """A Python expression (in ``primebench_suite.py``) of a lazy upstream function."""
        dotted = portable_ref(ref)
        if dotted is not None:
            return f"_up({dotted!r})"
        r, folder = relative_ref(ref, self.out)
        return f"_up({r!r}, {folder!r})"

    def yaml_ref(self, ref: FunctionRef) -> _Fn:
        """The ``!function`` value of an upstream function: its module path in the installed
        lmms-eval, else an alias defined in ``primebench_suite.py``."""
        dotted = portable_ref(ref)
        if dotted is not None:
            return _Fn(dotted)
        key = relative_ref(ref, self.out)
        if key not in self.aliases:
            alias = f"upstream_{len(self.aliases)}"
            self.aliases[key] = alias
            self.funcs.append(f"{alias} = _up({key[0]!r}, {key[1]!r})")
        return _Fn(f"primebench_suite.{self.aliases[key]}")

    def convert(self, value: Any) -> Any:
        """``value`` with every ``FunctionRef`` (at any depth) as a ``!function`` value."""
        if isinstance(value, FunctionRef):
            return self.yaml_ref(value)
        if isinstance(value, dict):
            return {k: self.convert(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.convert(v) for v in value]
        return value


def _metadata(manifest: SuiteManifest, b: str, cat: str, **more: Any) -> dict[str, Any]:
    return {
        "version": 1.0,
        "primebench_suite": manifest.version,
        "benchmark": b,
        "category": cat,
        **more,
    }


def _item_metric() -> dict[str, Any]:
    return {
        "metric": ITEM_METRIC,
        "aggregation": _Fn("primebench_suite.item_aggregation"),
        "higher_is_better": True,
    }


def _local_data_files(body: dict[str, Any], upstream_dir: Path, out: Path) -> None:
    """Relative ``data_files`` of a local upstream dataset, re-anchored at the generated
    folder."""
    kw = body.get("dataset_kwargs")
    if body.get("dataset_path") not in _LOCAL_BUILDERS or not isinstance(kw, dict):
        return

    def fix(v: Any) -> Any:
        if isinstance(v, str) and not os.path.isabs(v) and (upstream_dir / v).is_file():
            return os.path.relpath((upstream_dir / v).resolve(), out.resolve())
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v

    if "data_files" in kw:
        body["dataset_kwargs"] = {**kw, "data_files": fix(kw["data_files"])}


def _upstream_tasks(
    s: _Suite,
    names: _Names,
    manifest: SuiteManifest,
    b: str,
    cat: str,
    ids: list[str],
    up: UpstreamBenchmark,
    dataset: str | None,
    base_name: str,
) -> str:
    """Write the task(s) of benchmark ``b`` on its upstream task; returns the name the category
    group lists (the task, or the benchmark's group of subtasks)."""
    members = resolve_members(up, ids, s.upstream_paths)
    lo, hi = manifest.entry(b).score_range
    written = []
    for member, member_ids in members.items():
        t = (
            base_name
            if up.subtask_pattern is None
            else names.claim(
                f"{base_name}_{slug(member.dataset_name or member.task)}",
                f"subtask {member.dataset_name!r} of benchmark {b!r}",
            )
        )
        cfg = load_task_config(member.path)
        pr = cfg.get("process_results")
        if not cfg.get("metric_list"):
            raise InputError(
                f"upstream task {member.task} ({member.path}) has no metric_list",
                field="metric_list",
            )
        if not isinstance(pr, FunctionRef) and up.scorer == "number":
            # scored by its own filters and metric (AI2D, DocVQA, ChartQA): each item's value is
            # the metric lmms-eval logs per sample, mapped back to the item by its doc_id
            up = replace(up, scorer="metric")
        if not isinstance(pr, FunctionRef) and up.scorer != "metric":
            raise InputError(
                f"upstream task {member.task} ({member.path}) is scored through filters and a "
                f"metric without process_results, which item scorer {up.scorer!r} cannot read; "
                f"declare its row key with --upstream-key {member.task}=FIELD (its metric then "
                "scores each item)",
                field="process_results",
            )
        if isinstance(pr, FunctionRef) and up.scorer == "metric":
            raise InputError(
                f"upstream task {member.task} has a process_results; its per-item "
                "value needs an item scorer, not 'metric'",
                field="scorer",
            )
        if up.scorer not in ("number", "metric"):
            from harness_adapters.lmms_eval_upstream.item_scorers import ITEM_SCORERS

            if up.scorer not in ITEM_SCORERS:
                raise InputError(
                    f"no item scorer {up.scorer!r} is registered (upstream task {member.task})",
                    field="scorer",
                )
        scorer = (
            repr(up.scorer)
            if up.scorer != "number"
            else repr((cfg["metric_list"][0]["metric"], float(lo), float(hi)))
        )
        pd_ref = cfg.get("process_docs")
        keys_arg = ""
        if up.text_key is not None:
            from harness_adapters.lmms_eval_upstream.content_keys import text_keys_doc

            s.content_keys.setdefault(
                up.task,
                canonical_json(
                    text_keys_doc(b, up, (manifest.entry(b).upstream or {}).get("text_keys"))
                ),
            )
        if up.task in s.content_keys:
            text = s.content_keys[up.task]
            if s.shared_data is None:
                keys_name = f"primebench_keys_{slug(up.task)}.json"
                s.files[keys_name] = text
            else:  # a released suite: one content-named copy that every suite reads
                shared = (
                    s.shared_data / f"primebench_keys_{slug(up.task)}-{content_hash(text)}.json"
                )
                s.shared_files[shared] = text
                keys_name = os.path.relpath(shared, s.out).replace(os.sep, "/")
            keys_arg = f", _HERE / {keys_name!r}"
        s.funcs.append(
            f"process_docs_{t} = make_process_docs(_ITEMS[{t!r}], {up.key!r}, {t!r}, "
            f"{s.fn_expr(pd_ref) if isinstance(pd_ref, FunctionRef) else 'None'}{keys_arg})"
        )
        extra_meta: dict[str, Any] = {}
        if isinstance(pr, FunctionRef):
            s.funcs.append(
                f"process_results_{t} = make_upstream_process_results({up.key!r}, "
                f"{s.fn_expr(pr)}, {scorer})"
            )
        else:  # scored by filters + metric: ingest maps doc_id (manifest order) to the item
            extra_meta = {
                "item_ids": member_ids,
                "item_metric": cfg["metric_list"][0]["metric"],
                "item_metric_range": [float(lo), float(hi)],
            }
        body = {k: s.convert(v) for k, v in cfg.items() if k not in _DROPPED}
        _local_data_files(body, member.path.parent, s.out)
        if dataset is not None:
            d = Path(dataset)
            body["dataset_path"] = str(d / member.dataset_name if member.dataset_name else d)
            body["dataset_kwargs"] = {"load_from_disk": True}
        metrics = [s.convert(m) for m in cfg["metric_list"]]
        doc = {"task": t, **body, "process_docs": _Fn(f"primebench_suite.process_docs_{t}")}
        if isinstance(pr, FunctionRef):
            doc["process_results"] = _Fn(f"primebench_suite.process_results_{t}")
            metrics.append(_item_metric())
        doc["metric_list"] = metrics
        doc["metadata"] = _metadata(
            manifest, b, cat, upstream_task=member.task, upstream_key=up.key, **extra_meta
        )
        s.files[f"{t}.yaml"] = _yaml_dump(doc)
        s.items[t] = member_ids
        written.append(t)
    if up.subtask_pattern is None:
        return written[0]
    s.files[f"{base_name}.yaml"] = _yaml_dump(
        {
            "group": base_name,
            "task": written,
            "aggregate_metric_list": [
                {"metric": ITEM_METRIC, "aggregation": "mean", "weight_by_size": True}
            ],
            "metadata": {"version": 1.0},
        }
    )
    return base_name


def _design_task(
    s: _Suite,
    manifest: SuiteManifest,
    e: DesignOnlyEntry,
    dataset: str | None,
    t: str,
) -> str:
    """Write the task of design-only benchmark ``e`` (#72) on its upstream task: the upstream
    configuration flattened as for a listed benchmark, its ``process_docs`` drawing the design's
    items from the dataset (:func:`~harness_adapters.lmms_eval_upstream.functions.make_design_docs`)
    and its ``process_results`` adding each item's key, score, stratum and draw."""
    up = e.upstream or {}
    path = find_task_yaml(str(up["task"]), s.upstream_paths)
    cfg = load_task_config(path)
    pr = cfg.get("process_results")
    if not isinstance(pr, FunctionRef) or not cfg.get("metric_list"):
        raise InputError(
            f"upstream task {up['task']} ({path}) has no process_results and metric_list: a "
            "design-only benchmark reads its per-item value from them",
            field="upstream",
        )
    scorer = up["scorer"]
    if scorer == "number":
        scorer_expr = repr((cfg["metric_list"][0]["metric"], *map(float, e.score_range)))
    else:
        from harness_adapters.lmms_eval_upstream.item_scorers import ITEM_SCORERS

        if scorer not in ITEM_SCORERS:
            raise InputError(
                f"no item scorer {scorer!r} is registered (upstream task {up['task']})",
                field="scorer",
            )
        scorer_expr = repr(scorer)
    pd_ref = cfg.get("process_docs")
    s.designs[t] = e.design.as_document()
    s.funcs.append(
        f"process_docs_{t} = make_design_docs(_DESIGNS[{t!r}], {t!r}, {e.name!r}, "
        f"{s.fn_expr(pd_ref) if isinstance(pd_ref, FunctionRef) else 'None'})"
    )
    s.funcs.append(f"process_results_{t} = make_design_results({s.fn_expr(pr)}, {scorer_expr})")
    body = {k: s.convert(v) for k, v in cfg.items() if k not in _DROPPED}
    if dataset is not None:
        name = cfg.get("dataset_name")
        body["dataset_path"] = str(Path(dataset) / name if name else Path(dataset))
        body["dataset_kwargs"] = {"load_from_disk": True}
        body.pop("dataset_name", None)
    doc = {
        "task": t,
        **body,
        "process_docs": _Fn(f"primebench_suite.process_docs_{t}"),
        "process_results": _Fn(f"primebench_suite.process_results_{t}"),
        "metric_list": [*(s.convert(m) for m in cfg["metric_list"]), _item_metric()],
        "metadata": _metadata(
            manifest, e.name, e.category, upstream_task=up["task"], design_only=True
        ),
    }
    s.files[f"{t}.yaml"] = _yaml_dump(doc)
    return t


def _image_path(path: str | None, out: Path) -> str | None:
    if path is None:
        return None
    p = Path(path).resolve()
    root = embedded_root().resolve()
    if p.is_relative_to(root):
        return "embedded:" + p.relative_to(root).as_posix()
    return os.path.relpath(p, out.resolve())


def _local_task(
    s: _Suite,
    manifest: SuiteManifest,
    panel: Panel,
    b: str,
    cat: str,
    ids: list[str],
    t: str,
    upstream: str | None,
) -> str:
    try:
        rows = benchmark_rows(panel, b)
    except InputError as exc:
        task = f"upstream task {upstream!r}" if upstream else "no upstream lmms-eval task"
        how = (
            f"if a field of {upstream}'s dataset holds the panel's item ids, add "
            f"--upstream-key {upstream}=FIELD; if its rows carry no id (AI2D's), match them "
            f"by content first: primebench keys lmms-eval --vlmeval-tsv YOUR.tsv --upstream "
            f"LOCAL_COPY --task {upstream} --dataset {b} --out keys.json, then add --keys "
            "keys.json (and --dataset "
            f"{upstream}=LOCAL_COPY)"
            if upstream
            else "import the items' text and images (panel import --items) to ask them here"
        )
        raise InputError(
            f"{exc}; no lmms-eval row key is known for its upstream task either ({task}): {how}"
        ) from None
    for r in rows:
        r["image"] = _image_path(r["image"], s.out)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if s.shared_data is None:
        s.files[f"{t}.jsonl"] = text
        data_file = f"{t}.jsonl"
    else:  # one copy for every released suite with these rows, named by its content
        shared = s.shared_data / f"{slug(b)}-{content_hash(text)}.jsonl"
        s.shared_files[shared] = text
        data_file = os.path.relpath(shared, s.out).replace(os.sep, "/")
    s.funcs += [
        f"process_docs_{t} = make_process_docs(_ITEMS[{t!r}], {ITEM_KEY!r}, {t!r})",
        f"process_results_{t} = make_process_results({ITEM_KEY!r}, {METRIC!r})",
    ]
    doc = {
        "task": t,
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": data_file}},
        "test_split": "test",
        "output_type": "generate_until",
        "doc_to_visual": _Fn("primebench_suite.doc_to_visual"),
        "doc_to_text": _Fn("primebench_suite.doc_to_text"),
        "doc_to_target": "answer",
        "process_docs": _Fn(f"primebench_suite.process_docs_{t}"),
        "process_results": _Fn(f"primebench_suite.process_results_{t}"),
        "generation_kwargs": dict(GENERATION),
        "metric_list": [
            {"metric": METRIC, "aggregation": "mean", "higher_is_better": True},
            _item_metric(),
        ],
        "lmms_eval_specific_kwargs": {"default": dict(PROMPT_KWARGS)},
        "metadata": _metadata(manifest, b, cat),
    }
    s.files[f"{t}.yaml"] = _yaml_dump(doc)
    s.items[t] = list(ids)
    return t


_HEADER = [
    "import json",
    "from pathlib import Path",
    "",
    "from harness_adapters.lmms_eval_upstream.functions import (  # noqa: F401",
    "    doc_to_text, item_aggregation, lazy_upstream, make_doc_to_visual, make_process_docs,",
    "    make_process_results, make_upstream_process_results)",
    "",
    "_HERE = Path(__file__).parent",
    "_ITEMS = json.loads((_HERE / 'primebench_items.json').read_text())",
    "doc_to_visual = make_doc_to_visual(_HERE)",
    "",
    "",
    "def _up(ref, folder=None):",
    "    return lazy_upstream(ref, folder, _HERE)",
    "",
    "",
]


_DESIGN_HEADER = [
    "from harness_adapters.lmms_eval_upstream.functions import (  # noqa: E402",
    "    make_design_docs, make_design_results)",
    "_DESIGNS = json.loads((_HERE / 'primebench_designs.json').read_text())",
]
"""Added to the header of a suite with design-only benchmarks (only then: the other suites'
generated files stay as they were)."""


def _write_folder(files: Mapping[str, str], out: Path) -> list[Path]:
    """Write ``files`` into ``out`` as a whole: a temporary sibling folder renamed at the end."""
    if out.exists() and (
        not out.is_dir()
        or (
            any(out.iterdir())
            and not (out / MANIFEST_FILE).exists()
            and not (out / RELEASE_FILE).exists()
        )
    ):
        raise InputError(
            "exists and is not a folder of generated tasks; choose another --out", file=str(out)
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8")
        os.chmod(tmp, 0o777 & ~current_umask())
        old = None
        if out.exists():
            old = out.parent / f"{tmp.name}.old"
            out.rename(old)
        tmp.rename(out)
        if old is not None:
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [out / n for n in files]


def generate_tasks(
    manifest: SuiteManifest,
    panels: Panel | Mapping[str, Panel],
    out: str | Path,
    upstream_keys: Mapping[str, str] | None = None,
    upstream_paths: list[str | Path] | tuple[()] = (),
    datasets: Mapping[str, str | Path] | None = None,
    content_keys: list[str | Path] | tuple[()] = (),
    released: Path | None = None,
    shared_data: Path | None = None,
) -> list[Path]:
    """Write the task YAMLs, data files, ``primebench_items.json``, ``primebench_suite.py`` and
    ``primebench_manifest.json`` for ``manifest`` into ``out`` (as a whole); returns the written
    paths.

    For the committed released suites (``tools/release_suites.py``), so that no generated file is
    committed twice: ``released`` (the path of the one committed manifest) replaces the manifest
    copy by :data:`RELEASE_FILE`, which points at it; ``shared_data`` (a folder beside ``out``)
    takes the local tasks' data files, one content-named copy that every suite's YAML reads by a
    relative path (lmms-eval anchors relative ``data_files`` at the YAML's folder). Those data
    files are written first, each atomically; their names are their content hash, so a file
    already there is the same file.

    ``panels``: the panel the manifest was built from, or benchmark → panel (multi-source
    suites; only needed for local tasks). ``upstream_keys``: lmms-eval task → row field checked
    by the user (its per-item metric must be a number). ``upstream_paths``: more folders to
    search for upstream YAMLs. ``datasets``: catalogue lmms-eval task → a local
    ``save_to_disk`` folder to read instead of the hub. ``content_keys``: ``primebench.keys/1``
    files (``primebench keys lmms-eval``): their task's rows are keyed by content; a task without
    ``process_results`` is then scored by its own filters and metric."""
    from harness_adapters.lmms_eval_upstream.content_keys import FIELD, read_keys

    out = Path(out)
    known = dict(VERIFIED_UPSTREAM)
    for task, field in (upstream_keys or {}).items():
        known[task] = UpstreamBenchmark(task, field, "number", evidence="declared by the user")
    unknown_ds = sorted(
        set(datasets or {})
        - set(known)
        - {read_keys(p)["task"] for p in content_keys}
        - {str((e.upstream or {}).get("task")) for e in manifest.design_only}
    )
    if unknown_ds:
        raise InputError(
            f"--dataset for {unknown_ds}: not an upstream task with a row key "
            f"(known: {sorted(known)})",
            field="dataset",
        )
    s = _Suite(out, [Path(p) for p in upstream_paths], shared_data)
    for path in content_keys:
        doc = read_keys(path)
        known[doc["task"]] = UpstreamBenchmark(
            doc["task"], FIELD, "metric", evidence=f"content keys {Path(path).name}"
        )
        s.content_keys[doc["task"]] = canonical_json(doc)
    names = _Names()
    suite = names.claim(suite_task_name(manifest), f"suite {manifest.name!r}")
    items = manifest.item_ids()
    for cat, by_b in items.items():  # every name first: a collision is found before any work
        names.claim(f"{suite}_{slug(cat)}", f"category {cat!r}")
        for b in by_b:
            names.claim(f"{suite}_{slug(b)}", f"benchmark {b!r}")
    for e in manifest.design_only:
        if e.category not in items:
            names.claim(f"{suite}_{slug(e.category)}", f"category {e.category!r}")
        names.claim(f"{suite}_{slug(e.name)}", f"design-only benchmark {e.name!r}")
    cat_groups = []
    design_tasks: dict[str, list[str]] = {}
    for e in manifest.design_only:
        up_task = (e.upstream or {}).get("task")
        if up_task is None:
            continue  # not run in lmms-eval (the other harnesses draw it)
        local = (datasets or {}).get(str(up_task))
        design_tasks.setdefault(e.category, []).append(
            _design_task(
                s, manifest, e, None if local is None else str(local), f"{suite}_{slug(e.name)}"
            )
        )
    for cat in [*items, *(c for c in design_tasks if c not in items)]:
        by_b = items.get(cat, {})
        g = f"{suite}_{slug(cat)}"
        tasks = []
        for b, ids in by_b.items():
            if manifest.entry(b).no_lmms_eval_task:
                continue  # placed from the other harnesses (the manifest says why)
            t = f"{suite}_{slug(b)}"
            panel = panels if isinstance(panels, Panel) else panels.get(b)
            upstream = None
            if panel is not None:
                if b not in panel.benchmark_names:
                    raise InputError(
                        f"manifest benchmark {b!r} is not in panel {panel.name!r}",
                        field="categories",
                    )
                upstream = panel.benchmarks.set_index("benchmark").loc[b, "lmms_eval_task"]
            else:
                upstream = manifest.entry(b).lmms_eval_task
            if upstream and upstream in known:
                local = (datasets or {}).get(upstream)
                tasks.append(
                    _upstream_tasks(
                        s,
                        names,
                        manifest,
                        b,
                        cat,
                        list(ids),
                        known[upstream],
                        None if local is None else str(local),
                        t,
                    )
                )
            elif panel is None:
                raise InputError(
                    f"benchmark {b!r}: no verified upstream task and no panel with its items",
                    field="categories",
                )
            else:
                tasks.append(_local_task(s, manifest, panel, b, cat, list(ids), t, upstream))
        tasks.extend(design_tasks.get(cat, []))
        if not tasks:  # every benchmark of the category runs in the other harnesses only
            continue
        s.files[f"{g}.yaml"] = _yaml_dump(
            {
                "group": g,
                "task": tasks,
                "aggregate_metric_list": [
                    {"metric": ITEM_METRIC, "aggregation": "mean", "weight_by_size": True}
                ],
                "metadata": {"version": 1.0},
            }
        )
        cat_groups.append(g)
    weight = manifest.aggregate != "mean_of_category_means"
    s.files[f"{suite}.yaml"] = _yaml_dump(
        {
            "group": suite,
            "task": cat_groups,
            "aggregate_metric_list": [
                {"metric": ITEM_METRIC, "aggregation": "mean", "weight_by_size": weight}
            ],
            "metadata": {"version": 1.0, "primebench_suite": manifest.version},
        }
    )
    s.files["primebench_items.json"] = canonical_json(s.items)
    header = _HEADER
    if s.designs:
        s.files["primebench_designs.json"] = canonical_json(s.designs)
        at = _HEADER.index("doc_to_visual = make_doc_to_visual(_HERE)") + 1
        header = [*_HEADER[:at], *_DESIGN_HEADER, *_HEADER[at:]]
    s.files["primebench_suite.py"] = (
        f'"""Generated by primebench from suite {manifest.version}; do not edit."""\n'
        + "\n".join(header + s.funcs)
        + "\n"
    )
    if released is None:
        s.files[MANIFEST_FILE] = manifest.to_json()
    else:
        s.files[RELEASE_FILE] = canonical_json(
            {
                "suite": manifest.name,
                "version": manifest.version,
                "manifest": os.path.relpath(released, out).replace(os.sep, "/"),
            }
        )
    for path, text in s.shared_files.items():
        atomic_write_text(path, text)
    return [*s.shared_files, *_write_folder(s.files, out)]
