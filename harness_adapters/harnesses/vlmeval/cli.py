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

from primebench_tasks.cli import parse_pairs
from primebench_tasks.errors import InputError

if TYPE_CHECKING:
    pass


def cmd_vlmeval_export(args: argparse.Namespace) -> int:
    from harness_adapters.harnesses.vlmeval.export import CONFIG_NAME, export_suite, read_config
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
    for b, why in read_config(args.lmudata).get("missing", {}).items():  # said, not dropped
        print(f"missing: {b}: {why}")
    return 0


def vlmeval_run_py(root: str | None) -> Path:
    """VLMEvalKit's ``run.py``: in ``root``, else next to the installed ``vlmeval`` package (a
    source checkout, as VLMEvalKit is installed)."""
    if root is None:
        from harness_adapters.harnesses.vlmeval.registration import import_vlmeval

        root = str(Path(import_vlmeval().__file__).resolve().parents[2])
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
    from harness_adapters.harnesses.vlmeval.registration import import_vlmeval
    from harness_adapters.run.options import adaptive_settings, print_adaptive
    from harness_adapters.run.report import reference_panels
    from harness_adapters.suites.released import resolve_suite

    import_vlmeval()  # a missing VLMEvalKit is one line, before any work
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
