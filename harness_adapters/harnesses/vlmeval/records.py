"""VLMEvalKit's published evaluation records → a reference panel.

The OpenVLM leaderboard publishes, per model, the prediction files VLMEvalKit writes:
``<root>/<model>/<model>_<DATASET>.xlsx`` (and, for a model evaluated again,
``<root>/<model>/T<date>_G<commit>/<model>_<DATASET>.xlsx``), with the item text, the gold answer
and the model's raw ``prediction``. :func:`read_records` scores every row and returns the panel's
long tables.

Scoring, per dataset kind (:data:`DATASET_KINDS`):

- ``mcq`` (BLINK, RealWorldQA, AI2D, MMMU, MMStar, ...): the option letter is extracted from the
  free-text prediction with VLMEvalKit's own ``can_infer`` (its ``exact_matching`` policy: no
  judge model) when VLMEvalKit is importable, else with :func:`builtin_can_infer`, a port of the
  same rule (option letters as separate tokens near the end; else an option text that occurs
  alone; a refusal or nothing → no answer). Right letter → 1, anything else → 0, as VLMEvalKit
  counts it. The two rules' agreement is measured on every row and reported.
- ``yorn`` (POPE, MME, ...): VLMEvalKit's ``YOrN_Extraction`` (its exact_matching policy) when
  VLMEvalKit is importable, else :func:`builtin_yorn`, a port of it: "yes" without "no" among
  the prediction's words → Yes, the other way round → No, else Unknown (no answer, wrong). Right
  when it equals the gold ``answer`` (Yes/No), as VLMEvalKit scores it.
- ``ocrbench``: VLMEvalKit's OCRBench rule — 1 when any accepted answer occurs in the
  prediction (case-folded; for handwritten math, with spaces removed).

Duplicate runs of one model: the file at the top of the model's folder (what the leaderboard
shows) counts; without one, the newest ``T<date>_G<commit>`` run (by date, then commit). The runs
not used are listed in the report.

Models whose predictions are mostly empty or unparseable (more than ``max_unanswered`` of the
rows: an empty prediction, or an MCQ prediction from which no option letter can be read) are
**not scored**: they are left out of that benchmark (missing, not 0) and listed with their rate.
Every file is accounted for: scored, or skipped with its reason.
"""

from __future__ import annotations

import ast
import re
import string
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from primebench_tasks.data.answers import builtin_can_infer, builtin_yorn
from primebench_tasks.data.cards import benchmark_cards
from primebench_tasks.errors import InputError

DATASET_KINDS = {
    c.catalogue.vlmeval_dataset: c.records_rule
    for c in benchmark_cards()
    if c.records_rule is not None and c.catalogue.vlmeval_dataset
}
"""VLMEvalKit dataset → how its rows are scored without a judge: the ``records_rule`` of the
benchmark cards (``primebench_tasks/data/cards/``)."""
MAX_UNANSWERED = 0.5
"""A model with more than this share of empty or unparseable predictions on a dataset is not
scored there (reported instead)."""
_RUN_DIR = re.compile(r"^T(\d{8})_G([0-9a-f]+)$")


def _vlmeval_can_infer() -> Callable[[str, dict[str, str]], str | bool] | None:
    try:
        from harness_adapters.harnesses.vlmeval.registration import import_vlmeval

        import_vlmeval()
        from vlmeval.utils.matching_util import can_infer
    except Exception:  # noqa: BLE001 - not installed, or its import fails: the built-in rule
        return None
    return can_infer


def ocrbench_hit(prediction: str, answers: list[str], category: str) -> bool:
    """VLMEvalKit's OCRBench rule: any accepted answer occurs in the prediction (case-folded,
    newlines as spaces; handwritten mathematical expressions compared without spaces)."""
    predict = str(prediction)
    if category == "Handwritten Mathematical Expression Recognition":
        p = predict.strip().replace("\n", " ").replace(" ", "")
        return any(a.strip().replace("\n", " ").replace(" ", "") in p for a in answers)
    p = predict.lower().strip().replace("\n", " ")
    return any(a.lower().strip().replace("\n", " ") in p for a in answers)


def _vlmeval_yorn() -> Callable[[str], str] | None:
    try:
        from harness_adapters.harnesses.vlmeval.registration import import_vlmeval

        import_vlmeval()
        from vlmeval.dataset.utils.yorn import YOrN_Extraction
    except Exception:  # noqa: BLE001 - not installed, or its import fails: the built-in rule
        return None
    return YOrN_Extraction


def _choices(row: dict[str, Any]) -> dict[str, str]:
    return {
        ch: str(row[ch])
        for ch in string.ascii_uppercase
        if ch in row
        and row[ch] is not None
        and not (isinstance(row[ch], float) and row[ch] != row[ch])
    }


def _text(v: Any) -> str:
    return "" if v is None or (isinstance(v, float) and v != v) else str(v)


# ------------------------------------------------------------------ files and runs
@dataclass
class RecordsReport:
    """What the import did with every file and model."""

    files_seen: int = 0
    scored: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    not_scored: dict[tuple[str, str], float] = field(default_factory=dict)
    rule: str = "builtin"
    agreement: dict[str, tuple[int, int]] = field(default_factory=dict)
    seconds: float = 0.0
    responses: list[dict[str, Any]] = field(default_factory=list, repr=False)
    """Every scored model's raw predictions (model, benchmark, item_id, response, score): what
    the reference runs' response profiles are built from (:func:`records_profiles`)."""

    def lines(self) -> list[str]:
        out = [
            f"{self.files_seen} files: {len(self.scored)} scored, {len(self.skipped)} skipped "
            f"({self.seconds:.1f} s; answers read with the {self.rule} rule)"
        ]
        for ds, (same, n) in sorted(self.agreement.items()):
            out.append(
                f"{ds}: VLMEvalKit's can_infer and the built-in rule agree on {same} of {n} rows "
                f"({100 * same / max(n, 1):.2f} %)"
            )
        for (m, ds), rate in sorted(self.not_scored.items()):
            out.append(
                f"not scored: {m} on {ds}: {100 * rate:.0f} % of its predictions are empty or "
                "unparseable (left out as missing)"
            )
        for f, why in sorted(self.skipped.items()):
            out.append(f"skipped {f}: {why}")
        return out


def _dataset_of(path: Path, model: str, datasets: set[str]) -> str | None:
    stem = path.stem
    prefix = f"{model}_"
    if not stem.startswith(prefix):
        return None
    ds = stem[len(prefix) :]
    return ds if ds in datasets else None


def find_record_files(
    root: Path, datasets: list[str], report: RecordsReport
) -> dict[tuple[str, str], Path]:
    """(model, dataset) → the one file that counts (see the module docstring)."""
    if not root.is_dir():
        raise InputError("not a folder of VLMEvalKit records", file=str(root))
    wanted = set(datasets)
    chosen: dict[tuple[str, str], Path] = {}
    for model_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        model = model_dir.name
        top: dict[str, Path] = {}
        runs: dict[str, list[tuple[str, str, Path]]] = {}
        for f in sorted(model_dir.rglob("*.xlsx")):
            report.files_seen += 1
            ds = _dataset_of(f, model, wanted)
            rel = str(f.relative_to(root))
            if ds is None:
                report.skipped[rel] = "not a record of a requested dataset"
                continue
            if f.parent == model_dir:
                top[ds] = f
                continue
            m = _RUN_DIR.match(f.parent.name)
            if f.parent.parent != model_dir or m is None:
                report.skipped[rel] = "not in <model>/ or <model>/T<date>_G<commit>/"
                continue
            runs.setdefault(ds, []).append((m.group(1), m.group(2), f))
        for ds in sorted(set(top) | set(runs)):
            others = sorted(runs.get(ds, []))
            pick = top.get(ds) or others[-1][2]
            chosen[(model, ds)] = pick
            for _, _, f in others:
                if f != pick:
                    report.skipped[str(f.relative_to(root))] = (
                        f"another run of {model} on {ds}; {pick.relative_to(root)} counts "
                        "(the top-level record, else the newest run)"
                    )
    return chosen


def _read_xlsx(path: Path) -> pd.DataFrame:
    try:
        import python_calamine  # noqa: F401

        engine = "calamine"  # ~7x faster than openpyxl (benchmarks/records_import.py)
    except ImportError:
        engine = "openpyxl"
    try:
        return pd.read_excel(path, engine=engine)
    except Exception as exc:  # noqa: BLE001 - any unreadable workbook is reported the same way
        raise InputError(f"cannot read the workbook: {exc}", file=str(path)) from None


def _index_key(v: Any, path: Path, row: int) -> str:
    """A record's ``index`` cell as its item id: an integer as its digits — also when a
    spreadsheet reader made the column float (``3.0`` is item ``3``, as in every other
    model's file) — or the text as written. A blank cell is an error naming the file and row:
    a guessed id would split the benchmark (one model's ids ``0.0, 1.0, ...``)."""
    import math

    if v is None or (isinstance(v, float) and math.isnan(v)) or not str(v).strip():
        raise InputError("the index cell is blank", file=str(path), row=row, field="index")
    if isinstance(v, float):
        if not v.is_integer():
            raise InputError(
                f"the index {v!r} is not an integer", file=str(path), row=row, field="index"
            )
        return str(int(v))
    return str(v).strip() if isinstance(v, str) else str(v)


# ------------------------------------------------------------------ the import
def read_records(
    root: str | Path,
    datasets: list[str],
    rule: str = "auto",
    max_unanswered: float = MAX_UNANSWERED,
    progress: Callable[[str], None] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, RecordsReport]:
    """Score the records of ``datasets`` under ``root``: (scores: model, benchmark, item_id,
    condition, score; items: benchmark, item_id, question, options, answer, source_index;
    report). ``rule``: ``auto`` (VLMEvalKit's can_infer when importable), ``vlmeval`` or
    ``builtin``."""
    t0 = time.perf_counter()
    unknown = [d for d in datasets if d not in DATASET_KINDS]
    if unknown:
        raise InputError(
            f"no scoring rule for {unknown}; known: {', '.join(DATASET_KINDS)}", field="--datasets"
        )
    if rule not in ("auto", "vlmeval", "builtin"):
        raise InputError(f"rule must be auto, vlmeval or builtin, got {rule!r}", field="--rule")
    report = RecordsReport()
    vlm = _vlmeval_can_infer() if rule in ("auto", "vlmeval") else None
    if rule == "vlmeval" and vlm is None:
        raise InputError("--rule vlmeval: VLMEvalKit is not importable", field="--rule")
    report.rule = "VLMEvalKit can_infer" if vlm is not None else "built-in"
    infer = vlm or builtin_can_infer
    yorn = (_vlmeval_yorn() if vlm is not None else None) or builtin_yorn
    files = find_record_files(Path(root), datasets, report)
    scores: list[dict[str, Any]] = []
    items: dict[tuple[str, str], dict[str, Any]] = {}
    for (model, ds), path in sorted(files.items()):
        df = _read_xlsx(path)
        need = {"index", "prediction", "answer"}
        if not need <= set(df.columns):
            report.skipped[str(path.relative_to(root))] = (
                f"no column(s) {sorted(need - set(df.columns))}"
            )
            continue
        rows = df.to_dict("records")
        for k, r in enumerate(rows):
            r["index"] = _index_key(r["index"], path, k + 2)
        kind = DATASET_KINDS[ds]
        got, unanswered = [], 0
        same = 0
        for r in rows:
            pred = _text(r.get("prediction"))
            if kind == "ocrbench":
                try:
                    answers = ast.literal_eval(_text(r["answer"]))
                except (ValueError, SyntaxError):
                    answers = [_text(r["answer"])]
                if not isinstance(answers, list):
                    answers = [str(answers)]
                hit = bool(pred.strip()) and ocrbench_hit(
                    pred, [str(a) for a in answers], _text(r.get("category"))
                )
                unanswered += not pred.strip()
            elif kind == "yorn":
                said = yorn(pred) if pred.strip() else "Unknown"
                unanswered += said == "Unknown"
                hit = said == _text(r["answer"]).strip()
            else:
                choices = _choices(r)
                letter = infer(pred, dict(choices)) if pred.strip() else False
                if vlm is not None:
                    same += (builtin_can_infer(pred, dict(choices)) if pred.strip() else False) == (
                        letter
                    )
                unanswered += letter in (False, "Z")
                hit = letter is not False and letter == _text(r["answer"]).strip()
            got.append((str(r["index"]), 1.0 if hit else 0.0))
            key = (ds, str(r["index"]))
            if key not in items:
                choices = _choices(r)
                items[key] = {
                    "benchmark": ds,
                    "item_id": str(r["index"]),
                    "question": _text(r.get("question")) or None,
                    "options": (
                        pd.io.json.ujson_dumps([f"{k}. {v}" for k, v in choices.items()])
                        if choices
                        else None
                    ),
                    "answer": _text(r.get("answer")) or None,
                    "source_index": str(r["index"]),
                }
        if vlm is not None and kind == "mcq":
            a, n = report.agreement.get(ds, (0, 0))
            report.agreement[ds] = (a + same, n + len(rows))
        rate = unanswered / max(len(rows), 1)
        if rate > max_unanswered:
            report.not_scored[(model, ds)] = rate
            report.skipped[str(path.relative_to(root))] = (
                f"{100 * rate:.0f} % empty or unparseable predictions: not scored"
            )
            continue
        dup = len({i for i, _ in got}) != len(got)
        if dup:
            report.skipped[str(path.relative_to(root))] = "an index appears twice"
            continue
        scores += [
            {"model": model, "benchmark": ds, "item_id": i, "condition": "vl", "score": s}
            for i, s in got
        ]
        report.responses += [
            {
                "model": model,
                "benchmark": ds,
                "item_id": i,
                "response": _text(r.get("prediction")),
                "score": s,
            }
            for (i, s), r in zip(got, rows, strict=True)
        ]
        report.scored.append(str(path.relative_to(root)))
        if progress and len(report.scored) % 100 == 0:
            progress(f"records: {len(report.scored)} files scored")
    report.seconds = time.perf_counter() - t0
    return pd.DataFrame(scores), pd.DataFrame(list(items.values())), report


def records_facts(items: pd.DataFrame, datasets: list[str]) -> dict[str, Any]:
    """Per dataset, what reading its answers needs (:func:`primebench_tasks.place.responses.
    answer_key` of the records' item table, the kind its scoring rule reads)."""
    from primebench_tasks.place.responses import RECORDS_KINDS, answer_key

    return {ds: answer_key(items, ds, RECORDS_KINDS[DATASET_KINDS[ds]]) for ds in datasets}


def records_profiles(
    items: pd.DataFrame, report: RecordsReport, datasets: list[str]
) -> pd.DataFrame:
    """The response profiles of every scored model of an import (:func:`read_records`), read
    with the rule a new run's answers are read with
    (:func:`primebench_tasks.place.responses.response_profiles`)."""
    from primebench_tasks.place.responses import response_profiles

    return response_profiles(pd.DataFrame(report.responses), records_facts(items, datasets))


def records_panel(
    root: str | Path,
    datasets: list[str],
    name: str = "openvlm_records",
    rule: str = "auto",
    max_unanswered: float = MAX_UNANSWERED,
    progress: Callable[[str], None] | None = None,
) -> tuple[Any, RecordsReport]:
    """The panel of :func:`read_records` (benchmarks named by their VLMEvalKit dataset, categories
    from the catalogue)."""
    from primebench_tasks.data.catalogue import lookup
    from primebench_tasks.data.panel import Panel

    scores, items, report = read_records(root, datasets, rule, max_unanswered, progress)
    if scores.empty:
        raise InputError("no record was scored", file=str(root))
    benches = []
    for ds in datasets:
        if ds not in set(scores["benchmark"]):
            continue
        spec = lookup(ds)
        benches.append(
            {
                "benchmark": ds,
                "category": spec.category,
                "metric": "accuracy",
                "metric_kind": "binary",
                "score_min": 0.0,
                "score_max": 1.0,
                "lmms_eval_task": spec.lmms_eval_task,
                "vlmeval_dataset": ds,
            }
        )
    models = pd.DataFrame({"model": sorted(set(scores["model"]))})
    panel = Panel.from_records(name, scores, models, pd.DataFrame(benches), items, source=str(root))
    # the reference runs' response profiles, kept beside the panel (the response check's basis)
    panel.response_profiles = records_profiles(items, report, datasets)
    return panel, report
