"""``primebench prism build|run|tasks|ingest-lmms-eval|score|...``: the parsers (a
``primebench.commands`` plugin); the commands are in :mod:`harness_adapters.prism.cli`."""

from __future__ import annotations

import argparse
from typing import Any

from harness_adapters.prism.cli import (
    JUDGE_HELP,
    cmd_build,
    cmd_prism_ingest,
    cmd_prism_tasks,
    cmd_run,
    cmd_score,
)
from harness_adapters.run.commands import engine_options, verb_args
from primebench_tasks.data.defaults import default_names
from primebench_tasks.place.defaults import N_BOOT_VARIANTS
from primebench_tasks.prism.axes import AXES


def _judge_options(p: argparse.ArgumentParser, role: str) -> None:
    """``--judge`` (the ``role`` judge), ``--judge-timeout`` and ``--judge-api-key-env``."""
    p.add_argument("--judge", default="rules", help=f"{role}: " + JUDGE_HELP)
    p.add_argument(
        "--judge-timeout",
        type=float,
        default=120.0,
        help="seconds per judge request (server judges)",
    )
    p.add_argument(
        "--judge-api-key-env",
        metavar="NAME",
        help="environment variable holding the judge endpoint's API key (default: "
        "none; OPENAI_API_KEY only for api.openai.com)",
    )


def _engine_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-model-len", type=int)
    p.add_argument("--max-num-seqs", type=int)
    p.add_argument("--enforce-eager", action="store_true")
    p.add_argument("--gpu-memory-utilization", type=float)
    p.add_argument("--tensor-parallel-size", type=int)


def _run_options(p: argparse.ArgumentParser) -> None:
    """``prism run``'s own options; the engine's (``--engine``, default vLLM: the model's
    backend and settings) are added by the engine (:func:`~harness_adapters.run.commands.engine_options`)."""
    from harness_adapters.run.engine import DEFAULT_ENGINE

    p.add_argument("--prism", required=True, help="build directory")
    p.add_argument("--model", required=True, help="model directory, or served name")
    p.add_argument("--lora", action="append", default=[], metavar="NAME=PATH")
    p.add_argument("--name", help="the base model's name in records")
    p.add_argument("--no-base", action="store_true")
    p.add_argument("--out", required=True, help="run directory (resumes when it exists)")
    p.add_argument(
        "--engine",
        default=DEFAULT_ENGINE,
        help="the engine that runs the model (an installed primebench.engines entry point)",
    )
    p.add_argument("--flip-judge", default="rules", help="sc flip detection: " + JUDGE_HELP)
    p.add_argument(
        "--budget",
        action="append",
        default=[],
        metavar="AXIS=N|N",
        help="output-token budget override (default q/if/h/c/vis 512, mq 1024, sc 512 per turn)",
    )
    p.add_argument("--axes", nargs="+", default=list(AXES), choices=list(AXES))
    p.add_argument("--batch-size", type=int, default=32)


def _loadable_harnesses() -> dict[str, Any]:
    """Every installed harness that loads: one whose plug cannot be imported gets no PRISM
    command, and ``primebench`` still starts (it names the plug on stderr:
    :func:`primebench_tasks.cli.plugin.add_plugin_commands`)."""
    from importlib.metadata import entry_points

    from primebench_tasks.errors import PrimeBenchError
    from primebench_tasks.suite.harness import HARNESS_GROUP, harnesses

    out: dict[str, Any] = {}
    for ep in entry_points(group=HARNESS_GROUP):
        try:
            out.update(harnesses([ep]))
        except (ImportError, PrimeBenchError):
            continue
    return out


def add_commands(tree: Any) -> None:
    """``primebench prism build|run|tasks HARNESS|ingest HARNESS|score|aggregate`` (a ``primebench.commands``
    plugin; ``tree``: :class:`primebench_tasks.cli.CommandTree`)."""
    from harness_adapters.prism.help import EXAMPLES, OPTION_HELP

    tree.add_help(OPTION_HELP, EXAMPLES)
    prism = tree.group("prism", "PRISM-VLM axes")
    p = prism.add_parser(
        "build", help="sample the PRISM items and build their per-axis artifacts (cached)"
    )
    p.add_argument("--suite", help="suite manifest: its items are the pool (default pool)")
    p.add_argument("--panel", help="panel directory (the suite's reference panel, or the pool)")
    p.add_argument("--default", choices=default_names())
    p.add_argument("--benchmarks", nargs="+", help="panel pool: these benchmarks only")
    p.add_argument("--out", required=True, help="build directory (reused when it exists)")
    _judge_options(p, "generator judge")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 42, 1234, 2026])
    p.add_argument("--k", type=int, default=100, help="items per benchmark per seed")
    p.add_argument(
        "--axes",
        nargs="+",
        default=["if", "sc", "h", "mq", "c", "vis"],
        choices=["if", "sc", "h", "mq", "c", "vis"],
    )
    _engine_args(p)
    p.set_defaults(func=cmd_build)

    p = prism.add_parser("run", help="run a model (+ LoRA adapters) on the PRISM axes")
    _run_options(p)
    engine_options(p, _run_options, verb_args(tree, "prism", "run"))
    p.set_defaults(func=cmd_run)

    # the grammar of every harness command: VERB HARNESS (docs/library.md, "Command grammar")
    tasks = prism.add_parser(
        "tasks", help="the single-turn axes as a harness's tasks"
    ).add_subparsers(dest="prism_tasks_command", required=True)
    ingest = prism.add_parser(
        "ingest", help="a harness's results on the single-turn axes → run records"
    ).add_subparsers(dest="prism_ingest_command", required=True)
    tree.rename("prism tasks", "prism tasks lmms-eval")
    tree.rename("prism ingest-lmms-eval", "prism ingest lmms-eval")
    tree.rename("prism vlmeval-export", "prism tasks vlmeval")
    tree.rename("prism ingest-vlmeval", "prism ingest vlmeval")

    # one parser per installed harness that runs PRISM's single-turn axes (the harness protocol's
    # prism_export / prism_ingest): PRISM knows no harness by name
    for name, h in sorted(_loadable_harnesses().items()):
        if h.prism_export is None or h.prism_ingest is None:
            continue
        p = tasks.add_parser(name, help=f"the single-turn axes as {name}'s tasks")
        p.add_argument("--prism", required=True, help="build directory")
        p.add_argument(
            "--out",
            "--lmudata",
            dest="out",
            required=True,
            help="where the tasks go (lmms-eval: a task folder; VLMEvalKit: the LMUData folder)",
        )
        p.add_argument("--axes", help="comma-separated single-turn axes (default: every built one)")
        p.set_defaults(func=cmd_prism_tasks, harness=name)
        p = ingest.add_parser(name, help=f"{name}'s results on the single-turn axes → run records")
        p.add_argument(
            "output", help="the harness's output (lmms-eval's --output_path, run.py's --work-dir)"
        )
        p.add_argument("--prism", required=True, help="build directory")
        p.add_argument("--out", required=True, help="run directory")
        p.add_argument("--model", required=True, help="the model's name in the harness's run")
        p.set_defaults(func=cmd_prism_ingest, harness=name)

    p = prism.add_parser("score", help="grade runs: leaderboard, PScore, separation, audit")
    p.add_argument("--prism", required=True, help="build directory")
    p.add_argument("--runs", nargs="+", required=True, help="run directories")
    p.add_argument("--out", required=True)
    _judge_options(p, "grading judge")
    p.add_argument("--audit-judge", help="second judge J′ for the cross-judge audit")
    p.add_argument(
        "--audit-judge-api-key-env",
        metavar="NAME",
        help="environment variable holding the audit judge endpoint's API key (default: none; "
        "the judge's key is never sent to the audit judge)",
    )
    p.add_argument("--audit-items", type=int, default=200)
    p.add_argument(
        "--sc-variant",
        choices=["B", "A", "corr", "reach"],
        default="B",
        help="the sc definition in the leaderboard and PScore (App. E.2; default "
        "sc_B, turn-0-correct items)",
    )
    p.add_argument(
        "--mq-partial",
        action="store_true",
        help="score mq by partial credit instead of all-or-nothing",
    )
    p.add_argument("--n-boot", type=int, default=N_BOOT_VARIANTS)
    p.add_argument("--seed", type=int, default=0)
    _engine_args(p)
    p.set_defaults(func=cmd_score)
