"""VLMEvalKit adapter: LMUData TSV export of a suite, a runtime dataset class, result ingest.

VLMEvalKit is not on PyPI; ``vlmeval`` is imported only inside :func:`register`."""

from __future__ import annotations

from harness_adapters.vlmeval.export import export_suite
from harness_adapters.vlmeval.ingest import read_results
from harness_adapters.vlmeval.registration import register

__all__ = ["export_suite", "read_results", "register"]
