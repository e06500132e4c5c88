"""lmms-eval adapter: task configs generated from a suite manifest, registration of the task
directory, and ingest of ``--log_samples`` output into a Panel. lmms_eval is imported only inside
the functions that run within lmms-eval."""

from __future__ import annotations

from pathlib import Path


def task_path() -> Path:
    """The directory of the released suites' lmms-eval task configs: ``task_configs/lmms_eval``,
    shipped in the wheel as ``harness_adapters/task_configs`` (a symlink in the checkout)."""
    return Path(__file__).resolve().parents[1] / "task_configs" / "lmms_eval"


def suites_path() -> Path:
    """The directory of the released suite manifests (``task_configs/suites``)."""
    return Path(__file__).resolve().parents[1] / "task_configs" / "suites"
