"""Variants raced on the same items, drawn with known probabilities, until adjacent ones are separated."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from primebench_tasks.adaptive.benchmark import AdaptiveBenchmark
from primebench_tasks.adaptive.policy import BATCH
from primebench_tasks.place.defaults import N_BOOT_VARIANTS
from primebench_tasks.place.variants import SEPARATION_LEVEL


@dataclass
class RaceResult:
    """Where a sequential comparison of variants ended: per benchmark the distinct items asked
    (in order) and every variant's scores on them (V, asked; NaN = failed), the draws (item,
    weight 1/(n·q)) the comparison rests on, the ranking table and pairwise P(A beats B) of
    :func:`~primebench_tasks.place.variants.rank_variants` over the weighted draws (a
    variant's ``suite_score`` is its estimated full score), the verdict
    (:func:`~primebench_tasks.place.variants.variant_verdict`), the rounds run and why it
    stopped."""

    asked: list[list[int]]
    scores: list[np.ndarray]
    draws: list[list[tuple[int, float]]]
    table: Any
    pairwise: Any
    verdict: dict[str, Any]
    rounds: int
    reason: str


def race_verdict(
    names: Sequence[str],
    categories: Sequence[str],
    draws: list[list[tuple[int, float]]],
    known: list[dict[int, np.ndarray]],
    level: float,
    n_boot: int,
    seed: int,
) -> tuple[Any, Any, dict[str, Any]]:
    import pandas as pd

    from primebench_tasks.place.variants import rank_variants, variant_verdict

    cols, cats, blocks = [], [], []
    for b, bench_draws in enumerate(draws):
        for j, (item, weight) in enumerate(bench_draws):
            cols.append((b, j, item))
            cats.append(categories[b])
            blocks.append(known[b][item] * weight)
    if not cols:
        return None, None, {"fully_ordered": False, "text": "no item asked yet"}
    X = np.column_stack(blocks)
    frame = pd.DataFrame(X, index=list(names), columns=pd.MultiIndex.from_tuples(cols))
    table, pairwise, _ = rank_variants(frame, pd.Series(cats, index=frame.columns), n_boot, seed)
    return table, pairwise, variant_verdict(table, pairwise, level)


def race_variants(
    benches: Sequence[AdaptiveBenchmark],
    categories: Sequence[str],
    names: Sequence[str],
    ask: Any,
    *,
    max_items: int,
    batch: int = BATCH,
    level: float = SEPARATION_LEVEL,
    n_boot: int = N_BOOT_VARIANTS,
    seed: int = 0,
    start: tuple[list[list[int]], list[np.ndarray]] | None = None,
    exclude: Sequence[np.ndarray | None] | None = None,
) -> RaceResult:
    """Rank the variants ``names`` sequentially on the same items. Each round draws ``batch``
    items of each benchmark with replacement, with probabilities that favour the items whose
    answers the variants are unsure of (:meth:`AdaptiveBenchmark.race_probabilities`), asks
    every variant the drawn items not asked yet through ``ask({b: items}) -> {b: (V,
    len(items)) scores}``, and ranks the variants on all draws so far, each answer weighted by
    1/(n·q) (Hansen–Hurwitz: the weighted mean is an unbiased estimate of the full-benchmark
    score, and the paired bootstrap over draws within categories tests the full scores' order —
    a mean over items chosen for their information would test the order on those items only:
    6.1 % wrong separations on OCRBench's replay). It stops when every adjacent pair of the
    ranking is separated at ``level`` — Bonferroni-corrected for the looks after every round
    (each look at 1 − (1 − level)/L) — or after L = ⌈``max_items``/``batch``⌉ rounds (so at most
    ``max_items`` distinct items per benchmark are asked; fewer when draws repeat an item). ``start``: (items, (V, items) scores) already
    recorded — a resumed race draws what the interrupted one drew (the draws depend only on
    ``seed`` and the answers) and asks only what it lacks; ``exclude``: per benchmark, items
    that cannot be asked."""
    V = len(names)
    # the verdict is looked at after every round: Bonferroni over the race's possible looks
    # keeps the chance of any wrong separation at the level (one look: the static verdict's)
    looks = max(1, max(-(-min(max_items, b.n) // batch) for b in benches))
    per_look = 1 - (1 - level) / looks
    known: list[dict[int, np.ndarray]] = [{} for _ in benches]
    if start is not None:
        for b, (items, sc) in enumerate(zip(*start, strict=True)):
            sc = np.asarray(sc, float).reshape(V, len(items))
            for j, i in enumerate(items):
                known[b][int(i)] = sc[:, j]
    asked: list[list[int]] = [[] for _ in benches]
    draws: list[list[tuple[int, float]]] = [[] for _ in benches]
    rng = np.random.default_rng(seed)
    rounds, reason, drawn = 0, "", 0
    while True:
        table, pairwise, verdict = race_verdict(
            names, categories, draws, known, per_look, n_boot, seed
        )
        if any(draws) and verdict["fully_ordered"]:
            reason = f"every adjacent pair separated at {level:.0%}"
            break
        if drawn >= looks:  # every round the budget allows was drawn
            reason = f"item budget ({max_items} per benchmark) spent"
            break
        drawn += 1
        new: dict[int, list[int]] = {}
        for b, bench in enumerate(benches):
            if drawn > -(-min(max_items, bench.n) // batch):
                continue  # this benchmark's rounds are spent
            mask = np.zeros(bench.n, bool)
            mask[asked[b]] = True
            answers = np.full((V, bench.n), np.nan)
            for i in asked[b]:
                answers[:, i] = known[b][i]
            q = bench.race_probabilities(answers, mask, None if exclude is None else exclude[b])
            n_ok = int((q > 0).sum())
            if n_ok == 0:
                continue
            seen = set(asked[b])
            for i in rng.choice(bench.n, size=batch, p=q).tolist():
                if i not in seen:
                    seen.add(i)
                    asked[b].append(i)
                    if i not in known[b]:
                        new.setdefault(b, []).append(i)
                draws[b].append((i, 1.0 / (n_ok * float(q[i]))))
        if new:
            answered = ask({b: np.array(items, dtype=np.int64) for b, items in new.items()})
            for b, items in new.items():
                sc = np.asarray(answered[b], float).reshape(V, len(items))
                for j, i in enumerate(items):
                    known[b][i] = sc[:, j]
            rounds += 1
    scores = [
        np.column_stack([known[b][i] for i in a]) if a else np.empty((V, 0))
        for b, a in enumerate(asked)
    ]
    return RaceResult(asked, scores, draws, table, pairwise, verdict, rounds, reason)
