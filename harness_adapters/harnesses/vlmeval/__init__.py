"""VLMEvalKit adapter: a suite's rows as LMUData TSVs (:mod:`.export`), their registration as
subclasses of the upstream VLMEvalKit dataset classes (:mod:`.registration`), and VLMEvalKit's
per-row results back as records (:mod:`.ingest`).

VLMEvalKit is not on PyPI; ``vlmeval`` is imported only inside the functions that need it, and
these names load their modules on first use (``primebench --help`` imports none of them)."""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "export_suite": "harness_adapters.harnesses.vlmeval.export",
    "read_results": "harness_adapters.harnesses.vlmeval.ingest",
    "read_work_dir": "harness_adapters.harnesses.vlmeval.ingest",
    "register": "harness_adapters.harnesses.vlmeval.registration",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'harness_adapters.harnesses.vlmeval' has no attribute {name!r}")
