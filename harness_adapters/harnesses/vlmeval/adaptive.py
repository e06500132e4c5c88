"""Adaptive evaluation inside VLMEvalKit: ``primebench adaptive vlmeval --model M --source-tsv
DIR --suite S --out RUN``.

VLMEvalKit's ``run.py`` builds its datasets once per invocation, but its Python API takes a model
instance: ``vlmeval.inference.infer_data_job(model, work_dir, model_name, dataset)``, then
``dataset.evaluate(prediction_file, model=<judge>)`` — what ``run.py`` itself calls. So the model
is built once (``supported_VLM[M]()``, or an instance the caller gives) and each round of the
adaptive test (:mod:`harness_adapters.run.adaptive_loop`: the same policy, stopping rule,
records and report as ``primebench run --adaptive``) is exported as VLMEvalKit datasets of just
the round's items (``primebench tasks vlmeval`` on a manifest of those items, from the user's
upstream TSVs — every item of a benchmark's pool is a row there), registered
(:func:`~harness_adapters.harnesses.vlmeval.datasets.register`: the upstream dataset's own class, so prompts,
answer extraction and metrics are VLMEvalKit's), inferred and evaluated in ``RUN/rounds/rNNN``;
each item's score, read from VLMEvalKit's own per-row result as ``primebench place --vlmeval``
reads it (:func:`~harness_adapters.harnesses.vlmeval.ingest.read_work_dir`), is appended to
``RUN/records.jsonl`` as the round ends (an item VLMEvalKit scored with nothing is recorded
``failed``), so a killed run resumes from the last finished round.

The pool of a benchmark is its reference panel's items; their documents here are the upstream
TSV's rows (the key column as the export finds it; a pool item missing from the TSV is refused
before anything runs, named): the run spec's digest covers their questions, options and answers.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from harness_adapters.harnesses.vlmeval.export import (
    export_suite,
    key_column,
    read_config,
    read_tsv,
)
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
from primebench_tasks.errors import InputError, PrimeBenchError
from primebench_tasks.suite.manifest import SuiteManifest

OPTION_LETTERS = "ABCDEFGHIJ"


class TsvSource:
    """A VLMEvalKit TSV row as a pool document: its question (with hint and options) and answer
    are what the run spec's digest covers; VLMEvalKit builds the prompt and scores the answer
    (:func:`vlmeval_executor`), so this source neither asks nor scores."""

    def text(self, doc: dict[str, Any]) -> str:
        lines = [doc.get("hint") or "", doc.get("question") or ""]
        lines += [f"{c}. {doc[c]}" for c in OPTION_LETTERS if doc.get(c)]
        return "\n".join(x for x in lines if x)

    def visuals(self, doc: dict[str, Any]) -> list[Any]:
        raise PrimeBenchError("a VLMEvalKit pool item is asked by VLMEvalKit, not by primebench")

    def score(self, doc: dict[str, Any], response: str) -> float | None:
        raise PrimeBenchError("a VLMEvalKit pool item is scored by VLMEvalKit, not by primebench")

    def answer(self, doc: dict[str, Any]) -> str:
        return str(doc.get("answer", ""))


TSV_SOURCE = TsvSource()


def tsv_pool_documents(
    suite: SuiteManifest,
    source_tsv: str | Path,
    tables: dict[Path, pd.DataFrame] | None = None,
) -> Callable[[Panel, str, str], list[SuiteDoc]]:
    """The pool documents of a suite benchmark from ``source_tsv/<vlmeval_dataset>.tsv``: every
    item of its reference panel, in the panel's order, keyed as the export keys it (the suite's
    ``vlmeval.key``, else the column that holds every id once; a missing item is refused);
    ``tables``: the TSVs already read (path → frame), where a TSV read here is kept."""
    tables = {} if tables is None else tables
    read: dict[tuple[str, str], list[SuiteDoc]] = {}

    def documents(panel: Panel, benchmark: str, category: str) -> list[SuiteDoc]:
        if (panel.name, benchmark) not in read:
            read[(panel.name, benchmark)] = _documents(panel, benchmark, category)
        return read[(panel.name, benchmark)]

    def _documents(panel: Panel, benchmark: str, category: str) -> list[SuiteDoc]:
        entry = suite.entry(benchmark)
        if not entry.vlmeval_dataset:
            raise InputError(
                f"benchmark {benchmark!r} has no VLMEvalKit dataset name", field="vlmeval_dataset"
            )
        tsv = Path(source_tsv) / f"{entry.vlmeval_dataset}.tsv"
        if not tsv.exists():
            raise InputError(f"upstream TSV of {entry.vlmeval_dataset} not found", file=str(tsv))
        ids = [str(i) for i in panel.item_ids(benchmark)]
        df = read_tsv(tsv, tables)
        forced = (entry.vlmeval or {}).get("key")
        col = key_column(df, ids, tsv, str(forced) if forced else None)
        rows = {
            str(r[col]): r for r in df.drop(columns=["image"], errors="ignore").to_dict("records")
        }
        return [SuiteDoc(i, benchmark, category, {**rows[i], "id": i}, TSV_SOURCE) for i in ids]

    return documents


@contextmanager
def _lmudata(path: Path) -> Iterator[None]:
    """VLMEvalKit reads its datasets from ``$LMUData``: this round's export, for the round."""
    old = os.environ.get("LMUData")
    os.environ["LMUData"] = str(path)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("LMUData", None)
        else:
            os.environ["LMUData"] = old


def vlmeval_executor(
    model: Any,
    req: RunRequest,
    source_tsv: str | Path,
    judge: str = "exact_matching",
    api_nproc: int = 1,
    tables: dict[Path, pd.DataFrame] | None = None,
) -> Callable[[Mapping[str | None, list[SuiteDoc]], RecordFile], None]:
    """A round executor for :func:`~harness_adapters.run.adaptive_loop.run_adaptive_rounds` that
    exports each round's items as VLMEvalKit datasets and runs them through VLMEvalKit's own
    inference and evaluation with the model instance ``model`` (built once); ``tables``: the
    upstream TSVs read so far (path → frame), so each is read once per run, not per round."""
    tables = {} if tables is None else tables

    def execute(asks: Mapping[str | None, list[SuiteDoc]], records: RecordFile) -> None:
        from harness_adapters.harnesses.vlmeval.datasets import register
        from harness_adapters.harnesses.vlmeval.ingest import index_key, read_work_dir

        docs = asks.get(None, [])
        if not docs:
            return
        _, folder, manifest = next_round(req, docs)
        lmu, work = folder / "LMUData", folder / "outputs" / req.model_name
        keys = {
            e.name: str(e.vlmeval["key"])
            for e in manifest.benchmarks
            if e.vlmeval and e.vlmeval.get("key")
        }
        # the round's listed items only: a design-only benchmark is not drawn round by round
        only = [e.name for e in manifest.benchmarks]
        names = export_suite(manifest, source_tsv, lmu, keys, only, tables=tables)
        work.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        with _lmudata(lmu):
            register(lmu)
            from vlmeval.dataset import build_dataset
            from vlmeval.inference import infer_data_job
            from vlmeval.smp import get_pred_file_path, load

            responses: dict[tuple[str, str], str] = {}
            config = read_config(lmu)["data"]
            for name in names:
                dataset = build_dataset(name)
                if dataset is None:
                    raise PrimeBenchError(f"VLMEvalKit could not build round dataset {name}")
                infer_data_job(model, str(work), req.model_name, dataset, api_nproc=api_nproc)
                pred = get_pred_file_path(str(work), req.model_name, name)
                dataset.evaluate(pred, model=judge, nproc=api_nproc, verbose=False, retry=3)
                spec = config[name]
                predicted = load(pred)
                for idx, text in zip(predicted["index"], predicted["prediction"], strict=True):
                    item = spec["index_to_item"][index_key(idx)]
                    responses[(spec["benchmark"], str(item))] = str(text)
        per_item = (time.perf_counter() - t0) / len(docs)
        scored, _ = read_work_dir(work, req.model_name)
        results: dict[tuple[str, str], tuple[float | None, str | None]] = {}
        for r in scored.itertuples():
            key = (str(r.benchmark), str(r.item_id))
            s = float(r.score)
            # NaN: VLMEvalKit scored it with nothing (recorded failed)
            results[key] = (s if s == s else None, responses.get(key))
        records.append(harness_round_records(req, docs, results, per_item, "VLMEvalKit"))

    return execute


def load_model(model: str) -> Any:
    """VLMEvalKit's model ``model`` (``vlmeval.config.supported_VLM``), built once."""
    from vlmeval.config import supported_VLM

    if model not in supported_VLM:
        raise InputError(f"VLMEvalKit has no model {model!r}", field="--model")
    return supported_VLM[model]()


def run_adaptive_vlmeval(
    model: str,
    suite: SuiteManifest,
    panels: Mapping[str, Panel],
    source_tsv: str | Path,
    out: str | Path,
    settings: AdaptiveSettings,
    *,
    judge: str = "exact_matching",
    api_nproc: int = 1,
    progress: Callable[[str], None] | None = None,
    instance: Any = None,
) -> AdaptiveRun:
    """Build VLMEvalKit's ``model`` once (unless ``instance`` is given) and run the adaptive test
    of the suite's benchmarks through VLMEvalKit round by round, the pools' rows read from
    ``source_tsv`` (VLMEvalKit's ``LMUData`` TSVs of the upstream datasets); returns the report."""
    req = RunRequest(model=model, suite=suite, out=Path(out), name=model)
    spec = {
        "schema": RUN_SCHEMA,
        "suite": suite["version"],
        "suite_name": suite["name"],
        "model": req.model_name,
        "model_path": f"vlmeval:{model}",
        "prompt_kwargs": "VLMEvalKit's datasets",
        "generation": {"vlmeval_judge": judge},
        "adapters": {},
        "conditions": {
            "harness": "VLMEvalKit (primebench adaptive vlmeval)",
            "vlmeval": installed_version("vlmeval", "VLMEvalKit"),
            "model": model,
            "judge": judge,
            "prompt": "VLMEvalKit's own dataset prompts (exported round datasets)",
            "suite": suite["version"],
        },
    }
    tables: dict[Path, pd.DataFrame] = {}  # each upstream TSV read once for the whole run
    documents = tsv_pool_documents(suite, source_tsv, tables)
    for category, by_b in suite.item_ids().items():  # refuse a missing row before
        for b in by_b:  # the model is built
            documents(panels[b], b, category)
    instance = instance if instance is not None else load_model(model)
    return run_adaptive_rounds(
        req,
        panels,
        settings,
        progress=progress,
        executor=vlmeval_executor(instance, req, source_tsv, judge, api_nproc, tables),
        spec=spec,
        documents=documents,
    )


__all__ = [
    "TsvSource",
    "run_adaptive_vlmeval",
    "tsv_pool_documents",
    "vlmeval_executor",
]
