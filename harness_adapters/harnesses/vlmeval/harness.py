"""VLMEvalKit as a PRIMEBench harness (entry point ``primebench.harnesses: vlmeval``; the
protocol: :mod:`primebench_tasks.suite.harness`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from primebench_tasks.errors import InputError
from primebench_tasks.suite.harness import HarnessRun


class VLMEvalKitHarness:
    """VLMEvalKit: suites exported as its datasets (``primebench tasks vlmeval``) and run by its
    ``run.py`` through ``primebench evaluate vlmeval``; a run is the ``--work-dir`` (or one model's
    folder in it), where every evaluated PrimeBench dataset leaves a ``*_primebench.json``."""

    name = "vlmeval"
    summary = "VLMEvalKit: primebench evaluate vlmeval -- --data PrimeBench_<benchmark> --model M"

    def detect(self, output: Path) -> bool:
        from harness_adapters.harnesses.vlmeval.registration import SIDECAR_SUFFIX

        return next(Path(output).rglob(f"*{SIDECAR_SUFFIX}"), None) is not None

    def read_run(self, output: Path, model: str | None = None) -> HarnessRun:
        from harness_adapters.harnesses.vlmeval.ingest import read_work_dir
        from harness_adapters.run.versions import installed_version

        records, docs = read_work_dir(output, model)
        versions = sorted({d["suite"] for d in docs})
        if len(versions) != 1:
            raise InputError(
                f"the work dir holds results of {len(versions)} suite versions "
                f"({versions}); place one suite at a time (--model, or one folder)",
                file=str(output),
            )
        return HarnessRun(
            records,
            versions[0],
            {
                "harness": "VLMEvalKit",
                "version": installed_version("vlmeval", "VLMEvalKit"),
                "models": sorted(records["model"].astype(str).unique()),
                "work_dir": str(output),
            },
        )

    def add_commands(self, tree: Any) -> None:
        from harness_adapters.harnesses.vlmeval.commands import add_commands

        add_commands(tree)

    def prism_export(
        self, prism: Path, out: Path, axes: Sequence[str] | None = None
    ) -> Mapping[str, Path]:
        """The build's single-turn axes (or ``axes``) as VLMEvalKit datasets (LMUData TSVs in
        ``out``): dataset name → TSV."""
        from harness_adapters.harnesses.vlmeval.prism_tasks import export_prism

        return export_prism(prism, out, list(axes) if axes else None)

    def prism_ingest(self, output: Path, prism: Path, run: Path, model: str) -> int:
        from harness_adapters.harnesses.vlmeval.prism_tasks import ingest_vlmeval

        return ingest_vlmeval(output, prism, run, model)


HARNESS = VLMEvalKitHarness()
