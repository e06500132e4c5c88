"""VLMEvalKit adapter: a suite's rows as LMUData TSVs (:mod:`.export`), their registration as
subclasses of the upstream VLMEvalKit dataset classes (:mod:`.registration`), and VLMEvalKit's
per-row results back as records (:mod:`.ingest`).

VLMEvalKit is not on PyPI; ``vlmeval`` is imported only inside the functions that need it."""

from __future__ import annotations

from harness_adapters.vlmeval.export import export_suite
from harness_adapters.vlmeval.ingest import read_results, read_work_dir
from harness_adapters.vlmeval.registration import register

__all__ = ["export_suite", "read_results", "read_work_dir", "register"]
