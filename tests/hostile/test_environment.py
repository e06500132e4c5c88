"""The hostile battery, environment: read-only and full output folders (small tmpfs mounts,
skipped where the machine does not allow mounting) give one line naming the place and exit 2 —
never a traceback, and a read-only place is refused before any work starts."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "primebench_tasks.cli"]


@contextlib.contextmanager
def _tmpfs(where: Path, options: str):
    where.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({r.stderr.strip()})")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _panel_csv(tmp_path: Path) -> Path:
    f = tmp_path / "s.csv"
    f.write_text("item_id,mA,mB,mC\n0,1,0,1\n1,0,1,1\n", encoding="utf-8")
    return f


def _commands(tmp_path: Path, out: Path) -> dict[str, list[str]]:
    csv = str(_panel_csv(tmp_path))
    return {
        "simulate": ["simulate", "--models", "40", "--out", str(out / "sim")],
        "panel import": [
            "panel", "import", "--scores", csv, "--benchmark", "b",
            "--category", "Text Recognition", "--out", str(out / "p"),
        ],
        "build primebench": [
            "build", "primebench", "--default", "mathvision", "--no-calibration",
            "--out", str(out / "b"),
        ],
        "validate": [
            "validate", "--default", "mathvision", "--selectors", "random", "--splits", "2",
            "--budgets", "10", "--estimators", "mean", "--out", str(out / "v"),
        ],
    }  # fmt: skip


def _one_line_error(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 2, r.stderr[-2000:]
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    return r.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("command", ["simulate", "panel import", "build primebench", "validate"])
def test_read_only_output_is_refused_before_any_work(tmp_path, command):
    with _tmpfs(tmp_path / "ro", "size=1m,ro") as ro:
        argv = _commands(tmp_path, ro)[command]
        r = subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=600)
        line = _one_line_error(r)
        assert "read-only file system" in line and str(ro) in line
        assert "[primebench]" not in r.stderr  # refused before any stage ran
        assert list(ro.iterdir()) == []


@pytest.mark.parametrize("command", ["simulate", "build primebench", "validate"])
def test_full_disk_is_one_line(tmp_path, command):
    with _tmpfs(tmp_path / "full", "size=1m") as full:
        with open(full / ".filler", "wb") as fh:  # leave about 8 kB free
            fh.write(b"\0" * (1024 * 1024 - 8 * 1024))
        argv = _commands(tmp_path, full)[command]
        r = subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=600)
        line = _one_line_error(r)
        assert "space" in line.lower() or "full" in line.lower(), line


@pytest.mark.parametrize(
    "command",
    [
        ["evaluate", "vlmeval", "--", "--data", "PrimeBench_AI2D_TEST", "--model", "m"],
        [
            "adaptive",
            "vlmeval",
            "--suite",
            "primebench",
            "--model",
            "m",
            "--source-tsv",
            "x",
            "--out",
            "o",
        ],
    ],
)
def test_a_missing_vlmeval_is_one_line(tmp_path, command):
    """On 4d9a95b `primebench evaluate vlmeval ...` without VLMEvalKit installed (it is not on
    PyPI) gave a raw ModuleNotFoundError traceback. Run in a Python where ``vlmeval`` cannot be
    imported (where it is installed, its import is blocked as an absent package's is)."""
    block = "import sys; sys.modules['vlmeval'] = None; "
    code = block + "from primebench_tasks.cli import main; sys.exit(main(sys.argv[1:]))"
    r = subprocess.run(
        [sys.executable, "-c", code, *command],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert r.returncode == 2, r.stderr
    assert "VLMEvalKit is not installed in this Python" in r.stderr
    assert "Traceback" not in r.stderr
