"""The placement of new models on a suite as a typed, versioned document: what
:func:`~primebench_tasks.place.suite.place_on_suite` returns, what ``report.json`` is written
from (:meth:`Placement.write`) and read back as (:meth:`Placement.read`).

Schema ``primebench.placement/1`` (the JSON keys are the field names; canonical JSON, sorted
keys). Scores and predicted full scores are shares of items right, in [0, 1]; ranks count from 1
(best) ``out_of`` the reference models plus the new one; every interval is a 95 % interval
(bootstrap over the suite's items, or the placement's held-out or design errors: see
``interval_from``). ``None`` is a value that does not exist (nothing scored), never 0.

A benchmark's answer checks are typed: ``misfit`` a
:class:`~primebench_tasks.place.misfit.PersonFit`, ``responses`` a
:class:`~primebench_tasks.place.responses.ResponseCheck` (their ``to_json``/``from_json``). Open
records stay mappings, each with its own documented shape: a benchmark's ``leaderboard``
(:mod:`~primebench_tasks.place.standing`), the suite's ``rank_basis``
(:mod:`~primebench_tasks.place.imputation`), the run's ``conditions`` and ``missing`` items, and
each benchmark's ``reference`` (panel, hash and what is known of its runs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from primebench_tasks.data.codec import Document, omitted_if, optional
from primebench_tasks.errors import InputError

if TYPE_CHECKING:  # read on demand: this module stays light (``primebench --help`` loads it)
    from primebench_tasks.place.misfit import PersonFit
    from primebench_tasks.place.responses import ResponseCheck

SCHEMA = "primebench.placement/1"


@dataclass(frozen=True)
class Estimate(Document):
    """A point and its 95 % interval (``lo`` ≤ ``value`` ≤ ``hi``); None where it does not
    exist. Read back, each is a score in [0, 1] or null."""

    value: float | None
    lo: float | None
    hi: float | None

    def check_json(self) -> None:
        for key in ("value", "lo", "hi"):
            v = getattr(self, key)
            if v is not None and not 0.0 <= v <= 1.0:
                raise ValueError(f"{key!r} is {v!r}, not a score in [0, 1]")


@dataclass(frozen=True)
class Rank(Estimate):
    """A rank (1 = best) with its interval, among ``out_of`` − 1 reference models. Read back,
    ``out_of`` is a count ≥ 1 and value, lo, hi are in [1, out_of] (an interval's ends may fall
    between ranks) or null."""

    out_of: int = 0

    def check_json(self) -> None:
        if self.out_of < 1:
            raise ValueError(f"'out_of' is {self.out_of!r}, not a count of models")
        for key in ("value", "lo", "hi"):
            v = getattr(self, key)
            if v is not None and not 1 <= v <= self.out_of:
                raise ValueError(f"rank {key!r} is {v!r}, not a rank in [1, {self.out_of}]")


@dataclass
class BenchmarkPlacement(Document):
    """One model on one benchmark: its score on the suite's items and rank among the reference
    models on the same items, its predicted full-benchmark score and rank, where it stands
    (``regime``: interior, top, beyond; none or too_few where it has no prediction), where its
    interval comes from, and the misfit check's verdict."""

    json_imports = ("primebench_tasks.place.misfit", "primebench_tasks.place.responses")

    source: str
    n_items: int
    n_scored: int
    n_reference: int
    score: Estimate
    rank_on_suite_items: Rank
    predicted_full: Estimate
    predicted_rank: Rank
    regime: str
    above_all_reference: bool
    interval_from: str
    misfit: PersonFit
    no_prediction_because: str | None = optional()
    leaderboard: dict[str, Any] | None = optional()
    responses: ResponseCheck | None = optional()
    """The response check (flags, comparable, profile, limits) where the run kept its
    answers."""
    reference_range: list[float] | None = optional()
    """The lowest and highest full-benchmark score among the reference models (what a rank
    among them can tell apart)."""

    @property
    def flagged(self) -> bool:
        """The misfit check (right/wrong pattern) or the response check flagged this
        benchmark's answers."""
        return self.misfit.flagged or bool(self.responses is not None and self.responses.flags)

    @property
    def comparable(self) -> bool:
        """False where the response check found parse failures beyond the reference runs'."""
        return self.responses is None or self.responses.comparable

    @property
    def at_chance(self) -> bool:
        """The score cannot be told from a guesser's on the same items: its ranks are no
        standing."""
        return self.responses is not None and self.responses.at_chance


@dataclass
class DesignOnlyPlacement(Document):
    """One model on one design-only benchmark (#72): its full score estimated by the
    benchmark's probability design alone (:func:`~primebench_tasks.suite.content_design.stratified_estimate`;
    no item panel assists it, so its interval is the random floor), with its 90 % interval
    beside the 95 % one, the draw it rests on (``strata``: stratum → [N_h, n_h]; ``pool``: the
    fingerprint of the dataset it was drawn from) and its leaderboard standing. ``predicted_full``
    is None (with ``no_estimate_because``) where a stratum has no scored item."""

    n_items: int
    n_scored: int
    predicted_full: Estimate
    interval_90: Estimate
    se: float | None
    strata: dict[str, list[int]]
    pool: str
    interval_from: str = "design"
    no_estimate_because: str | None = optional()
    leaderboard: dict[str, Any] | None = optional()
    pool_sizes_from: str | None = optional()
    """``pin``: the N_h are the suite's pinned pool's (the log held to them); ``log``: the run
    log's own, which the interval rests on (no pin to hold them to); None: not recorded."""

    def check_json(self) -> None:
        if self.interval_from != "design":
            raise ValueError(f"'interval_from' is {self.interval_from!r}, not 'design'")


@dataclass
class CategoryPlacement(Document):
    """One model on one category: the item-weighted score over its ``benchmarks``, the mean of
    their predicted full scores, and the rank among reference models that have every one of
    them (None with ``no_rank_because`` where it has none)."""

    benchmarks: list[str]
    score: Estimate
    predicted_full: Estimate
    predicted_rank: Rank | None
    no_rank_because: str | None = optional()


@dataclass
class SuitePlacement(Document):
    """One model on the whole suite: items asked and scored, the suite score (mean of category
    scores), the predicted full-suite score, the rank among reference models (on those with
    every benchmark, or on imputed ones: ``rank_basis``), the misfit lines and the benchmarks
    on which it is predicted above every reference model."""

    n_items: int
    n_scored: int
    score: Estimate
    predicted_full: Estimate
    predicted_rank: Rank | None
    misfit: list[str] = field(default_factory=list)
    beyond_reference: list[str] = field(default_factory=list)
    no_rank_because: str | None = optional()
    rank_basis: dict[str, Any] | None = optional()
    answers: list[str] = omitted_if()
    """The response check's lines ("MMMU: 31 % of the answers held no answer …"), one per flag."""
    not_comparable: list[str] = omitted_if()
    """The benchmarks whose parse failures exceed the reference runs': not comparable."""
    at_chance: list[str] = omitted_if()
    """The benchmarks whose score cannot be told from a guesser's on the same items."""
    chance: str | None = optional()
    """Where the suite's answers together cannot be told from guessing: the line saying so
    (the suite's ranks are then no standing)."""
    leaderboard: dict[str, Any] | None = optional()
    """Where the mean predicted full score over the suite's benchmarks that a leaderboard has
    stands among its models and among those of its own year
    (:func:`~primebench_tasks.place.standing.add_leaderboard_standing`)."""


@dataclass
class ModelPlacement(Document):
    """One new model: the suite, each category, each benchmark; ``notes``: lines the report
    shows under it (e.g. an adapter applied in part)."""

    suite: SuitePlacement
    categories: dict[str, CategoryPlacement]
    benchmarks: dict[str, BenchmarkPlacement]
    notes: list[str] | None = optional()
    design_only: dict[str, DesignOnlyPlacement] = omitted_if(default_factory=dict)
    """The suite's design-only benchmarks this model answered (#72): estimated by their design,
    outside the suite score and its reference ranks (no reference model has their items)."""

    def misfit_benchmarks(self) -> list[str]:
        """The benchmarks on which the misfit check (the right/wrong pattern, not the response
        check) flagged this model, sorted."""
        return sorted(b for b, e in self.benchmarks.items() if e.misfit.flagged)

    def flagged_benchmarks(self) -> list[str]:
        """The benchmarks on which the misfit check flagged this model's answers, sorted."""
        return sorted(b for b, e in self.benchmarks.items() if e.flagged)


@dataclass
class Placement(Document):
    """New models placed on one suite version (``suite``, named ``suite_name``) by
    ``estimator`` with ``n_boot`` resamples and ``seed``; ``reference``: benchmark → its
    reference panel (name, content hash, and once written what is known of its runs);
    ``models``: model name → :class:`ModelPlacement`; ``missing``: the suite items each model
    lacks; ``conditions``: what the run was made under. Written as ``report.json``
    (:meth:`write`), read back by :meth:`read`."""

    json_what = "placement"

    suite: str
    suite_name: str
    estimator: str
    n_boot: int
    seed: int
    reference: dict[str, dict[str, Any]]
    models: dict[str, ModelPlacement]
    missing: dict[str, Any] | None = optional()
    conditions: dict[str, Any] | None = optional()
    schema: str = SCHEMA

    @classmethod
    def json_prepare(cls, d: Any, where: str | None) -> Any:
        """Only this schema is read: another is an InputError naming ``where``."""
        schema = d.get("schema") if isinstance(d, Mapping) else None
        if schema != SCHEMA:
            raise InputError(
                f"schema {schema!r} is not {SCHEMA!r}", file=where or "placement", field="schema"
            )
        return d
