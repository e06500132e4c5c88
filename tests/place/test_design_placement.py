"""A model far above every reference model, placed on a suite drawn by the probability design:
the predicted full score is unbiased and its design interval holds the true score — where the
previous default's p-IRT on the same items reads the new generation as weaker."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from primebench_tasks.pipeline.manifest import build_manifest
from primebench_tasks.place.benchmark import place_models
from primebench_tasks.select.stratified import Draw, StratifiedSelector
from primebench_tasks.suite.manifest import as_suite
from tests.conftest import make_panel
from tests.place.test_model_assisted import _panel_and_frontier


@pytest.fixture(scope="module")
def frontier():
    ref, new = _panel_and_frontier(seed=1, abilities=(2.2, 3.0))
    return make_panel({"b": ref}, {"b": "Math Reasoning"}), new


def _drawn_suite(panel, seed: int):
    sel = StratifiedSelector(100, random_state=seed).fit(panel.matrix("b"))
    return build_manifest(
        "drawn",
        panel,
        {"Math Reasoning": {"b": sel.indices_}},
        {},
        [],
        {},
        draws={"Math Reasoning": {"b": _draw(sel)}},
    )


def _draw(sel: StratifiedSelector) -> Draw:
    everything = np.ones(len(sel.indices_), bool)
    return Draw.of(sel, everything, np.arange(len(sel.indices_)))


def test_the_manifest_keeps_the_design() -> None:
    ref, _ = _panel_and_frontier(seed=1)
    panel = make_panel({"b": ref[:, :40]}, {"b": "Math Reasoning"})
    sel = StratifiedSelector(8, random_state=0).fit(panel.matrix("b"))
    m = as_suite(
        build_manifest(
            "d",
            panel,
            {"Math Reasoning": {"b": sel.indices_}},
            {},
            [],
            {},
            draws={"Math Reasoning": {"b": _draw(sel)}},
        )
    )
    e = m.entry("b")
    assert e.inclusion is not None and set(e.inclusion) == set(e.item_ids)
    assert all(p == pytest.approx(8 / 40, abs=0.06) for p in e.inclusion.values())
    assert sum(e.design_weights() or ()) == pytest.approx(1.0)
    # asking other items (an adaptive round) drops the design; a subset keeps it
    other = next(f"b-{i}" for i in range(40) if f"b-{i}" not in e.item_ids)
    assert m.asking({"b": [e.item_ids[0], other]}).entry("b").inclusion is None
    sub = list(e.item_ids[:3])
    assert set(m.restricted({"b": sub}).entry("b").inclusion or {}) == set(sub)


def test_a_model_far_above_the_panel_is_placed_with_an_interval_that_holds(frontier) -> None:
    panel, new = frontier
    truth = new.mean(axis=1)
    best_reference = np.nanmean(panel.matrix("b"), axis=1).max()
    assert truth.min() > best_reference and truth.mean() > best_reference + 0.05
    cols = pd.MultiIndex.from_tuples([("b", f"b-{i}") for i in range(new.shape[1])])
    errors, covered, pirt_errors = [], [], []
    for seed in range(6):
        manifest = _drawn_suite(panel, seed)
        ids = list(as_suite(manifest).entry("b").item_ids)
        placed = pd.DataFrame(new, index=[f"n{i}" for i in range(len(new))], columns=cols)[
            [("b", i) for i in ids]
        ]
        r = place_models(panel, manifest, placed, estimator="greg", n_boot=20, seed=seed)
        assert (r["residuals_from"] == "design").all()
        assert r["regime"].isin(["top", "beyond"]).all() and r["above_all"].mean() > 0.8
        errors.append(r["predicted_full"].to_numpy() - truth)
        covered.append((r["predicted_full_lo90"] <= truth) & (truth <= r["predicted_full_hi90"]))
        assert ((r["predicted_full_lo"] <= truth) & (truth <= r["predicted_full_hi"])).mean() > 0.8
        p = place_models(panel, manifest, placed, estimator="pirt", n_boot=20, seed=seed)
        pirt_errors.append(p["predicted_full"].to_numpy() - truth)
    assert abs(np.mean(errors)) < 0.01
    assert np.mean(pirt_errors) < -0.02  # the item model's extrapolation: too low
    assert 0.8 <= np.mean(covered) <= 1.0
