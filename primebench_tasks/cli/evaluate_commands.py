"""``primebench validate``, ``refresh``, ``suites history``, ``replay`` and ``prism aggregate``."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from primebench_tasks.cli.options import item_counts, number_type
from primebench_tasks.cli.plugin import CommandTree, load_panel, say
from primebench_tasks.data.defaults import default_kind, default_names
from primebench_tasks.data.io import atomic_write_text
from primebench_tasks.errors import PrimeBenchError, shown
from primebench_tasks.evaluate.defaults import RETENTIONS
from primebench_tasks.pipeline.params import K
from primebench_tasks.select.default import FLOOR

if TYPE_CHECKING:  # the numerical stack is imported by the commands, not by --help
    from primebench_tasks.data.panel import Panel

ESTIMATORS_DEFAULT = "mean,greg,pirt,gpirt,aipw"
"""``validate --estimators``' default (``evaluate.validate.ESTIMATORS``, kept light here)."""
VALIDATE_FILES = ("splits.csv", "summary.csv", "summary_by_category.csv", "table.md",
                  "rho_vs_retention.png", "mae_vs_items.png", "rho_vs_items.png")  # fmt: skip


def cmd_validate(args: argparse.Namespace) -> int:
    from primebench_tasks.data.importers import panel_with_benchmarks
    from primebench_tasks.evaluate.validate import validate, validate_text

    panel = load_panel(args)
    if args.benchmarks:
        panel = panel_with_benchmarks(panel, args.benchmarks.split(","))
    if args.protocol == "adaptive":
        return _validate_adaptive(args, panel)
    budgets = item_counts(args.budgets, "--budgets")
    # budgets given → only those budgets, unless retentions are asked for too
    spec = (
        args.retentions
        if args.retentions is not None
        else ("" if budgets else ",".join(map(str, RETENTIONS)))
    )
    ret_parse = number_type(float, 0, 1, lo_open=True)
    try:
        rets = [ret_parse(x) for x in spec.split(",") if x.strip()]
    except argparse.ArgumentTypeError as exc:
        raise PrimeBenchError(f"--retentions: {exc}") from None
    t = time.time()
    summary = validate(
        panel,
        Path(args.out),
        args.protocol,
        args.selectors,
        rets,
        args.splits,
        args.seed,
        args.estimators.split(","),
        progress=say,
        floor=FLOOR if args.floor is None else args.floor,
        budgets=budgets,
    )
    say(f"validate done in {time.time() - t:.1f}s")
    print(validate_text(summary, args.splits))
    _say_written(Path(args.out), list(VALIDATE_FILES))
    return 0


def _say_written(out: Path, names: list[str]) -> None:
    """ "wrote OUT/a, b": the files of ``names`` there (not a plot the protocol did not draw)."""
    print(f"wrote {out}/{', '.join(n for n in names if (out / n).exists())}")


def _validate_adaptive(args: argparse.Namespace, panel: Panel) -> int:
    """``validate --protocol adaptive``: the replay protocol of the adaptive test
    (:func:`~primebench_tasks.evaluate.adaptive_validation.validate_adaptive`); ``--budgets``
    are item counts per benchmark. Selectors, estimators and retentions belong to the static
    protocols: given, they are refused rather than ignored."""
    from primebench_tasks.evaluate.adaptive_validation import CHECKPOINTS, validate_adaptive
    from primebench_tasks.report.tables import markdown_table

    for flag, value, default in (
        ("--retentions", args.retentions, None),
        ("--selectors", args.selectors, "all"),
        ("--estimators", args.estimators, ESTIMATORS_DEFAULT),
        ("--floor", args.floor, None),
    ):
        if value != default:
            raise PrimeBenchError(
                f"{flag} does not apply to --protocol adaptive (it replays the library's adaptive "
                "policy against the static default suite); give --budgets for its item counts"
            )
    counts = item_counts(args.budgets, "--budgets")
    t = time.time()
    summary = validate_adaptive(
        panel,
        Path(args.out),
        n_splits=args.splits,
        seed=args.seed,
        checkpoints=counts or CHECKPOINTS,
        progress=say,
    )
    say(f"validate done in {time.time() - t:.1f}s")
    print(markdown_table(summary.round(3)))
    _say_written(Path(args.out), ["models.csv", "summary.csv", "table.md", "mae_vs_items.png", "spec.json"])  # fmt: skip  # noqa: E501
    return 0


def cmd_refresh(args: argparse.Namespace) -> int:
    from primebench_tasks.refresh.loop import refresh
    from primebench_tasks.refresh.policy import RefreshPolicy

    panel = load_panel(args)
    res = refresh(
        panel,
        args.records,
        args.suite,
        Path(args.out),
        RefreshPolicy.always()
        if args.force
        else RefreshPolicy(args.max_drop, args.min_percentile, args.min_gain),
        explore=args.explore,
        n_random=args.random_suites,
        progress=say,
    )
    print(res.report)
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    from primebench_tasks.refresh.loop import history
    from primebench_tasks.report.tables import markdown_table

    h = history(Path(args.dir))
    if h.empty:
        raise PrimeBenchError(f"no published suite versions in {args.dir}")
    print(markdown_table(h))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from primebench_tasks.data.leaderboard import Leaderboard
    from primebench_tasks.refresh.replay import replay_leaderboard, replay_panel
    from primebench_tasks.report.tables import markdown_table

    out = Path(args.out)
    if args.default and default_kind(args.default) == "leaderboard":
        table = replay_leaderboard(
            Leaderboard.load_default(args.default), k=args.k, start=args.start, waves=args.waves
        )
        head = f"frozen benchmarks: {', '.join(table.attrs['frozen'])}"
    else:
        table = replay_panel(load_panel(args), start=args.start, waves=args.waves, progress=say)
        head = "frozen: the PRIMEBench suite built on the oldest models"
    atomic_write_text(out / "replay.csv", table.to_csv(index=False))
    md = f"# Replay on {args.default or args.panel}\n\n{head}\n\n" + markdown_table(table)
    atomic_write_text(out / "replay.md", md)
    print(md)
    return 0


def cmd_prism_aggregate(args: argparse.Namespace) -> int:
    import numpy as np
    import pandas as pd

    from primebench_tasks.errors import InputError
    from primebench_tasks.prism.axes import AXES
    from primebench_tasks.prism.pscore import (
        aggregate,
        dominant_axis,
        effective_weights,
        leave_one_axis_out,
    )
    from primebench_tasks.report.tables import markdown_table

    f = args.axis_means
    try:
        df = pd.read_csv(f)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise InputError(f"cannot read axis means: {exc}", file=f) from None
    missing = [c for c in ("model", *AXES) if c not in df.columns]
    if missing:
        raise InputError("required column is missing", file=f, row=1, field=missing[0])
    S = df.set_index("model")[list(AXES)]
    for ax in AXES:
        v = pd.to_numeric(S[ax], errors="coerce")
        bad = v.isna() | (v <= 0) | (v > 1)
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(
                f"axis mean {shown(S[ax].iloc[i])} is not in (0, 1]", file=f, row=i + 2, field=ax
            )
        S[ax] = v
    weights = {}
    for part in args.weights.split(",") if args.weights else []:
        k, _, v = part.partition("=")
        if k not in AXES:
            raise InputError(f"unknown axis {k!r} in --weights", field="weights")
        weights[k] = float(v)
    out = Path(args.out)
    ps = aggregate(S, args.aggregator, weights or None)
    table = pd.DataFrame(
        {
            "model": S.index,
            "pscore": ps.round(4).to_numpy(),
            "dominant_axis": dominant_axis(S).to_numpy(),
        }
    )
    atomic_write_text(out / "pscore.csv", table.to_csv(index=False))
    atomic_write_text(
        out / "effective_weights.csv",
        effective_weights(S).round(4).reset_index().to_csv(index=False),
    )
    atomic_write_text(
        out / "loao.csv", leave_one_axis_out(S, args.aggregator).round(4).to_csv(index=False)
    )
    print(markdown_table(table.sort_values("pscore", ascending=False)))
    return 0


def add_evaluate_commands(sub: argparse._SubParsersAction, tree: CommandTree) -> None:
    p = sub.add_parser("validate", help="selector fidelity on held-out models")
    p.add_argument("--panel")
    p.add_argument("--default", choices=[n for n in default_names() if default_kind(n) == "panel"])
    p.add_argument("--benchmarks", help="comma list: restrict the panel to these benchmarks")
    p.add_argument("--selectors", default="all")
    p.add_argument("--estimators", default=ESTIMATORS_DEFAULT)
    p.add_argument(
        "--protocol",
        choices=["heldout", "chrono", "frontier", "gap", "e2e", "same", "adaptive"],
        default="heldout",
    )
    p.add_argument(
        "--retentions",
        default=None,
        help="comma list of retentions in (0, 1] (each with the --floor; default "
        f"{','.join(map(str, RETENTIONS))}; "
        "none when --budgets is given)",
    )
    p.add_argument(
        "--budgets",
        help="comma list of budgets in items per category pool, no floor (e.g. 10,25,50,100)",
    )
    p.add_argument(
        "--floor",
        type=number_type(int, 0),
        help=f"minimum items per category pool for the retention budgets (default {FLOOR})",
    )
    p.add_argument("--splits", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("refresh", help="append new records, check the frozen suite, refit")
    p.add_argument("--panel")
    p.add_argument("--default", choices=[n for n in default_names() if default_kind(n) == "panel"])
    p.add_argument("--records", nargs="*", default=[], help="CSV/JSONL/parquet records")
    p.add_argument("--suite", help="the published manifest (first refresh of --out)")
    p.add_argument("--out", required=True, help="the suite directory")
    p.add_argument("--max-drop", type=float, default=0.02)
    p.add_argument("--min-percentile", type=float, default=50.0)
    p.add_argument("--min-gain", type=float, default=0.005)
    p.add_argument(
        "--force",
        action="store_true",
        help="refit and publish whatever the drift and the gain (ignores --max-drop, "
        "--min-percentile, --min-gain)",
    )
    p.add_argument(
        "--explore",
        type=int,
        default=0,
        help="random unselected items per benchmark for new models' runs",
    )
    p.add_argument("--random-suites", type=int, default=200)
    p.set_defaults(func=cmd_refresh)

    suites = tree.group("suites", "released and published suite versions")
    p = suites.add_parser("history", help="list the versions of a suite directory")
    p.add_argument("dir")
    p.set_defaults(func=cmd_history)

    prism = tree.group("prism", "PRISM-VLM axes")
    p = prism.add_parser("aggregate", help="re-aggregate a per-axis leaderboard into PScore")
    p.add_argument("--axis-means", required=True, help="CSV: model,q,if,h,mq,sc,c,vis")
    p.add_argument("--weights", help="e.g. sc=0.5,h=2")
    p.add_argument(
        "--aggregator", choices=["harmonic", "arithmetic", "geometric", "min"], default="harmonic"
    )
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_prism_aggregate)

    p = sub.add_parser("replay", help="replay release order on a dated panel or leaderboard")
    p.add_argument("--panel")
    p.add_argument("--default", choices=default_names())
    p.add_argument("--k", type=int, default=K, help="categories kept (Stage 3)")
    p.add_argument("--start", type=float, default=0.5)
    p.add_argument("--waves", type=int, default=4)
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_replay)
