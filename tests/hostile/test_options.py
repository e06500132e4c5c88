"""The hostile battery, options: every numeric option of every command (plugins' included,
found by walking the parser, so a new command is covered when it is added) refuses values out of
its range with one line naming the option and exit 2 — never a traceback or a crash after the
work has started (`refresh --explore -1` once crashed after publishing a version)."""

from __future__ import annotations

import argparse

import pytest

from primebench_tasks.cli import build_parser, main
from primebench_tasks.cli.options import POSITIVE_OPTIONS, UPPER_BOUNDS


def _numeric_options() -> list[tuple[list[str], argparse.Action]]:
    out: list[tuple[list[str], argparse.Action]] = []

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        for a in parser._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sub in a.choices.items():
                    walk(sub, [*path, name])
            elif a.option_strings and getattr(a.type, "__name__", "") in ("int", "float"):
                out.append((path, a))

    walk(build_parser(), [])
    return out


OPTIONS = _numeric_options()


def test_the_walk_finds_the_numeric_options_of_core_and_plugin_commands():
    found = {(" ".join(p), a.option_strings[-1]) for p, a in OPTIONS}
    assert ("validate", "--splits") in found and ("simulate", "--models") in found
    assert ("replay", "--waves") in found and ("build primebench", "--seed") in found
    assert len(found) >= 30


@pytest.mark.parametrize(
    "path,action", OPTIONS, ids=[f"{' '.join(p)} {a.option_strings[-1]}" for p, a in OPTIONS]
)
def test_numeric_option_refuses_out_of_range_values(path, action, capsys):
    opt = action.option_strings[-1]
    bad = ["-1", "nan", "inf", "abc"]
    if action.dest in POSITIVE_OPTIONS:
        bad.append("0")
    if action.dest in UPPER_BOUNDS:
        bad.append(str(UPPER_BOUNDS[action.dest] * 10 + 1))
    for value in bad:
        with pytest.raises(SystemExit) as exc:
            main([*path, f"{opt}={value}"])
        assert exc.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()[-1]
        named = f"argument {opt}" in err or f"/{opt}:" in err
        assert named and "Traceback" not in err, (value, err)
