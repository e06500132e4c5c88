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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_adapters.run.options import (
    ADAPTIVE_FILES,
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
    args: argparse.Namespace, adapters: dict[str, str], engine: Engine | None = None
) -> tuple[RunRequest, Panel | None, Engine]:
    """The request of a run verb: the suite (refused with a bad reference panel before any
    engine starts), the run's own options and the fields of ``engine`` (default: the one
    ``--engine`` names)."""
    from harness_adapters.run.engine import engine_named, request_fields_of
    from harness_adapters.run.report import reference_panels
    from harness_adapters.run.request import ENGINE_FIELDS, RunRequest
    from harness_adapters.suites.released import resolve_suite
    from primebench_tasks.cli.plugin import parse_pairs

    engine = engine or engine_named(args.engine)
    if engine.name in SKIPPED_ENGINES:
        raise PrimeBenchError(SKIPPED_ENGINES[engine.name])
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
        **request_fields_of(engine, args, ENGINE_FIELDS),
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
        _say_written(req.out, (*ADAPTIVE_FILES, "adaptive_variants.json", "adaptive_variants.md"))
    else:
        print_adaptive(run_adaptive(req, panels, settings, say, engine=engine), req.out)
    return 0


def _say_written(out: Path, names: tuple[str, ...]) -> None:
    """The closing line of a run verb: every file it wrote (or kept up to date) in ``out``."""
    written = [str(out / n) for n in names if (out / n).exists()]
    say(f"wrote {', '.join(written)}")


def _quiet_engine(args: argparse.Namespace) -> None:
    """Engine chatter (vLLM's INFO and WARNING lines: 90 of a run's 200 on a CPU box) behind
    ``-v``: errors only, unless the user set ``VLLM_LOGGING_LEVEL`` or asked for ``-v``."""
    import os

    if not args.verbose:
        os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")


RUN_FILES = ("records.jsonl", "run_spec.json", "report.json", "report.md", "placement.png")


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
    _quiet_engine(args)
    req, panel, engine = run_request(args, adapter_specs(args.lora))
    if args.adaptive:
        return _adaptive(args, req, panel, engine, variants=False)
    with run_lock(req.out):  # the records and the report: one writer at a time
        summary = execute(req, panel, say, engine=engine)
        print("\n".join(summary.lines()))
        placed = write_run_report(req, panel, args.estimator, args.n_boot, args.seed)
    print((req.out / "report.md").read_text("utf-8"))
    _say_written(req.out, RUN_FILES)
    _refuse_unscored(req, placed)
    return 0


def cmd_rank_variants(args: argparse.Namespace) -> int:
    from harness_adapters.run.engine import engine_named

    refuse_adaptive_only(args)
    _quiet_engine(args)
    args.model = args.base
    engine = engine_named(args.engine)
    if getattr(engine, "adapters_served_by_name", False):
        # an endpoint's adapters are the names it serves (checked against its model list)
        twice = sorted({a for a in args.adapters if args.adapters.count(a) > 1})
        if twice:
            raise PrimeBenchError(f"--adapters names {', '.join(twice)} more than once")
        return _rank(args, {a: a for a in args.adapters}, engine)
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
    return _rank(args, adapter_specs(paths), engine)


def _rank(args: argparse.Namespace, adapters: dict[str, str], engine: Engine) -> int:
    from harness_adapters.run.request import run_lock
    from harness_adapters.run.session import execute, write_run_report, write_variant_report

    req, panel, engine = run_request(args, adapters, engine)
    if args.adaptive:
        return _adaptive(args, req, panel, engine, variants=True)
    with run_lock(req.out):
        summary = execute(req, panel, say, engine=engine)
        print("\n".join(summary.lines()))
        placed = write_run_report(req, panel, args.estimator, args.n_boot, args.seed)
        _refuse_unscored(req, placed)
        write_variant_report(req, args.n_boot, args.seed)
    print((req.out / "variants.md").read_text("utf-8"))
    _say_written(req.out, (*RUN_FILES, "variants.json", "variants.md", "variants.png"))
    return 0


SKIPPED_ENGINES: dict[str, str] = {}
"""Engines whose options could not be added (name → why): naming one is refused with why."""


def named_engine(argv: Sequence[str] | None) -> str:
    """The engine a command line names (``--engine NAME`` or ``--engine=NAME``; the last one
    wins, as argparse reads it), else :data:`~harness_adapters.run.engine.DEFAULT_ENGINE`."""
    from harness_adapters.run.engine import DEFAULT_ENGINE

    pre = argparse.ArgumentParser(add_help=False, allow_abbrev=False, exit_on_error=False)
    pre.add_argument("--engine")
    try:
        known, _ = pre.parse_known_args(list(argv or []))
    except argparse.ArgumentError:  # `--engine` with no value: the verb's parser says so
        return DEFAULT_ENGINE
    return str(known.engine) if known.engine else DEFAULT_ENGINE


def engine_options(
    p: argparse.ArgumentParser,
    own: Callable[[argparse.ArgumentParser], None],
    argv: Sequence[str] | None = None,
) -> None:
    """The options of the one engine the command line names (:func:`named_engine`; ``--help``
    shows the default engine's, ``--engine NAME --help`` NAME's): no other engine is loaded, so
    another engine's options never clash with these and a broken one breaks nothing it is not
    named for. The engine's options are tried first on a scratch copy of the verb (``own`` adds
    the verb's options): one that cannot be loaded, whose ``add_options`` raises or clashes with
    the run's adds none and is said in one line on stderr (running it gives its error)."""
    import sys

    from harness_adapters.run.engine import engines, installed_engines

    name = named_engine(argv)
    for ep in installed_engines():
        if ep.name != name:
            continue
        try:
            (engine,) = engines([ep]).values()
        except Exception:  # noqa: BLE001 — any error of a third-party plugin; said when resolved
            return
        trial = argparse.ArgumentParser(add_help=True)
        own(trial)
        try:
            engine.add_options(trial.add_argument_group(f"engine {engine.name}"))  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 — a third-party plugin's options
            why = (
                f"engine {engine.name!r} (entry point {ep.value}) cannot add its options "
                f"({type(exc).__name__}: {exc}); fix or uninstall it"
            )
            if engine.name not in SKIPPED_ENGINES:
                print(f"primebench: warning: {why}", file=sys.stderr)
            SKIPPED_ENGINES[engine.name] = why
            return
        group = p.add_argument_group(
            f"engine {engine.name}",
            f"{engine.summary} (another engine's options: --engine NAME --help)",
        )
        engine.add_options(group)  # type: ignore[arg-type]
        return


def add_commands(tree: Any) -> None:
    """``primebench run`` and ``rank-variants`` (a ``primebench.commands`` plugin; ``tree``:
    :class:`primebench_tasks.cli.CommandTree`)."""
    from harness_adapters.run.help import EXAMPLES, OPTION_HELP

    tree.add_help(OPTION_HELP, EXAMPLES)
    sub = tree.sub
    p = sub.add_parser("run", help="evaluate a model (+ LoRA adapters) on a suite on an engine")
    _run_verb_options(p)
    engine_options(p, _run_verb_options, verb_args(tree, "run"))
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("rank-variants", help="rank LoRA variants of one base model on a suite")
    _rank_verb_options(p)
    engine_options(p, _rank_verb_options, verb_args(tree, "rank-variants"))
    p.set_defaults(func=cmd_rank_variants, no_base=False)


def verb_args(tree: Any, *words: str) -> list[str] | None:
    """The command line after the command ``words`` (``"run"``; ``"prism", "run"``) where it is
    that command's, else None (the default engine's options: ``--help``, another command)."""
    argv = getattr(tree, "argv", None)
    n = len(words)
    return list(argv[n:]) if argv and tuple(argv[:n]) == words else None


def _run_verb_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, help="model directory or cached repo id")
    p.add_argument("--lora", action="append", default=[], metavar="NAME=PATH")
    run_options(p)
    run_adaptive_options(p, target=True)


def _rank_verb_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--base", required=True, help="base model directory or cached repo id")
    p.add_argument("--adapters", nargs="+", required=True, help="adapter dirs or globs")
    run_options(p)
    run_adaptive_options(p, target=False)
