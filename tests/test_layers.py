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


def test_library_cli_has_no_harness_imports_and_plugins_add_commands():
    text = (ROOT / "primebench_tasks" / "cli.py").read_text("utf-8")
    assert "harness_adapters" not in text
    from primebench_tasks.cli import build_parser

    choices = build_parser()._subparsers._group_actions[0].choices  # noqa: SLF001
    for name in ("tasks", "ingest", "place", "keys", "run", "rank-variants", "vlmeval", "prism"):
        assert name in choices, name
