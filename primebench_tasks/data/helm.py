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


def _instances(run: Path) -> dict[str, dict[str, Any]]:
    path = run / "instances.json"
    if path.exists():
        doc = _read_json(path)
    elif (run / "scenario_state.json").exists():
        state = _read_json(run / "scenario_state.json")
        doc = [rs["instance"] for rs in state.get("request_states", [])]
    else:
        raise InputError("no instances.json (nor scenario_state.json)", file=str(run))
    if not isinstance(doc, list):
        raise InputError("must be a list of instances", file=str(path))
    out: dict[str, dict[str, Any]] = {}
    for i in doc:
        if isinstance(i, dict) and i.get("id") is not None and i.get("perturbation") is None:
            out.setdefault(str(i["id"]), i)
    return out


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
    docstring). Two runs of one model are refused (which counts is not guessed)."""
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
        spec = _read_json(run / "run_spec.json")
        name = str(spec.get("name", ""))
        if name.split(":", 1)[0] != scenario:
            report.skipped[rel] = f"scenario {name.split(':', 1)[0]!r}, not {scenario!r}"
            continue
        adapter = spec.get("adapter_spec") or {}
        model = adapter.get("model") or adapter.get("model_deployment")
        if not model:
            raise InputError("no adapter_spec.model", file=str(run / "run_spec.json"))
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
        stats = _read_json(run / "per_instance_stats.json")
        got: dict[str, float] = {}
        for n, pis in enumerate(stats):
            if pis.get("perturbation") is not None or int(pis.get("train_trial_index", 0)) != 0:
                continue
            iid = str(pis["instance_id"])
            hit = [
                s
                for s in pis.get("stats") or []
                if (s.get("name") or {}).get("name") == metric
                and (s.get("name") or {}).get("perturbation") is None
            ]
            if not hit:
                continue
            s = hit[0]
            count = float(s.get("count") or 0)
            if count <= 0:
                continue
            value = float(s["sum"]) / count
            if not 0.0 <= value <= 1.0:
                raise InputError(
                    f"{metric} of instance {iid} is {value}, not in [0, 1]",
                    file=str(run / "per_instance_stats.json"),
                    row=str(n),
                    field="stats",
                )
            if iid in got:
                raise InputError(
                    f"instance {iid} appears twice",
                    file=str(run / "per_instance_stats.json"),
                    row=str(n),
                )
            got[iid] = value
        if not got:
            report.skipped[rel] = f"no per-instance {metric!r}"
            continue
        for iid, value in got.items():
            item = iid
            if rule is not None:
                inst = instances.get(iid)
                if inst is None:
                    raise InputError(
                        f"instance {iid} has stats but is not in the run's instances",
                        file=str(run),
                    )
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
        raise InputError(f"no HELM run of scenario {scenario!r} was imported", file=str(root))
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
