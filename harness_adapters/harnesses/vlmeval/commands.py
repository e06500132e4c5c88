"""The VLMEvalKit plug's commands of the shared verbs, declared: what each runs
(:mod:`.cli`), its help and its own options; the library parses them
(:func:`primebench_tasks.cli.verbs.add_harness_commands`)."""

from __future__ import annotations

import argparse

from harness_adapters.harnesses.vlmeval.cli import (
    cmd_adaptive_vlmeval,
    cmd_ingest_vlmeval,
    cmd_vlmeval_export,
    cmd_vlmeval_import_records,
    cmd_vlmeval_run,
)
from harness_adapters.run.options import adaptive_budget_options
from primebench_tasks.cli import CommandTree
from primebench_tasks.cli.verbs import HarnessCommand, add_harness_commands


def _ingest_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("work_dir", help="run.py's --work-dir (or one model's folder in it)")
    p.add_argument("--model", help="only this model (default: every model found)")


def _tasks_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--source-tsv",
        required=True,
        help="folder of the upstream <dataset>.tsv files (usually $LMUData)",
    )
    p.add_argument("--lmudata", required=True, help="LMUData folder to write to")
    p.add_argument(
        "--key",
        action="append",
        metavar="BENCHMARK=COLUMN",
        help="the TSV column holding the suite's item ids (default: found from the "
        "data among index, id, pid, question_id)",
    )
    p.add_argument("--only", help="comma-separated benchmarks to export (default: all)")


def _records_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("records", help="the records folder (one sub-folder per model)")
    p.add_argument(
        "--datasets",
        default="BLINK,OCRBench,RealWorldQA",
        help="comma-separated VLMEvalKit dataset names",
    )
    p.add_argument(
        "--rule",
        choices=["auto", "vlmeval", "builtin"],
        default="auto",
        help="how option letters are read from predictions",
    )
    p.add_argument(
        "--max-unanswered",
        type=float,
        default=0.5,
        help="a model with more than this share of empty or unparseable predictions on a "
        "dataset is left out there",
    )


def _evaluate_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lmudata", help="the LMUData folder (default: $LMUData)")
    p.add_argument(
        "--vlmeval-root",
        help="VLMEvalKit checkout holding run.py (default: the "
        "folder above the installed vlmeval package)",
    )
    p.add_argument("run_args", nargs=argparse.REMAINDER, help="run.py's arguments, after --")


def _adaptive_options(p: argparse.ArgumentParser) -> None:

    p.add_argument("--model", required=True, help="a VLMEvalKit model name (run.py --model)")
    p.add_argument(
        "--source-tsv",
        required=True,
        help="folder of the upstream VLMEvalKit TSVs (LMUData): every pool item must be a row",
    )
    p.add_argument("--judge", default="exact_matching", help="as run.py --judge")
    p.add_argument("--api-nproc", type=int, default=1, help="as run.py --api-nproc")
    adaptive_budget_options(p, True, "one VLMEvalKit inference and evaluation per round")


COMMANDS = (
    HarnessCommand(
        "ingest",
        "vlmeval",
        "a VLMEvalKit work directory",
        cmd_ingest_vlmeval,
        shared=("writable_panel",),
        options=_ingest_options,
        show_defaults=True,
    ),
    HarnessCommand(
        "tasks",
        "vlmeval",
        "LMUData TSVs holding exactly a suite's items",
        cmd_vlmeval_export,
        shared=("suite",),
        options=_tasks_options,
        description="Filter your upstream VLMEvalKit TSVs to the suite's items (every column "
        "kept; shared images carried) and write the config that `evaluate vlmeval` registers.",
        epilog="example: primebench tasks vlmeval --suite primebench --source-tsv ~/LMUData "
        "--lmudata ~/LMUData --only MMMU_DEV_VAL,MathVista_MINI",
        show_defaults=True,
    ),
    HarnessCommand(
        "ingest",
        "vlmeval-records",
        "a folder of VLMEvalKit evaluation records (<model>/<model>_<DATASET>.xlsx) as a panel",
        cmd_vlmeval_import_records,
        shared=("new_panel",),
        options=_records_options,
        description="Score the raw predictions of VLMEvalKit's published records (the OpenVLM "
        "leaderboard's EvalRecords layout) without a judge: multiple choice with VLMEvalKit's own "
        "can_infer when VLMEvalKit is importable (else a port of it; their agreement is "
        "reported), OCRBench with its substring rule. One run per model and dataset counts (the "
        "top-level file, else the newest T<date>_G<commit> run); models with mostly empty or "
        "unparseable predictions are reported and left out, not scored 0.",
        epilog="example: primebench ingest vlmeval-records ../shared/data/openvlm_records/"
        "EvalRecords --datasets BLINK,OCRBench,RealWorldQA --out panels/openvlm_records",
        show_defaults=True,
    ),
    HarnessCommand(
        "evaluate",
        "vlmeval",
        "VLMEvalKit's run.py with the suite's datasets registered",
        cmd_vlmeval_run,
        shared=("import",),
        options=_evaluate_options,
        description="Registers the PrimeBench datasets of $LMUData's export with the installed "
        "VLMEvalKit, then runs its run.py in this process with the arguments after `--`. "
        "MathVista needs --judge exact_matching when no judge API is configured (rule-based "
        "extraction only).",
        epilog="example: LMUData=~/LMUData primebench evaluate vlmeval -- --data "
        "PrimeBench_MMMU_DEV_VAL PrimeBench_MathVista_MINI --model Qwen2-VL-2B-Instruct "
        "--judge exact_matching --work-dir outputs",
        show_defaults=True,
    ),
    HarnessCommand(
        "adaptive",
        "vlmeval",
        "ask a VLMEvalKit model, in rounds, the items that tell the most (model built once)",
        cmd_adaptive_vlmeval,
        shared=("suite", "run_dir", "import"),
        options=_adaptive_options,
        description="Each round's items are exported as VLMEvalKit datasets from your upstream "
        "TSVs and run by VLMEvalKit's own inference and evaluation with the model built once; "
        "records, stopping rule and report as `primebench run --adaptive`.",
    ),
)
"""The VLMEvalKit plug's commands of the shared verbs (parsed by the library:
:func:`primebench_tasks.cli.verbs.add_harness_commands`)."""


def add_commands(tree: CommandTree) -> None:
    from harness_adapters.harnesses.vlmeval.help import EXAMPLES, OPTION_HELP

    tree.add_help(OPTION_HELP, EXAMPLES)
    tree.rename("vlmeval export", "tasks vlmeval")
    tree.rename("vlmeval import-records", "ingest vlmeval-records")
    tree.rename("vlmeval run", "evaluate vlmeval")
    add_harness_commands(tree, COMMANDS)
