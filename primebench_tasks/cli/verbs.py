"""The harness verbs, written once: ``primebench tasks|evaluate|ingest|adaptive|keys|path
<harness>``. A harness plug supplies behaviour — a :class:`HarnessCommand` per verb it serves
(what it runs, its help, its own options) — and the library parses each verb in one place: the
verb's group and its help (:data:`VERBS`), the options several plugs share
(:data:`SHARED_OPTIONS`, each defined once), then the plug's own."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from primebench_tasks.cli.options import REPLACE_HELP
from primebench_tasks.cli.plugin import CommandTree
from primebench_tasks.data.defaults import default_kind, default_names

VERBS: dict[str, str] = {
    "tasks": "harness task configs from a manifest",
    "evaluate": "run a harness on a suite's items",
    "ingest": "harness results into a Panel",
    "adaptive": "adaptive evaluation inside a harness",
    "keys": "row keys by content for upstream datasets without ids",
    "path": "where a harness finds the released suites",
    "pin": "pin a suite's design-only benchmarks to the datasets a run drew from",
}
"""The shared verbs (name → the help of its group); a harness command names one of them."""


def _suite(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--suite",
        required=True,
        help="a released suite's name (primebench, ...) or a manifest JSON",
    )


def _reference_panel(p: argparse.ArgumentParser) -> None:
    p.add_argument("--panel")
    p.add_argument("--default", choices=[n for n in default_names() if default_kind(n) == "panel"])


def _writable_panel(p: argparse.ArgumentParser) -> None:
    p.add_argument("--panel", required=True, help="a writable panel directory")


def _new_panel(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, help="the new panel directory")
    p.add_argument("--replace", action="store_true", help=REPLACE_HELP)
    p.add_argument("--name", help="panel name (default: the --out folder's name)")


def _run_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, help="run directory (resumes when it exists)")


def _import(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--import",
        dest="import_",
        action="append",
        metavar="MODULE",
        help="import MODULE first (e.g. one that registers your own model class)",
    )


SHARED_OPTIONS: dict[str, Callable[[argparse.ArgumentParser], None]] = {
    "suite": _suite,
    "reference_panel": _reference_panel,
    "writable_panel": _writable_panel,
    "new_panel": _new_panel,
    "run_dir": _run_dir,
    "import": _import,
}
"""Options more than one harness command takes, each defined once (key → what it adds)."""


@dataclass(frozen=True)
class HarnessCommand:
    """One harness's command of a shared verb: ``primebench <verb> <name>``. ``shared``: keys of
    :data:`SHARED_OPTIONS` it takes (added first); ``options``: the plug's own; ``run(args)``
    returns the exit status."""

    verb: str
    name: str
    help: str
    run: Callable[[argparse.Namespace], int]
    shared: tuple[str, ...] = ()
    options: Callable[[argparse.ArgumentParser], None] | None = None
    description: str | None = None
    epilog: str | None = None
    show_defaults: bool = False


def add_harness_commands(tree: CommandTree, commands: Sequence[HarnessCommand]) -> None:
    """Parse every command of ``commands`` under its verb's group of ``tree``; a verb or a
    shared option that does not exist is an error naming the command."""
    for c in commands:
        if c.verb not in VERBS:
            raise ValueError(f"{c.verb} {c.name}: no verb {c.verb!r}; verbs: {sorted(VERBS)}")
        unknown = [k for k in c.shared if k not in SHARED_OPTIONS]
        if unknown:
            raise ValueError(f"{c.verb} {c.name}: no shared option {unknown}")
        p = tree.group(c.verb, VERBS[c.verb]).add_parser(
            c.name,
            help=c.help,
            description=c.description,
            epilog=c.epilog,
            formatter_class=(
                argparse.ArgumentDefaultsHelpFormatter
                if c.show_defaults
                else argparse.HelpFormatter
            ),
        )
        for key in c.shared:
            SHARED_OPTIONS[key](p)
        if c.options is not None:
            c.options(p)
        p.set_defaults(func=c.run)
