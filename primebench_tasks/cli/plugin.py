"""The plugin API of the ``primebench`` command: what a ``primebench.commands`` entry point
receives (:class:`CommandTree`) and the helpers commands share (panel loading, ``NAME=VALUE``
options, output folders)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from primebench_tasks.data.defaults import default_kind, default_names
from primebench_tasks.errors import PrimeBenchError

if TYPE_CHECKING:  # the numerical stack is imported by the commands, not by --help
    from primebench_tasks.data.panel import Panel


def say(msg: str) -> None:
    print(f"[primebench] {msg}", file=sys.stderr, flush=True)


def load_panel(args: argparse.Namespace) -> Panel:
    """The panel named by ``--default`` or ``--panel`` (also for plugin commands)."""
    from primebench_tasks.data.panel import Panel

    if getattr(args, "default", None) and getattr(args, "panel", None):
        raise PrimeBenchError("give --panel DIR or --default NAME, not both")
    if getattr(args, "default", None):
        if default_kind(args.default) != "panel":
            raise PrimeBenchError(f"{args.default!r} is a leaderboard, not an item-level panel")
        return Panel.load_default(args.default)
    if not getattr(args, "panel", None):
        raise PrimeBenchError(
            f"give --panel DIR or --default NAME (embedded: {', '.join(default_names())})"
        )
    return Panel.load(args.panel)


def check_out_dir(args: argparse.Namespace) -> Path:
    """``--out`` of a build: a folder that does not exist or is empty, or with ``--overwrite``
    any folder (its outputs are replaced); never a file. Checked before any work."""
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise PrimeBenchError(f"--out {out}: a file is there, not a folder")
    if out.is_dir() and any(out.iterdir()) and not getattr(args, "overwrite", False):
        raise PrimeBenchError(
            f"--out {out} exists and is not empty; pass --overwrite to replace "
            "its outputs, or choose another folder"
        )
    return out


def parse_pairs(specs: list[str], option: str, form: str) -> dict[str, str]:
    """``NAME=VALUE`` options as a dict; a malformed one is an error naming the option."""
    out: dict[str, str] = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        if not sep or not name or not value:
            raise PrimeBenchError(f"{option} {spec!r}: expected {form}")
        out[name] = value
    return out


PLUGIN_GROUP = "primebench.commands"
"""Entry-point group of sub-command plugins: ``NAME = "module:add_commands"``, where
``add_commands(tree: CommandTree) -> None`` adds its sub-commands (the harness adapters contribute
``tasks``, ``evaluate``, ``ingest``, ``adaptive``, ``keys``, ``path``, ``place``, ``run``,
``rank-variants``, ``prism build|run|...`` this way; a third party can add its own). The grammar
is ``primebench VERB HARNESS`` for what a harness does (docs/library.md, "Command grammar")."""


class CommandTree:
    """What a ``primebench.commands`` plugin receives: the top-level sub-parsers (``sub``) and
    shared command groups (``primebench ingest ...``), created once whoever asks first."""

    def __init__(self, sub: argparse._SubParsersAction, argv: Sequence[str] | None = None) -> None:
        self.sub = sub
        self.argv = None if argv is None else list(argv)
        """The command line being parsed, where known (a plugin may add only what it names:
        the run verbs load only the ``--engine`` it names); None: every default."""
        self._groups: dict[str, argparse._SubParsersAction] = {}
        self.option_help: dict[str, str] = {}
        self.examples: dict[str, str] = {}
        self.renamed: dict[tuple[str, ...], tuple[str, ...]] = {}
        """Old spelling → the command it is now (kept one release: ``main`` runs the new one
        and says what to type instead)."""

    def add_help(
        self,
        option_help: Mapping[str, str] | None = None,
        examples: Mapping[str, str] | None = None,
    ) -> None:
        """Register a plugin's help texts (option or positional name → help; command path →
        example) that ``primebench`` fills in where its options and commands give none; one name
        given two different texts is an error."""
        for mine, theirs in ((self.option_help, option_help), (self.examples, examples)):
            for k, v in (theirs or {}).items():
                if mine.setdefault(k, v) != v:
                    raise ValueError(f"two help texts for {k!r}: {mine[k]!r} and {v!r}")

    def rename(self, old: str, new: str) -> None:
        """Keep the spelling ``old`` (words, e.g. ``"vlmeval export"``) one release as an alias
        of the command ``new`` (e.g. ``"tasks vlmeval"``); two targets for one spelling is an
        error."""
        key, target = tuple(old.split()), tuple(new.split())
        if self.renamed.setdefault(key, target) != target:
            raise ValueError(f"{old!r} renamed twice: {self.renamed[key]} and {target}")

    def group(self, name: str, help: str) -> argparse._SubParsersAction:  # noqa: A002
        if name not in self._groups:
            self._groups[name] = self.sub.add_parser(name, help=help).add_subparsers(
                dest=f"{name.replace('-', '_')}_command", required=True
            )
        return self._groups[name]


def add_plugin_commands(tree: CommandTree) -> None:
    """Let every installed ``primebench.commands`` plugin and ``primebench.harnesses`` harness
    add its sub-commands (in name order; one that cannot be imported is reported on stderr and
    left out)."""
    from importlib.metadata import entry_points

    from primebench_tasks.suite.harness import HARNESS_GROUP

    seen: set[str] = set()
    eps = [*entry_points(group=PLUGIN_GROUP), *entry_points(group=HARNESS_GROUP)]
    for ep in sorted(eps, key=lambda e: (e.name, e.group, e.value)):
        if ep.name in seen:  # the same plugin seen twice (e.g. an editable and a wheel install)
            continue
        seen.add(ep.name)
        try:
            obj = ep.load()
        except ImportError as exc:
            print(f"primebench: plugin {ep.name} ({ep.value}) not loaded: {exc}", file=sys.stderr)
            continue
        add = obj.add_commands if ep.group == HARNESS_GROUP else obj
        add(tree)
