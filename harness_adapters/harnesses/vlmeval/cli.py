"""``primebench`` sub-commands of the VLMEvalKit adapter (a ``primebench.commands`` plugin):
``tasks vlmeval`` (a suite's rows as LMUData TSVs), ``evaluate vlmeval`` (VLMEvalKit's ``run.py``
with the suite's datasets registered), ``ingest vlmeval`` (results into a panel) and ``adaptive
vlmeval`` (the adaptive test through VLMEvalKit's inference, the model built once).
``primebench place --vlmeval`` is in :mod:`harness_adapters.run.report`."""

from __future__ import annotations

import argparse
import os
import runpy
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from primebench_tasks.cli import CommandTree, parse_pairs
from primebench_tasks.cli.options import REPLACE_HELP
from primebench_tasks.errors import InputError

if TYPE_CHECKING:
    pass


def cmd_vlmeval_export(args: argparse.Namespace) -> int:
    from harness_adapters.harnesses.vlmeval.export import CONFIG_NAME, export_suite
    from harness_adapters.suites.released import resolve_suite

    manifest = resolve_suite(args.suite)
    keys = parse_pairs(args.key or [], "--key", "BENCHMARK=COLUMN")
    only = [s.strip() for s in args.only.split(",") if s.strip()] if args.only else None
    out = export_suite(manifest, args.source_tsv, args.lmudata, keys, only)
    for name, path in out.items():
        print(f"{name}: {path}")
    print(
        f"config: {Path(args.lmudata) / CONFIG_NAME}\nrun: LMUData={args.lmudata} primebench "
        f"evaluate vlmeval -- --data {' '.join(out)} --model <model>"
    )
    return 0


def vlmeval_run_py(root: str | None) -> Path:
    """VLMEvalKit's ``run.py``: in ``root``, else next to the installed ``vlmeval`` package (a
    source checkout, as VLMEvalKit is installed)."""
    if root is None:
        import vlmeval

        root = str(Path(vlmeval.__file__).resolve().parents[1])
    path = Path(root) / "run.py"
    if not path.exists():
        raise InputError(
            "VLMEvalKit's run.py is not here; pass --vlmeval-root (the folder of "
            "your VLMEvalKit checkout)",
            file=str(path),
        )
    return path


def cmd_vlmeval_run(args: argparse.Namespace) -> int:
    """Register the export's datasets, import the user's modules, then run VLMEvalKit's run.py
    in this process with the remaining arguments."""
    import importlib

    from harness_adapters.harnesses.vlmeval.datasets import register
    from harness_adapters.harnesses.vlmeval.registration import PrimeBenchMixin

    if args.lmudata:
        os.environ["LMUData"] = str(Path(args.lmudata).resolve())
    run_py = vlmeval_run_py(args.vlmeval_root)
    names = register(os.environ.get("LMUData"))
    for mod in args.import_ or []:
        importlib.import_module(mod)
    print(f"registered {len(names)} PrimeBench dataset(s): {', '.join(names)}", file=sys.stderr)
    rest = list(args.run_args)
    if rest[:1] == ["--"]:
        rest = rest[1:]
    argv, sys.argv = sys.argv, [str(run_py), *rest]
    sys.path.insert(0, str(run_py.parent))
    status = 0
    try:
        runpy.run_path(str(run_py), run_name="__main__")
    except SystemExit as exc:  # run.py's own exit status
        status = int(exc.code or 0) if not isinstance(exc.code, str) else 1
    finally:
        sys.argv = argv
    failed = {k: v for k, v in PrimeBenchMixin.OUTCOMES.items() if isinstance(v, BaseException)}
    for name, err in failed.items():  # run.py logs these and exits 0
        print(
            f"error: VLMEvalKit's evaluation of {name} failed: {type(err).__name__}: {err}",
            file=sys.stderr,
        )
    for name, side in PrimeBenchMixin.OUTCOMES.items():
        if not isinstance(side, BaseException):
            print(f"{name}: evaluated, results for primebench in {side}", file=sys.stderr)
    return status or (1 if failed else 0)


def cmd_ingest_vlmeval(args: argparse.Namespace) -> int:
    from harness_adapters.harnesses.vlmeval.ingest import read_results
    from primebench_tasks.data.panel import Panel, panel_lock
    from primebench_tasks.refresh.records import append_records

    root = Path(args.panel)
    with panel_lock(root):  # read-modify-write as one step
        panel = Panel.load(root)
        records = read_results(args.work_dir, args.model)
        panel, rep = append_records(panel, records, str(args.work_dir))
        if rep.n_new:
            panel.save(root)
    print("\n".join(rep.lines()))
    return 0


def cmd_vlmeval_import_records(args: argparse.Namespace) -> int:
    from harness_adapters.harnesses.vlmeval.records import records_panel
    from primebench_tasks.data.importers import save_imported_panel, saved_panel_text

    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    panel, report = records_panel(
        args.records,
        datasets,
        name=args.name or Path(args.out).name,
        rule=args.rule,
        max_unanswered=args.max_unanswered,
        progress=lambda m: print(f"[primebench] {m}", file=sys.stderr, flush=True),
    )
    done = save_imported_panel(panel, args.out, replace=args.replace)
    print("\n".join(report.lines()))
    print(saved_panel_text(done, args.out, panel))
    return 0


def cmd_adaptive_vlmeval(args: argparse.Namespace) -> int:
    import importlib

    from harness_adapters.harnesses.vlmeval.adaptive import run_adaptive_vlmeval
    from harness_adapters.run.options import adaptive_settings, print_adaptive
    from harness_adapters.run.report import reference_panels
    from harness_adapters.suites.released import resolve_suite

    for mod in args.import_ or []:
        importlib.import_module(mod)
    suite = resolve_suite(args.suite)
    doc = run_adaptive_vlmeval(
        args.model,
        suite,
        reference_panels(suite, None),
        args.source_tsv,
        args.out,
        adaptive_settings(args),
        judge=args.judge,
        api_nproc=args.api_nproc,
        progress=lambda m: print(f"[primebench] {m}", file=sys.stderr, flush=True),
    )
    print_adaptive(doc, Path(args.out))
    return 0


def add_commands(tree: CommandTree) -> None:
    from harness_adapters.harnesses.vlmeval.help import EXAMPLES, OPTION_HELP

    tree.add_help(OPTION_HELP, EXAMPLES)
    tree.rename("vlmeval export", "tasks vlmeval")
    tree.rename("vlmeval import-records", "ingest vlmeval-records")
    tree.rename("vlmeval run", "evaluate vlmeval")
    ingest = tree.group("ingest", "harness results into a Panel")
    p = ingest.add_parser(
        "vlmeval",
        help="a VLMEvalKit work directory",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("work_dir", help="run.py's --work-dir (or one model's folder in it)")
    p.add_argument("--panel", required=True, help="a writable panel directory")
    p.add_argument("--model", help="only this model (default: every model found)")
    p.set_defaults(func=cmd_ingest_vlmeval)
    tasks = tree.group("tasks", "harness task configs from a manifest")
    p = tasks.add_parser(
        "vlmeval",
        help="LMUData TSVs holding exactly a suite's items",
        description="Filter your upstream VLMEvalKit TSVs to the suite's items (every column "
        "kept; shared images carried) and write the config that `evaluate vlmeval` registers.",
        epilog="example: primebench tasks vlmeval --suite primebench --source-tsv ~/LMUData "
        "--lmudata ~/LMUData --only MMMU_DEV_VAL,MathVista_MINI",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument(
        "--suite",
        required=True,
        help="a released suite's name (primebench, ...) or a manifest JSON",
    )
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
    p.set_defaults(func=cmd_vlmeval_export)
    p = ingest.add_parser(
        "vlmeval-records",
        help="a folder of VLMEvalKit evaluation records (<model>/<model>_<DATASET>.xlsx) as a panel",
        description="Score the raw predictions of VLMEvalKit's published records (the OpenVLM "
        "leaderboard's EvalRecords layout) without a judge: multiple choice with VLMEvalKit's own "
        "can_infer when VLMEvalKit is importable (else a port of it; their agreement is "
        "reported), OCRBench with its substring rule. One run per model and dataset counts (the "
        "top-level file, else the newest T<date>_G<commit> run); models with mostly empty or "
        "unparseable predictions are reported and left out, not scored 0.",
        epilog="example: primebench ingest vlmeval-records ../shared/data/openvlm_records/"
        "EvalRecords --datasets BLINK,OCRBench,RealWorldQA --out panels/openvlm_records",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("records", help="the records folder (one sub-folder per model)")
    p.add_argument(
        "--datasets",
        default="BLINK,OCRBench,RealWorldQA",
        help="comma-separated VLMEvalKit dataset names",
    )
    p.add_argument("--out", required=True, help="the panel folder to write")
    p.add_argument("--replace", action="store_true", help=REPLACE_HELP)
    p.add_argument("--name", help="panel name (default: the --out folder's name)")
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
    p.set_defaults(func=cmd_vlmeval_import_records)
    evaluate = tree.group("evaluate", "run a harness on a suite's items")
    p = evaluate.add_parser(
        "vlmeval",
        help="VLMEvalKit's run.py with the suite's datasets registered",
        description="Registers the PrimeBench datasets of $LMUData's export with the installed "
        "VLMEvalKit, then runs its run.py in this process with the arguments after `--`. "
        "MathVista needs --judge exact_matching when no judge API is configured (rule-based "
        "extraction only).",
        epilog="example: LMUData=~/LMUData primebench evaluate vlmeval -- --data "
        "PrimeBench_MMMU_DEV_VAL PrimeBench_MathVista_MINI --model Qwen2-VL-2B-Instruct "
        "--judge exact_matching --work-dir outputs",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--lmudata", help="the LMUData folder (default: $LMUData)")
    p.add_argument(
        "--vlmeval-root",
        help="VLMEvalKit checkout holding run.py (default: the "
        "folder above the installed vlmeval package)",
    )
    p.add_argument(
        "--import",
        dest="import_",
        action="append",
        metavar="MODULE",
        help="import this module first (e.g. one that adds your model class to vlmeval.vlm)",
    )
    p.add_argument("run_args", nargs=argparse.REMAINDER, help="run.py's arguments, after --")
    p.set_defaults(func=cmd_vlmeval_run)

    from harness_adapters.run.options import adaptive_budget_options

    adaptive = tree.group("adaptive", "adaptive evaluation inside a harness")
    p = adaptive.add_parser(
        "vlmeval",
        help="ask a VLMEvalKit model, in rounds, the items that tell the most (model built once)",
        description="Each round's items are exported as VLMEvalKit datasets from your upstream "
        "TSVs and run by VLMEvalKit's own inference and evaluation with the model built once; "
        "records, stopping rule and report as `primebench run --adaptive`.",
    )
    p.add_argument("--model", required=True, help="a VLMEvalKit model name (run.py --model)")
    p.add_argument("--suite", required=True, help="suite manifest JSON or a released suite's name")
    p.add_argument(
        "--source-tsv",
        required=True,
        help="folder of the upstream VLMEvalKit TSVs (LMUData): every pool item must be a row",
    )
    p.add_argument("--out", required=True, help="run directory (resumes when it exists)")
    p.add_argument("--judge", default="exact_matching", help="as run.py --judge")
    p.add_argument("--api-nproc", type=int, default=1, help="as run.py --api-nproc")
    p.add_argument(
        "--import",
        dest="import_",
        action="append",
        metavar="MODULE",
        help="import MODULE first (to register your own VLMEvalKit model)",
    )
    adaptive_budget_options(p, True, "one VLMEvalKit inference and evaluation per round")
    p.set_defaults(func=cmd_adaptive_vlmeval)
