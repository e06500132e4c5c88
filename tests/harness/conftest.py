from __future__ import annotations

import numpy as np
import pytest

from primebench_tasks.data.panel import Panel
from primebench_tasks.pipeline.manifest import build_manifest


def small_suite(panel: Panel, n: int, name: str = "primebench_tiny") -> dict:
    """A manifest of the first ``n`` items of each of the panel's benchmarks."""
    selected = {panel.category_of(b): {b: np.arange(n)} for b in panel.benchmark_names}
    return build_manifest(name, panel, selected, {"n": n}, [], {"rho": None})


@pytest.fixture(scope="session")
def mathvision() -> Panel:
    return Panel.load_default("mathvision")


@pytest.fixture(scope="session")
def suite20(mathvision: Panel) -> dict:
    return small_suite(mathvision, 20)
