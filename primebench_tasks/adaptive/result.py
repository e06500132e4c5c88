"""The adaptive run as a typed, versioned document: what the adaptive loop returns
(:func:`~harness_adapters.run.adaptive_loop.run_adaptive_rounds`), what ``adaptive.json`` is
written from (:meth:`AdaptiveRun.write`) and read back as (:meth:`AdaptiveRun.read`).

Schema ``primebench.adaptive/2`` (canonical JSON, sorted keys; the JSON keys are the field
names). Per variant (``models``) and benchmark (``benchmarks``) one :class:`AdaptiveTest`: the
items asked and why the test stopped, the score on them, the predicted full-benchmark score and
rank with their ``settings.level`` interval (90 % by default; shares of items right in [0, 1],
ranks from 1 = best ``out_of`` the reference models plus this one), the draws' design estimate
that guards it (:class:`TestDesign`), the failed items, and the answer checks (misfit, responses).
``None`` is a value that does not exist (nothing scored), never 0.

Version 1 (before the draws had known probabilities, #71) still reads: its tests have no
``design`` and the run no ``guard`` (None), and its policy record lacks the knobs added since
(they read as :class:`~primebench_tasks.adaptive.policy.AdaptivePolicy`'s defaults, which were
that version's behaviour).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from primebench_tasks.adaptive.benchmark import AdaptiveEstimate
from primebench_tasks.adaptive.defaults import (
    ADAPTIVE_BATCH,
    ADAPTIVE_LEVEL,
    ADAPTIVE_MAX_ITEMS,
    ADAPTIVE_TARGET_WIDTH,
)
from primebench_tasks.adaptive.policy import AdaptivePolicy
from primebench_tasks.data.codec import Document, omitted_if, optional
from primebench_tasks.errors import InputError
from primebench_tasks.place.misfit import PersonFit
from primebench_tasks.place.responses import ResponseCheck
from primebench_tasks.place.result import Estimate, Rank

SCHEMA = "primebench.adaptive/2"
"""Version 2: items drawn with known probabilities, each test's ``design`` estimate and the
``guard`` (#71)."""
READS = ("primebench.adaptive/1", SCHEMA)
"""The versions :meth:`AdaptiveRun.from_json` reads."""


@dataclass(frozen=True)
class AdaptiveSettings:
    """``target_width`` (of the ``level`` interval of the predicted full score; None: run to the
    budget), ``max_items`` per benchmark, ``round_size`` items per benchmark per round."""

    target_width: float | None = ADAPTIVE_TARGET_WIDTH
    max_items: int = ADAPTIVE_MAX_ITEMS
    round_size: int = ADAPTIVE_BATCH
    level: float = ADAPTIVE_LEVEL


@dataclass(frozen=True)
class GuardSettings(Document):
    """How the draws are made and guard the item model: ``uniform_share`` of each draw's
    probability spread evenly over the pool (in (0, 1]), ``k`` (the guard's reach in design
    standard errors, ≥ 0) and ``prefer`` (what the rest of the probability follows)."""

    uniform_share: float
    k: float
    prefer: str


@dataclass(frozen=True)
class TestDesign(Document):
    """A test's design estimate: its ``draws``, the answered items it continued (a static run's,
    ``continued_items``) and whether the estimate reads them as the suite's draw
    (``continued_as_draw``); the design-unbiased ``estimate`` and its ``se``, the item model's
    prediction before the guard (``model_predicted``), and whether the guard moved it."""

    __test__ = False  # not a pytest class

    draws: int
    continued_items: int
    continued_as_draw: bool
    estimate: float | None
    se: float | None
    model_predicted: float | None
    guard_moved: bool

    @classmethod
    def of(
        cls, est: AdaptiveEstimate, draws: int, continued: int, continued_as_draw: bool
    ) -> TestDesign:
        """The design figures of ``est`` (rounded to 6 decimals; None where nothing was
        scored or the figure does not exist)."""
        f = _rounder(est.count)
        return cls(
            draws=draws,
            continued_items=continued,
            continued_as_draw=continued_as_draw,
            estimate=f(est.design),
            se=f(est.design_se),
            model_predicted=f(est.model_predicted),
            guard_moved=bool(est.count and est.guard_moved),
        )


@dataclass(frozen=True)
class FailedItems(Document):
    """The test's items that failed in this run (not scored, asked again by a rerun) and why."""

    items: int
    why: str | None


@dataclass
class AdaptiveTest(Document):
    """One variant's adaptive test of one benchmark (see the module docstring)."""

    category: str
    pool: int
    reference_models: int
    items: int
    stopped_because: str
    score_on_items_asked: float | None
    predicted_full: Estimate
    interval_width: float | None
    regime: str | None
    predicted_rank: Rank | None
    above_all_reference: bool
    failed: FailedItems
    misfit: PersonFit
    design: TestDesign | None = optional()
    responses: ResponseCheck | None = optional()

    @classmethod
    def of(
        cls,
        est: AdaptiveEstimate,
        *,
        category: str,
        pool: int,
        stopped_because: str,
        design: TestDesign,
        failed: FailedItems,
        misfit: PersonFit,
        responses: ResponseCheck | None = None,
    ) -> AdaptiveTest:
        """The test's figures from its estimate, rounded to 6 decimals; a test with no scored
        item has no score, prediction or rank (the prior's prediction is not a result)."""
        f = _rounder(est.count)
        return cls(
            category=category,
            pool=pool,
            reference_models=est.n_reference,
            items=est.count,
            stopped_because=stopped_because,
            score_on_items_asked=f(est.score),
            predicted_full=Estimate(f(est.predicted), f(est.lo), f(est.hi)),
            interval_width=f(est.width),
            regime=est.regime if est.count else None,
            predicted_rank=(
                Rank(int(est.rank), int(est.rank_lo), int(est.rank_hi), est.n_reference + 1)
                if est.count
                else None
            ),
            above_all_reference=bool(est.count and est.regime == "beyond"),
            failed=failed,
            misfit=misfit,
            design=design,
            responses=responses,
        )


@dataclass
class AdaptiveModel(Document):
    """One variant: its scored ``items`` over the benchmarks, the mean of their predicted full
    scores (None where one has none), each benchmark's test, and the lines of the misfit and
    response checks (``misfit``, ``answers``) that the command says on stderr."""

    items: int
    mean_predicted_full: float | None
    benchmarks: dict[str, AdaptiveTest]
    misfit: list[str] = field(default_factory=list)
    answers: list[str] = omitted_if()

    @classmethod
    def of(
        cls, benchmarks: dict[str, AdaptiveTest], misfit: list[str], answers: list[str]
    ) -> AdaptiveModel:
        preds = [t.predicted_full.value for t in benchmarks.values()]
        known = [p for p in preds if p is not None]
        mean = float(np.mean(known)) if known and len(known) == len(preds) else None
        return cls(
            items=int(sum(t.items for t in benchmarks.values())),
            mean_predicted_full=None if mean is None else round(mean, 6),
            benchmarks=benchmarks,
            misfit=misfit,
            answers=answers,
        )


@dataclass
class AdaptiveRun(Document):
    """Every variant of one adaptive run on suite version ``suite`` (named ``suite_name``), under
    ``settings``, ``policy`` and ``guard``; ``conditions``: what the run was made under.
    Written as ``adaptive.json`` (:meth:`write`), read back by :meth:`read`."""

    json_what = "adaptive run"

    suite: str
    suite_name: str
    settings: AdaptiveSettings
    policy: AdaptivePolicy
    models: dict[str, AdaptiveModel]
    guard: GuardSettings | None = optional()
    conditions: dict[str, Any] = field(default_factory=dict)
    schema: str = SCHEMA

    @classmethod
    def json_prepare(cls, d: Any, where: str | None) -> Any:
        """The versions in :data:`READS` are read; another is an InputError naming ``where``."""
        schema = d.get("schema") if isinstance(d, Mapping) else None
        if schema not in READS:
            raise InputError(
                f"schema {schema!r} is not one of {READS}",
                file=where or "adaptive run",
                field="schema",
            )
        return d

    def failures(self) -> tuple[list[str], list[str]]:
        """(tests with failed items, tests with no scored item), one line each: "<variant> on
        <benchmark>: N items failed: ..." — what a command says on stderr (the second list
        makes it fail: a test with nothing scored has no score and no rank)."""
        some, none = [], []
        for model, r in self.models.items():
            for b, t in r.benchmarks.items():
                if t.failed.items:
                    some.append(f"{model} on {b}: {t.failed.why}")
                if t.items == 0:
                    none.append(
                        f"{model} on {b}: no item scored ({t.stopped_because}"
                        + (f"; {t.failed.why}" if t.failed.items else "")
                        + ")"
                    )
        return some, none


def _rounder(count: int) -> Callable[[float | None], float | None]:
    """x → x rounded to 6 decimals; None where nothing was scored or x does not exist."""

    def f(x: float | None) -> float | None:
        if count == 0 or x is None or not np.isfinite(x):
            return None
        return round(float(x), 6)

    return f
