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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from primebench_tasks.data.io import json_lines, json_number, json_text
from primebench_tasks.errors import InputError

if TYPE_CHECKING:  # read on demand: this module stays light (``primebench --help`` loads it)
    from primebench_tasks.place.misfit import PersonFit
    from primebench_tasks.place.responses import ResponseCheck

SCHEMA = "primebench.placement/1"


@dataclass(frozen=True)
class Estimate:
    """A point and its 95 % interval (``lo`` ≤ ``value`` ≤ ``hi``); None where it does not
    exist."""

    value: float | None
    lo: float | None
    hi: float | None

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "lo": self.lo, "hi": self.hi}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Estimate:
        """A score read back: each of value, lo, hi a number in [0, 1] or null (a text, a bool
        or a score off the scale is a ``ValueError``/``TypeError`` naming the field)."""
        out = []
        for key in ("value", "lo", "hi"):
            v = json_number(d, key, required=True)
            if v is not None and not 0.0 <= v <= 1.0:
                raise ValueError(f"{key!r} is {v!r}, not a score in [0, 1]")
            out.append(v)
        return cls(*out)


@dataclass(frozen=True)
class Rank(Estimate):
    """A rank (1 = best) with its interval, among ``out_of`` − 1 reference models."""

    out_of: int = 0

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "out_of": self.out_of}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Rank:
        """A rank read back: ``out_of`` a whole number ≥ 1; value, lo, hi numbers in
        [1, out_of] (an interval's ends may fall between ranks) or null."""
        out_of = json_number(d, "out_of", required=True)
        if out_of is None or out_of != int(out_of) or out_of < 1:
            raise ValueError(f"'out_of' is {d['out_of']!r}, not a count of models")
        out: dict[str, Any] = {}
        for key in ("value", "lo", "hi"):
            v = json_number(d, key, required=True)
            if v is not None and not 1 <= v <= out_of:
                raise ValueError(f"rank {key!r} is {v!r}, not a rank in [1, {int(out_of)}]")
            out[key] = d[key]
        return cls(out["value"], out["lo"], out["hi"], int(out_of))

    @classmethod
    def maybe(cls, d: Mapping[str, Any] | None) -> Rank | None:
        return None if d is None else cls.from_json(d)


@dataclass
class BenchmarkPlacement:
    """One model on one benchmark: its score on the suite's items and rank among the reference
    models on the same items, its predicted full-benchmark score and rank, where it stands
    (``regime``: interior, top, beyond; none or too_few where it has no prediction), where its
    interval comes from, and the misfit check's verdict."""

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
    no_prediction_because: str | None = None
    leaderboard: dict[str, Any] | None = None
    responses: ResponseCheck | None = None
    """The response check (flags, comparable, profile, limits) where the run kept its
    answers."""

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "source": self.source,
            "n_items": self.n_items,
            "n_scored": self.n_scored,
            "n_reference": self.n_reference,
            "score": self.score.to_json(),
            "rank_on_suite_items": self.rank_on_suite_items.to_json(),
            "predicted_full": self.predicted_full.to_json(),
            "predicted_rank": self.predicted_rank.to_json(),
            "regime": self.regime,
            "above_all_reference": self.above_all_reference,
            "interval_from": self.interval_from,
            "misfit": self.misfit.to_json(),
        }
        _put(d, "no_prediction_because", self.no_prediction_because)
        _put(d, "leaderboard", self.leaderboard)
        _put(d, "responses", None if self.responses is None else self.responses.to_json())
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> BenchmarkPlacement:
        from primebench_tasks.place.misfit import PersonFit
        from primebench_tasks.place.responses import ResponseCheck

        return cls(
            source=d["source"],
            n_items=int(d["n_items"]),
            n_scored=int(d["n_scored"]),
            n_reference=int(d["n_reference"]),
            score=Estimate.from_json(d["score"]),
            rank_on_suite_items=Rank.from_json(d["rank_on_suite_items"]),
            predicted_full=Estimate.from_json(d["predicted_full"]),
            predicted_rank=Rank.from_json(d["predicted_rank"]),
            regime=d["regime"],
            above_all_reference=bool(d["above_all_reference"]),
            interval_from=d["interval_from"],
            misfit=PersonFit.from_json(d["misfit"]),
            no_prediction_because=json_text(d, "no_prediction_because"),
            leaderboard=_record(d, "leaderboard"),
            responses=(
                None if d.get("responses") is None else ResponseCheck.from_json(d["responses"])
            ),
        )

    @property
    def flagged(self) -> bool:
        """The misfit check (right/wrong pattern) or the response check flagged this
        benchmark's answers."""
        return self.misfit.flagged or bool(self.responses is not None and self.responses.flags)

    @property
    def comparable(self) -> bool:
        """False where the response check found parse failures beyond the reference runs'."""
        return self.responses is None or self.responses.comparable


@dataclass
class DesignOnlyPlacement:
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
    no_estimate_because: str | None = None
    leaderboard: dict[str, Any] | None = None
    pool_sizes_from: str | None = None
    """``pin``: the N_h are the suite's pinned pool's (the log held to them); ``log``: the run
    log's own, which the interval rests on (no pin to hold them to); None: not recorded."""

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "n_items": self.n_items,
            "n_scored": self.n_scored,
            "predicted_full": self.predicted_full.to_json(),
            "interval_90": self.interval_90.to_json(),
            "se": self.se,
            "strata": {h: list(v) for h, v in self.strata.items()},
            "pool": self.pool,
            "interval_from": "design",
        }
        _put(d, "no_estimate_because", self.no_estimate_because)
        _put(d, "leaderboard", self.leaderboard)
        _put(d, "pool_sizes_from", self.pool_sizes_from)
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> DesignOnlyPlacement:
        return cls(
            n_items=int(d["n_items"]),
            n_scored=int(d["n_scored"]),
            predicted_full=Estimate.from_json(d["predicted_full"]),
            interval_90=Estimate.from_json(d["interval_90"]),
            se=None if d["se"] is None else float(d["se"]),
            strata={str(h): [int(x) for x in v] for h, v in d["strata"].items()},
            pool=str(d["pool"]),
            no_estimate_because=json_text(d, "no_estimate_because"),
            leaderboard=_record(d, "leaderboard"),
            pool_sizes_from=json_text(d, "pool_sizes_from"),
        )


@dataclass
class CategoryPlacement:
    """One model on one category: the item-weighted score over its ``benchmarks``, the mean of
    their predicted full scores, and the rank among reference models that have every one of
    them (None with ``no_rank_because`` where it has none)."""

    benchmarks: list[str]
    score: Estimate
    predicted_full: Estimate
    predicted_rank: Rank | None
    no_rank_because: str | None = None

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "benchmarks": list(self.benchmarks),
            "score": self.score.to_json(),
            "predicted_full": self.predicted_full.to_json(),
            "predicted_rank": None
            if self.predicted_rank is None
            else self.predicted_rank.to_json(),
        }
        _put(d, "no_rank_because", self.no_rank_because)
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> CategoryPlacement:
        return cls(
            benchmarks=list(d["benchmarks"]),
            score=Estimate.from_json(d["score"]),
            predicted_full=Estimate.from_json(d["predicted_full"]),
            predicted_rank=Rank.maybe(d["predicted_rank"]),
            no_rank_because=d.get("no_rank_because"),
        )


@dataclass
class SuitePlacement:
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
    no_rank_because: str | None = None
    rank_basis: dict[str, Any] | None = None
    answers: list[str] = field(default_factory=list)
    """The response check's lines ("MMMU: 31 % of the answers held no answer …"), one per flag."""
    not_comparable: list[str] = field(default_factory=list)
    """The benchmarks whose parse failures exceed the reference runs': not comparable."""
    leaderboard: dict[str, Any] | None = None
    """Where the mean predicted full score over the suite's benchmarks that a leaderboard has
    stands among its models and among those of its own year
    (:func:`~primebench_tasks.place.standing.add_leaderboard_standing`)."""

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "n_items": self.n_items,
            "n_scored": self.n_scored,
            "score": self.score.to_json(),
            "predicted_full": self.predicted_full.to_json(),
            "predicted_rank": None
            if self.predicted_rank is None
            else self.predicted_rank.to_json(),
            "misfit": list(self.misfit),
            "beyond_reference": list(self.beyond_reference),
        }
        _put(d, "no_rank_because", self.no_rank_because)
        _put(d, "rank_basis", self.rank_basis)
        _put(d, "answers", list(self.answers) or None)
        _put(d, "not_comparable", list(self.not_comparable) or None)
        _put(d, "leaderboard", self.leaderboard)
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SuitePlacement:
        return cls(
            n_items=int(d["n_items"]),
            n_scored=int(d["n_scored"]),
            score=Estimate.from_json(d["score"]),
            predicted_full=Estimate.from_json(d["predicted_full"]),
            predicted_rank=Rank.maybe(d["predicted_rank"]),
            misfit=json_lines(d, "misfit"),
            beyond_reference=json_lines(d, "beyond_reference"),
            no_rank_because=json_text(d, "no_rank_because"),
            rank_basis=_record(d, "rank_basis"),
            answers=json_lines(d, "answers"),
            not_comparable=json_lines(d, "not_comparable"),
            leaderboard=_record(d, "leaderboard"),
        )


@dataclass
class ModelPlacement:
    """One new model: the suite, each category, each benchmark; ``notes``: lines the report
    shows under it (e.g. an adapter applied in part)."""

    suite: SuitePlacement
    categories: dict[str, CategoryPlacement]
    benchmarks: dict[str, BenchmarkPlacement]
    notes: list[str] | None = None
    design_only: dict[str, DesignOnlyPlacement] = field(default_factory=dict)
    """The suite's design-only benchmarks this model answered (#72): estimated by their design,
    outside the suite score and its reference ranks (no reference model has their items)."""

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "suite": self.suite.to_json(),
            "categories": {c: e.to_json() for c, e in self.categories.items()},
            "benchmarks": {b: e.to_json() for b, e in self.benchmarks.items()},
        }
        _put(d, "notes", None if self.notes is None else list(self.notes))
        _put(d, "design_only", {b: e.to_json() for b, e in self.design_only.items()} or None)
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ModelPlacement:
        return cls(
            suite=SuitePlacement.from_json(d["suite"]),
            categories={c: CategoryPlacement.from_json(e) for c, e in d["categories"].items()},
            benchmarks={b: BenchmarkPlacement.from_json(e) for b, e in d["benchmarks"].items()},
            notes=None if d.get("notes") is None else json_lines(d, "notes"),
            design_only={
                b: DesignOnlyPlacement.from_json(e)
                for b, e in (_record(d, "design_only") or {}).items()
            },
        )

    def misfit_benchmarks(self) -> list[str]:
        """The benchmarks on which the misfit check (the right/wrong pattern, not the response
        check) flagged this model, sorted."""
        return sorted(b for b, e in self.benchmarks.items() if e.misfit.flagged)

    def flagged_benchmarks(self) -> list[str]:
        """The benchmarks on which the misfit check flagged this model's answers, sorted."""
        return sorted(b for b, e in self.benchmarks.items() if e.flagged)


@dataclass
class Placement:
    """New models placed on one suite version (``suite``, named ``suite_name``) by
    ``estimator`` with ``n_boot`` resamples and ``seed``; ``reference``: benchmark → its
    reference panel (name, content hash, and once written what is known of its runs);
    ``models``: model name → :class:`ModelPlacement`; ``missing``: the suite items each model
    lacks; ``conditions``: what the run was made under."""

    suite: str
    suite_name: str
    estimator: str
    n_boot: int
    seed: int
    reference: dict[str, dict[str, Any]]
    models: dict[str, ModelPlacement]
    missing: dict[str, Any] | None = None
    conditions: dict[str, Any] | None = None
    schema: str = SCHEMA

    def to_json(self) -> dict[str, Any]:
        """The document as JSON values (``report.json``'s content)."""
        d: dict[str, Any] = {
            "schema": self.schema,
            "suite": self.suite,
            "suite_name": self.suite_name,
            "estimator": self.estimator,
            "n_boot": self.n_boot,
            "seed": self.seed,
            "reference": {b: dict(r) for b, r in self.reference.items()},
            "models": {m: r.to_json() for m, r in self.models.items()},
        }
        _put(d, "missing", self.missing)
        _put(d, "conditions", self.conditions)
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any], where: str = "placement") -> Placement:
        """The placement ``d`` holds; an InputError naming ``where`` for another schema or a
        missing field."""
        if d.get("schema") != SCHEMA:
            raise InputError(f"{where}: schema {d.get('schema')!r} is not {SCHEMA!r}")
        try:
            return cls(
                suite=d["suite"],
                suite_name=d["suite_name"],
                estimator=d["estimator"],
                n_boot=int(d["n_boot"]),
                seed=int(d["seed"]),
                reference={b: dict(r) for b, r in d["reference"].items()},
                models={m: ModelPlacement.from_json(r) for m, r in d["models"].items()},
                missing=_record(d, "missing"),
                conditions=_record(d, "conditions"),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InputError(f"{where}: not a placement document ({type(e).__name__}: {e})") from e

    def write(self, path: str | Path) -> Path:
        """Write the document to ``path`` (canonical JSON, atomically)."""
        from primebench_tasks.data.io import write_json_document

        return write_json_document(path, self.to_json())

    @classmethod
    def read(cls, path: str | Path) -> Placement:
        """The placement written at ``path`` (a ``report.json``)."""
        from primebench_tasks.data.io import read_json_document

        return cls.from_json(read_json_document(path, "placement", None), str(path))


def _record(d: Mapping[str, Any], key: str, required: bool = False) -> dict[str, Any] | None:
    """``d[key]``, an open record: a JSON object, or absent (None) unless ``required``; another
    type is a ``TypeError`` that :meth:`Placement.from_json` reports as not a placement."""
    v = d[key] if required else d.get(key)
    if v is None and not required:
        return None
    if not isinstance(v, dict):
        raise TypeError(f"{key!r} is a {type(v).__name__}, not an object")
    return dict(v)


def _put(d: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        d[key] = value
