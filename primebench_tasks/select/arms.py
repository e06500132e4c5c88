"""The fixed selectors by name: name → factory(k, random_state, ctx). The cross-validated
selector chooses among these; :mod:`primebench_tasks.select.registry` adds it to them (so the two
modules never import each other)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from primebench_tasks.select.anchor_points import AnchorPointsSelector
from primebench_tasks.select.base import Selector
from primebench_tasks.select.datbench import DatBenchSelector
from primebench_tasks.select.disco import DISCOSelector
from primebench_tasks.select.fps import FPSSelector, KCenterSelector
from primebench_tasks.select.irt import IRTSelector
from primebench_tasks.select.random import RandomSelector
from primebench_tasks.select.stratified import StratifiedSelector
from primebench_tasks.select.variance import VarianceSelector
from primebench_tasks.select.vaw import VAWSelector


@dataclass(frozen=True)
class SelectorContext:
    """What a factory may need besides k: per-item binarisation thresholds (IRT)."""

    thresholds: np.ndarray | None = None


Factory = Callable[[int, int, SelectorContext], Selector]

ARMS: dict[str, Factory] = {
    "vaw_dc": lambda k, rs, c: VAWSelector(
        k, random_state=rs, signal="discrimination", cells="responses", cell_quantile=0.5
    ),
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
    "stratified": lambda k, rs, c: StratifiedSelector(k, random_state=rs),
}
