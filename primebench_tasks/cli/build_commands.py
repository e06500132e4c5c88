"""``primebench build primebench|resampled|frontier``."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from primebench_tasks.cli.build_checks import own_suite_name, refuse_released_name, suite_checks
from primebench_tasks.cli.options import number_type
from primebench_tasks.cli.plugin import check_out_dir, load_panel, say
from primebench_tasks.data.defaults import default_kind, default_names
from primebench_tasks.data.io import atomic_write_text
from primebench_tasks.errors import PrimeBenchError

if TYPE_CHECKING:  # the numerical stack is imported by the commands, not by --help
    pass


# ---------------------------------------------------------------- build
def cmd_build_primebench(args: argparse.Namespace) -> int:
    from primebench_tasks.pipeline.primebench import PipelineParams, run_pipeline
    from primebench_tasks.report.build_report import write_primebench_report
    from primebench_tasks.report.tables import markdown_table

    check_out_dir(args)
    refuse_released_name(args.name)
    panel = load_panel(args)
    args.name = args.name or own_suite_name(panel.name)
    n_cat = len(panel.categories())
    if args.k is not None and args.until == "stage3" and args.k > n_cat:
        raise PrimeBenchError(
            f"--k {args.k}: panel {panel.name!r} has only {n_cat} categories "
            f"(give --k {n_cat} or fewer)"
        )
    k = PipelineParams().k if args.k is None else args.k
    params = PipelineParams(
        selector=args.selector,
        top_share=args.top_share,
        retention=args.retention,
        k=k,
        alpha=args.alpha,
        tau=args.tau,
        floor=args.floor,
        seed=args.seed,
        cells=args.cells,
        min_blind_models=args.min_blind_models,
        cell_space=args.cell_space,
        until=args.until,
    )
    t = time.time()
    res = run_pipeline(panel, params, progress=say)
    say(f"pipeline done in {time.time() - t:.1f}s")
    out = Path(args.out)
    calibration = None
    if not args.no_calibration:
        from primebench_tasks.place.calibration import calibration_entry

        t = time.time()
        calibration = calibration_entry(panel, params, seed=args.seed)
        say(
            f"placement calibration ({sum(map(len, calibration['regimes'].values()))} held-out "
            f"placements, {len(calibration['residuals'])} in random folds) in "
            f"{time.time() - t:.1f}s"
        )
    manifest = res.manifest(panel, args.name, calibration)
    write_primebench_report(out, panel, res, manifest)
    print(markdown_table(res.stage_table))
    print(
        f"suite: {manifest['n_items']} items in {len(manifest['categories'])} "
        f"categor{'y' if len(manifest['categories']) == 1 else 'ies'}; "
        f"end-to-end fidelity rho = {res.fidelity:.3f} ({len(panel.model_names)} models)"
    )
    h = manifest["headroom"]
    print(
        f"headroom: for the {len(h['top_models'])} best models the suite's mean minus the full "
        "benchmark's is "
        + ", ".join(
            f"{b} {v['easier_by']:+.3f} ({'easier' if v['easier_by'] > 0 else 'harder'})"
            for b, v in h["benchmarks"].items()
        )
        + f"; {h['solved_by_all']:.0%} of its items are solved by all of them; top-decile rho "
        f"{h['top_decile_rho']:.3f} ({h['n_top_decile']} models)"
    )
    print(f"manifest: {out / 'manifest.json'} (version {manifest['version']})")
    for line in suite_checks(panel, res, params.target_rho, args.seed):
        say(line)
    return 0


def cmd_build_resampled(args: argparse.Namespace) -> int:
    import numpy as np

    from primebench_tasks.embed.projection import PROJECTION_DIM
    from primebench_tasks.pipeline.manifest import build_manifest, write_manifest
    from primebench_tasks.pipeline.resampled import resampled_suite

    check_out_dir(args)
    panel = load_panel(args)
    res = resampled_suite(
        panel, n=args.n, space=args.space, per_benchmark=args.per_benchmark, seed=args.seed
    )
    selected: dict[str, dict[str, np.ndarray]] = {panel.category_of(b): {} for b in res.selected}
    for b, pos in res.selected.items():
        selected[panel.category_of(b)][b] = pos
    manifest = build_manifest(
        args.name,
        panel,
        selected,
        {
            "selector": "fps",
            "n": args.n,
            "space": args.space,
            "per_benchmark": args.per_benchmark,
            "seed": args.seed,
            "projection_dim": PROJECTION_DIM,
        },
        [],
        {
            "rho": res.rho,
            "protocol": "same-models: mean on selected items vs -AvgRank (Eq. 1)",
            "n_models": len(panel.model_names),
        },
        aggregate="item_mean",
    )
    out = Path(args.out)
    write_manifest(manifest, out / "manifest.json")
    print(f"ResampledBench: {res.n} items; rho with AvgRank = {res.rho:.3f}")
    print(f"manifest: {out / 'manifest.json'} (version {manifest['version']})")
    return 0


def cmd_build_frontier(args: argparse.Namespace) -> int:
    import numpy as np

    from primebench_tasks.pipeline.frontier import BAND, FAMILY_MAX, capability_frontier
    from primebench_tasks.pipeline.manifest import build_manifest, write_manifest
    from primebench_tasks.pipeline.stage0_clean import stage0_clean
    from primebench_tasks.report.tables import markdown_table

    check_out_dir(args)
    panel = load_panel(args)
    s0 = stage0_clean(panel)
    fr = capability_frontier(panel, s0.keep, budget=args.budget)
    n_kept = sum(len(pos) for pos in fr.selected.values())
    if n_kept == 0:
        raise PrimeBenchError(
            f"the Capability Frontier kept no item of panel {panel.name!r}: {fr.n_candidates} "
            f"candidate(s), {fr.n_in_band} in the {BAND[0]:.0%}-{BAND[1]:.0%} accuracy band; "
            "it needs items that "
            "few models solve (App. I.2) — nothing was written"
        )
    selected: dict[str, dict[str, np.ndarray]] = {}
    for b, pos in fr.selected.items():
        selected.setdefault(panel.category_of(b), {})[b] = pos
    manifest = build_manifest(
        args.name,
        panel,
        selected,
        {
            "selector": "frontier",
            "budget": fr.budget,
            "family_max": FAMILY_MAX,
            "band": list(BAND),
            "per_step_gain": fr.per_step_gain,
        },
        [
            {"stage": "candidates", "output": fr.n_candidates},
            {"stage": "in band", "output": fr.n_in_band},
        ],
        {"rho": None, "protocol": "descriptive stress set (App. I.2); no ranking target"},
        aggregate="item_mean",
    )
    out = Path(args.out)
    write_manifest(manifest, out / "manifest.json")
    atomic_write_text(
        out / "report.md",
        "# Capability Frontier\n\n"
        f"candidates {fr.n_candidates}, in band {fr.n_in_band}, budget {fr.budget}"
        "\n\n## Model axes\n\n" + markdown_table(fr.axes),
    )
    print(
        f"Frontier: {fr.n_candidates} candidates, {fr.n_in_band} in band, kept {n_kept} "
        f"(budget {fr.budget})"
    )
    print(markdown_table(fr.axes))
    return 0


def add_build_commands(sub: argparse._SubParsersAction) -> None:
    build = sub.add_parser("build", help="build a compact suite").add_subparsers(
        dest="build_command", required=True
    )

    def source(q: argparse.ArgumentParser) -> None:
        q.add_argument("--panel")
        q.add_argument(
            "--default", choices=[n for n in default_names() if default_kind(n) == "panel"]
        )
        q.add_argument("--seed", type=int, default=0)
        q.add_argument("--out", required=True, help="output folder (new or empty)")
        q.add_argument(
            "--overwrite",
            action="store_true",
            help="replace the outputs in an existing --out folder",
        )

    from primebench_tasks.pipeline.params import PipelineParams

    p = build.add_parser("primebench", help="the four-stage PRIMEBench pipeline")
    source(p)
    d = PipelineParams()
    p.add_argument(
        "--retention",
        type=number_type(float, 0, 1, lo_open=True),
        default=d.retention,
        help=f"share of each category pool kept by Stage 2, in (0, 1] (default {d.retention})",
    )
    p.add_argument(
        "--k",
        type=number_type(int, 1),
        default=None,
        help=f"categories kept by Stage 3, 1 .. the panel's categories (default "
        f"{d.k}, or all categories when the panel has fewer)",
    )
    p.add_argument(
        "--alpha",
        type=number_type(float, 0, 1),
        default=d.alpha,
        help=f"VAW weight α in [0, 1] (default {d.alpha})",
    )
    p.add_argument(
        "--tau",
        type=number_type(float, 0, 1),
        default=d.tau,
        help=f"Stage 0 blind-solvable threshold τ in [0, 1] (default {d.tau:.4f})",
    )
    p.add_argument(
        "--floor",
        type=number_type(int, 0),
        default=d.floor,
        help=f"minimum items per category pool, >= 0 (default {d.floor})",
    )
    p.add_argument(
        "--min-blind-models",
        type=int,
        default=3,
        help="blind filter only where at least this many models ran without images",
    )
    p.add_argument(
        "--selector",
        default=d.selector,
        help=f"Stage 2 selector (default {d.selector}): vaw (the paper's; uses "
        "--alpha and --cells) or any name of `primebench validate --selectors`",
    )
    p.add_argument(
        "--top-share",
        type=number_type(float, 0, 0.9),
        default=d.top_share,
        help=f"share of each benchmark's budget reserved for the items that separate the "
        f"strongest {round(100 * d.top_fraction)} %% of the models (headroom; 0 = the papers' selection; "
        f"default {d.top_share})",
    )
    p.add_argument(
        "--cells",
        choices=["embedding", "random", "none", "dpp", "responses"],
        default="embedding",
        help="cells of --selector vaw",
    )
    p.add_argument("--cell-space", default="auto", help="auto|vl|text|none")
    p.add_argument("--until", choices=["stage0", "stage1", "stage2", "stage3"], default="stage3")
    p.add_argument(
        "--name",
        help="the suite's name (default: <panel name>_suite; never a released suite's name, "
        "whose lmms-eval tasks it would shadow)",
    )
    p.add_argument(
        "--no-calibration",
        action="store_true",
        help="skip the placement calibration (10 suites rebuilt without a tenth of "
        "the models, stored in the manifest for honest placement intervals)",
    )
    p.set_defaults(func=cmd_build_primebench)
    p = build.add_parser("resampled", help="ResampledBench (farthest point sampling)")
    source(p)
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--space", default="text")
    p.add_argument("--per-benchmark", action="store_true")
    p.add_argument("--name", default="resampledbench")
    p.set_defaults(func=cmd_build_resampled)
    p = build.add_parser("frontier", help="the Capability Frontier stress set")
    source(p)
    p.add_argument("--budget", type=int)
    p.add_argument("--name", default="frontier")
    p.set_defaults(func=cmd_build_frontier)
