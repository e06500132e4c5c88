"""A wheel built from the checkout, installed in a fresh venv (not an editable install): the
released suites ship inside it, lmms-eval's TaskManager resolves ``primebench`` without
``--include_path`` (through the ``lmms_eval.models`` entry point), ``lmms-eval --tasks list``
lists it, and the generated configs name nothing outside the installed packages.

The fresh venv reaches the test environment's third-party packages (lmms-eval, torch, ...)
through a ``.pth`` line, which adds the folder to ``sys.path`` without running its ``.pth`` files:
the editable install of the checkout stays inactive, so what runs is the wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

pytest.importorskip("lmms_eval", reason="needs the 'lmms' extra: pip install -e '.[lmms]'")

CHECK = r"""
import sys, harness_adapters, primebench_tasks
import lmms_eval.models  # runs the lmms_eval.models entry points, as the CLI does
from lmms_eval.tasks import TaskManager
from harness_adapters.harnesses.lmms_eval import task_path
assert sys.prefix in harness_adapters.__file__, harness_adapters.__file__
assert sys.prefix in primebench_tasks.__file__, primebench_tasks.__file__
assert sys.prefix in str(task_path().resolve()), task_path()
tm = TaskManager("ERROR")
for name in ("primebench", "primebench_math_reasoning", "primebench_mmmu_dev_val",
             "primebench_blink", "primebench_mathvision"):
    assert name in tm.all_tasks, name
for name in ("primebench_ocrbench", "primebench_realworldqa"):  # keyed by text (#55)
    assert name in tm.all_tasks, name
# the shipped data the flagship's checks read: item map, alias table, release dates, panels
from primebench_tasks.data.merge import read_aliases, shipped_item_map
from primebench_tasks.data.model_dates import shipped_release_dates
from primebench_tasks.data.panel import Panel
assert len(shipped_item_map("autojudger_MMMU_DEV_VAL")) == 900 and len(read_aliases()) == 14
assert len(shipped_release_dates()) > 100
assert len(Panel.load_default("mmmu_merged").model_names) == 185
print("resolved", tm.task_index["primebench"]["yaml_path"] if "yaml_path" in
      tm.task_index["primebench"] else "primebench")
"""


@pytest.mark.slow
def test_wheel_in_a_fresh_venv_serves_the_released_suites(tmp_path):
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("primebench-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    r = subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    r = subprocess.run(
        [str(py), "-c", CHECK], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600
    )
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-4000:])
    installed = Path(site) / "harness_adapters" / "task_configs" / "lmms_eval" / "primebench"
    assert (installed / "primebench.yaml").is_file() and not installed.is_symlink()
    assert (
        Path(site) / "harness_adapters" / "task_configs" / "suites" / "primebench.json"
    ).is_file()
    r = subprocess.run(
        [
            str(py),
            "-c",
            "import sys; from lmms_eval.cli.dispatch import main; "
            "sys.argv = ['lmms-eval', '--tasks', 'list']; main()",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    listing = r.stdout + r.stderr
    assert "primebench_mmmu_dev_val" in listing and "primebench_blink" in listing, listing[-3000:]
