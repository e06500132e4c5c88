"""Adaptive evaluation inside lmms-eval: ``primebench adaptive lmms-eval --model M --model_args
... --suite S --out RUN``.

The model is loaded once (lmms-eval's own model class, ``get_model(M).create_from_arg_string``);
each round, the items the adaptive test chose (:mod:`harness_adapters.run.adaptive_loop`:
the same policy, stopping rule, records and report as ``primebench run --adaptive``) become a
generated task set (``generate_tasks`` on a manifest of just those items, named
``<suite>_adaptive_rNNN`` so it never shadows a released task) and go through
``lmms_eval.evaluator.simple_evaluate`` with the loaded model — lmms-eval's own prompts, decoding
and per-item scoring. Every item's ``primebench_item`` score is appended to ``RUN/records.jsonl``
as the round ends (an item the task scored with nothing is recorded ``failed``), so a killed run
resumes from the last finished round.

VLMEvalKit's counterpart is :mod:`harness_adapters.harnesses.vlmeval.adaptive` (``primebench adaptive
vlmeval``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from harness_adapters.harnesses.lmms_eval.ingest import scrub_model_args
from harness_adapters.harnesses.lmms_eval.taskgen import generate_tasks, suite_task_name
from harness_adapters.run.adaptive_loop import (
    harness_round_records,
    next_round,
    run_adaptive_rounds,
)
from harness_adapters.run.records import RecordFile
from harness_adapters.run.request import RUN_SCHEMA, RunRequest
from harness_adapters.run.versions import installed_version
from harness_adapters.suites.documents import SuiteDoc
from primebench_tasks.adaptive.result import AdaptiveRun, AdaptiveSettings
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import PrimeBenchError
from primebench_tasks.suite.manifest import SuiteManifest

ITEM_METRIC = "primebench_item"


def load_model(
    model: str, model_args: str, batch_size: int | str = 1, device: str | None = None
) -> Any:
    """An lmms-eval model instance, loaded once for every round."""
    from lmms_eval import models

    return models.get_model(model).create_from_arg_string(
        model_args, {"batch_size": batch_size, "max_batch_size": None, "device": device}
    )


def lmms_executor(
    lm: Any,
    req: RunRequest,
    panels: Mapping[str, Panel],
    gen_kwargs: str | None = None,
) -> Callable[[Mapping[str | None, list[SuiteDoc]], RecordFile], None]:
    """A round executor for :func:`~harness_adapters.run.adaptive_loop.run_adaptive_rounds` that
    runs each round through lmms-eval with the loaded model ``lm`` (an upstream task's data from
    ``req.data``, else the hub)."""

    def execute(asks: Mapping[str | None, list[SuiteDoc]], records: RecordFile) -> None:
        from lmms_eval.evaluator import simple_evaluate
        from lmms_eval.tasks import TaskManager

        docs = asks.get(None, [])
        if not docs:
            return
        k, folder, manifest = next_round(req, docs)
        generate_tasks(manifest, dict(panels), folder, datasets=req.data or None)
        t0 = time.perf_counter()
        res = simple_evaluate(
            model=lm,
            tasks=[suite_task_name(manifest)],
            task_manager=TaskManager(include_path=str(folder)),
            log_samples=True,
            gen_kwargs=gen_kwargs,
        )
        if not res:
            raise PrimeBenchError(f"lmms-eval returned no results for round {k} ({folder})")
        per_item = (time.perf_counter() - t0) / len(docs)
        scored: dict[tuple[str, str], tuple[float | None, str | None]] = {}
        for samples in (res.get("samples") or {}).values():
            for s in samples:
                item = s.get(ITEM_METRIC)
                if not isinstance(item, dict) or "item_id" not in item:
                    continue
                bench = item.get("benchmark") or _benchmark_of(manifest, str(item["item_id"]))
                resp = s.get("filtered_resps") or s.get("resps")
                text = resp[0] if isinstance(resp, list) and resp else resp
                while isinstance(text, list) and text:
                    text = text[0]
                score = item.get("score")
                scored[(bench, str(item["item_id"]))] = (
                    float(score) if isinstance(score, (int, float)) else None,
                    None if text is None else str(text),
                )
        records.append(harness_round_records(req, docs, scored, per_item, "lmms-eval"))

    return execute


def _benchmark_of(manifest: SuiteManifest, item_id: str) -> str:
    hits = [e.name for e in manifest.benchmarks if item_id in e.item_ids]
    if len(hits) != 1:
        raise PrimeBenchError(
            f"item {item_id} of an adaptive round is in {len(hits)} benchmarks of the round"
        )
    return hits[0]


def run_adaptive_lmms(
    model: str,
    model_args: str,
    suite: SuiteManifest,
    panels: Mapping[str, Panel],
    out: str | Path,
    settings: AdaptiveSettings,
    *,
    name: str | None = None,
    gen_kwargs: str | None = None,
    datasets: Mapping[str, str] | None = None,
    progress: Callable[[str], None] | None = None,
    lm: Any = None,
) -> AdaptiveRun:
    """Load the lmms-eval model once (unless ``lm`` is given) and run the adaptive test of the
    suite's benchmarks through lmms-eval round by round; returns the report. ``datasets``:
    upstream lmms-eval task → a local copy of its dataset (else the hub)."""
    req = RunRequest(
        model=model,
        suite=suite,
        out=Path(out),
        name=name or model,
        data=dict(datasets or {}),
    )
    spec = {
        "schema": RUN_SCHEMA,
        "suite": suite["version"],
        "suite_name": suite["name"],
        "model": req.model_name,
        "model_path": f"lmms-eval:{model}",
        "prompt_kwargs": "lmms-eval's generated tasks",
        "generation": {"lmms_eval_model_args": model_args, "gen_kwargs": gen_kwargs},
        "adapters": {},
        "conditions": {
            "harness": "lmms-eval (primebench adaptive lmms-eval)",
            "lmms_eval": installed_version("lmms_eval", "lmms-eval"),
            "model": model,
            "model_args": scrub_model_args(model_args),
            "gen_kwargs": gen_kwargs,
            "prompt": "the upstream tasks' own prompts (generated round tasks)",
            "suite": suite["version"],
        },
    }
    lm = lm if lm is not None else load_model(model, model_args)
    return run_adaptive_rounds(
        req,
        panels,
        settings,
        progress=progress,
        executor=lmms_executor(lm, req, panels, gen_kwargs),
        spec=spec,
    )
