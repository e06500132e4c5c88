"""The command options and endings every adaptive command shares — ``primebench run
--adaptive``, ``adaptive lmms-eval``, ``adaptive vlmeval`` — and the progress line every run
command prints."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from primebench_tasks.adaptive.defaults import (
    ADAPTIVE_BATCH,
    ADAPTIVE_MAX_ITEMS,
    ADAPTIVE_TARGET_WIDTH,
)
from primebench_tasks.errors import PrimeBenchError


def say(msg: str) -> None:
    print(f"[primebench] {msg}", file=sys.stderr, flush=True)


def adaptive_budget_options(p: Any, target: bool, round_is: str) -> None:
    """``--target-width`` (with ``target``), ``--max-items``, ``--round-size`` on ``p`` (a
    parser or an argument group); ``round_is`` says what a round costs in that harness."""
    # no argparse default: an option given without --adaptive is refused, not ignored
    # (adaptive_settings fills the defaults)
    if target:
        p.add_argument(
            "--target-width",
            type=float,
            help="stop a benchmark's test when the 90 %% interval of its predicted full score "
            f"is narrower than this (0: run to --max-items; default {ADAPTIVE_TARGET_WIDTH})",
        )
    p.add_argument(
        "--max-items",
        type=int,
        help=f"items per benchmark at most (default {ADAPTIVE_MAX_ITEMS})",
    )
    p.add_argument(
        "--round-size",
        type=int,
        help=f"items per benchmark per round ({round_is}; default {ADAPTIVE_BATCH})",
    )


ADAPTIVE_ONLY = ("target_width", "max_items", "round_size")
"""Options that mean something only with ``--adaptive``."""


def refuse_adaptive_only(args: argparse.Namespace) -> None:
    """An adaptive-only option given to a static run is refused by name, not ignored."""
    given = [n for n in ADAPTIVE_ONLY if getattr(args, n, None) is not None]
    if given and not getattr(args, "adaptive", True):
        flags = ", ".join("--" + n.replace("_", "-") for n in given)
        raise PrimeBenchError(f"{flags} only apply with --adaptive; add it or leave them out")


def adaptive_settings(args: argparse.Namespace) -> Any:
    """:class:`~harness_adapters.run.adaptive_loop.AdaptiveSettings` from the options
    (a ``--target-width`` of 0 or less, or none: run to ``--max-items``)."""
    from harness_adapters.run.adaptive_loop import AdaptiveSettings

    refuse_adaptive_only(args)
    width = getattr(args, "target_width", 0)
    if width is None:
        width = ADAPTIVE_TARGET_WIDTH
    return AdaptiveSettings(
        target_width=None if width is None or width <= 0 else width,
        max_items=ADAPTIVE_MAX_ITEMS if args.max_items is None else args.max_items,
        round_size=ADAPTIVE_BATCH if args.round_size is None else args.round_size,
    )


def print_adaptive(doc: Any, out: Path) -> None:
    """Print an adaptive run's ``adaptive.md``; say on stderr which tests had failed items, and
    fail the command (after the report is written) where a test scored nothing — every
    harness's adaptive command (``run --adaptive``, ``adaptive lmms-eval``, ``adaptive
    vlmeval``) ends here."""
    from harness_adapters.run.adaptive_loop import adaptive_failures

    print((Path(out) / "adaptive.md").read_text("utf-8"))
    some, none = adaptive_failures(doc)
    for line in some:
        say(f"warning: {line}")
    for model, r in doc["models"].items():
        for line in (*r.get("misfit", []), *r.get("answers", [])):
            say(f"warning: {model}: {line}")
    refuse_nothing_placed(none, out)


def refuse_nothing_placed(none: list[str], out: Path) -> None:
    """Fail the command when ``none`` (one line per variant or test with no scored item) is not
    empty: a run whose requests failed is not a result."""
    if none:
        raise PrimeBenchError(
            "nothing placed for "
            + "; ".join(none)
            + f" — fix the cause and rerun the same command (into {out}): the failed items are "
            "asked again"
        )
