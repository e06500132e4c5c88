"""Selector names for the CLI and the fidelity protocols: name → factory(k, random_state, ctx)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from primebench_tasks.errors import ConfigError
from primebench_tasks.select.anchor_points import AnchorPointsSelector
from primebench_tasks.select.base import Selector
from primebench_tasks.select.cross_validated import CrossValidatedSelector
from primebench_tasks.select.datbench import DatBenchSelector
from primebench_tasks.select.disco import DISCOSelector
from primebench_tasks.select.fps import FPSSelector, KCenterSelector
from primebench_tasks.select.irt import IRTSelector
from primebench_tasks.select.random import RandomSelector
from primebench_tasks.select.variance import VarianceSelector
from primebench_tasks.select.vaw import VAWSelector


@dataclass(frozen=True)
class SelectorContext:
    """What a factory may need besides k: per-item binarisation thresholds (IRT)."""

    thresholds: np.ndarray | None = None


Factory = Callable[[int, int, SelectorContext], Selector]

SELECTORS: dict[str, Factory] = {
    "vaw_dc": lambda k, rs, c: VAWSelector(
        k, random_state=rs, signal="discrimination", cells="responses", cell_quantile=0.5
    ),
    "cross_validated": lambda k, rs, c: CrossValidatedSelector(k, random_state=rs),
    "random": lambda k, rs, c: RandomSelector(k, random_state=rs),
    "variance": lambda k, rs, c: VarianceSelector(k, random_state=rs, ties="seeded"),
    "variance_index": lambda k, rs, c: VarianceSelector(k, random_state=rs, ties="index"),
    "vaw": lambda k, rs, c: VAWSelector(k, random_state=rs, cells="embedding"),
    "vaw_random_cells": lambda k, rs, c: VAWSelector(k, random_state=rs, cells="random"),
    "vaw_shares_only": lambda k, rs, c: VAWSelector(k, random_state=rs, cells="none"),
    "vaw_alpha0": lambda k, rs, c: VAWSelector(k, random_state=rs, alpha=0.0, cells="embedding"),
    "vaw_dpp": lambda k, rs, c: VAWSelector(k, random_state=rs, cells="dpp"),
    "vaw_response_cells": lambda k, rs, c: VAWSelector(k, random_state=rs, cells="responses"),
    "irt": lambda k, rs, c: IRTSelector(k, random_state=rs, thresholds=c.thresholds),
    "anchor_points": lambda k, rs, c: AnchorPointsSelector(k, random_state=rs),
    "disco": lambda k, rs, c: DISCOSelector(k, random_state=rs),
    "datbench": lambda k, rs, c: DatBenchSelector(k, random_state=rs),
    "fps": lambda k, rs, c: FPSSelector(k, random_state=rs),
    "kcenter": lambda k, rs, c: KCenterSelector(k, random_state=rs),
}

NEEDS_EMBEDDINGS = frozenset({"vaw", "vaw_random_cells", "vaw_alpha0", "vaw_dpp", "fps", "kcenter"})
"""Arms that differ from another arm only through embeddings (``vaw`` without embeddings is
``vaw_shares_only``), or that cannot run without them."""

WEIGHTED = frozenset({"irt", "anchor_points"})
"""Selectors whose ``weights_`` are not uniform: they also get the weighted-mean estimator."""


EQUAL_ON_BINARY = {"disco": "variance"}
"""Arms that select exactly what another arm selects when every score is 0 or 1: DISCO needs
class probabilities; on correctness alone its disagreement ranks items as the variance does."""


def resolve(
    names: str | list[str], has_embeddings: bool, binary: bool = False
) -> tuple[list[str], list[str]]:
    """``"all"`` or a comma list → (runnable names, skipped names). ``"all"`` on a binary panel
    leaves out the arms of :data:`EQUAL_ON_BINARY` (a duplicate of another arm there)."""
    wanted = (
        list(SELECTORS)
        if names == "all"
        else (names.split(",") if isinstance(names, str) else list(names))
    )
    if names == "all" and binary:
        wanted = [n for n in wanted if n not in EQUAL_ON_BINARY]
    unknown = [n for n in wanted if n not in SELECTORS]
    if unknown:
        raise ConfigError(f"unknown selector(s) {unknown}; known: {', '.join(SELECTORS)}")
    if has_embeddings:
        return wanted, []
    return [n for n in wanted if n not in NEEDS_EMBEDDINGS], [
        n for n in wanted if n in NEEDS_EMBEDDINGS
    ]
