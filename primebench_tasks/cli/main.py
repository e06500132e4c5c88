"""The ``primebench`` command: the parser (the library's command families, then every
``primebench.commands`` plugin) and ``main``."""

from __future__ import annotations

import argparse
import errno
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from primebench_tasks.cli.build_commands import add_build_commands
from primebench_tasks.cli.evaluate_commands import add_evaluate_commands
from primebench_tasks.cli.options import range_check_numeric_options
from primebench_tasks.cli.panel_commands import add_panel_commands
from primebench_tasks.cli.plugin import CommandTree, add_plugin_commands
from primebench_tasks.errors import PrimeBenchError

if TYPE_CHECKING:  # the numerical stack is imported by the commands, not by --help
    pass


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    return _build(argv)[0]


def _build(argv: list[str] | None = None) -> tuple[argparse.ArgumentParser, CommandTree]:
    ap = argparse.ArgumentParser(
        prog="primebench",
        description="PRIMEBench: compact VLM evaluation suites (PRIMEBench, ResampledBench, "
        "PRISM axes) built from per-item results, and the harness adapters that run them "
        "(lmms-eval, VLMEvalKit, vLLM) and place a model among known ones from a few percent "
        "of the items.",
        epilog="examples:\n"
        "  primebench build primebench --default autojudger --out out/autojudger\n"
        "  lmms-eval --model M --tasks primebench --log_samples --output_path out/ && "
        "primebench place out/\n"
        "  primebench run --model DIR --lora a=PATH --suite SUITE.json --out RUN\n"
        "  primebench <command> --help",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="command", required=True)
    tree = CommandTree(sub, argv)
    add_panel_commands(sub)
    add_build_commands(sub)
    add_evaluate_commands(sub, tree)
    add_plugin_commands(tree)
    range_check_numeric_options(ap)
    from primebench_tasks.cli.help import finish_help

    finish_help(ap, tree.option_help, tree.examples)
    return ap, tree


def respell(argv: list[str], renamed: dict[tuple[str, ...], tuple[str, ...]]) -> list[str]:
    """``argv`` with an old command spelling (:attr:`CommandTree.renamed`) replaced by the
    command it is now, saying so on stderr; a command line that already starts with a current
    spelling is left alone (``prism tasks lmms-eval`` is not the old ``prism tasks``)."""
    current = set(renamed.values())
    if any(tuple(argv[: len(n)]) == n for n in current):
        return argv
    for old in sorted(renamed, key=len, reverse=True):
        if tuple(argv[: len(old)]) == old:
            if argv[len(old) :] in (["-h"], ["--help"]) and any(
                n[: len(old)] == old for n in current
            ):
                return (
                    argv  # the group's own help (``prism tasks lmms-eval --help``: its harnesses)
                )
            new = renamed[old]
            print(
                f"primebench: `primebench {' '.join(old)}` is now `primebench {' '.join(new)}`; "
                "the old spelling goes in the next release",
                file=sys.stderr,
            )
            return [*new, *argv[len(old) :]]
    # the first word of old spellings alone (``primebench vlmeval``): say where its commands went
    firsts = {n[0] for n in current}
    if argv and argv[0] not in firsts:
        moved = sorted({" ".join(renamed[o]) for o in renamed if o[0] == argv[0]})
        if moved:
            print(
                f"primebench: `primebench {argv[0]} ...` is now spelled "
                + ", ".join(f"`primebench {m}`" for m in moved),
                file=sys.stderr,
            )
    return argv


ENVIRONMENT_ERRNOS = frozenset(
    {
        errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.ENOENT,
        errno.ENOTDIR, errno.EISDIR, errno.EEXIST, errno.ENAMETOOLONG, errno.ELOOP,
    }
)  # fmt: skip
"""OSErrors that come from the user's environment (a path, a read-only or full disk), not from
a bug: one line and exit 2, like bad input."""
OUTPUT_OPTIONS = ("out",)


def check_outputs_writable(args: argparse.Namespace) -> None:
    """Before any work: every output folder option must be creatable and writable (the nearest
    existing ancestor a writable folder), so a read-only or missing location fails at once instead
    of after the whole computation."""
    for dest in OUTPUT_OPTIONS:
        value = getattr(args, dest, None)
        if not isinstance(value, str) or not value:
            continue
        path = Path(value).absolute()
        probe = path
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        if probe.exists() and not probe.is_dir():  # an output file: its folder must be writable
            probe = probe.parent
        if not os.access(probe, os.W_OK | os.X_OK):
            why = "read-only file system" if _read_only(probe) else "permission denied"
            raise PrimeBenchError(f"--{dest} {value}: cannot write in {probe} ({why})")


READ_FOLDERS = ("output_dir", "work_dir", "runs", "records", "logs")
"""The positional arguments that name a folder a command reads as a whole (a harness's run, a
VLMEvalKit work dir, HELM's runs, records, logs): no output may be written inside one."""


def _inside(path: str, folder: str) -> bool:
    p, f = Path(path).resolve(), Path(folder).resolve()
    return p == f or f in p.parents


def check_outputs_not_inputs(args: argparse.Namespace) -> None:
    """Before any work: an output option that names an existing file given as an input too (the
    same file by another spelling, a link) is refused — the command would overwrite what it
    reads (``keys lmms-eval --out`` equal to ``--vlmeval-tsv``); so is an output inside (or
    equal to) a folder the command reads as a whole (``pin lmms-eval out/ --out
    out/…/samples.jsonl``): its files are the run's own."""
    for dest in OUTPUT_OPTIONS:
        value = getattr(args, dest, None)
        if not isinstance(value, str) or not value:
            continue
        for src in READ_FOLDERS:
            folder = getattr(args, src, None)
            if (
                isinstance(folder, str)
                and folder
                and Path(folder).is_dir()
                and _inside(value, folder)
            ):
                raise PrimeBenchError(
                    f"--{dest} {value} lies in {folder}, the folder this command reads: it "
                    "would write among the run's own files; write somewhere else"
                )
    inputs: list[tuple[str, str]] = []
    for dest, value in vars(args).items():
        if dest in OUTPUT_OPTIONS or dest == "func":
            continue
        for v in value if isinstance(value, list | tuple) else [value]:
            if isinstance(v, str) and v and Path(v).is_file():
                inputs.append((dest, v))
    for dest in OUTPUT_OPTIONS:
        value = getattr(args, dest, None)
        if not isinstance(value, str) or not value or not Path(value).exists():
            continue
        for src, v in inputs:
            if os.path.samefile(value, v):
                raise PrimeBenchError(
                    f"--{dest} {value} is the input given as {src.replace('_', '-')} ({v}): the "
                    "command would "
                    "overwrite what it reads; write somewhere else"
                )


def _read_only(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def main(argv: list[str] | None = None) -> int:
    line = list(sys.argv[1:] if argv is None else argv)
    ap, tree = _build(line)
    args = ap.parse_args(respell(line, tree.renamed))
    try:
        check_outputs_writable(args)
        check_outputs_not_inputs(args)
        return int(args.func(args))
    except PrimeBenchError as exc:  # bad input: one line; anything else is a bug: a traceback
        print(f"primebench: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the environment (disk full, read-only, a bad path): one line
        if exc.errno not in ENVIRONMENT_ERRNOS:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"primebench: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
