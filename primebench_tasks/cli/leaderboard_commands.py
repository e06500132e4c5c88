"""``primebench panel import-leaderboard``: a newer leaderboard snapshot for ``place
--leaderboard`` (:mod:`primebench_tasks.place.standing`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from primebench_tasks.errors import PrimeBenchError


def cmd_panel_import_leaderboard(args: argparse.Namespace) -> int:
    """A leaderboard snapshot of the embedded one's shape (the OpenVLM leaderboard's export: one
    row per model, ``name``, ``date``, the benchmarks' percentages) into a folder that
    ``place --leaderboard`` ranks on — current ranks without a release of PRIMEBench."""
    from primebench_tasks.data.leaderboard import Leaderboard

    out = Path(args.out)
    if (out / "leaderboard.json").exists() and not args.replace:
        raise PrimeBenchError(f"{out} holds a leaderboard; give --replace to write this one there")
    lb = Leaderboard.from_csv(args.csv, name=args.name, scale=args.scale)
    dates = lb.models["release_date"].dropna()
    lb.save(out)
    print(
        f"leaderboard {lb.name}: {len(lb.scores)} models × {lb.scores.shape[1]} benchmarks "
        f"({', '.join(lb.scores.columns)}), released "
        f"{dates.min() if len(dates) else '?'} .. {dates.max() if len(dates) else '?'} "
        f"({len(dates)} dated); hash {lb.content_hash}\n"
        f"wrote {out}; rank on it: primebench place RUN --leaderboard {out}"
    )
    return 0


def add_import_leaderboard(panel: argparse._SubParsersAction) -> None:
    """Register ``panel import-leaderboard`` in the ``panel`` group."""
    p = panel.add_parser(
        "import-leaderboard",
        help="a newer leaderboard snapshot (the OpenVLM leaderboard's CSV shape) for place",
    )
    p.add_argument("csv", help="one row per model: name, date, then each benchmark's score")
    p.add_argument("--out", required=True, help="the snapshot folder (place --leaderboard)")
    p.add_argument("--name", help="the snapshot's name (default: the CSV's file name)")
    p.add_argument("--scale", type=float, default=100.0, help="scores' maximum (100: percent)")
    p.add_argument("--replace", action="store_true", help="overwrite a snapshot in --out")
    p.set_defaults(func=cmd_panel_import_leaderboard)
