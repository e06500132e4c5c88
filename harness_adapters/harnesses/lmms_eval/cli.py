"""``primebench`` sub-commands of the lmms-eval adapter: `tasks lmms-eval`, `path lmms-eval`, `ingest lmms-eval`, `ingest lmms-eval-logs`, `adaptive lmms-eval`, `keys lmms-eval` (a ``primebench.commands`` plugin)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from harness_adapters.run.options import adaptive_budget_options
from primebench_tasks.cli import CommandTree, load_panel, parse_pairs
from primebench_tasks.cli.options import REPLACE_HELP, name_text
from primebench_tasks.data.defaults import default_kind, default_names

if TYPE_CHECKING:
    from primebench_tasks.data.panel import Panel


def cmd_tasks_lmms(args: argparse.Namespace) -> int:
    from harness_adapters.harnesses.lmms_eval.taskgen import generate_tasks
    from primebench_tasks.pipeline.manifest import read_manifest

    keys = parse_pairs(args.upstream_key, "--upstream-key", "TASK=FIELD")
    datasets = parse_pairs(args.dataset, "--dataset", "TASK=DIR")
    manifest = read_manifest(args.manifest)
    if manifest.document["params"].get("multi_source") and not (args.panel or args.default):
        from primebench_tasks.pipeline.multi_source import source_panels

        panels: Panel | dict[str, Panel] = source_panels(manifest)
    else:
        panels = load_panel(args)
    written = generate_tasks(
        manifest, panels, args.out, keys, args.upstream_path, datasets or None, args.keys
    )
    print(
        f"wrote {len(written)} files to {args.out}; run: lmms-eval --include_path {args.out} "
        f"--tasks <suite name> --log_samples ..."
    )
    return 0


def cmd_lmms_path(args: argparse.Namespace) -> int:
    from harness_adapters.harnesses.lmms_eval import task_path

    print(task_path())
    return 0


def cmd_ingest_lmms(args: argparse.Namespace) -> int:
    from harness_adapters.harnesses.lmms_eval.ingest import read_run
    from primebench_tasks.data.panel import Panel, panel_lock
    from primebench_tasks.pipeline.manifest import read_manifest
    from primebench_tasks.refresh.records import append_records

    version = read_manifest(args.suite)["version"] if args.suite else None
    records = read_run(args.output_dir, args.model, version)
    root = Path(args.panel)
    with panel_lock(root):  # read-modify-write as one step
        panel, rep = append_records(Panel.load(root), records, str(args.output_dir))
        if rep.n_new:
            panel.save(root)
    print("\n".join(rep.lines()))
    return 0


def cmd_ingest_lmms_logs(args: argparse.Namespace) -> int:
    from harness_adapters.harnesses.lmms_eval.logs_panel import logs_panel
    from primebench_tasks.data.importers import save_imported_panel, saved_panel_text

    panel, report = logs_panel(
        args.logs,
        name=args.name or Path(args.out).name,
        max_unscored=args.max_unscored,
        upstream_paths=list(args.upstream_path),
    )
    done = save_imported_panel(panel, args.out, replace=args.replace)
    print("\n".join(report.lines()))
    print(saved_panel_text(done, args.out, panel))
    return 0


def cmd_keys_build(args: argparse.Namespace) -> int:
    from collections.abc import Mapping
    from typing import Any

    from harness_adapters.lmms_eval_upstream.content_keys import (
        build_keys,
        load_upstream_rows,
        write_keys,
    )

    rows: list[Mapping[str, Any]] = list(load_upstream_rows(args.upstream, args.split))
    doc = build_keys(args.vlmeval_tsv, rows, args.task, args.dataset, str(args.upstream))
    write_keys(doc, args.out)
    print(
        f"wrote {args.out}: {doc['n_vlmeval_rows']} VLMEvalKit rows mapped 1:1 onto "
        f"{doc['n_upstream_rows']} upstream rows of {args.task}; generate tasks with "
        f"primebench tasks lmms-eval ... --keys {args.out}"
    )
    return 0


def cmd_adaptive_lmms(args: argparse.Namespace) -> int:
    from harness_adapters.harnesses.lmms_eval.adaptive import run_adaptive_lmms
    from harness_adapters.run.options import adaptive_settings, print_adaptive
    from harness_adapters.run.report import reference_panels
    from harness_adapters.suites.released import resolve_suite

    suite = resolve_suite(args.suite)
    given = load_panel(args) if (args.panel or args.default) else None
    settings = adaptive_settings(args)
    doc = run_adaptive_lmms(
        args.model,
        args.model_args,
        suite,
        reference_panels(suite, given),
        args.out,
        settings,
        name=args.name,
        gen_kwargs=args.gen_kwargs,
        datasets=parse_pairs(args.dataset, "--dataset", "TASK=DIR"),
        progress=lambda m: print(f"[primebench] {m}", file=sys.stderr, flush=True),
    )
    print_adaptive(doc, Path(args.out))
    return 0


def add_commands(tree: CommandTree) -> None:
    from harness_adapters.harnesses.lmms_eval.help import EXAMPLES, OPTION_HELP

    tree.add_help(OPTION_HELP, EXAMPLES)
    tasks = tree.group("tasks", "harness task configs from a manifest")
    p = tasks.add_parser("lmms-eval", help="lmms-eval task YAMLs for a suite")
    p.add_argument("--manifest", required=True)
    p.add_argument("--panel")
    p.add_argument("--default", choices=[n for n in default_names() if default_kind(n) == "panel"])
    p.add_argument("--out", required=True)
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
    p.set_defaults(func=cmd_tasks_lmms)
    path = tree.group("path", "where a harness finds the released suites")
    p = path.add_parser("lmms-eval", help="the released suites' lmms-eval task directory")
    p.set_defaults(func=cmd_lmms_path)
    tree.rename("lmms-eval-path", "path lmms-eval")
    tree.rename("keys build", "keys lmms-eval")
    ingest = tree.group("ingest", "harness results into a Panel")
    p = ingest.add_parser("lmms-eval", help="an lmms-eval --log_samples output directory")
    p.add_argument("output_dir")
    p.add_argument("--panel", required=True, help="a writable panel directory")
    p.add_argument("--suite", help="refuse logs generated from another suite version")
    p.add_argument("--model", help="model name (default: the run's model_name)")
    p.set_defaults(func=cmd_ingest_lmms)
    p = ingest.add_parser(
        "lmms-eval-logs",
        help="many models' lmms-eval --log_samples runs of upstream tasks into a new panel",
        description="Every *_results.json under LOGS: the tasks of MathVista testmini, MMMU val "
        "and BLINK (verified row keys), items keyed by the logged document's row key, scored "
        "by the upstream code; the newest run per model and task counts.",
        epilog="example: primebench ingest lmms-eval-logs runs/ --out panels/my_lmms_panel",
    )
    p.add_argument("logs", help="a folder of lmms-eval output paths (one or many models)")
    p.add_argument("--out", required=True, help="the new panel directory")
    p.add_argument("--replace", action="store_true", help=REPLACE_HELP)
    p.add_argument("--name", help="panel name (default: the --out folder's name)")
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
    p.set_defaults(func=cmd_ingest_lmms_logs)

    adaptive = tree.group("adaptive", "adaptive evaluation inside a harness")
    p = adaptive.add_parser(
        "lmms-eval",
        help="ask an lmms-eval model, in rounds, the items that tell the most (model loaded once)",
    )
    p.add_argument("--model", required=True, help="an lmms-eval model name (lmms-eval --model)")
    p.add_argument("--model_args", "--model-args", default="", help="as lmms-eval --model_args")
    p.add_argument("--gen_kwargs", "--gen-kwargs", help="as lmms-eval --gen_kwargs")
    p.add_argument("--suite", required=True, help="suite manifest JSON or a released suite's name")
    p.add_argument("--panel")
    p.add_argument("--default", choices=[n for n in default_names() if default_kind(n) == "panel"])
    p.add_argument("--name", help="the model's name in the records (default: --model)")
    p.add_argument("--out", required=True, help="run directory (resumes when it exists)")
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
    p.set_defaults(func=cmd_adaptive_lmms)

    keys = tree.group("keys", "row keys by content for upstream datasets without ids")
    p = keys.add_parser(
        "lmms-eval",
        help="map a VLMEvalKit TSV's index onto the upstream lmms-eval rows by content",
        description="Match every row of your VLMEvalKit TSV (index, question, options, image) "
        "to exactly one row of a local copy of the upstream lmms-eval dataset (question, "
        "options, image hash); ambiguous or missing matches are refused and nothing is written.",
        epilog="example: primebench keys lmms-eval --vlmeval-tsv ~/LMUData/AI2D_TEST.tsv --upstream "
        "ai2d_local/ --split test --task ai2d --dataset AI2D_TEST --out ai2d_keys.json",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
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
    p.set_defaults(func=cmd_keys_build)
