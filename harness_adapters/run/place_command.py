"""``primebench place``: the command over :mod:`harness_adapters.run.report` for every harness's
output (an lmms-eval output folder, a VLMEvalKit work dir, any installed harness's run): the
harness (``--harness``, or the one that recognises the folder; :mod:`primebench_tasks.suite.harness`)
reads the run, and one placement path does the rest. It imports no harness."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness_adapters.run.report import write_placement
from harness_adapters.run.request import run_lock
from primebench_tasks.cli import CommandTree
from primebench_tasks.errors import PrimeBenchError
from primebench_tasks.place.defaults import DEFAULT_ESTIMATOR, N_BOOT
from primebench_tasks.place.report import conditions_markdown, report_markdown


def cmd_place(args: argparse.Namespace) -> int:
    from primebench_tasks.data.panel import Panel
    from primebench_tasks.suite.harness import check_records, harness_for

    panel = Panel.load(args.panel) if args.panel else None
    board = None
    if args.leaderboard:
        from primebench_tasks.data.leaderboard import Leaderboard

        board = Leaderboard.load(args.leaderboard)
    dest = Path(args.out) if args.out else Path(args.output_dir) / "primebench"
    name = "vlmeval" if args.vlmeval else args.harness
    if (dest / "run_spec.json").exists() and (dest / "report.json").exists() and not args.overwrite:
        raise PrimeBenchError(
            f"{dest} is a finished run's folder and its report.json is the run's own: placing "
            "another harness's run there would replace it; give another --out (or --overwrite "
            "to replace it)"
        )
    replacing = (dest / "report.json").exists()
    harness = harness_for(args.output_dir, name)
    run = check_records(harness.read_run(Path(args.output_dir), args.model), harness.name)
    # the report folder may be a run folder (``--out RUN``) that a run is writing: the run's
    # lock is held while the report is written, so the two never interleave there
    with run_lock(dest):
        doc = write_placement(
            run.records,
            run.suite_version,
            dest,
            args.suite,
            panel,
            args.estimator,
            args.n_boot,
            args.seed,
            args.allow_partial,
            conditions=run.conditions,
            lmms_eval_code=run.lmms_eval_tasks,
            leaderboard=board,
        )
    print(report_markdown(doc))
    print("\n".join(conditions_markdown(doc)))  # where each benchmark was placed, how new
    written = ", ".join(str(dest / f) for f in ("report.json", "report.md", "placement.png"))
    print(
        f"wrote {written} ({harness.name} run"
        + ("; the earlier report there replaced)" if replacing else ")")
    )
    return 0


def add_commands(tree: CommandTree) -> None:
    p = tree.sub.add_parser(
        "place",
        help="score, predicted full-suite score and rank of a harness run",
        description="Read a harness run of a PRIMEBench suite — lmms-eval's --log_samples "
        "output, a VLMEvalKit work dir, any installed harness's run — and place each model: suite score, "
        "per-category and per-benchmark scores, predicted full scores and ranks among the "
        "reference models, with 95 % intervals.",
        epilog="examples: lmms-eval --model M --tasks primebench --log_samples --output_path "
        "out/ && primebench place out/  |  primebench evaluate vlmeval -- --data "
        "PrimeBench_MMMU_DEV_VAL --model M && primebench place --vlmeval outputs/M",
        # defaults said in each help text, once (ArgumentDefaultsHelpFormatter said them twice)
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("output_dir", help="lmms-eval's --output_path, or a VLMEvalKit work dir")
    p.add_argument(
        "--harness",
        help="the harness that wrote OUTPUT_DIR (an installed primebench.harnesses entry point: "
        "lmms-eval, vlmeval, ...; default: the one that recognises the folder)",
    )
    p.add_argument(
        "--vlmeval",
        action="store_true",
        help="the same as --harness vlmeval (OUTPUT_DIR is a VLMEvalKit work dir)",
    )
    p.add_argument("--out", help="report folder (default: OUTPUT_DIR/primebench)")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the report of a finished run folder given as --out (refused otherwise)",
    )
    p.add_argument(
        "--suite",
        help="the suite manifest (default: the released suite whose version the run names)",
    )
    p.add_argument("--panel", help="reference panel (default: the suite's embedded panels)")
    p.add_argument(
        "--leaderboard",
        help="a leaderboard snapshot folder from `primebench panel import-leaderboard` to rank "
        "the predicted full scores on (default: the embedded OpenVLM snapshot, to 2025-09)",
    )
    p.add_argument("--model", help="place only this model (default: every model of the run)")
    p.add_argument(
        "--estimator", default=DEFAULT_ESTIMATOR, help="full-score estimator (default: %(default)s)"
    )
    p.add_argument(
        "--n-boot",
        type=int,
        default=N_BOOT,
        help="bootstrap resamples (default: %(default)s)",
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: %(default)s)")
    p.add_argument(
        "--allow-partial",
        action="store_true",
        help="place a run in which some benchmarks have no result",
    )
    p.set_defaults(func=cmd_place)
