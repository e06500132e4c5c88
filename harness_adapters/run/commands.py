"""``primebench run`` and ``primebench rank-variants``, whatever engine answers (#73): the verbs
are the run's, written once (a ``primebench.commands`` plugin); the engine (``--engine``, default
vLLM) is found by entry point (:func:`~harness_adapters.run.engine.engine_named`), adds its own
options, sets its request fields and checks the request; the static loop
(:func:`~harness_adapters.run.session.execute`), the adaptive loop
(:func:`~harness_adapters.run.adaptive_loop.run_adaptive`) and the variant race
(:func:`~harness_adapters.run.race_loop.rank_variants_adaptive`) are the run's."""

from __future__ import annotations

import argparse
import glob
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_adapters.run.options import (
    adapter_specs,
    adaptive_settings,
    given_panel,
    print_adaptive,
    refuse_adaptive_only,
    refuse_nothing_placed,
    run_adaptive_options,
    run_options,
    say,
)
from primebench_tasks.errors import PrimeBenchError

if TYPE_CHECKING:
    from harness_adapters.run.engine import Engine
    from harness_adapters.run.request import RunRequest
    from primebench_tasks.data.panel import Panel


def run_request(
    args: argparse.Namespace, adapters: dict[str, str]
) -> tuple[RunRequest, Panel | None, Engine]:
    """The request of a run verb: the suite (refused with a bad reference panel before any
    engine starts), the run's own options and the engine's fields."""
    from harness_adapters.run.engine import engine_named
    from harness_adapters.run.report import reference_panels
    from harness_adapters.run.request import RunRequest
    from harness_adapters.suites.released import resolve_suite
    from primebench_tasks.cli.plugin import parse_pairs

    engine = engine_named(args.engine)
    suite = resolve_suite(args.suite)
    panel = given_panel(args)
    reference_panels(suite, panel)  # refused here, before any engine starts
    req = RunRequest(
        model=args.model,
        suite=suite,
        out=Path(args.out),
        adapters=adapters,
        name=args.name,
        include_base=not args.no_base,
        batch_size=args.batch_size,
        max_new_tokens=args.max_new_tokens,
        data=parse_pairs(args.dataset, "--dataset", "TASK=DIR") if args.dataset else {},
        **engine.request_fields(args),
    )
    return req, panel, engine


def _adaptive(
    args: argparse.Namespace, req: Any, panel: Panel | None, engine: Engine, variants: bool
) -> int:
    from harness_adapters.run.adaptive_loop import run_adaptive
    from harness_adapters.run.race_loop import rank_variants_adaptive
    from harness_adapters.run.report import reference_panels

    settings = adaptive_settings(args)
    panels = reference_panels(req.suite, panel)
    if variants:
        rank_variants_adaptive(req, panels, settings, say, seed=args.seed, engine=engine)
        print((req.out / "adaptive_variants.md").read_text("utf-8"))
    else:
        print_adaptive(run_adaptive(req, panels, settings, say, engine=engine), req.out)
    return 0


def _refuse_unscored(req: Any, placed: Any) -> None:
    """Say on stderr which variants had failed items; fail the command for a variant with no
    scored item (its report gives it no score and no rank)."""
    from harness_adapters.run.session import run_failures

    some, none = run_failures(req, placed)
    for line in some:
        say(f"warning: {line}")
    refuse_nothing_placed(none, req.out)


def cmd_run(args: argparse.Namespace) -> int:
    from harness_adapters.run.request import run_lock
    from harness_adapters.run.session import execute, write_run_report

    refuse_adaptive_only(args)
    req, panel, engine = run_request(args, adapter_specs(args.lora))
    if args.adaptive:
        return _adaptive(args, req, panel, engine, variants=False)
    with run_lock(req.out):  # the records and the report: one writer at a time
        summary = execute(req, panel, say, engine=engine)
        print("\n".join(summary.lines()))
        placed = write_run_report(req, panel, args.estimator, args.n_boot, args.seed)
    print((req.out / "report.md").read_text("utf-8"))
    _refuse_unscored(req, placed)
    return 0


def cmd_rank_variants(args: argparse.Namespace) -> int:
    from harness_adapters.run.request import run_lock
    from harness_adapters.run.session import execute, write_run_report, write_variant_report

    refuse_adaptive_only(args)
    found = [p for pattern in args.adapters for p in sorted(glob.glob(pattern))]
    twice = sorted({p for p in found if found.count(p) > 1})
    if twice:
        raise PrimeBenchError(
            f"--adapters names {', '.join(twice)} more than once; give each adapter once"
        )
    paths = sorted(p for p in found if (Path(p) / "adapter_config.json").exists())
    if not paths:
        raise PrimeBenchError(
            f"no adapter directories (with adapter_config.json) match {args.adapters}"
        )
    args.model = args.base
    req, panel, engine = run_request(args, adapter_specs(paths))
    if args.adaptive:
        return _adaptive(args, req, panel, engine, variants=True)
    with run_lock(req.out):
        summary = execute(req, panel, say, engine=engine)
        print("\n".join(summary.lines()))
        placed = write_run_report(req, panel, args.estimator, args.n_boot, args.seed)
        _refuse_unscored(req, placed)
        write_variant_report(req, args.n_boot, args.seed)
    print((req.out / "variants.md").read_text("utf-8"))
    return 0


def _engine_options(p: argparse.ArgumentParser) -> None:
    """Every installed engine's own options, each engine loaded on its own: one that cannot be
    loaded adds none and takes no other engine's options with it (the verb says why when an
    engine is resolved: :func:`~harness_adapters.run.engine.engines`)."""
    from harness_adapters.run.engine import engines, installed_engines

    named: set[str] = set()
    for ep in installed_engines():
        try:
            (engine,) = engines([ep]).values()
        except Exception:  # noqa: BLE001 — any error of a third-party plugin; said when resolved
            continue
        if engine.name in named:  # two of one name: an error when an engine is resolved
            continue
        named.add(engine.name)
        engine.add_options(p.add_argument_group(f"engine {engine.name}"))  # type: ignore[arg-type]


def add_commands(tree: Any) -> None:
    """``primebench run`` and ``rank-variants`` (a ``primebench.commands`` plugin; ``tree``:
    :class:`primebench_tasks.cli.CommandTree`)."""
    from harness_adapters.run.help import EXAMPLES, OPTION_HELP

    tree.add_help(OPTION_HELP, EXAMPLES)
    sub = tree.sub
    p = sub.add_parser("run", help="evaluate a model (+ LoRA adapters) on a suite on an engine")
    p.add_argument("--model", required=True, help="model directory or cached repo id")
    p.add_argument("--lora", action="append", default=[], metavar="NAME=PATH")
    run_options(p)
    _engine_options(p)
    run_adaptive_options(p, target=True)
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("rank-variants", help="rank LoRA variants of one base model on a suite")
    p.add_argument("--base", required=True, help="base model directory or cached repo id")
    p.add_argument("--adapters", nargs="+", required=True, help="adapter dirs or globs")
    run_options(p)
    _engine_options(p)
    run_adaptive_options(p, target=False)
    p.set_defaults(func=cmd_rank_variants, no_base=False)
