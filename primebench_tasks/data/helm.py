"""HELM (and VHELM) per-instance outputs → panel records: fresh reference rows from the runs HELM
publishes or a user makes with ``helm-run``.

A HELM run folder (``benchmark_output/runs/<suite>/<run name>/``) holds, as HELM's runner writes
them (JSON of HELM's own dataclasses, ``asdict_without_nones``):

- ``run_spec.json`` — ``name`` (``<scenario>:<args>,model=<deployment>``) and ``adapter_spec``
  (``model``, ``model_deployment``);
- ``instances.json`` — the evaluated ``Instance`` list: ``id`` (HELM's own, ``id0``, ``id1``...: a
  position, not an upstream id), ``input`` (``text``, or ``multimedia_content.media_objects``
  whose text parts hold the question), ``references`` (``output.text``, ``tags``: ``correct``);
  (older runs hold them in ``scenario_state.json``'s request states);
- ``per_instance_stats.json`` — ``PerInstanceStats`` per (instance, trial, perturbation):
  ``stats`` with ``name`` (``name``, ``split``, ``perturbation``), ``count`` and ``sum``.

:func:`read_helm_runs` turns every run of a scenario into (model, benchmark, item, score) rows:
the score is the chosen metric's mean for the unperturbed trial-0 instance; models are named as
HELM names them (``adapter_spec.model``, e.g. ``openai/gpt-4o-2024-05-13``). Item ids: with a
text-key rule (:mod:`primebench_tasks.data.text_keys`) and the reference items to match
(``keyed_by``: a panel's items of that benchmark), each instance is mapped through its own text
(question, options, correct reference) to exactly one reference item — one that matches none or
several is refused naming the run and the instance, never guessed; without a rule the item is
HELM's instance id within the scenario (a benchmark keyed HELM's way).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from primebench_tasks.data.names import model_name_problem
from primebench_tasks.errors import InputError

RUN_FILES = ("run_spec.json", "per_instance_stats.json")


def _read_json(path: Path) -> Any:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=str(path)) from None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"not JSON: {exc}", file=str(path)) from None


def instance_text(instance: Mapping[str, Any]) -> str:
    """The question of a HELM instance: ``input.text``, else the text parts of its multimedia
    content, joined by new lines."""
    inp = instance.get("input") or {}
    if inp.get("text"):
        return str(inp["text"])
    media = (inp.get("multimedia_content") or {}).get("media_objects") or []
    return "\n".join(str(m["text"]) for m in media if m.get("text"))


def correct_answers(instance: Mapping[str, Any]) -> list[str]:
    """The output texts of the references tagged ``correct``."""
    return [
        str((r.get("output") or {}).get("text", ""))
        for r in instance.get("references") or []
        if "correct" in (r.get("tags") or [])
    ]


def instance_key(rule: str, instance: Mapping[str, Any]) -> str:
    """The text key of a HELM instance by ``rule`` (its question with inline options and its
    correct references: one letter for ``mcq_inline``, the accepted answers for ``ocrbench``)."""
    from primebench_tasks.data.text_keys import lmms_eval_row_key

    answers = correct_answers(instance)
    if rule == "mcq_inline":
        if len(answers) != 1:
            raise InputError(
                f"instance {instance.get('id')!r} has {len(answers)} correct references, not one",
                field="references",
            )
        return lmms_eval_row_key(rule, {"question": instance_text(instance), "answer": answers[0]})
    return lmms_eval_row_key(rule, {"question": instance_text(instance), "answer": answers})


@dataclass
class HelmReport:
    """Every run folder accounted for: imported (run → model, instances) or skipped with why."""

    imported: dict[str, tuple[str, int]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)

    def lines(self) -> list[str]:
        out = [f"{len(self.imported)} HELM runs imported, {len(self.skipped)} skipped"]
        out += [f"  skipped {r}: {why}" for r, why in sorted(self.skipped.items())]
        return out


def find_runs(root: str | Path) -> list[Path]:
    """Run folders under ``root`` (any depth): those holding ``run_spec.json``."""
    base = Path(root)
    if not base.is_dir():
        raise InputError("not a folder", file=str(base))
    return sorted(p.parent for p in base.rglob("run_spec.json"))


def _entry(doc: Any, n: int, path: Path, what: str) -> dict[str, Any]:
    """Entry ``n`` of a JSON list, which must be an object."""
    if not isinstance(doc, dict):
        raise InputError(
            f"{what} {n} is a {type(doc).__name__}, not an object", file=str(path), row=str(n)
        )
    return doc


def _list(doc: Any, path: Path, what: str) -> list[Any]:
    if not isinstance(doc, list):
        raise InputError(
            f"must be a JSON list of {what}, not a {type(doc).__name__}", file=str(path)
        )
    return doc


def _text(value: Any, path: Path, row: str, fld: str) -> str:
    """A string field (HELM ids and names are strings)."""
    if not isinstance(value, str) or not value:
        raise InputError(
            f"must be a non-empty string, not {value!r}", file=str(path), row=row, field=fld
        )
    return value


def _number(value: Any, path: Path, row: str, fld: str) -> float:
    """A JSON number (``true``/``false`` are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"must be a number, not {value!r}", file=str(path), row=row, field=fld)
    return float(value)


def _instances(run: Path) -> dict[str, dict[str, Any]]:
    """The run's unperturbed instances by HELM id. Two unperturbed instances with one id are
    refused: which one a score belongs to cannot be told."""
    path = run / "instances.json"
    if path.exists():
        doc = _list(_read_json(path), path, "instances")
    elif (run / "scenario_state.json").exists():
        path = run / "scenario_state.json"
        state = _read_json(path)
        if not isinstance(state, dict):
            raise InputError(f"must be a JSON object, not a {type(state).__name__}", file=str(path))
        states = _list(state.get("request_states", []), path, "request states")
        doc = []
        for n, rs in enumerate(states):
            rs = _entry(rs, n, path, "request state")
            doc.append(rs.get("instance"))
    else:
        raise InputError("no instances.json (nor scenario_state.json)", file=str(run))
    out: dict[str, dict[str, Any]] = {}
    seen: dict[str, int] = {}
    for n, raw in enumerate(doc):
        inst = _entry(raw, n, path, "instance")
        if inst.get("perturbation") is not None:
            continue
        iid = _text(inst.get("id"), path, str(n), "id")
        if iid in seen:
            if path.name == "scenario_state.json" and inst == out[iid]:
                continue  # one instance, requested again (another trial): the same instance
            raise InputError(
                f"instance {iid!r} appears twice unperturbed (entries {seen[iid]} and {n}): "
                "which one its score belongs to cannot be told",
                file=str(path),
                row=str(n),
                field="id",
            )
        seen[iid] = n
        out[iid] = inst
    return out


def _instance_scores(path: Path, stats: Any, metric: str) -> dict[str, float]:
    """``metric``'s mean per unperturbed trial-0 instance of ``per_instance_stats.json``; every
    entry and field checked, each error naming the entry and the field."""
    got: dict[str, float] = {}
    for n, raw in enumerate(_list(stats, path, "per-instance stats")):
        pis = _entry(raw, n, path, "entry")
        row = str(n)
        trial = pis.get("train_trial_index", 0)
        if isinstance(trial, bool) or not isinstance(trial, int):
            raise InputError(
                f"must be an integer, not {trial!r}",
                file=str(path),
                row=row,
                field="train_trial_index",
            )
        if pis.get("perturbation") is not None or trial != 0:
            continue
        iid = _text(pis.get("instance_id"), path, row, "instance_id")
        entries = pis.get("stats")
        if not isinstance(entries, list):
            raise InputError(
                f"must be a list of stats, not {entries!r}",
                file=str(path),
                row=row,
                field="stats",
            )
        hit = []
        for k, st in enumerate(entries):
            if not isinstance(st, dict):
                raise InputError(
                    f"stat {k} is a {type(st).__name__}, not an object",
                    file=str(path),
                    row=row,
                    field="stats",
                )
            name = st.get("name")
            if not isinstance(name, dict):
                raise InputError(
                    f"stat {k}'s name is {name!r}, not an object",
                    file=str(path),
                    row=row,
                    field="stats.name",
                )
            if name.get("name") == metric and name.get("perturbation") is None:
                hit.append(st)
        if not hit:
            continue
        if len(hit) > 1:
            raise InputError(
                f"instance {iid} has {len(hit)} unperturbed {metric!r} stats: which counts is "
                "not guessed",
                file=str(path),
                row=row,
                field="stats",
            )
        st = hit[0]
        count = _number(st.get("count", 0), path, row, "stats.count")
        if count <= 0:
            continue
        value = _number(st.get("sum"), path, row, "stats.sum") / count
        if not 0.0 <= value <= 1.0:
            raise InputError(
                f"{metric} of instance {iid} is {value}, not in [0, 1]",
                file=str(path),
                row=row,
                field="stats",
            )
        if iid in got:
            raise InputError(f"instance {iid} appears twice", file=str(path), row=row)
        got[iid] = value
    return got


def _run_model(run: Path) -> tuple[str, str]:
    """(scenario, model) of a run's ``run_spec.json``."""
    path = run / "run_spec.json"
    spec = _read_json(path)
    if not isinstance(spec, dict):
        raise InputError(f"must be a JSON object, not a {type(spec).__name__}", file=str(path))
    name = spec.get("name", "")
    if not isinstance(name, str):
        raise InputError(f"must be a string, not {name!r}", file=str(path), field="name")
    adapter = spec.get("adapter_spec") or {}
    if not isinstance(adapter, dict):
        raise InputError(
            f"must be an object, not {adapter!r}", file=str(path), field="adapter_spec"
        )
    fld = "adapter_spec.model" if adapter.get("model") else "adapter_spec.model_deployment"
    model = adapter.get("model") or adapter.get("model_deployment")
    if not model:
        raise InputError("no adapter_spec.model", file=str(path), field="adapter_spec.model")
    if not isinstance(model, str):
        raise InputError(f"must be a string, not {model!r}", file=str(path), field=fld)
    problem = model_name_problem(model)
    if problem:
        raise InputError(f"model name {model!r} {problem}", file=str(path), field=fld)
    return name.split(":", 1)[0], model


def read_helm_runs(
    root: str | Path,
    scenario: str,
    benchmark: str,
    metric: str = "exact_match",
    rule: str | None = None,
    keyed_by: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, HelmReport]:
    """Records (model, benchmark, item_id, condition, score) of every HELM run of ``scenario``
    under ``root``, named ``benchmark``. ``metric``: the per-instance stat (its mean, in
    [0, 1]); ``rule`` + ``keyed_by`` (the reference panel's items of the benchmark: item_id,
    question, options, answer): map instances to those items by text (see the module
    docstring). Two runs of one model are refused (which counts is not guessed); so are two
    unperturbed instances with one id, and a score for an instance the run does not hold."""
    from primebench_tasks.data.text_keys import panel_text_keys

    if (rule is None) != (keyed_by is None):
        raise InputError("a text-key rule and the items it maps to are given together")
    by_key: dict[str, str] = {}
    if rule is not None and keyed_by is not None:
        keys, _ = panel_text_keys(keyed_by, rule)
        by_key = {k: i for i, k in keys.items()}
    report = HelmReport()
    rows: list[dict[str, Any]] = []
    model_run: dict[str, str] = {}
    base = Path(root)
    for run in find_runs(base):
        rel = str(run.relative_to(base))
        run_scenario, model = _run_model(run)
        if run_scenario != scenario:
            report.skipped[rel] = f"scenario {run_scenario!r}, not {scenario!r}"
            continue
        if model in model_run:
            raise InputError(
                f"model {model!r} has two runs of {scenario} ({model_run[model]} and {rel}): "
                "import the one that counts (give its folder)",
                file=str(run),
            )
        if not (run / "per_instance_stats.json").exists():
            report.skipped[rel] = "no per_instance_stats.json (the run did not finish)"
            continue
        instances = _instances(run)
        stats_path = run / "per_instance_stats.json"
        stats = _read_json(stats_path)
        got = _instance_scores(stats_path, stats, metric)
        if not got:
            names = _metric_names(stats)
            report.skipped[rel] = (
                f"no per-instance {metric!r} (the run's metrics: {', '.join(names) or 'none'})"
            )
            continue
        for iid, value in got.items():
            inst = instances.get(iid)
            if inst is None:
                raise InputError(
                    f"instance {iid} has a score but is not among the run's unperturbed "
                    "instances: a score is never filed under an item not answered",
                    file=str(stats_path),
                    row=iid,
                    field="instance_id",
                )
            item = iid
            if rule is not None:
                key = instance_key(rule, inst)
                if key not in by_key:
                    raise InputError(
                        f"instance {iid} matches no reference item of {benchmark} by its text "
                        "(or one its text cannot tell apart from another): not guessed",
                        file=str(run / "instances.json"),
                        row=iid,
                    )
                item = by_key[key]
            rows.append(
                {
                    "model": model,
                    "benchmark": benchmark,
                    "item_id": item,
                    "condition": "vl",
                    "score": value,
                }
            )
        model_run[model] = rel
        report.imported[rel] = (model, len(got))
    df = pd.DataFrame(rows, columns=["model", "benchmark", "item_id", "condition", "score"])
    dup = df.duplicated(["model", "item_id"])
    if dup.any():
        r = df[dup].iloc[0]
        raise InputError(f"model {r.model}: two instances map to item {r.item_id}", file=str(base))
    return df, report


def _metric_names(stats: list[Any]) -> list[str]:
    """The metric names a (checked) ``per_instance_stats.json`` holds, sorted."""
    names = {
        str(st["name"].get("name"))
        for pis in stats
        for st in pis.get("stats") or []
        if isinstance(st.get("name"), dict)
    }
    return sorted(names)


def reference_items(key_panel: str, benchmark: str) -> pd.DataFrame:
    """The items of ``benchmark`` (with their text) that HELM's instances are matched to:
    ``key_panel`` is a panel folder or an embedded panel's name; a path that is no folder, or a
    panel without the benchmark, is refused naming that cause."""
    from primebench_tasks.data.panel import Panel

    if Path(key_panel).is_dir():
        panel = Panel.load(key_panel)
    elif "/" in key_panel or "\\" in key_panel or Path(key_panel).exists():
        raise InputError(
            "not a panel folder (no such folder), and a path is not an embedded panel's name",
            file=key_panel,
            field="--key-panel",
        )
    else:
        panel = Panel.load_default(key_panel)
    if benchmark not in panel.benchmark_names:
        raise InputError(
            f"panel {panel.name!r} holds no items of {benchmark} to match HELM's instances to "
            f"(its benchmarks: {', '.join(panel.benchmark_names)})",
            field="--key-panel",
        )
    return panel.items_of(benchmark)


def helm_panel(
    root: str | Path,
    scenario: str,
    benchmark: str,
    *,
    name: str,
    metric: str = "exact_match",
    rule: str | None = None,
    keyed_by: pd.DataFrame | None = None,
    category: str | None = None,
) -> tuple[Any, HelmReport]:
    """The panel of :func:`read_helm_runs`: one benchmark (its catalogue entry, or ``category``
    for one the catalogue does not know), HELM's models, and the items answered — with the
    reference items' text where they were matched by it."""
    from primebench_tasks.data.catalogue import lookup
    from primebench_tasks.data.panel import ITEM_COLUMNS, Panel

    records, report = read_helm_runs(root, scenario, benchmark, metric, rule, keyed_by)
    if records.empty:
        why = "; ".join(f"{r}: {w}" for r, w in sorted(report.skipped.items()))
        raise InputError(
            f"no HELM run of scenario {scenario!r} was imported"
            + (f" (skipped {why})" if why else " (no run folder holds a run_spec.json)"),
            file=str(root),
        )
    spec = lookup(benchmark, category)
    ids = sorted(set(records["item_id"]), key=lambda i: (len(i), i))
    if keyed_by is not None:
        text = keyed_by.assign(item_id=keyed_by["item_id"].astype(str)).set_index("item_id")
        items = text.loc[[i for i in text.index if i in set(ids)]].reset_index()
    else:
        items = pd.DataFrame({"item_id": ids})
    items = items.assign(benchmark=benchmark)
    for c in ITEM_COLUMNS:
        if c not in items.columns:
            items[c] = None
    bench = pd.DataFrame(
        [
            {
                "benchmark": benchmark,
                "category": spec.category,
                "metric": metric,
                "metric_kind": spec.metric_kind,
                "score_min": 0.0,
                "score_max": 1.0,
                "lmms_eval_task": spec.lmms_eval_task,
                "vlmeval_dataset": spec.vlmeval_dataset,
            }
        ]
    )
    models = pd.DataFrame({"model": sorted(set(records["model"]))})
    panel = Panel.from_records(
        name, records, models, bench, items[list(ITEM_COLUMNS)], source=str(root)
    )
    return panel, report
