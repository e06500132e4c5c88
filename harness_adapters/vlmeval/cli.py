"""``primebench`` sub-commands of the VLMEvalKit adapter: `vlmeval export`, `ingest vlmeval` (a ``primebench.commands`` plugin)."""

from __future__ import annotations

import argparse
from pathlib import Path

from primebench_tasks.cli import CommandTree
from primebench_tasks.data.panel import Panel


def cmd_vlmeval_export(args: argparse.Namespace) -> int:
    from harness_adapters.vlmeval.export import export_suite
    from primebench_tasks.pipeline.manifest import read_manifest

    out = export_suite(read_manifest(args.manifest), args.source_tsv, args.lmudata)
    for name, path in out.items():
        print(f"{name}: {path}")
    print(f"config: {Path(args.lmudata) / 'primebench_vlmeval_config.json'}")
    return 0


def cmd_ingest_vlmeval(args: argparse.Namespace) -> int:
    from harness_adapters.vlmeval.export import dataset_name
    from harness_adapters.vlmeval.ingest import read_results
    from primebench_tasks.refresh.records import append_records

    root = Path(args.panel)
    panel = Panel.load(root)
    records = read_results(args.work_dir, {dataset_name(b): b for b in panel.benchmark_names})
    panel, rep = append_records(panel, records, str(args.work_dir))
    if rep.n_new:
        panel.save(root)
    print("\n".join(rep.lines()))
    return 0


def add_commands(tree: CommandTree) -> None:
    ingest = tree.group("ingest", "harness results into a Panel")
    p = ingest.add_parser("vlmeval", help="a VLMEvalKit work directory")
    p.add_argument("work_dir")
    p.add_argument("--panel", required=True, help="a writable panel directory")
    p.set_defaults(func=cmd_ingest_vlmeval)
    vlm = tree.group("vlmeval", "VLMEvalKit datasets")
    p = vlm.add_parser("export", help="LMUData TSVs holding exactly a suite's items")
    p.add_argument("--manifest", required=True)
    p.add_argument("--source-tsv", required=True, help="folder of the upstream <dataset>.tsv")
    p.add_argument("--lmudata", required=True)
    p.set_defaults(func=cmd_vlmeval_export)

