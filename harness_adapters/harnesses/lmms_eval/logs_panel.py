"""Many models' lmms-eval ``--log_samples`` runs of upstream tasks → a reference panel.

``primebench ingest lmms-eval-logs DIR --out P`` reads every ``*_results.json`` under ``DIR``
(lmms-eval writes ``<output_path>/<model>/<stamp>_results.json`` and
``<stamp>_samples_<task>.jsonl``; a folder of many models' output paths is the input) and keeps the
tasks of the benchmarks whose upstream row key is verified
(:data:`~harness_adapters.lmms_eval_upstream.tasks.VERIFIED_UPSTREAM`: MathVista testmini's ``format``
variant, MMMU val, BLINK's subtasks), named as the embedded panels name them (``MathVista_MINI``,
``MMMU_DEV_VAL``, ``BLINK``):

- item id: the row key (``pid``, ``id``, ``idx``) — from the logged document when the log holds
  it, else from the upstream per-item value, which names its row (lmms-eval 0.7.3 logs no
  document: MMMU's and BLINK's values carry ``id``, MathVista's ``question_id``);
- score: the upstream task's per-item value scored by the same item scorer as the generated
  suite tasks (:mod:`~harness_adapters.lmms_eval_upstream.item_scorers`: MMMU's ``evaluate_mmmu`` on the
  one sample, MathVista's ``true_false``, BLINK's ``is_correct``) — the upstream code itself;
- one run per (model, task): the newest results file (lmms-eval's time stamp in its name); the
  others are listed as skipped;
- a model whose responses on a benchmark are mostly empty, or whose items mostly get no verdict,
  is reported and left out there (missing, never a column of zeros); in a model kept, an empty
  response scores what the upstream scorer gives it; every results file is accounted for (read,
  or skipped with a reason);
- the item's answer (the task's target) and, when the log holds the document, its question go
  into the panel's items.

Model name: the results file's ``model_name``, else its folder's name.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from harness_adapters.harnesses.lmms_eval.ingest import read_results_file, read_utf8, samples_file
from harness_adapters.lmms_eval_upstream.item_scorers import ITEM_SCORERS, NoItemScore
from harness_adapters.lmms_eval_upstream.tasks import (
    VERIFIED_UPSTREAM,
    UpstreamBenchmark,
    find_group_yaml,
    find_task_yaml,
    load_task_config,
    upstream_function,
)
from primebench_tasks.data.io import jsonl_records
from primebench_tasks.errors import InputError

MAX_UNSCORED = 0.5
"""A model with more than this share of a benchmark's logged items empty or without a verdict is
left out there."""

_STAMP = re.compile(r"^(\d{8}_\d{6})")


@dataclass
class LoggedTask:
    """An upstream lmms-eval task whose logs can be read: its benchmark, row key, scorer. The
    upstream module (the scorer's code) is imported on first use: MathVista's builds a judge
    client at import (``API_TYPE=dummy`` or a key), which no other task should need."""

    benchmark: str
    task: str
    key: str
    metric: str
    scorer: Callable[[Any, Any], float | None]
    process_results: Any
    _module: Any = None

    def score(self, value: Any) -> float | None:
        if self._module is None:
            ref = self.process_results
            self._module = inspect.getmodule(upstream_function(ref.ref, ref.directory))
        return self.scorer(value, self._module)


@dataclass
class LogsReport:
    """What the import did with every results file and model."""

    files_seen: int = 0
    read: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    not_scored: dict[tuple[str, str], float] = field(default_factory=dict)

    def lines(self) -> list[str]:
        out = [
            f"{self.files_seen} results files: {len(self.read)} read, {len(self.skipped)} skipped"
        ]
        for (m, b), rate in sorted(self.not_scored.items()):
            out.append(
                f"not scored: {m} on {b}: {100 * rate:.0f} % of its responses are empty or "
                "without a verdict (left out as missing)"
            )
        out += [f"skipped {f}: {why}" for f, why in sorted(self.skipped.items())]
        return out


def benchmark_name(up: UpstreamBenchmark) -> str:
    """The catalogue name the embedded panels use for ``up`` (the alias named like its VLMEvalKit
    dataset: ``MMMU_DEV_VAL``, ``MathVista_MINI``, ``BLINK``)."""
    from primebench_tasks.data.catalogue import aliases

    for alias, spec in aliases().items():
        if spec.lmms_eval_task == up.task and alias == spec.vlmeval_dataset:
            return alias
    return up.task


def known_tasks(extra: list[str | Path] | None = None) -> dict[str, LoggedTask]:
    """Upstream task name → :class:`LoggedTask`, for every verified benchmark (a group's
    subtasks each) whose logged rows name their item: not the text-keyed ones (OCRBench,
    RealWorldQA), whose upstream logs carry neither an id nor the question text (lmms-eval 0.7.3
    logs no document) — their logs are read through the suite's own tasks (``primebench place``),
    which key each row by its text."""
    out: dict[str, LoggedTask] = {}
    for up in VERIFIED_UPSTREAM.values():
        if up.text_key is not None:
            continue
        if up.subtask_pattern is None:
            paths = [find_task_yaml(up.variant or up.task, extra or [])]
        else:
            group = find_group_yaml(up.task, extra or [])
            paths = sorted(group.parent.glob("*.yaml"))
        metric, score = ITEM_SCORERS[up.scorer]
        for path in paths:
            cfg = load_task_config(path)
            task, pr = cfg.get("task"), cfg.get("process_results")
            if not isinstance(task, str) or pr is None or not hasattr(pr, "ref"):
                continue
            if up.subtask_pattern is not None and not cfg.get("dataset_name"):
                continue
            out[task] = LoggedTask(benchmark_name(up), task, up.key, metric, score, pr)
    return out


def _runs(root: Path, report: LogsReport) -> list[tuple[str, Path, str]]:
    """(model, results file, task) of the run that counts for every (model, task)."""
    if not root.is_dir():
        raise InputError("not a folder of lmms-eval outputs", file=str(root))
    latest: dict[tuple[str, str], tuple[str, Path]] = {}
    for path in sorted(root.rglob("*_results.json")):
        report.files_seen += 1
        rel = str(path.relative_to(root))
        res = read_results_file(path)
        model = str(res.get("model_name") or path.parent.name)
        m = _STAMP.match(path.name)
        stamp = m.group(1) if m else ""
        for task in res["configs"]:
            key = (model, str(task))
            if key in latest and not (stamp and latest[key][0]):
                # a results file without lmms-eval's time stamp in its name: which of two runs
                # is the newest cannot be told (its name sorts anywhere), so none is guessed
                other = latest[key][1].relative_to(root)
                raise InputError(
                    f"two runs of {model} on {task} ({other} and {rel}), and "
                    f"{rel if not stamp else other} has no lmms-eval time stamp "
                    "(YYYYMMDD_HHMMSS_) in its name: which counts cannot be told; keep one",
                    file=str(path),
                )
            if key in latest and latest[key][0] > stamp:
                report.skipped.setdefault(
                    f"{rel} ({task})",
                    f"another run of {model} on {task}; {latest[key][1].relative_to(root)} "
                    "counts (the newest)",
                )
                continue
            if key in latest:
                old = latest[key][1]
                report.skipped[f"{old.relative_to(root)} ({task})"] = (
                    f"another run of {model} on {task}; {rel} counts (the newest)"
                )
            latest[key] = (stamp, path)
    return [(m, p, t) for (m, t), (_s, p) in sorted(latest.items())]


_ID_FIELDS = ("id", "question_id", "pid", "idx")
"""Fields of an upstream per-item value that name its row (MMMU/BLINK ``id``, MathVista
``question_id``)."""


def _empty(rec: dict[str, Any]) -> bool:
    """Whether the logged response is empty (``filtered_resps``, else ``resps``; nested lists
    read to their first element)."""
    r = rec.get("filtered_resps", rec.get("resps"))
    while isinstance(r, list) and r:
        r = r[0]
    return not (isinstance(r, str) and r.strip())


def _row_key(doc: dict[str, Any], value: Any, key: str) -> str | None:
    if key in doc and doc[key] is not None:
        return str(doc[key])
    if isinstance(value, dict):
        for f in _ID_FIELDS:
            if value.get(f) is not None:
                return str(value[f])
    return None


def read_logs(
    root: str | Path,
    max_unscored: float = MAX_UNSCORED,
    upstream_paths: list[str | Path] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, LogsReport]:
    """(scores: model, benchmark, item_id, condition, score; items: benchmark, item_id,
    question, options, answer, source_index; report) of the lmms-eval outputs under ``root``."""
    root = Path(root)
    report = LogsReport()
    tasks = known_tasks(upstream_paths)
    per_model_bench: dict[tuple[str, str], list[tuple[str, float | None, bool]]] = {}
    items: dict[tuple[str, str], dict[str, Any]] = {}
    used: set[Path] = set()
    for model, path, task in _runs(root, report):
        spec = tasks.get(task)
        if spec is None:
            report.skipped.setdefault(
                f"{path.relative_to(root)} ({task})",
                "not an upstream task with a verified row key "
                f"(known: {', '.join(sorted({t.benchmark for t in tasks.values()}))})",
            )
            continue
        samples = samples_file(path, task)
        rows = per_model_bench.setdefault((model, spec.benchmark), [])
        for ln, rec in jsonl_records(read_utf8(samples), str(samples), invalid="invalid JSON line"):
            raw_doc = rec.get("doc")
            doc: dict[str, Any] = raw_doc if isinstance(raw_doc, dict) else {}
            if spec.metric not in rec:
                raise InputError(
                    f"the sample has no {spec.metric!r} (the upstream task's per-item value)",
                    file=str(samples),
                    row=ln,
                    field=spec.metric,
                )
            try:
                score = spec.score(rec[spec.metric])
            except NoItemScore as exc:
                raise InputError(str(exc), file=str(samples), row=ln, field=spec.metric) from None
            item = _row_key(doc, rec[spec.metric], spec.key)
            if item is None:
                raise InputError(
                    f"the sample names no row: no logged document with {spec.key!r} and no "
                    f"row id in {spec.metric!r}",
                    file=str(samples),
                    row=ln,
                    field=spec.metric,
                )
            rows.append((item, score, _empty(rec)))
            items.setdefault(
                (spec.benchmark, item),
                {
                    "benchmark": spec.benchmark,
                    "item_id": item,
                    "question": doc.get("question"),
                    "options": None,
                    "answer": None if rec.get("target") is None else str(rec.get("target")),
                    "source_index": item,
                },
            )
        used.add(path)
    scores = []
    for (model, bench), rows in sorted(per_model_bench.items()):
        ids = [i for i, _s, _e in rows]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise InputError(
                f"item {dup} of {bench} is logged twice for model {model}", file=str(root)
            )
        rate = sum(s is None or empty for _i, s, empty in rows) / max(len(rows), 1)
        if rate > max_unscored:
            report.not_scored[(model, bench)] = rate
            continue
        scores += [
            {"model": model, "benchmark": bench, "item_id": i, "condition": "vl", "score": s}
            for i, s, _e in rows
            if s is not None
        ]
    report.read = sorted(str(p.relative_to(root)) for p in used)
    return pd.DataFrame(scores), pd.DataFrame(list(items.values())), report


def logs_panel(
    root: str | Path,
    name: str,
    max_unscored: float = MAX_UNSCORED,
    upstream_paths: list[str | Path] | None = None,
) -> tuple[Any, LogsReport]:
    """The panel of :func:`read_logs` (categories from the catalogue)."""
    from primebench_tasks.data.catalogue import lookup
    from primebench_tasks.data.panel import Panel

    scores, items, report = read_logs(root, max_unscored, upstream_paths)
    if scores.empty:
        raise InputError("no logged item of a known upstream task was scored", file=str(root))
    benches = []
    for b in sorted(set(scores["benchmark"])):
        spec = lookup(b)
        benches.append(
            {
                "benchmark": b,
                "category": spec.category,
                "metric": spec.metric,
                "metric_kind": "binary",
                "score_min": 0.0,
                "score_max": 1.0,
                "lmms_eval_task": spec.lmms_eval_task,
                "vlmeval_dataset": spec.vlmeval_dataset,
            }
        )
    models = pd.DataFrame({"model": sorted(set(scores["model"]))})
    items = items[items["benchmark"].isin(set(scores["benchmark"]))]
    panel = Panel.from_records(name, scores, models, pd.DataFrame(benches), items, source=str(root))
    return panel, report
