"""The lmms-eval plug's commands of the shared verbs, declared: what each runs
(:mod:`.cli`), its help and its own options; the library parses them
(:func:`primebench_tasks.cli.verbs.add_harness_commands`)."""

from __future__ import annotations

import argparse

from harness_adapters.harnesses.lmms_eval.cli import (
    cmd_adaptive_lmms,
    cmd_ingest_lmms,
    cmd_ingest_lmms_logs,
    cmd_keys_build,
    cmd_lmms_path,
    cmd_pin_lmms,
    cmd_tasks_lmms,
)
from harness_adapters.run.options import adaptive_budget_options
from primebench_tasks.cli import CommandTree
from primebench_tasks.cli.options import name_text
from primebench_tasks.cli.verbs import HarnessCommand, add_harness_commands


def _tasks_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--manifest", required=True, help="a suite manifest file, or a released suite's name"
    )
    p.add_argument("--out", required=True)
    p.add_argument(
        "--name",
        type=name_text,
        help="the suite's name in lmms-eval (default: the manifest's; a released suite's name is "
        "refused for another suite, whose tasks it would shadow)",
    )
    p.add_argument(
        "--design-items",
        type=int,
        metavar="N",
        help="items each design-only benchmark draws (a suite with design-only benchmarks, "
        "e.g. primebench_wide: 100 released); the suite is renamed <name>_n<N>",
    )
    p.add_argument(
        "--upstream-key",
        action="append",
        default=[],
        metavar="TASK=FIELD",
        help="the upstream lmms-eval task's dataset field that holds the panel's "
        "item ids (checked by you); its benchmark then includes the upstream task",
    )
    p.add_argument(
        "--upstream-path",
        action="append",
        default=[],
        metavar="DIR",
        help="more folders to search for upstream task YAMLs",
    )
    p.add_argument(
        "--keys",
        action="append",
        default=[],
        metavar="FILE",
        help="row keys built by content (primebench keys lmms-eval) for an upstream "
        "task whose rows carry no id, e.g. ai2d",
    )
    p.add_argument(
        "--dataset",
        action="append",
        default=[],
        metavar="TASK=DIR",
        help="read upstream task TASK's data from a local datasets.save_to_disk "
        "folder (one sub-folder per subtask for groups such as blink) instead of "
        "the hub",
    )


def _ingest_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("output_dir")
    p.add_argument("--suite", help="refuse logs generated from another suite version")
    p.add_argument("--model", help="model name (default: the run's model_name)")


def _ingest_logs_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("logs", help="a folder of lmms-eval output paths (one or many models)")
    p.add_argument(
        "--max-unscored",
        type=float,
        default=0.5,
        help="a model with more than this share of a benchmark's items without a verdict is "
        "left out there",
    )
    p.add_argument(
        "--upstream-path",
        action="append",
        default=[],
        help="a folder of upstream task YAMLs searched before the installed lmms-eval's",
    )


def _adaptive_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, help="an lmms-eval model name (lmms-eval --model)")
    p.add_argument("--model_args", "--model-args", default="", help="as lmms-eval --model_args")
    p.add_argument("--gen_kwargs", "--gen-kwargs", help="as lmms-eval --gen_kwargs")
    p.add_argument("--name", help="the model's name in the records (default: --model)")
    p.add_argument(
        "--dataset",
        action="append",
        default=[],
        metavar="TASK=DIR",
        help="read upstream task TASK's data (the pool of a benchmark whose panel holds only "
        "ids, as the flagship's MMMU) from a local datasets.save_to_disk folder instead of "
        "the hub",
    )
    adaptive_budget_options(p, True, "one lmms-eval evaluation per round")


def _keys_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vlmeval-tsv", required=True, help="the VLMEvalKit TSV (LMUData)")
    p.add_argument(
        "--upstream",
        required=True,
        help="local copy of the upstream dataset (datasets.save_to_disk folder)",
    )
    p.add_argument("--split", default="test", help="split of the upstream copy")
    p.add_argument("--task", default="ai2d", type=name_text, help="the upstream lmms-eval task")
    p.add_argument(
        "--dataset", default="AI2D_TEST", type=name_text, help="the VLMEvalKit dataset name"
    )
    p.add_argument("--out", required=True, help="the mapping file to write")


def _pin_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("output_dir", help="an lmms-eval --log_samples output of the suite")
    p.add_argument("--suite", help="the suite manifest (default: the released one of the run)")
    p.add_argument("--name", help="the pinned suite's name (default: <suite>_pinned)")
    p.add_argument("--out", required=True, help="the pinned manifest to write")


COMMANDS = (
    HarnessCommand(
        "tasks",
        "lmms-eval",
        "lmms-eval task YAMLs for a suite",
        cmd_tasks_lmms,
        shared=("reference_panel",),
        options=_tasks_options,
    ),
    HarnessCommand(
        "path", "lmms-eval", "the released suites' lmms-eval task directory", cmd_lmms_path
    ),
    HarnessCommand(
        "ingest",
        "lmms-eval",
        "an lmms-eval --log_samples output directory",
        cmd_ingest_lmms,
        shared=("writable_panel",),
        options=_ingest_options,
    ),
    HarnessCommand(
        "ingest",
        "lmms-eval-logs",
        "many models' lmms-eval --log_samples runs of upstream tasks into a new panel",
        cmd_ingest_lmms_logs,
        shared=("new_panel",),
        options=_ingest_logs_options,
        description="Every *_results.json under LOGS: the tasks of MathVista testmini, MMMU val "
        "and BLINK (verified row keys), items keyed by the logged document's row key, scored "
        "by the upstream code; the newest run per model and task counts.",
        epilog="example: primebench ingest lmms-eval-logs runs/ --out panels/my_lmms_panel",
    ),
    HarnessCommand(
        "adaptive",
        "lmms-eval",
        "ask an lmms-eval model, in rounds, the items that tell the most (model loaded once)",
        cmd_adaptive_lmms,
        shared=("suite", "reference_panel", "run_dir"),
        options=_adaptive_options,
    ),
    HarnessCommand(
        "pin",
        "lmms-eval",
        "pin a suite's design-only benchmarks to the pools an lmms-eval run drew from",
        cmd_pin_lmms,
        options=_pin_options,
        description="Reads the draw each design-only task logged (every stratum's N_h and the "
        "pool's fingerprint) and writes the suite with those pools pinned: a later run on a "
        "changed dataset is refused before anything is asked.",
        epilog="example: primebench pin lmms-eval out/ --out primebench_wide_pinned.json",
    ),
    HarnessCommand(
        "keys",
        "lmms-eval",
        "map a VLMEvalKit TSV's index onto the upstream lmms-eval rows by content",
        cmd_keys_build,
        options=_keys_options,
        description="Match every row of your VLMEvalKit TSV (index, question, options, image) "
        "to exactly one row of a local copy of the upstream lmms-eval dataset (question, "
        "options, image hash); ambiguous or missing matches are refused and nothing is written.",
        epilog="example: primebench keys lmms-eval --vlmeval-tsv ~/LMUData/AI2D_TEST.tsv "
        "--upstream ai2d_local/ --split test --task ai2d --dataset AI2D_TEST --out "
        "ai2d_keys.json",
        show_defaults=True,
    ),
)
"""The lmms-eval plug's commands of the shared verbs (parsed by the library:
:func:`primebench_tasks.cli.verbs.add_harness_commands`)."""


def add_commands(tree: CommandTree) -> None:
    from harness_adapters.harnesses.lmms_eval.help import EXAMPLES, OPTION_HELP

    tree.add_help(OPTION_HELP, EXAMPLES)
    add_harness_commands(tree, COMMANDS)
    tree.rename("lmms-eval-path", "path lmms-eval")
    tree.rename("keys build", "keys lmms-eval")
