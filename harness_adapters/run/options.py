"""The run commands' options — ``primebench run`` and ``rank-variants`` whatever the engine, the
adaptive options every adaptive command shares (``run --adaptive``, ``adaptive lmms-eval``,
``adaptive vlmeval``), adapter specs and the reference panel — their endings, and the progress
line every run command prints."""

from __future__ import annotations

import argparse
import glob
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from primebench_tasks.adaptive.defaults import (
    ADAPTIVE_BATCH,
    ADAPTIVE_MAX_ITEMS,
    ADAPTIVE_TARGET_WIDTH,
)
from primebench_tasks.cli.options import name_text
from primebench_tasks.data.defaults import default_names
from primebench_tasks.errors import PrimeBenchError
from primebench_tasks.place.defaults import DEFAULT_ESTIMATOR, ESTIMATOR_NAMES, N_BOOT
from primebench_tasks.suite.manifest import SuiteManifest

if TYPE_CHECKING:
    from primebench_tasks.adaptive.result import AdaptiveRun
    from primebench_tasks.data.panel import Panel


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
    from primebench_tasks.adaptive.result import AdaptiveSettings

    refuse_adaptive_only(args)
    width = getattr(args, "target_width", 0)
    if width is None:
        width = ADAPTIVE_TARGET_WIDTH
    return AdaptiveSettings(
        target_width=None if width is None or width <= 0 else width,
        max_items=ADAPTIVE_MAX_ITEMS if args.max_items is None else args.max_items,
        round_size=ADAPTIVE_BATCH if args.round_size is None else args.round_size,
    )


ADAPTIVE_FILES = (
    "records.jsonl", "run_spec.json", "draws.json", "adaptive.json", "adaptive.md",
    "report.json", "report.md", "placement.png",
)  # fmt: skip
"""What an adaptive run writes into its folder (every harness's adaptive command names them)."""


def print_adaptive(doc: AdaptiveRun, out: Path) -> None:
    """Print an adaptive run's ``adaptive.md``; say on stderr which tests had failed items, and
    fail the command (after the report is written) where a test scored nothing — every
    harness's adaptive command (``run --adaptive``, ``adaptive lmms-eval``, ``adaptive
    vlmeval``) ends here."""
    print((Path(out) / "adaptive.md").read_text("utf-8"))
    report = Path(out) / "report.md"
    if report.exists():  # the tests placed as one suite (#80)
        print(report.read_text("utf-8"))
    written = [str(Path(out) / n) for n in ADAPTIVE_FILES if (Path(out) / n).exists()]
    say(f"wrote {', '.join(written)}")
    some, none = doc.failures()
    for line in some:
        say(f"warning: {line}")
    for model, r in doc.models.items():
        for line in (*r.misfit, *r.answers):
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


def given_panel(args: argparse.Namespace) -> Panel | None:
    """The reference panel the user named (--panel DIR or --default NAME), else None: the
    suite's own reference panels (:func:`harness_adapters.run.report.reference_panels`, the one
    policy of every harness: a panel other than the one the suite was built from is refused)."""
    from primebench_tasks.data.panel import Panel

    if args.panel:
        return Panel.load(args.panel)
    if args.default:
        return Panel.load_default(args.default)
    return None


def reference_panel(args: argparse.Namespace, suite: SuiteManifest) -> Panel:
    """The one reference panel of a single-panel suite (PRISM builds on one panel)."""
    from harness_adapters.run.report import reference_panels

    panels = {p.content_hash: p for p in reference_panels(suite, given_panel(args)).values()}
    if len(panels) != 1:
        raise PrimeBenchError(
            f"suite {suite['name']} has {len(panels)} reference panels (a multi-source suite); "
            "this command needs a suite built on one panel"
        )
    return next(iter(panels.values()))


def adapter_specs(specs: list[str]) -> dict[str, str]:
    """``NAME=PATH`` or ``PATH`` (named by its folder); a ``PATH`` with ``*?[`` is a glob of
    adapter folders (those holding ``adapter_config.json``)."""
    out: dict[str, str] = {}
    expanded: list[str] = []
    for s in specs:
        if "=" not in s and any(c in s for c in "*?["):
            hits = sorted(p for p in glob.glob(s) if (Path(p) / "adapter_config.json").exists())
            if not hits:
                raise PrimeBenchError(
                    f"--lora {s!r}: no adapter folder (with adapter_config.json) matches"
                )
            expanded += hits
        else:
            expanded.append(s)
    for s in expanded:
        if "=" in s:
            name, path = s.split("=", 1)
        else:
            name, path = Path(s.rstrip("/")).name, s
        if name in out:
            raise PrimeBenchError(f"two adapters named {name!r}")
        out[name] = path
    return out


def run_options(p: argparse.ArgumentParser) -> None:
    """The options of ``primebench run`` and ``rank-variants`` whatever the engine: the suite,
    the run folder, the names, the reference panel, local datasets, batching, decoding budget,
    the placement's estimator and seed, and ``--engine``."""
    from harness_adapters.run.engine import DEFAULT_ENGINE

    p.add_argument(
        "--engine",
        default=DEFAULT_ENGINE,
        help=f"the engine that answers (an installed primebench.engines entry point; default "
        f"{DEFAULT_ENGINE})",
    )
    p.add_argument(
        "--suite",
        required=True,
        help="suite manifest JSON, or a released suite's name (primebench, ...)",
    )
    p.add_argument("--out", required=True, help="run directory (resumes when it exists)")
    p.add_argument(
        "--name",
        type=name_text,
        help="the base model's name in records (default: directory name)",
    )
    p.add_argument("--panel", help="reference panel directory (default: the suite's own)")
    p.add_argument(
        "--dataset",
        action="append",
        default=[],
        metavar="TASK=DIR",
        help="a local copy (datasets.save_to_disk folder; a group's subtasks in "
        "DIR/<dataset_name>) of upstream lmms-eval task TASK's dataset, for benchmarks whose "
        "items the reference panel holds only as ids (mathvista_testmini, mmmu_val, blink); "
        "default: the hub",
    )
    p.add_argument("--default", choices=default_names())
    p.add_argument(
        "--batch-size",
        type=int,
        default=32,
        help="items per request batch (records are fsynced after each batch)",
    )
    p.add_argument("--max-new-tokens", type=int)
    p.add_argument("--no-base", action="store_true", help="run only the adapters")
    p.add_argument(
        "--estimator",
        default=DEFAULT_ESTIMATOR,
        choices=ESTIMATOR_NAMES,
        help=f"full-score estimator (default: {DEFAULT_ESTIMATOR})",
    )
    p.add_argument("--n-boot", type=int, default=N_BOOT)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show the engine's own log lines (vLLM's INFO and WARNING; errors only without -v)",
    )


def run_adaptive_options(p: argparse.ArgumentParser, target: bool) -> None:
    a = p.add_argument_group("adaptive evaluation (--adaptive)")
    a.add_argument(
        "--adaptive",
        action="store_true",
        help="ask, in rounds, the items of the suite's benchmarks that tell the most (the whole "
        "item pool of each benchmark, not only the suite's items)"
        + (
            "; stops each test at --target-width or --max-items; writes adaptive.json/.md"
            if target
            else "; the same items for every variant, until adjacent variants are separated at "
            "95 %% or --max-items are spent; writes adaptive_variants.json/.md and every variant's "
            "placement from the race's draws (report.json/.md/.png)"
        ),
    )
    adaptive_budget_options(a, target, "a round is one engine batch per variant")
