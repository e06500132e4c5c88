"""Runtime registration of a suite's exported datasets in an installed VLMEvalKit.

VLMEvalKit has no plugin entry points: its ``build_dataset(name)`` walks
``vlmeval.dataset.DATASET_CLASSES`` and ``run.py --config`` looks classes up on the
``vlmeval.dataset`` module. :func:`~harness_adapters.harnesses.vlmeval.datasets.register` reads ``LMUData/primebench_vlmeval_config.json``
(written by ``primebench tasks vlmeval``) and, for each exported dataset, adds a subclass of **the
upstream dataset's own VLMEvalKit class** — found the way ``build_dataset`` finds it, by the
upstream name (``MMMU_DEV_VAL`` → ``MMMUDataset``, ``MathVista_MINI`` → ``MathVista``,
``AI2D_TEST`` → ``ImageMCQDataset``, ``MathVision_MINI`` → ``MathVision``) — so prompt building (MMMU's image interleaving), answer
extraction and metrics are VLMEvalKit's, restricted to the suite's rows. ``primebench evaluate vlmeval``
calls it before VLMEvalKit's ``run.py``; in Python: ``register(); build_dataset(name)``.

What the subclass adds:

- ``supported_datasets()`` is the exported names; the TSV is ``LMUData/<name>.tsv`` with no MD5
  (nothing is downloaded);
- ``evaluate`` runs the upstream evaluation, then writes ``<eval file>_primebench.json`` next to
  the prediction file: suite version, benchmark, the per-row result file VLMEvalKit wrote and how a
  row's score is read from it, and the index → item map. ``primebench place --vlmeval`` and
  ``ingest vlmeval`` read exactly that.
- OCRBench: VLMEvalKit's evaluation writes only category totals; the sidecar names the prediction
  file itself with the rule ``ocrbench`` — VLMEvalKit's own substring rule applied per row, whose
  total is the upstream ``Final Score`` (tested).
- MathVista and MATH-Vision: VLMEvalKit's evaluation needs a judge model (``--judge``, an
  OpenAI-compatible API) for the answers its rules cannot read (MATH-Vision's refuses to start
  without one). With ``--judge exact_matching`` (no judge) the subclass
  runs the same evaluation with the rule-based path only — VLMEvalKit's own ``post_check``
  pre-extraction (option letters / option text via ``can_infer``, integers, floats) — and an answer
  the rules cannot settle scores 0, as an answer the judge fails on does upstream — a lower bound
  for answers a judge could still read; their count is in the sidecar (``judge_needed``).

Dataset-name checks inside the upstream classes see ``PrimeBench_<name>``: substring checks
(``'MMMU' in dataset``) behave as for the upstream name; exact-name checks do not fire. For the
classes used by the released suites (ImageMCQDataset for AI2D/BLINK/RealWorldQA, MMMUDataset,
MathVista, MathVision, OCRBench) no
exact-name check changes prompts or scores (VLMEvalKit e8e78f05).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from primebench_tasks.errors import PrimeBenchError

SIDECAR_SCHEMA = "primebench.vlmeval-result/1"
SIDECAR_SUFFIX = "_primebench.json"
NO_JUDGE = ("exact_matching", None, "")
VLMEVAL_MISSING = (
    "VLMEvalKit is not installed in this Python (it is not on PyPI): git clone its repository, "
    "pip install -e . in the clone, and run this command with the same Python "
    "(docs/harnesses.md, VLMEvalKit)"
)


def import_vlmeval() -> Any:
    """``vlmeval.dataset``, imported without the side effect of ``vlmeval.vlm``'s import:
    ``torch.set_grad_enabled(False)`` for the whole process (it would stop a training loop in
    the same process from computing gradients); the caller's grad mode is restored."""
    torch: Any = None
    try:
        import torch as installed

        torch = installed
    except ImportError:  # pragma: no cover - VLMEvalKit needs torch
        pass
    prev = torch.is_grad_enabled() if torch is not None else None
    try:
        import vlmeval.dataset as D
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != "vlmeval":
            raise
        raise PrimeBenchError(VLMEVAL_MISSING) from None
    finally:
        if torch is not None and prev is not None:
            torch.set_grad_enabled(prev)
    return D


def upstream_class(D: Any, upstream: str) -> type:
    """The VLMEvalKit class that ``build_dataset(upstream)`` would instantiate."""
    for cls in D.DATASET_CLASSES:
        if getattr(cls, "PRIMEBENCH", None) is not None or getattr(cls, "PRISM", None):
            continue
        if upstream in cls.supported_datasets():
            return cls
    raise LookupError(f"VLMEvalKit has no dataset class for {upstream!r}")


def _table_files(eval_file: Path) -> list[Path]:
    stem = eval_file.with_suffix("").name
    return sorted(
        (
            p
            for p in eval_file.parent.glob(f"{stem}_*")
            if p.suffix in (".xlsx", ".tsv", ".json", ".csv")
            and not p.name.endswith(SIDECAR_SUFFIX)
        ),
        key=lambda p: (p.stat().st_mtime_ns, p.name),
        reverse=True,
    )


def per_row_result(eval_file: Path, since_ns: int) -> tuple[str, str] | tuple[None, None]:
    """(file name, score rule) of the per-row result table the evaluation just wrote: a table
    with ``index`` and ``hit`` (multiple choice), ``index`` and ``res`` (MathVista, MATH-Vision:
    scored with VLMEvalKit's own ``post_check`` of each), ``index`` and ``eval_score`` (the VQA
    datasets' ``_results``: VQA accuracy, relaxed accuracy) or ``index``, ``extracted`` and
    ``score`` (the yes/no datasets' ``_auxmatch``: the extracted Yes/No equals the answer)."""
    from vlmeval.smp import load

    for p in _table_files(eval_file):
        if p.stat().st_mtime_ns < since_ns:
            continue
        try:
            cols = set(load(str(p)).columns)
        except Exception:  # noqa: BLE001 - a summary file that is no table is not a candidate
            continue
        if {"index", "hit"} <= cols:
            return p.name, "hit"
        if {"index", "res", "question_type", "answer_type"} <= cols:
            return p.name, "mathvista_post_check"
        if {"index", "res", "log", "choices"} <= cols:
            return p.name, "mathvision_post_check"
        if {"index", "eval_score"} <= cols:  # ImageVQADataset (ChartQA, TextVQA): its item score
            return p.name, "eval_score"
        if {"index", "extracted", "score"} <= cols:  # ImageYORNDataset (POPE): answer == extracted
            return p.name, "yorn_score"
    return None, None


RULE_BASED = {
    "MathVista": ("vlmeval.dataset.utils.mathvista", "MathVista_acc"),
    "MathVision": ("vlmeval.dataset.utils.mathv", "MATH_V_acc"),
}
"""Upstream classes whose evaluation asks a judge model for the answers its rules cannot read:
the module holding their ``post_check`` and the summary function their evaluation calls."""


def _rule_based(eval_file: str, upstream_class: str) -> Any:
    """VLMEvalKit's MathVista or MATH-Vision evaluation without a judge: its own ``post_check``
    pre-extraction for every row (the first step of ``MathVista_auxeval`` / ``MATH_V_auxeval``);
    rows it does not settle — the ones upstream sends to the judge — get ``res = ''`` (what
    upstream records when the judge fails), then the upstream summary (``MathVista_acc`` /
    ``MATH_V_acc``). Returns the score table and the number of rows a judge would have been
    asked about.

    A pre-extraction settles a row when it returns a value, ``False`` (or None) being its "not
    settled". Upstream tests the value's truth instead, so a right answer ``0`` goes to the judge,
    which reads it as 0; without a judge that test would score every right ``0`` as wrong (3 of
    the flagship's 100 MathVista items), and the same answers would place differently in
    VLMEvalKit than in lmms-eval (``tests/harness/test_lmms_released_e2e.py``)."""
    import importlib

    from vlmeval.smp import dump, get_intermediate_file_path, load

    module, acc = RULE_BASED[upstream_class]
    utils = importlib.import_module(module)
    data = load(eval_file)
    res, log = [], []
    for i in range(len(data)):
        got = utils.post_check(data.iloc[i], prefetch=True)
        ok = got is not False and got is not None
        res.append(got if ok else "")
        log.append("Prefetch succeed" if ok else "No judge: rule-based extraction failed")
    data["res"], data["log"] = res, log
    storage = get_intermediate_file_path(eval_file, "_exact_matching")
    dump(data, storage)
    score = getattr(utils, acc)(storage)
    dump(score, get_intermediate_file_path(storage, "_score", "csv"))
    return score, sum(x == "" for x in res)


class PrimeBenchMixin:
    """Mixed in before the upstream class; the spec of each exported dataset in ``PRIMEBENCH``."""

    PRIMEBENCH: dict[str, dict[str, Any]] = {}
    SUITE: dict[str, Any] = {}
    #: evaluations in this process: dataset → sidecar path, or the error (run.py logs an
    #: evaluation error and carries on with exit status 0; ``evaluate vlmeval`` reports these)
    OUTCOMES: dict[str, str | BaseException] = {}
    #: set by the upstream dataset class this is mixed into
    dataset_name: str

    @classmethod
    def supported_datasets(cls) -> list[str]:
        return sorted(cls.PRIMEBENCH)

    def evaluate(self, eval_file: str, **judge_kwargs: Any) -> Any:
        try:
            return self._evaluate(eval_file, **judge_kwargs)
        except BaseException as exc:
            PrimeBenchMixin.OUTCOMES[self.dataset_name] = exc
            raise

    def _evaluate(self, eval_file: str, **judge_kwargs: Any) -> Any:
        spec = self.PRIMEBENCH[self.dataset_name]
        since = time.time_ns() - 2_000_000_000  # file systems with coarse mtimes
        judge = judge_kwargs.get("model")
        judge_needed = None
        if spec["upstream_class"] in RULE_BASED and judge in NO_JUDGE:
            result, judge_needed = _rule_based(eval_file, spec["upstream_class"])
        else:
            result = super().evaluate(eval_file, **judge_kwargs)  # type: ignore[misc]
        path = Path(eval_file)
        name: str | None
        rule: str | None
        if spec["upstream_class"] == "OCRBench":
            # OCRBench's evaluation writes category totals only: the rows are the prediction file
            # itself, scored by the same rule (ingest's "ocrbench"; totals equal, tested)
            name, rule = path.name, "ocrbench"
        else:
            name, rule = per_row_result(path, since)
        model = path.with_suffix("").name[: -len(f"_{self.dataset_name}")]
        doc = {
            "schema": SIDECAR_SCHEMA,
            "suite": self.SUITE["suite"],
            "suite_name": self.SUITE["suite_name"],
            "model": model,
            "dataset": self.dataset_name,
            "benchmark": spec["benchmark"],
            "upstream": spec["upstream"],
            "upstream_class": spec["upstream_class"],
            "judge": judge if judge not in NO_JUDGE else "exact_matching",
            "prediction_file": path.name,
            "result_file": name,
            "score_rule": rule,
            "judge_needed": judge_needed,
            "index_to_item": spec["index_to_item"],
        }
        if "design" in spec:  # a design-only benchmark: the draw its rows came from (#81)
            doc["design"] = spec["design"]
        side = path.with_name(path.with_suffix("").name + SIDECAR_SUFFIX)
        tmp = side.with_name(f".{side.name}.tmp")
        tmp.write_text(json.dumps(doc, indent=2, sort_keys=True, default=str) + "\n", "utf-8")
        os.replace(tmp, side)
        PrimeBenchMixin.OUTCOMES[self.dataset_name] = str(side)
        return result
