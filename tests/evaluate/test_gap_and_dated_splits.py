"""The gap hold-out by hand, and the chronological hold-out on a records panel (dated by the
shipped release dates, where its model table has none)."""

from __future__ import annotations

import numpy as np
import pytest

from primebench_tasks.data.model_dates import release_dates
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import ConfigError
from primebench_tasks.evaluate.splits import gap_split


def test_gap_split_by_hand() -> None:
    s = np.array([0.30, 0.40, 0.45, 0.50, 0.52, 0.56, 0.58, 0.60, np.nan, 0.41])
    # cut 0.45: held 0.50-0.55 → {0.50, 0.52}; cut 0.50: 0.55-0.60 → {0.56, 0.58, 0.60}: 3
    build, held, cut = gap_split(s, minimum=3)
    assert cut == 0.50
    assert held.tolist() == [5, 6, 7] and build.tolist() == [0, 1, 2, 3, 9]
    with pytest.raises(ConfigError, match="at most 3 models score 0.05-0.1 above a cut"):
        gap_split(s, minimum=4)


def test_the_records_panels_are_dated_for_the_chronological_hold_out() -> None:
    from primebench_tasks.evaluate.protocols import run_protocol

    panel = Panel.load_default("openvlm_blink")
    assert panel.model_table["release_date"].isna().all()  # the records carry no dates
    assert len(release_dates(panel)) >= 30
    _, per_split = run_protocol(
        panel, "chrono", ["random"], retentions=(), n_splits=1, estimators=("mean",), budgets=(25,)
    )
    assert len(per_split) == 1 and np.isfinite(per_split["mae"].iloc[0])
    _, gap = run_protocol(
        panel, "gap", ["random"], retentions=(), n_splits=1, estimators=("mean",), budgets=(25,)
    )
    assert len(gap) == 1 and np.isfinite(gap["mae"].iloc[0])
