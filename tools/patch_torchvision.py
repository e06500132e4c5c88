"""Make PyPI's torchvision 0.28 importable next to the CPU-only torch wheel.

PyPI's torchvision is a CUDA build: its compiled ops (``nms``...) do not load against CPU torch,
and ``torchvision/_meta_registrations.py`` then fails at import on two unconditional
``register_fake`` calls.  vLLM needs torchvision importable (``transforms.v2`` in its LLaVA module,
the Qwen2-VL video processor in transformers) but no compiled op.  This makes those two
registrations conditional on ``torchvision.extension._has_ops()`` — the same condition the file
already uses for every other op (see ../shared/notes/vllm_cpu.md).  Idempotent; refuses to touch an
unknown torchvision version.

Usage: python tools/patch_torchvision.py  (with the target venv's python)
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

SUPPORTED = "0.28."
OPS = ("torchvision::nms", "torchvision::qnms")


def main() -> int:
    spec = importlib.util.find_spec("torchvision")
    if spec is None or spec.origin is None:
        print("torchvision not installed: nothing to patch")
        return 0
    root = Path(spec.origin).parent
    version = (root / "version.py").read_text()
    if not any(f"__version__ = {q}{SUPPORTED}" in version for q in "'\""):
        print(f"{root}: torchvision is not {SUPPORTED}x; re-check the patch", file=sys.stderr)
        return 1
    path = root / "_meta_registrations.py"
    text = path.read_text()
    changed = False
    for op in OPS:
        old = f'@torch.library.register_fake("{op}")'
        new = (
            f'@(torch.library.register_fake("{op}") if torchvision.extension._has_ops() '
            "else (lambda f: f))"
        )
        if new in text:
            continue
        if old not in text:
            print(f"{path}: registration of {op} not found", file=sys.stderr)
            return 1
        text = text.replace(old, new)
        changed = True
    if changed:
        path.write_text(text)
    print(f"{path}: {'patched' if changed else 'already patched'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
