"""``primebench place``: the command over :mod:`harness_adapters.placement` for every harness's
output (an lmms-eval output folder, a VLMEvalKit work dir). It imports the harness readers; the
placement core imports none of them (no import circle between the two)."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness_adapters.placement import report_markdown, write_placement
from primebench_tasks.cli import CommandTree
from primebench_tasks.errors import InputError
from primebench_tasks.evaluate.defaults import DEFAULT_ESTIMATOR, N_BOOT


def cmd_place(args: argparse.Namespace) -> int:
    from primebench_tasks.data.panel import Panel

    panel = Panel.load(args.panel) if args.panel else None
    dest = Path(args.out) if args.out else Path(args.output_dir) / "primebench"
    if args.vlmeval:
        from harness_adapters.vlmeval.ingest import read_work_dir

        records, docs = read_work_dir(args.output_dir, args.model)
        versions = sorted({d["suite"] for d in docs})
        if len(versions) != 1:
            raise InputError(
                f"the work dir holds results of {len(versions)} suite versions "
                f"({versions}); place one suite at a time (--model, or one folder)",
                file=str(args.output_dir),
            )
        doc = write_placement(
            records,
            versions[0],
            dest,
            args.suite,
            panel,
            args.estimator,
            args.n_boot,
            args.seed,
            args.allow_partial,
        )
    else:
        from harness_adapters.lmms_eval.place import place_run

        doc = place_run(
            args.output_dir,
            dest,
            args.suite,
            panel,
            args.model,
            args.estimator,
            args.n_boot,
            args.seed,
            args.allow_partial,
        )
    print(report_markdown(doc, doc["missing"]))
    print(f"wrote {dest / 'report.json'}, report.md, placement.png")
    return 0


def add_commands(tree: CommandTree) -> None:
    p = tree.sub.add_parser(
        "place",
        help="score, predicted full-suite score and rank of a harness run",
        description="Read a harness run of a PRIMEBench suite — lmms-eval's --log_samples "
        "output, or with --vlmeval a VLMEvalKit work dir — and place each model: suite score, "
        "per-category and per-benchmark scores, predicted full scores and ranks among the "
        "reference models, with 95%% intervals.",
        epilog="examples: lmms-eval --model M --tasks primebench --log_samples --output_path "
        "out/ && primebench place out/  |  primebench vlmeval run -- --data "
        "PrimeBench_MMMU_DEV_VAL --model M && primebench place --vlmeval outputs/M",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("output_dir", help="lmms-eval's --output_path, or a VLMEvalKit work dir")
    p.add_argument(
        "--vlmeval",
        action="store_true",
        help="OUTPUT_DIR is a VLMEvalKit work dir (run.py --work-dir or a model's folder in it)",
    )
    p.add_argument("--out", help="report folder (default: OUTPUT_DIR/primebench)")
    p.add_argument(
        "--suite",
        help="the suite manifest (default: the released suite whose version the run names)",
    )
    p.add_argument("--panel", help="reference panel (default: the suite's embedded panels)")
    p.add_argument("--model", help="place only this model (default: every model of the run)")
    p.add_argument("--estimator", default=DEFAULT_ESTIMATOR, help="full-score estimator")
    p.add_argument("--n-boot", type=int, default=N_BOOT, help="bootstrap resamples")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    p.add_argument(
        "--allow-partial",
        action="store_true",
        help="place a run in which some benchmarks have no result",
    )
    p.set_defaults(func=cmd_place)
