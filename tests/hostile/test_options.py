"""The hostile battery, options: every numeric option of every command (plugins' included,
found by walking the parser, so a new command is covered when it is added) refuses values out of
its range with one line naming the option and exit 2 — never a traceback or a crash after the
work has started (`refresh --explore -1` once crashed after publishing a version)."""

from __future__ import annotations

import argparse

import pytest

from primebench_tasks.cli import build_parser, main
from primebench_tasks.cli.options import LOWER_BOUNDS, POSITIVE_OPTIONS, UPPER_BOUNDS


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


def test_the_bootstrap_floor_is_the_placements():
    from primebench_tasks.place.defaults import MIN_N_BOOT

    assert LOWER_BOUNDS["n_boot"] == MIN_N_BOOT
    assert ("place", "--n-boot") in {(" ".join(p), a.option_strings[-1]) for p, a in OPTIONS}


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
    if action.dest in LOWER_BOUNDS:  # `place --n-boot 1` was accepted on 4d9a95b
        bad += ["1", str(LOWER_BOUNDS[action.dest] - 1)]
    for value in bad:
        with pytest.raises(SystemExit) as exc:
            main([*path, f"{opt}={value}"])
        assert exc.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()[-1]
        named = f"argument {opt}" in err or f"/{opt}:" in err
        assert named and "Traceback" not in err, (value, err)


BAD_TEXT = [
    # (command, the option's error, what the line says) — #54's unchecked options and names
    (["panel", "import", "--scores", "s.csv", "--out", "p", "--score-range", "abc"], "LO,HI"),
    (["panel", "import", "--scores", "s.csv", "--out", "p", "--score-range", "0,1,2"], "LO,HI"),
    (["panel", "import", "--scores", "s.csv", "--out", "p", "--score-range", "5,1"], "LO < HI"),
    (["panel", "import", "--scores", "s.csv", "--out", "p", "--benchmark", ""], "empty"),
    (["panel", "import", "--scores", "s.csv", "--out", "p", "--benchmark", " b"], "spaces"),
    (["panel", "import", "--scores", "s.csv", "--out", "p", "--benchmark", "a\tb"], "control"),
    (["run", "--model", "m", "--suite", "s", "--out", "o", "--name", ""], "empty"),
    (["run", "--model", "m", "--suite", "s", "--out", "o", "--name", "../../x"], "separator"),
    (["run", "--model", "m", "--suite", "s", "--out", "o", "--name", "a\nb"], "control"),
]


@pytest.mark.parametrize(("argv", "said"), BAD_TEXT, ids=[" ".join(a[-2:]) for a, _ in BAD_TEXT])
def test_a_bad_name_or_range_is_refused_by_the_parser(argv, said, capsys):
    if argv[0] == "panel":
        argv = [*argv, "--category", "Chart Understanding"]
        if "--benchmark" not in argv:
            argv += ["--benchmark", "b"]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert said in err and "Traceback" not in err, err


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--model", "m", "--suite", "s", "--out", "o", "--max-items", "5"],
        ["run", "--model", "m", "--suite", "s", "--out", "o", "--target-width", "0.1"],
        ["rank-variants", "--base", "m", "--adapters", "a", "--suite", "s", "--out", "o",
         "--round-size", "5"],
        ["validate", "--default", "m3irt", "--protocol", "adaptive", "--floor", "5", "--out", "o"],
        ["validate", "--default", "m3irt", "--budgets", "", "--out", "o"],
    ],
)  # fmt: skip
def test_an_option_that_would_be_ignored_is_refused(argv, capsys, tmp_path, monkeypatch):
    """An adaptive-only option on a static run, --floor with the adaptive protocol and an
    empty --budgets were silently ignored (#54): refused, naming the option, before any
    work."""
    monkeypatch.chdir(tmp_path)
    flag = next(a for a in argv if a in ("--max-items", "--target-width", "--round-size",
                                         "--floor", "--budgets"))  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"primebench: error: {flag}" in err and "Traceback" not in err, err
    assert not (tmp_path / "o").exists()


def test_the_same_adapter_twice_is_refused(tmp_path, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "adapter_config.json").write_text("{}")
    a = str(tmp_path / "a")
    argv = ["rank-variants", "--base", "m", "--adapters", a, a, "--suite", "s", "--out", "o"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"--adapters names {a} more than once" in err, err


def test_a_budget_no_pool_can_fill_is_refused(tmp_path, capsys):
    from primebench_tasks.cli import main

    out = str(tmp_path / "v")
    code = main(["validate", "--default", "mathvision", "--budgets", "10,1000000", "--out", out])
    assert code == 2 and not (tmp_path / "v" / "table.md").exists()
    err = capsys.readouterr().err
    assert "--budgets 1000000: more items than any category pool holds (the largest: 304)" in err


def test_an_old_group_alone_points_to_the_new_grammar(capsys):
    from primebench_tasks.cli import main

    with pytest.raises(SystemExit):
        main(["vlmeval"])
    err = capsys.readouterr().err
    assert "`primebench vlmeval ...` is now spelled" in err
    assert "`primebench tasks vlmeval`" in err and "`primebench evaluate vlmeval`" in err
