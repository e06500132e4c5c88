"""lmms-eval as a PRIMEBench harness (entry point ``primebench.harnesses: lmms-eval``; the
protocol: :mod:`primebench_tasks.suite.harness`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from primebench_tasks.errors import InputError
from primebench_tasks.suite.harness import HarnessRun


def run_suite_versions(output_dir: str | Path) -> set[str]:
    """The suite versions the run's PRIMEBench tasks were generated from."""
    from harness_adapters.harnesses.lmms_eval.ingest import logged_tasks

    return {
        str(meta["primebench_suite"])
        for *_, meta, _s in logged_tasks(output_dir, lambda m: "primebench_suite" in m)
    }


class LmmsEvalHarness:
    """lmms-eval 0.7.3: suites run as generated tasks on the upstream task code (``--tasks
    primebench``); a run is the ``--log_samples --output_path`` folder."""

    name = "lmms-eval"
    summary = "lmms-eval: --tasks <suite> --log_samples --output_path OUT"

    def detect(self, output: Path) -> bool:
        """lmms-eval wrote ``<stamp>_results.json`` files here (a malformed one still counts:
        :meth:`read_run` then says what is wrong with it)."""
        return next(Path(output).rglob("*_results.json"), None) is not None

    def read_run(self, output: Path, model: str | None = None) -> HarnessRun:
        from harness_adapters.harnesses.lmms_eval.ingest import read_run, run_conditions

        versions = run_suite_versions(output)
        if len(versions) != 1:
            raise InputError(
                f"the run holds tasks of {len(versions)} suite versions "
                f"({sorted(versions)}); place one run folder per suite",
                file=str(output),
            )
        version = versions.pop()
        return HarnessRun(
            read_run(output, model=model, suite_version=version),
            version,
            run_conditions(output),
            lmms_eval_tasks=True,
        )

    def add_commands(self, tree: Any) -> None:
        from harness_adapters.harnesses.lmms_eval.commands import add_commands

        add_commands(tree)

    def prism_export(
        self, prism: Path, out: Path, axes: Sequence[str] | None = None
    ) -> Mapping[str, Path]:
        """The build's single-turn axes as lmms-eval tasks ``prism_<axis>`` in ``out`` (every
        axis: lmms-eval selects them with ``--tasks``)."""
        from harness_adapters.harnesses.lmms_eval.prism_tasks import generate_prism_tasks

        if axes:
            raise InputError(
                "lmms-eval selects axes at run time (--tasks prism_<axis>); give no axes here",
                field="--axes",
            )
        return {p.name: p for p in generate_prism_tasks(prism, out)}

    def prism_ingest(self, output: Path, prism: Path, run: Path, model: str) -> int:
        from harness_adapters.harnesses.lmms_eval.prism_tasks import ingest_lmms_eval

        return ingest_lmms_eval(output, prism, run, model)


HARNESS = LmmsEvalHarness()
