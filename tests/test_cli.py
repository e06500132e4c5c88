"""The ``primebench`` command as a user meets it: clear one-line errors for bad input, before any
work; tracebacks for bugs."""

import argparse

import pytest

from primebench_tasks import cli
from primebench_tasks.cli import main


def test_panel_and_default_together_is_an_error(capsys):
    assert main(["panel", "info", "--default", "autojudger", "--panel", "somewhere"]) == 2
    assert "not both" in capsys.readouterr().err


def test_build_refuses_a_non_empty_out_before_any_work(tmp_path, capsys, monkeypatch):
    (tmp_path / "old.txt").write_text("an earlier build")
    ran = []
    from primebench_tasks.cli import build_commands

    monkeypatch.setattr(build_commands, "load_panel", lambda args: ran.append(1))
    assert main(["build", "primebench", "--default", "autojudger", "--out", str(tmp_path)]) == 2
    assert "--overwrite" in capsys.readouterr().err and not ran
    f = tmp_path / "old.txt"
    assert main(["build", "resampled", "--default", "autojudger", "--out", str(f)]) == 2
    assert "a file is there" in capsys.readouterr().err and not ran
    args = argparse.Namespace(out=str(tmp_path), overwrite=True)
    assert cli.check_out_dir(args) == tmp_path  # --overwrite lets it through
    assert cli.check_out_dir(argparse.Namespace(out=str(tmp_path / "new"))) == tmp_path / "new"


def test_an_empty_frontier_writes_nothing_and_fails(tmp_path, capsys):
    out = tmp_path / "frontier"
    assert (
        main(["build", "frontier", "--default", "autojudger", "--budget", "100", "--out", str(out)])
        == 2
    )
    assert "kept no item" in capsys.readouterr().err and not out.exists()


def test_internal_errors_are_not_swallowed(monkeypatch):
    def broken(args):
        raise KeyError("an internal bug")

    from primebench_tasks.cli import panel_commands

    monkeypatch.setattr(panel_commands, "cmd_panel_list", broken)
    with pytest.raises(KeyError, match="an internal bug"):
        main(["panel", "list"])


def test_benchmarks_list_takes_spaces_and_suggests_close_names(tmp_path, capsys):
    from primebench_tasks.cli import main

    out = tmp_path / "v"
    rc = main(
        [
            "validate",
            "--default",
            "m3irt",
            "--benchmarks",
            "MathVista_MINI, MMMU_DEV_VAL",
            "--selectors",
            "random",
            "--estimators",
            "mean",
            "--retentions",
            "0.05",
            "--splits",
            "2",
            "--out",
            str(out),
        ]
    )
    assert rc == 0 and (out / "summary.csv").exists()
    rc = main(
        [
            "validate",
            "--default",
            "m3irt",
            "--benchmarks",
            "MathVista_MIN",
            "--selectors",
            "random",
            "--splits",
            "2",
            "--out",
            str(tmp_path / "w"),
        ]
    )
    err = capsys.readouterr().err
    assert rc != 0 and "did you mean 'MathVista_MINI'" in err


def test_every_option_has_help_and_every_command_an_example():
    from primebench_tasks.cli import build_parser
    from primebench_tasks.cli.help import missing_help

    assert missing_help(build_parser()) == []


def test_every_command_help_renders():
    """argparse expands % in help texts: a stray one breaks `--help` of that command."""
    import argparse

    from primebench_tasks.cli import build_parser

    def walk(parser, path):
        parser.format_help()  # raises on a bad help string
        for a in parser._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sub in a.choices.items():
                    walk(sub, [*path, name])

    walk(build_parser(), [])


def test_help_shows_defaults_read_from_the_code(capsys):
    from primebench_tasks.cli import main
    from primebench_tasks.pipeline.primebench import PipelineParams
    from primebench_tasks.select.default import DEFAULT_SELECTOR

    with pytest.raises(SystemExit):
        main(["build", "primebench", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert f"default {DEFAULT_SELECTOR}" in out and f"default {PipelineParams().retention}" in out
    assert "example:" in out


def test_validate_adaptive_protocol_end_to_end(tmp_path, capsys):
    """``validate --protocol adaptive`` replays the adaptive test on an embedded panel (the
    library's side: tests/evaluate/test_adaptive_validation.py); the static protocols' options
    are refused there, not ignored."""
    import json

    out = tmp_path / "v"
    args = ["validate", "--protocol", "adaptive", "--default", "m3irt"]
    args += ["--benchmarks", "MMMU_DEV_VAL", "--splits", "1", "--budgets", "5,10"]
    assert main([*args, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert (
        "| MMMU_DEV_VAL | random | 5 |" in printed and "| MMMU_DEV_VAL | frontier | 10 |" in printed
    )
    spec = json.loads((out / "spec.json").read_text("utf-8"))
    assert (
        spec["panel"] == "m3irt[MMMU_DEV_VAL]"
        and spec["items"] == [5, 10]
        and spec["random_splits"] == 1
    )
    assert (
        (out / "table.md")
        .read_text("utf-8")
        .startswith("# Adaptive replay on `m3irt[MMMU_DEV_VAL]`")
    )
    for extra in (["--selectors", "random"], ["--estimators", "mean"], ["--retentions", "0.1"]):
        assert main([*args, *extra, "--out", str(tmp_path / "w")]) != 0
        assert f"{extra[0]} does not apply to --protocol adaptive" in capsys.readouterr().err
    assert not (tmp_path / "w").exists()


def test_validate_with_one_estimator_shows_its_table_and_says_only_what_it_wrote(tmp_path, capsys):
    """On 4d9a95b `validate --estimators greg` alone printed an empty pandas frame (the ρ table
    read subset-mean rows only) and every validate said it wrote a plot it had not drawn."""
    out = tmp_path / "v"
    args = ["validate", "--default", "m3irt", "--benchmarks", "MMMU_DEV_VAL", "--splits", "1"]
    args += ["--selectors", "random", "--estimators", "greg", "--budgets", "10"]
    assert main([*args, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "held-out ρ, greg scoring:" in printed and "Empty DataFrame" not in printed
    assert "random" in printed.split("greg scoring:")[1]
    wrote = next(ln for ln in printed.splitlines() if ln.startswith("wrote "))
    assert "rho_vs_retention.png" not in wrote and not (out / "rho_vs_retention.png").exists()
    assert all((out / n.strip()).exists() for n in wrote.split("/")[-1].split(","))


def test_validate_estimators_default_is_the_librarys():
    from primebench_tasks.cli.evaluate_commands import ESTIMATORS_DEFAULT
    from primebench_tasks.evaluate.validate import ESTIMATORS

    assert ",".join(ESTIMATORS) == ESTIMATORS_DEFAULT


def test_one_command_grammar_and_the_old_spellings_say_what_to_type(capsys):
    """#57: what a harness does is ``VERB HARNESS``; every old spelling still runs for one
    release — rewritten to the command it is now, saying so — and a current spelling, or a
    group's own help, is left alone."""
    from primebench_tasks.cli.main import _build, respell

    ap, tree = _build()
    renamed = tree.renamed
    assert renamed[("vlmeval", "export")] == ("tasks", "vlmeval")
    assert renamed[("keys", "build")] == ("keys", "lmms-eval")
    # every target is a command of the parser (its --help exits 0)
    for new in renamed.values():
        with pytest.raises(SystemExit) as exit_:
            ap.parse_args([*new, "--help"])
        assert exit_.value.code == 0
    capsys.readouterr()
    got = respell(["vlmeval", "export", "--suite", "primebench"], renamed)
    assert got == ["tasks", "vlmeval", "--suite", "primebench"]
    err = capsys.readouterr().err
    assert "`primebench vlmeval export` is now `primebench tasks vlmeval`" in err
    # the old `prism tasks` is a prefix of the new `prism tasks lmms-eval` / `vlmeval`
    assert respell(["prism", "tasks", "--prism", "B"], renamed)[:3] == [
        "prism",
        "tasks",
        "lmms-eval",
    ]
    capsys.readouterr()
    for line in (["prism", "tasks", "vlmeval", "--prism", "B"], ["prism", "tasks", "--help"]):
        assert respell(line, renamed) == line
    assert respell(["tasks", "lmms-eval", "--manifest", "M"], renamed)[:2] == ["tasks", "lmms-eval"]
    assert capsys.readouterr().err == ""
    # the top level lists verbs, not a harness's own group
    top = ap.format_help()
    assert "evaluate" in top and "{panel," in top and ",vlmeval}" not in top


def test_a_harness_plug_that_cannot_be_imported_leaves_the_command_line_working(
    monkeypatch, capsys
):
    """An installed harness entry point whose module is gone: `primebench` still builds its
    command line, names the plug on stderr, and PRISM keeps the other harnesses' commands."""
    import importlib.metadata as md

    from primebench_tasks.cli import build_parser
    from primebench_tasks.suite.harness import HARNESS_GROUP

    real = md.entry_points
    broken = md.EntryPoint("broken", "no_such_harness_module:HARNESS", HARNESS_GROUP)

    def with_broken(**kw):
        eps = list(real(**kw))
        return [*eps, broken] if kw.get("group") == HARNESS_GROUP else eps

    monkeypatch.setattr(md, "entry_points", with_broken)
    choices = build_parser()._subparsers._group_actions[0].choices  # noqa: SLF001
    prism = choices["prism"]._subparsers._group_actions[0].choices  # noqa: SLF001
    assert "lmms-eval" in prism["tasks"]._subparsers._group_actions[0].choices  # noqa: SLF001
    assert "plugin broken (no_such_harness_module:HARNESS) not loaded" in capsys.readouterr().err


def test_suites_list_names_the_released_suites(capsys):
    """On 4d9a95b no command listed the released suites a user can name."""
    from harness_adapters.suites.released import suites_path
    from primebench_tasks.suite.manifest import SuiteManifest

    assert main(["suites", "list"]) == 0
    printed = capsys.readouterr().out
    for path in suites_path().glob("*.json"):
        m = SuiteManifest.read(path)
        assert f"| {m.version} | {m.n_items}" in printed and f"| {m.name} | " in printed
    # #79: the wide suite's twelve benchmarks counted (it said 7), what each suite is for, and
    # which one runs with nothing to download
    row = next(ln for ln in printed.splitlines() if ln.startswith("| primebench_wide |"))
    assert "| 754 + 500 drawn | 12: " in row and "design-only ChartQA_TEST" in row
    first = next(ln for ln in printed.splitlines() if ln.startswith("| primebench_mathvision |"))
    assert "| yes |" in first and "a first run" in first


def test_a_weak_suite_is_said_to_be_weak_by_hand():
    """#82: 13 models built at ρ 0.654 under target 0.95 with no warning."""
    from primebench_tasks.cli.build_checks import weak_suite_warnings

    lines = weak_suite_warnings(0.654, 0.95, 13)
    assert "misses its target 0.95 by 0.296" in lines[0]
    assert "13 models (fewer than 30)" in lines[1] and "validate needs 16" in lines[1]
    assert weak_suite_warnings(0.968, 0.95, 169) == []


def test_released_suite_names_are_the_released_suites_and_never_a_built_suites(tmp_path, capsys):
    from harness_adapters.suites.released import suites_path
    from primebench_tasks.suite.manifest import RELEASED_SUITE_NAMES, SuiteManifest

    names = {SuiteManifest.read(p).name for p in suites_path().glob("*.json")}
    assert names == set(RELEASED_SUITE_NAMES)
    rc = main(["build", "primebench", "--default", "mathvision", "--name", "primebench",
               "--out", str(tmp_path / "s")])  # fmt: skip
    assert rc == 2 and "is a released suite's name" in capsys.readouterr().err
    assert not (tmp_path / "s" / "manifest.json").exists()


def test_tasks_of_another_suite_under_a_released_name_are_refused(tmp_path, capsys):
    """#82: a user's suite named ``primebench`` ran as the released flagship under
    --include_path; now refused, naming --name, which works."""
    import json

    from harness_adapters.suites.released import suites_path
    from primebench_tasks.suite.manifest import versioned

    doc = json.loads((suites_path() / "primebench_mathvision.json").read_text())
    doc["fidelity"] = {**doc.get("fidelity", {}), "note": "mine"}
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps(versioned(doc)))
    args = ["tasks", "lmms-eval", "--manifest", str(mine), "--default", "mathvision"]
    assert main([*args, "--out", str(tmp_path / "t")]) == 2
    assert "--name primebench_mathvision_mine" in capsys.readouterr().err
    assert main([*args, "--name", "mine", "--out", str(tmp_path / "t")]) == 0
    assert "--tasks primebench_mine" in capsys.readouterr().out
