"""``primebench place OUT``: where a model evaluated with lmms-eval on a PRIMEBench suite stands.

Reads the lmms-eval ``--log_samples`` output, finds the suite (a released one by its version, or
``--suite``), checks that the run is complete (every benchmark of the suite logged, and which
items are missing), places every model of the run (:mod:`primebench_tasks.place.suite`)
and writes (:mod:`harness_adapters.run.report`) ``report.json`` (schema ``primebench.placement/1``), ``report.md`` and
``placement.png`` into ``--out`` (default: ``OUT/primebench``).
"""

from __future__ import annotations

from pathlib import Path

from harness_adapters.harnesses.lmms_eval.harness import HARNESS
from harness_adapters.run.report import write_placement
from primebench_tasks.data.panel import Panel
from primebench_tasks.place.benchmark import DEFAULT_ESTIMATOR
from primebench_tasks.place.defaults import N_BOOT
from primebench_tasks.place.result import Placement


def place_run(
    output_dir: str | Path,
    out: str | Path | None = None,
    suite: str | Path | None = None,
    panel: Panel | None = None,
    model: str | None = None,
    estimator: str = DEFAULT_ESTIMATOR,
    n_boot: int = N_BOOT,
    seed: int = 0,
    allow_partial: bool = False,
) -> Placement:
    """Place the lmms-eval run in ``output_dir``; write the reports; return report.json's
    content."""
    run = HARNESS.read_run(Path(output_dir), model)
    dest = Path(out) if out is not None else Path(output_dir) / "primebench"
    return write_placement(
        run.records,
        run.suite_version,
        dest,
        suite,
        panel,
        estimator,
        n_boot,
        seed,
        allow_partial,
        lmms_eval_code=True,
    )
