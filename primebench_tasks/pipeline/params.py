"""The pipeline's parameters and the paper's defaults, defined once (pure Python: the CLI reads them
for ``--help`` without importing the numerical stack)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from primebench_tasks.select.default import (
    ALPHA,
    DEFAULT_SELECTOR,
    FLOOR,
    RETENTION,
    TOP_FRACTION,
    TOP_SHARE,
)

__all__ = ["FLOOR", "RETENTION"]  # defined in select.default, re-exported

if TYPE_CHECKING:
    from primebench_tasks.data.panel import Panel

TAU = 2.0 / 3.0
"""Stage 0: an item is blind-solvable when at least this share of blind runs solve it."""
MIN_BLIND_MODELS = 3
"""Stage 0: blind runs needed on a benchmark before its blind filter applies."""
TARGET_RHO = 0.95
"""Stage 1: supplementation target."""
K = 5
"""Stage 3: categories kept."""
MAX_SUBSETS = 2_000_000
"""Stage 3: exhaustive search up to this many subsets."""


@dataclass(frozen=True)
class PipelineParams:
    """The paper's defaults (docs/architecture.md conventions)."""

    retention: float = RETENTION
    k: int = K
    alpha: float = ALPHA
    tau: float = TAU
    floor: int = FLOOR
    seed: int = 0
    target_rho: float = TARGET_RHO
    min_blind_models: int = MIN_BLIND_MODELS
    selector: str = DEFAULT_SELECTOR
    top_share: float = TOP_SHARE
    top_fraction: float = TOP_FRACTION
    cells: str = "embedding"
    cell_space: str = "auto"
    max_subsets: int = MAX_SUBSETS
    until: str = "stage3"

    def as_dict(self, panel: Panel) -> dict[str, Any]:
        from primebench_tasks.pipeline.cell_space import resolve_cell_space

        d = dict(self.__dict__)
        d["cell_space"] = resolve_cell_space(panel, self.cell_space) or "none"
        return d
