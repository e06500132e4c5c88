"""lmms-eval adapter: task configs generated from a suite manifest, registration of the task
directory, and ingest of ``--log_samples`` output into a Panel. lmms_eval is imported only inside
the functions that run within lmms-eval."""

from __future__ import annotations

from pathlib import Path


def task_path() -> Path:
    """The directory of the released suites' lmms-eval task configs: ``task_configs/lmms_eval``."""
    from harness_adapters.suites.released import task_configs_path

    return task_configs_path() / "lmms_eval"
