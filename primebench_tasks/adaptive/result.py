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
from dataclasses import asdict, dataclass, field
from pathlib import Path
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
from primebench_tasks.data.io import json_lines, json_number
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
class GuardSettings:
    """How the draws are made and guard the item model: ``uniform_share`` of each draw's
    probability spread evenly over the pool (in (0, 1]), ``k`` (the guard's reach in design
    standard errors, ≥ 0) and ``prefer`` (what the rest of the probability follows)."""

    uniform_share: float
    k: float
    prefer: str

    def to_json(self) -> dict[str, Any]:
        return {"uniform_share": self.uniform_share, "k": self.k, "prefer": self.prefer}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> GuardSettings:
        return cls(float(d["uniform_share"]), float(d["k"]), str(d["prefer"]))


@dataclass(frozen=True)
class TestDesign:
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

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> TestDesign:
        return cls(
            int(d["draws"]),
            int(d["continued_items"]),
            bool(d["continued_as_draw"]),
            json_number(d, "estimate", required=True),
            json_number(d, "se", required=True),
            json_number(d, "model_predicted", required=True),
            bool(d["guard_moved"]),
        )


@dataclass(frozen=True)
class FailedItems:
    """The test's items that failed in this run (not scored, asked again by a rerun) and why."""

    items: int
    why: str | None

    def to_json(self) -> dict[str, Any]:
        return {"items": self.items, "why": self.why}


@dataclass
class AdaptiveTest:
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
    design: TestDesign | None = None
    responses: ResponseCheck | None = None

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

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "category": self.category,
            "pool": self.pool,
            "reference_models": self.reference_models,
            "items": self.items,
            "stopped_because": self.stopped_because,
            "score_on_items_asked": self.score_on_items_asked,
            "predicted_full": self.predicted_full.to_json(),
            "interval_width": self.interval_width,
            "regime": self.regime,
            "predicted_rank": None
            if self.predicted_rank is None
            else self.predicted_rank.to_json(),
            "above_all_reference": self.above_all_reference,
            "failed": self.failed.to_json(),
            "misfit": self.misfit.to_json(),
        }
        if self.design is not None:
            d["design"] = self.design.to_json()
        if self.responses is not None:
            d["responses"] = self.responses.to_json()
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> AdaptiveTest:
        failed = d["failed"]
        return cls(
            category=str(d["category"]),
            pool=int(d["pool"]),
            reference_models=int(d["reference_models"]),
            items=int(d["items"]),
            stopped_because=str(d["stopped_because"]),
            score_on_items_asked=json_number(d, "score_on_items_asked", required=True),
            predicted_full=Estimate.from_json(d["predicted_full"]),
            interval_width=json_number(d, "interval_width", required=True),
            regime=None if d["regime"] is None else str(d["regime"]),
            predicted_rank=Rank.maybe(d["predicted_rank"]),
            above_all_reference=bool(d["above_all_reference"]),
            failed=FailedItems(int(failed["items"]), failed["why"]),
            misfit=PersonFit.from_json(d["misfit"]),
            design=None if d.get("design") is None else TestDesign.from_json(d["design"]),
            responses=(
                None if d.get("responses") is None else ResponseCheck.from_json(d["responses"])
            ),
        )


@dataclass
class AdaptiveModel:
    """One variant: its scored ``items`` over the benchmarks, the mean of their predicted full
    scores (None where one has none), each benchmark's test, and the lines of the misfit and
    response checks (``misfit``, ``answers``) that the command says on stderr."""

    items: int
    mean_predicted_full: float | None
    benchmarks: dict[str, AdaptiveTest]
    misfit: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)

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

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "items": self.items,
            "mean_predicted_full": self.mean_predicted_full,
            "benchmarks": {b: t.to_json() for b, t in self.benchmarks.items()},
            "misfit": list(self.misfit),
        }
        if self.answers:
            d["answers"] = list(self.answers)
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> AdaptiveModel:
        return cls(
            items=int(d["items"]),
            mean_predicted_full=json_number(d, "mean_predicted_full", required=True),
            benchmarks={str(b): AdaptiveTest.from_json(t) for b, t in d["benchmarks"].items()},
            misfit=json_lines(d, "misfit"),
            answers=json_lines(d, "answers"),
        )


@dataclass
class AdaptiveRun:
    """Every variant of one adaptive run on suite version ``suite`` (named ``suite_name``), under
    ``settings``, ``policy`` and ``guard``; ``conditions``: what the run was made under."""

    suite: str
    suite_name: str
    settings: AdaptiveSettings
    policy: AdaptivePolicy
    models: dict[str, AdaptiveModel]
    guard: GuardSettings | None = None
    conditions: dict[str, Any] = field(default_factory=dict)
    schema: str = SCHEMA

    def to_json(self) -> dict[str, Any]:
        """The document as JSON values (``adaptive.json``'s content)."""
        d: dict[str, Any] = {
            "schema": self.schema,
            "suite": self.suite,
            "suite_name": self.suite_name,
            "settings": asdict(self.settings),
            "policy": asdict(self.policy),
            "models": {m: r.to_json() for m, r in self.models.items()},
            "conditions": dict(self.conditions),
        }
        if self.guard is not None:
            d["guard"] = self.guard.to_json()
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any], where: str = "adaptive run") -> AdaptiveRun:
        """The run ``d`` holds; an InputError naming ``where`` for another schema or a missing
        or mistyped field."""
        if d.get("schema") not in READS:
            raise InputError(f"{where}: schema {d.get('schema')!r} is not one of {READS}")
        try:
            conditions = d.get("conditions") or {}
            if not isinstance(conditions, dict):
                raise TypeError(f"'conditions' is a {type(conditions).__name__}, not an object")
            return cls(
                suite=str(d["suite"]),
                suite_name=str(d["suite_name"]),
                settings=AdaptiveSettings(**d["settings"]),
                policy=AdaptivePolicy(**d["policy"]),
                models={str(m): AdaptiveModel.from_json(r) for m, r in d["models"].items()},
                guard=None if d.get("guard") is None else GuardSettings.from_json(d["guard"]),
                conditions=dict(conditions),
                schema=str(d["schema"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InputError(
                f"{where}: not an adaptive run document ({type(e).__name__}: {e})"
            ) from e

    def write(self, path: str | Path) -> Path:
        """Write the document to ``path`` (canonical JSON, atomically)."""
        from primebench_tasks.data.io import write_json_document

        return write_json_document(path, self.to_json())

    @classmethod
    def read(cls, path: str | Path) -> AdaptiveRun:
        """The run written at ``path`` (an ``adaptive.json``)."""
        from primebench_tasks.data.io import read_json_document

        return cls.from_json(read_json_document(path, "adaptive run", None), str(path))

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
