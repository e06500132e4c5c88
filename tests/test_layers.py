"""The layer rules (import-linter contracts in pyproject.toml): the library never imports the
harness adapters; selectors never import the pipeline; data knows no selectors. Also: the
adapters' sub-commands arrive through the ``primebench.commands`` entry points."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


def test_import_linter_contracts_are_kept():
    exe = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    if not Path(exe).exists():
        pytest.skip("import-linter is not installed (dev extra)")
    r = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "broken" in r.stdout and " 0 broken" in r.stdout


def test_no_file_level_import_circle_function_level_imports_included():
    """tools/import_cycles.py: no two modules import each other, even through an import inside
    a function (import-linter sees packages; four such circles were closed this way)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("cycles", ROOT / "tools" / "import_cycles.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    g = mod.graph()
    assert "primebench_tasks.select.registry" in g and len(g) > 100
    assert mod.cycles(g) == []
    # the checker finds a circle closed inside a function
    toy = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert mod.cycles(toy) == [["a", "b", "c"]]


def test_plugins_add_commands():
    from primebench_tasks.cli import build_parser

    choices = build_parser()._subparsers._group_actions[0].choices  # noqa: SLF001
    for name in (
        "tasks",
        "evaluate",
        "ingest",
        "adaptive",
        "keys",
        "path",
        "place",
        "run",
        "rank-variants",
        "prism",
    ):
        assert name in choices, name


CLI_MAX_LINES = 300


def test_no_cli_module_is_over_300_lines():
    """The command line is a package of small modules (one per command family), in the library
    and in each harness adapter."""
    root = Path(__file__).resolve().parents[1]
    files = [*(root / "primebench_tasks" / "cli").glob("*.py")]
    files += [
        *root.glob("harness_adapters/**/cli*.py"),
        *root.glob("harness_adapters/**/parser.py"),
    ]
    files += [root / "harness_adapters" / "run" / "place_command.py"]
    long = {
        str(f.relative_to(root)): n
        for f in files
        if (n := len(f.read_text().splitlines())) > CLI_MAX_LINES
    }
    assert long == {}
