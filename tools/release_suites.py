"""Rebuild the released suites and their lmms-eval task configs (run from the repository root).

    python tools/release_suites.py

Released: ``primebench_mathvision`` — the PRIMEBench pipeline on the embedded MATH-Vision testmini
panel (the embedded panel whose item text and images are shipped, so its lmms-eval tasks run
offline) — and ``primebench_mathvision_testmini``, all 304 testmini items (Stage 0 only), the local benchmark
users can copy for their private benchmarks. Writes ``task_configs/suites/<name>.json`` and
``task_configs/lmms_eval/<name>/``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from harness_adapters.lmms_eval.taskgen import generate_tasks
from primebench_tasks.data.panel import Panel
from primebench_tasks.pipeline.manifest import write_manifest
from primebench_tasks.pipeline.primebench import PipelineParams, run_pipeline

SUITES = {"primebench_mathvision": ("mathvision", "stage3"),
          "primebench_mathvision_testmini": ("mathvision", "stage0")}


def main() -> None:
    for name, (default, until) in SUITES.items():
        panel = Panel.load_default(default)
        manifest = run_pipeline(panel, PipelineParams(until=until)).manifest(panel, name)
        write_manifest(manifest, Path("task_configs/suites") / f"{name}.json")
        out = Path("task_configs/lmms_eval") / name
        if out.exists():
            shutil.rmtree(out)
        generate_tasks(manifest, panel, out)
        print(f"{name}: {manifest['n_items']} items, version {manifest['version']}")


if __name__ == "__main__":
    main()
