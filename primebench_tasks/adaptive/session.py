"""One adaptive test as a step API (#80): answers in, the next items or why it stops out. The
runner (``harness_adapters.run.adaptive_loop``: records, lock, spec, executor around it) and the
replay protocol (:func:`~primebench_tasks.adaptive.replay.replay`) drive this very step, so that
for the same answers and the same round seeds they draw the same items and report the same
numbers (``tests/adaptive/test_session.py``).

A step reads the test's answers so far (``answers`` (n,) with NaN where not asked or failed,
``asked`` (n,) bool) and its draws (the :class:`~.design.Draw` of every item it drew, in order):

- its **estimate** — the item model's prediction guarded by the draws' design estimate
  (:meth:`~.benchmark.AdaptiveBenchmark.estimate`; a continued static run's answers read as
  their own stratified draw, ``static``);
- **why it stops**, or None: the interval narrower than ``target_width``; the budget —
  ``max_items`` scored items *drawn by the test* (a continued static run's answers are not its
  budget, a failed item is not an answer) — spent; no item left to draw;
- else the **next round**: ``min(round_size, budget left)`` items drawn with known probabilities
  (:meth:`~.benchmark.AdaptiveBenchmark.draw_items`) from the items not yet drawn and not
  ``unavailable``, by the generator ``seed(drawn so far)`` gives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from primebench_tasks.adaptive.benchmark import AdaptiveBenchmark, AdaptiveEstimate
from primebench_tasks.adaptive.design import Draw, StaticRound

RoundSeed = Callable[[int], np.random.Generator]
"""The generator of a test's next round, given how many items it has drawn so far (the runner:
:func:`~.ledger.draw_seed` of the suite, model, benchmark and that count; the replay: one
generator per model, every round drawing on)."""


@dataclass(frozen=True)
class Step:
    """What one step says: the test's ``estimate`` now; ``stop`` (why it ends) or the ``draws``
    of its next round (empty when it stops)."""

    estimate: AdaptiveEstimate
    stop: str | None
    draws: list[Draw] = field(default_factory=list)

    @property
    def items(self) -> np.ndarray:
        """The pool positions of the next round's items."""
        return np.array([d.item for d in self.draws], dtype=np.int64)


@dataclass
class AdaptiveSession:
    """One model's guarded adaptive test of one benchmark (see the module docstring)."""

    bench: AdaptiveBenchmark
    seed: RoundSeed
    round_size: int
    target_width: float | None = None
    unavailable: np.ndarray | None = None
    """(n,) bool: items that can never be asked (the replay: no recorded answer); they leave the
    pool the design estimate extrapolates over."""
    static: StaticRound | None = None

    def estimate(
        self, answers: np.ndarray, asked: np.ndarray, draws: Sequence[Draw]
    ) -> AdaptiveEstimate:
        """The test's guarded estimate from its answers and draws."""
        return self.bench.estimate(
            answers, asked, list(draws), self.unavailable, static=self.static
        )

    def spent(self, answers: np.ndarray, asked: np.ndarray, draws: Sequence[Draw]) -> int:
        """The budget spent: scored items the test drew."""
        drawn = np.zeros(len(answers), bool)
        drawn[[d.item for d in draws]] = True
        return int((np.asarray(asked, bool) & np.isfinite(answers) & drawn).sum())

    def step(self, answers: np.ndarray, asked: np.ndarray, draws: Sequence[Draw]) -> Step:
        """The estimate now and why the test stops
        (:meth:`~.benchmark.AdaptiveBenchmark.stop_reason`, the budget counting the items the
        test drew), or its next round."""
        answers = np.asarray(answers, float)
        asked = np.asarray(asked, bool)
        est = self.estimate(answers, asked, draws)
        spent = self.spent(answers, asked, draws)
        scored = asked & np.isfinite(answers)
        why = self.bench.stop_reason(est, scored, self.target_width, spent)
        if why is not None:
            return Step(est, why)
        blocked = np.zeros(len(answers), bool)
        blocked[[d.item for d in draws]] = True
        if self.unavailable is not None:
            blocked |= self.unavailable
        if bool((blocked | asked).all()):
            return Step(est, "every item asked")
        room = min(self.round_size, self.bench.max_items - spent)
        new = self.bench.draw_items(answers, asked, room, self.seed(len(draws)), exclude=blocked)
        if not new:
            return Step(est, "every item asked")
        return Step(est, None, new)
