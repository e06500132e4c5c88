"""The adaptive test's measurement protocol: held-out models' recorded answers stand in for the model."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import numpy as np

from primebench_tasks.adaptive.benchmark import AdaptiveBenchmark
from primebench_tasks.adaptive.defaults import (
    ADAPTIVE_GUARD_K,
    ADAPTIVE_NEAREST_SHIFT,
    ADAPTIVE_UNIFORM_SHARE,
)
from primebench_tasks.adaptive.design import Draw
from primebench_tasks.adaptive.policy import BATCH, LEVEL, AdaptivePolicy
from primebench_tasks.adaptive.sequential import (
    SEQUENTIAL_MIN_ITEMS,
    SEQUENTIAL_ROUND,
    SEQUENTIAL_STRATA,
    SequentialTest,
    easiness_strata,
)
from primebench_tasks.adaptive.session import AdaptiveSession, RoundSeed
from primebench_tasks.errors import ConfigError
from primebench_tasks.metrics import nanmean_rows


def replay(
    Y_ref: np.ndarray,
    Y_new: np.ndarray,
    checkpoints: Sequence[int] = (25, 50, 100),
    batch: int = BATCH,
    level: float = LEVEL,
    seed: int = 0,
    target_width: float | None = None,
    policy: AdaptivePolicy | None = None,
    nearest_shift: int | None = ADAPTIVE_NEAREST_SHIFT,
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    guarded: bool = True,
    uniform_share: float = ADAPTIVE_UNIFORM_SHARE,
    guard_k: float = ADAPTIVE_GUARD_K,
    preference: str = "information",
    round_seed: Callable[[int, int], np.random.Generator] | None = None,
    design: str = "sequential",
    n_strata: int = SEQUENTIAL_STRATA,
    round_size: int = SEQUENTIAL_ROUND,
    min_items: int = SEQUENTIAL_MIN_ITEMS,
    past_stop: bool = True,
) -> dict[str, np.ndarray]:
    """The replay protocol on one benchmark: the reference models' answers ``Y_ref`` (M, n) and
    the new models' recorded answers ``Y_new`` (V, n; NaN: none — such an item is never asked)
    stand in for a run. Returns ``true`` (V,) full scores, ``predicted``, ``lo``, ``hi`` (V, C) at
    each item count of ``checkpoints``, ``order`` (V, max items) the items asked (−1: none), and —
    with ``target_width`` — where the test stops: ``stop_items``, ``stop_predicted``,
    ``stop_lo``, ``stop_hi`` (V,) (up to max(checkpoints) items).

    ``design="sequential"`` (the default, #89): the stratified design continued until the
    ``level`` interval is no wider than ``target_width`` (:mod:`.sequential`: ``n_strata``
    strata by the reference models' item easiness, rounds of ``round_size`` allocated in
    proportion, at least ``min_items``), each model's draws seeded by (``seed``, v); ``se``
    (V, C) beside; ``past_stop=False`` ends each model's replay at its stop (the checkpoints
    after it left NaN: what a measurement of the stop alone needs). ``design="item_model"``: the earlier guarded item-model test, below.

    The item-model test, with the policy the runner's ``--adaptive`` used
    (:class:`AdaptiveBenchmark`, its point rule outside the panel ``nearest_shift``): the
    reference models' responses ``Y_ref`` (M, n) fit the 2PL
    and calibrate the intervals; the new models' recorded responses ``Y_new`` (V, n) answer the
    adaptive questions (an item a model has no answer for is never asked). Returns
    ``predicted``, ``lo``, ``hi`` (V, C) at each checkpoint, ``true`` (V,) full scores, and — with
    ``target_width`` — where the stopping rule ends each test: ``stop_items``, ``stop_predicted``,
    ``stop_lo``, ``stop_hi`` (V,) (up to max(checkpoints) items); ``order`` (V, max items) the items
    asked, in order (−1: none). ``cache_dir``: where the interval's calibration is kept
    (:attr:`AdaptiveBenchmark.calibration_file`).

    ``guarded`` (the runner's test): each model's items are drawn at random with known
    probabilities (:meth:`AdaptiveBenchmark.draw_items`; share ``uniform_share`` uniform, the rest
    by ``preference``; the draws of model v seeded by (``seed``, v)) and the prediction is guarded
    by their design estimate (``guard_k`` standard errors); ``model_predicted``, ``design`` and
    ``design_se`` (V, C) are returned beside. ``guarded=False``: the policy's own choice and
    prediction (the test before the guard).

    The guarded test is the runner's own step (:class:`~.session.AdaptiveSession`): each round
    drawn by one generator per model seeded by (``seed``, v), or — ``round_seed`` — by
    ``round_seed(v, drawn so far)`` (the runner's :func:`~.ledger.draw_seed`: the same items a
    run draws for the same answers)."""
    Y_new = np.asarray(Y_new, float)
    if design == "sequential":
        return _replay_sequential(
            Y_ref, Y_new, checkpoints, level, seed, target_width, n_strata, round_size,
            min_items, past_stop,
        )  # fmt: skip
    if design != "item_model":
        raise ConfigError(f"design {design!r}: expected 'sequential' or 'item_model'")
    bench = AdaptiveBenchmark(
        Y_ref,
        max_items=max(checkpoints),
        batch=batch,
        level=level,
        seed=seed,
        policy=policy,
        nearest_shift=nearest_shift,
        cache_dir=cache_dir,
        uniform_share=uniform_share,
        guard_k=guard_k,
        preference=preference,
    )
    V, C = len(Y_new), len(checkpoints)
    fields = ("predicted", "lo", "hi", "model_predicted", "design", "design_se")
    out = {k: np.full((V, C), np.nan) for k in fields}
    stop = {k: np.full(V, np.nan) for k in ("stop_items", "stop_predicted", "stop_lo", "stop_hi")}
    order = np.full((V, bench.max_items), -1, dtype=np.int64)
    for v in range(V):
        y = Y_new[v]
        missing = ~np.isfinite(y)
        asked = np.zeros(len(y), bool)
        answers = np.full(len(y), np.nan)
        stopped = target_width is None
        rng = np.random.default_rng([seed, v])
        draws: list[Draw] | None = [] if guarded else None
        session = AdaptiveSession(
            bench, _round_seeds(rng, round_seed, v), batch, unavailable=missing
        )
        while True:
            count = int(asked.sum())
            est = bench.estimate(answers, asked, draws, missing)
            if not stopped and bench.stop_reason(est, asked | missing, target_width) is not None:
                stopped = True
                stop["stop_items"][v], stop["stop_predicted"][v] = count, est.predicted
                stop["stop_lo"][v], stop["stop_hi"][v] = est.lo, est.hi
            for j, c in enumerate(checkpoints):
                if c == count or (c > count and bool((asked | missing).all())):
                    for k in fields:
                        value = getattr(est, k)
                        out[k][v, j] = np.nan if value is None else value
            if count >= max(checkpoints) or (asked | missing).all():
                if not stopped:
                    stop["stop_items"][v], stop["stop_predicted"][v] = count, est.predicted
                    stop["stop_lo"][v], stop["stop_hi"][v] = est.lo, est.hi
                break
            room = min(batch, max(checkpoints) - count)
            if draws is None:
                pick = bench.next_items(answers, asked, room, missing)
            else:
                step = session.step(answers, asked, draws)
                if step.stop is not None:
                    break
                draws += step.draws
                pick = step.items
            order[v, count : count + len(pick)] = pick
            asked[pick] = True
            answers[pick] = y[pick]
    res: dict[str, np.ndarray] = {**out, "true": nanmean_rows(Y_new), "order": order}
    if target_width is not None:
        res.update(stop)
    return res


def _round_seeds(
    rng: np.random.Generator,
    round_seed: Callable[[int, int], np.random.Generator] | None,
    v: int,
) -> RoundSeed:
    """Model ``v``'s round generators: ``round_seed(v, drawn)``, else ``rng`` for every round."""
    if round_seed is not None:
        return lambda drawn: round_seed(v, drawn)
    return lambda _drawn: rng


def _replay_sequential(
    Y_ref: np.ndarray,
    Y_new: np.ndarray,
    checkpoints: Sequence[int],
    level: float,
    seed: int,
    target_width: float | None,
    n_strata: int,
    round_size: int,
    min_items: int,
    past_stop: bool = True,
) -> dict[str, np.ndarray]:
    """:func:`replay` of the sequential design (see there): rounds end on every checkpoint, so
    each checkpoint's figures are the design's at exactly that many items."""
    strata = easiness_strata(Y_ref, n_strata)
    cps = sorted(int(c) for c in checkpoints)
    top = cps[-1]
    V, C = len(Y_new), len(cps)
    out = {k: np.full((V, C), np.nan) for k in ("predicted", "lo", "hi", "se")}
    stop = {k: np.full(V, np.nan) for k in ("stop_items", "stop_predicted", "stop_lo", "stop_hi")}
    order = np.full((V, top), -1, dtype=np.int64)
    for v in range(V):
        y = Y_new[v]
        pool = np.isfinite(y)
        test = SequentialTest(
            strata, pool, seed=[seed, v], round_size=round_size, level=level,
            target_width=target_width, min_items=min_items, max_items=top,
        )  # fmt: skip
        stopped = target_width is None
        while True:
            count = int(test.drawn.sum())
            est = test.estimate(y)
            why = test.stop_reason(est)
            if not stopped and why is not None:
                stopped = True
                stop["stop_items"][v], stop["stop_predicted"][v] = count, est.predicted
                stop["stop_lo"][v], stop["stop_hi"][v] = est.lo, est.hi
            for j, c in enumerate(cps):
                if c == count or (c > count and count >= int(pool.sum())):
                    out["predicted"][v, j], out["lo"][v, j] = est.predicted, est.lo
                    out["hi"][v, j], out["se"][v, j] = est.hi, est.se
            if count >= top or count >= int(pool.sum()) or (stopped and not past_stop):
                break
            following = next((c for c in cps if c > count), top)
            test.round_size = max(1, min(round_size, following - count))
            pick = test.next_round()
            order[v, count : count + len(pick)] = pick
    res: dict[str, np.ndarray] = {**out, "true": nanmean_rows(Y_new), "order": order}
    if target_width is not None:
        res.update(stop)
    return res
