"""Ingest lmms-eval ``--log_samples`` output into a Panel.

lmms-eval exits 0 even when tasks are not found or fail to import, so a run counts only if its
``*_results.json`` exists and lists the task; every sample line must carry the stable item id in
``primebench_item`` (written by the generated tasks); nothing is appended unless every file
parses.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from primebench_tasks.data.io import canonical_json, jsonl_records
from primebench_tasks.errors import InputError


def read_utf8(path: Path) -> str:
    """The file's text; a file that is not UTF-8 (UTF-16, Latin-1, binary) is a clear error."""
    try:
        return path.read_text("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 text (byte {exc.start}: {exc.reason}); lmms-eval writes UTF-8 logs",
            file=str(path),
        ) from None


def read_results_file(path: Path) -> dict[str, Any]:
    """An lmms-eval ``*_results.json``: a JSON object with a ``configs`` object (else a clear
    error naming the file)."""
    try:
        res = json.loads(read_utf8(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", file=str(path), row=exc.lineno) from None
    if not isinstance(res, dict):
        raise InputError(
            f"not an lmms-eval results file (a JSON {type(res).__name__}, not an object)",
            file=str(path),
        )
    configs = res.get("configs")
    if not isinstance(configs, dict):
        raise InputError(
            "not an lmms-eval results file: 'configs' is "
            + ("missing or null" if configs is None else f"a {type(configs).__name__}")
            + " (an object of task configurations is expected)",
            file=str(path),
            field="configs",
        )
    return res


def samples_file(results: Path, task: str) -> Path:
    """The ``<stamp>_samples_<task>.jsonl`` beside the results file ``results``; a listed task
    without one is an error (the run was made without ``--log_samples``)."""
    stamp = results.name[: -len("_results.json")]
    samples = results.parent / f"{stamp}_samples_{task}.jsonl"
    if not samples.exists():
        raise InputError(
            f"the run lists task {task} but its samples file is missing "
            "(run lmms-eval with --log_samples)",
            file=str(samples),
        )
    return samples


def logged_tasks(
    output_dir: str | Path, select: Callable[[dict[str, Any]], bool]
) -> Iterator[tuple[Path, dict[str, Any], str, dict[str, Any], Path]]:
    """(results file, its JSON, task, task metadata, samples file) for every task of the
    lmms-eval run in ``output_dir`` whose metadata passes ``select``. Refuses a run without a
    results file, a results file that is not JSON, and a selected task without its samples."""
    root = Path(output_dir)
    results = sorted(root.rglob("*_results.json"))
    if not results:
        raise InputError(
            "no *_results.json: the lmms-eval run did not finish (it exits 0 even on failure)",
            file=str(root),
        )
    for res_path in results:
        res = read_results_file(res_path)
        for task, cfg in res["configs"].items():
            if not isinstance(cfg, dict):
                raise InputError(
                    f"the configuration of task {task!r} is a {type(cfg).__name__}, not an object",
                    file=str(res_path),
                    field=f"configs.{task}",
                )
            meta = cfg.get("metadata") or {}
            if isinstance(meta, list):
                meta = {k: v for d in meta if isinstance(d, dict) for k, v in d.items()}
            if not isinstance(meta, dict):
                raise InputError(
                    f"the metadata of task {task!r} is a {type(meta).__name__}, not an object",
                    file=str(res_path),
                    field=f"configs.{task}.metadata",
                )
            if not select(meta):
                continue
            yield res_path, res, task, meta, samples_file(res_path, task)


def logged_items(
    samples: Path, meta: dict[str, Any] | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, ``primebench_item``) of every sample line; a line without an item id is an
    error. A task scored by its upstream filters and metric (no ``process_results`` of ours)
    names its items in ``meta["item_ids"]`` in the order of ``doc_id``, and its per-item metric
    in ``meta["item_metric"]`` (scaled from ``item_metric_range``)."""
    ordered = (meta or {}).get("item_ids")
    for ln, rec in jsonl_records(
        read_utf8(samples), str(samples), invalid="truncated or invalid JSON line"
    ):
        if ordered is not None and "primebench_item" not in rec:
            doc_id, value = rec.get("doc_id"), rec.get(meta["item_metric"])  # type: ignore[index]
            if not isinstance(doc_id, int) or not 0 <= doc_id < len(ordered):
                raise InputError(
                    f"doc_id {doc_id!r} is not a position of the task's {len(ordered)} items",
                    file=str(samples),
                    row=ln,
                    field="doc_id",
                )
            lo, hi = meta.get("item_metric_range") or [0.0, 1.0]  # type: ignore[union-attr]
            if isinstance(value, bool):
                value = float(value)
            score = (float(value) - lo) / (hi - lo) if isinstance(value, (int, float)) else None
            yield (
                ln,
                {"item_id": str(ordered[doc_id]), "score": score, "response": logged_response(rec)},
            )
            continue
        item = rec.get("primebench_item")
        if not isinstance(item, dict) or "item_id" not in item:
            raise InputError(
                "line has no primebench_item item id (was the task generated by primebench?)",
                file=str(samples),
                row=ln,
                field="primebench_item",
            )
        yield ln, {"response": logged_response(rec), **item}  # the item's own response wins


def logged_response(rec: dict[str, Any]) -> str | None:
    """The model's raw answer of one ``--log_samples`` line: the first of ``resps`` (lmms-eval
    logs each request's outputs as a list per request), else of ``filtered_resps``; None where
    the line holds no text (an older log, a log-likelihood task)."""
    for key in ("resps", "filtered_resps"):
        v = rec.get(key)
        while isinstance(v, list) and v:
            v = v[0]
        if isinstance(v, str):
            return v
    return None


def read_run(
    output_dir: str | Path, model: str | None = None, suite_version: str | None = None
) -> pd.DataFrame:
    """Records (model, benchmark, item_id, condition, score) of every PRIMEBench task in the
    lmms-eval output directory."""
    root = Path(output_dir)
    rows = []
    for res_path, res, task, meta, samples in logged_tasks(
        root, lambda meta: "primebench_suite" in meta
    ):
        name = model or res.get("model_name") or res_path.parent.name
        if suite_version is not None and meta["primebench_suite"] != suite_version:
            raise InputError(
                f"task {task} was generated from suite "
                f"{meta['primebench_suite']}, not {suite_version}",
                file=str(res_path),
                field="primebench_suite",
            )
        n_lines = 0
        for ln, item in logged_items(samples, meta):
            n_lines += 1
            if not isinstance(item.get("score"), (int, float)):
                raise InputError(
                    f"item {item['item_id']} has no per-item score (the "
                    + (
                        f"upstream task {meta['upstream_task']}"
                        if meta.get("upstream_task")
                        else f"task {task}"
                    )
                    + " computes its metric only at aggregation)",
                    file=str(samples),
                    row=ln,
                    field="primebench_item.score",
                )
            rows.append(
                {
                    "model": name,
                    "benchmark": meta["benchmark"],
                    "item_id": str(item["item_id"]),
                    "condition": "vl",
                    "score": float(item["score"]),
                    "response": item.get("response"),
                    "parsed": item.get("parsed"),
                    "parse_fallback": item.get("parse_fallback"),
                    # a design-only task's item: its stratum and the draw it came from (#72)
                    **(
                        {"stratum": item.get("stratum"), "pool": canonical_json(item["pool"])}
                        if item.get("pool") is not None
                        else {}
                    ),
                }
            )
        if n_lines == 0:
            raise InputError(
                f"the samples file of task {task} is empty (the task logged no sample)",
                file=str(samples),
            )
        want = ((res.get("n-samples") or {}).get(task) or {}).get("effective")
        if isinstance(want, int) and n_lines < want:
            raise InputError(
                f"the samples file of task {task} holds {n_lines} of its {want} "
                "samples (truncated?)",
                file=str(samples),
            )
    if not rows:
        raise InputError("the run holds no PRIMEBench task", file=str(root))
    df = pd.DataFrame(rows)
    dup = df.duplicated(["model", "benchmark", "item_id"])
    if dup.any():
        r = df[dup].iloc[0]
        raise InputError(
            f"item {r.item_id} of {r.benchmark} appears twice for model {r.model}", file=str(root)
        )
    return df


CONDITION_KEYS = ("model", "model_args", "model_backend", "gen_kwargs", "batch_size", "device")
"""What of lmms-eval's ``config`` a placement records (its secrets already redacted by
lmms-eval; a ``model_args`` key that names a key or token is dropped here too)."""


def run_conditions(output_dir: str | Path) -> dict[str, Any]:
    """The conditions an lmms-eval run was made under, from its ``*_results.json``: harness
    version and git hash, date, the model class and arguments, ``gen_kwargs`` and each PRIMEBench
    task's upstream task and ``generation_kwargs`` — what the placement report shows beside the
    reference runs'."""
    out: dict[str, Any] = {"harness": "lmms-eval"}
    tasks: dict[str, Any] = {}
    for res_path, res, task, meta, _samples in logged_tasks(
        output_dir, lambda meta: "primebench_suite" in meta
    ):
        raw_cfg = res.get("config")
        cfg: dict[str, Any] = raw_cfg if isinstance(raw_cfg, dict) else {}
        for key in CONDITION_KEYS:
            if cfg.get(key) not in (None, "", []):
                out.setdefault(key, scrub_model_args(cfg[key]))
        for key in ("lmms_eval_version", "git_hash", "date"):
            if res.get(key) and not _unknown(res[key]):
                value = res[key]
                if key != "date":
                    # lmms-eval writes `git branch@commit` of the folder it ran in (its
                    # version string comes from git there): lmms-eval's own source only when
                    # it runs from its checkout, a pip install's never; said as what it is
                    key, value = "run_folder_git", f"{value} (git of the folder lmms-eval ran in)"
                out.setdefault(key, value)
        task_cfg = res["configs"].get(task) or {}
        tasks[task] = {
            "upstream_task": meta.get("upstream_task"),
            "generation_kwargs": task_cfg.get("generation_kwargs"),
            "results_file": res_path.name,
        }
    out["tasks"] = tasks
    if "lmms_eval_version" not in out:
        # lmms-eval writes no package version (its version string is git's: above): the
        # installed package's version is said instead, as what it is
        from harness_adapters.run.versions import installed_version

        here = installed_version("lmms_eval", "lmms-eval")
        if here is not None:
            out["lmms_eval_version"] = f"{here} (installed where placed; the run wrote none)"
    return out


def _unknown(value: Any) -> bool:
    """lmms-eval's placeholder for a version or hash it could not read from git."""
    return isinstance(value, str) and set(value.replace("@", " ").split()) <= {"unknown"}


def scrub_model_args(value: Any) -> Any:
    """``model_args`` as text ``k=v,...``: pairs whose key names a key, token or secret
    dropped."""
    if not isinstance(value, str):
        return value
    keep = [
        kv
        for kv in value.split(",")
        if not any(w in kv.split("=", 1)[0].lower() for w in ("key", "token", "secret", "password"))
    ]
    return ",".join(keep)
