"""#71's visible reproducer of the frontier failure: a synthetic new generation — models
answering MATH-Vision's items from the panel's own 2PL, with abilities above every reference
model's — replayed through ``adaptive.replay.replay``. The item model's test alone places them
far too low with intervals that miss; the guarded test (the runner's) does not."""

from __future__ import annotations

import numpy as np
import pytest

from primebench_tasks.adaptive.defaults import ADAPTIVE_GUARD_K
from primebench_tasks.adaptive.replay import replay
from primebench_tasks.data.panel import Panel
from primebench_tasks.select.irt import binarize, fit_2pl_cached


def new_generation(X: np.ndarray, models: int = 12, seed: int = 0) -> np.ndarray:
    """Answers (models, n) drawn from the 2PL fitted on every reference model of ``X``, at
    abilities 0.3–1.5 above the strongest one's."""
    fit = fit_2pl_cached(binarize(X))
    theta = fit.theta.max() + np.linspace(0.3, 1.5, models)
    p = fit.prob(theta)
    return (np.random.default_rng(seed).random(p.shape) < p).astype(float)


@pytest.fixture(scope="module")
def replays(tmp_path_factory):
    X = Panel.load_default("mathvision").matrix("MATH-Vision_MINI").astype(float)
    Y = new_generation(X)
    cache = tmp_path_factory.mktemp("calibration")
    assert Y.mean(axis=1).min() > np.nanmean(X, axis=1).max()  # above every reference model
    return (
        replay(X, Y, (25, 50, 100), guarded=False, cache_dir=cache, design="item_model"),
        replay(X, Y, (25, 50, 100), cache_dir=cache, design="item_model"),
    )


def _bias_cover(r):
    t = r["true"][:, None]
    return (r["predicted"] - t).mean(axis=0), ((r["lo"] <= t) & (t <= r["hi"])).mean(axis=0)


def test_the_item_model_alone_fails_beyond_the_panel(replays):
    bias, cover = _bias_cover(replays[0])
    assert (bias < -0.05).all()  # placed too low at 25, 50 and 100 items
    assert (cover <= 0.5).all()  # and its 90 % intervals miss


def test_the_guarded_test_holds_beyond_the_panel(replays):
    unguarded, _ = _bias_cover(replays[0])
    bias, cover = _bias_cover(replays[1])
    assert abs(bias[-1]) <= 0.025 and abs(bias[-1]) < abs(unguarded[-1]) / 3
    assert (cover >= 0.8).all()
    r = replays[1]
    # never further than k design SE from the design estimate
    gap = np.abs(r["predicted"] - np.clip(r["design"], 0, 1))
    assert (gap <= ADAPTIVE_GUARD_K * r["design_se"] + 1e-9).all()
    # the interval holds the design estimate (clipped to [0, 1])
    d = np.clip(r["design"], 0, 1)
    assert ((r["lo"] <= d + 1e-9) & (d <= r["hi"] + 1e-9)).all()
