"""PRIMEBench: compact VLM evaluation suites that rank models like the full suite.

The public API (``from primebench_tasks import ...``); each name is imported on first use, so
``import primebench_tasks`` itself loads nothing heavy (not even numpy or pandas):

- data: :class:`Panel` (per-item scores of models on benchmarks), :class:`Leaderboard`,
  :func:`import_matrix`, :func:`simulate_panel`, :func:`simulate_leaderboard`;
- building suites: :class:`PipelineParams`, :func:`run_pipeline`, :func:`read_manifest`,
  :func:`write_manifest`;
- selectors (scikit-learn estimators: ``Selector(k, random_state=...).fit(X, items)``):
  :class:`Selector`, :class:`ItemFeatures`, :class:`VAWSelector`,
  :class:`CrossValidatedSelector`, :data:`SELECTORS`, :data:`DEFAULT_SELECTOR`;
- evaluation: :func:`validate` (held-out fidelity), :func:`place_models` (score, predicted full
  score and rank with intervals), :func:`make_estimator`;
- errors: :class:`PrimeBenchError`, :class:`ConfigError`, :class:`InputError`.

torch, transformers, lmms_eval and vllm are imported only by the code paths that need them.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "Panel": "primebench_tasks.data.panel",
    "Leaderboard": "primebench_tasks.data.leaderboard",
    "import_matrix": "primebench_tasks.data.importers",
    "simulate_panel": "primebench_tasks.data.simulate",
    "simulate_leaderboard": "primebench_tasks.data.simulate",
    "PipelineParams": "primebench_tasks.pipeline.primebench",
    "run_pipeline": "primebench_tasks.pipeline.primebench",
    "read_manifest": "primebench_tasks.pipeline.manifest",
    "write_manifest": "primebench_tasks.pipeline.manifest",
    "Selector": "primebench_tasks.select.base",
    "ItemFeatures": "primebench_tasks.select.base",
    "VAWSelector": "primebench_tasks.select.vaw",
    "CrossValidatedSelector": "primebench_tasks.select.cross_validated",
    "SELECTORS": "primebench_tasks.select.registry",
    "DEFAULT_SELECTOR": "primebench_tasks.select.default",
    "validate": "primebench_tasks.evaluate.validate",
    "place_models": "primebench_tasks.place.benchmark",
    "make_estimator": "primebench_tasks.place.estimators",
    "PrimeBenchError": "primebench_tasks.errors",
    "ConfigError": "primebench_tasks.errors",
    "InputError": "primebench_tasks.errors",
}

__all__ = [*_EXPORTS, "__version__"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'primebench_tasks' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
