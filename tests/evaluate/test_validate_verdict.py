"""``validate`` says a verdict, and ``build`` warns on a suite no better than random items
(battery 7, the newcomer's walk: `validate` printed no verdict where the shipped selection was no
better than random items, headed its table "mean scoring" while the default is greg, and pandas
cut the table; `build` gave no warning)."""

from __future__ import annotations

import pandas as pd
import pytest

from primebench_tasks.cli.build_checks import random_suites_warning
from primebench_tasks.evaluate.validate import rho_estimator, verdict_lines


def _summary(stratified: float, random: float, sd: float) -> pd.DataFrame:
    rows = []
    for est in ("mean", "greg"):
        for sel, rho in (("stratified", stratified), ("random", random)):
            rows.append(
                {"estimator": est, "selector": sel, "budget": "10 per category",
                 "n_items": 10, "mean_rho": rho, "sd_rho": sd}
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_the_verdict_by_hand():
    """ρ 0.79 vs 0.70, sd 0.1 each over 8 splits: SE = √(0.01 + 0.01)/√8 = 0.05; the difference
    0.09 is within 2 SE, so no better; at 0.81 it beats, at 0.59 it is worse."""
    s = _summary(0.79, 0.70, 0.1)
    assert rho_estimator(s) == "greg"  # the library's default, as placements use
    (line,) = verdict_lines(s, 8)
    assert "is no better than random items" in line
    assert "difference +0.090, standard error 0.050 over 8 splits" in line
    assert "beats random items" in verdict_lines(_summary(0.81, 0.70, 0.1), 8)[0]
    assert "is worse than random items" in verdict_lines(_summary(0.59, 0.70, 0.1), 8)[0]
    assert verdict_lines(s[s["selector"] != "random"], 8) == []  # nothing to compare with


@pytest.mark.parametrize(("pct", "warned"), [(12.0, True), (49.5, True), (50.0, False)])
def test_build_warns_below_the_median_random_suite(pct, warned):
    line = random_suites_warning(pct, 200)
    assert (line is not None) == warned
    if warned:
        assert f"percentile {pct:.0f} of 200 random suites" in str(line)
