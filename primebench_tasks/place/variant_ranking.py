"""A ranking of close variants (checkpoints, LoRA adapters) of one model, typed and versioned
(#73): what both races write — ``rank-variants`` (every suite item asked of every variant:
``variants.json``) and ``rank-variants --adaptive`` (rounds until adjacent variants are separated:
``adaptive_variants.json``) — and read back as one document, schema ``primebench.variant_ranking/1``
(canonical JSON; the keys are the field names). Files of the earlier schemas
(``primebench.variants/2``, ``primebench.adaptive_variants/1``) still read.

Scores are suite scores in [0, 1] (the mean of category means); ``lo``/``hi`` their 95 %
bootstrap interval; ``pairwise[a][b]`` = P(a's suite score > b's) over the same resamples (ties
one half); the verdict (:func:`~primebench_tasks.place.variants.variant_verdict`) names a winner
only when the top variant is separated from the second. ``None`` is a value that does not exist
(a variant with no scored item), never 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from primebench_tasks.data.codec import Document, omitted_if, optional
from primebench_tasks.errors import InputError

SCHEMA = "primebench.variant_ranking/1"
OLD_SCHEMAS = {"primebench.variants/2": "static", "primebench.adaptive_variants/1": "adaptive"}
"""Earlier schemas that still read, and which race wrote them."""
RACES = ("static", "adaptive")


def _num(v: Any) -> float | None:
    if v is None:
        return None
    x = float(v)
    return None if math.isnan(x) else x


def _no_lines(answers: Mapping[str, list[str]]) -> bool:
    return not any(answers.values())


@dataclass(frozen=True)
class AdjacentPair(Document):
    """Two neighbours of the ranking: P(``better`` beats ``worse``) and whether that separates
    them at the verdict's level."""

    better: str
    worse: str
    p_better: float
    separated: bool


@dataclass(frozen=True)
class Verdict(Document):
    """What the ranking supports (:func:`~primebench_tasks.place.variants.variant_verdict`):
    the separation level and the threshold P must reach, each adjacent pair, the runs of
    neighbours that cannot be told apart (best first), the winner (None: not separated) and
    the sentence the reports show."""

    level: float
    threshold: float
    adjacent: tuple[AdjacentPair, ...]
    indistinguishable_groups: tuple[tuple[str, ...], ...]
    winner: str | None
    fully_ordered: bool
    text: str


@dataclass(frozen=True)
class RankedVariant(Document):
    """One variant's row, best first: its rank (1 = best), suite score with its 95 % interval
    and the items scored."""

    variant: str
    rank: int
    suite_score: float | None
    lo: float | None
    hi: float | None
    n_scored: int


@dataclass
class VariantRanking(Document):
    """A ranking of variants on one suite version (see the module docstring). ``race``:
    ``static`` or ``adaptive``. The static race adds the bootstrap ``ceiling`` (App. I.4) and
    ``supports_conclusion``, and per variant the benchmarks whose answers the misfit or the
    response check flagged; the adaptive race its ``settings``, why it stopped and the items
    asked of every variant per benchmark."""

    race: str
    suite: str
    n_boot: int
    verdict: Verdict
    ranking: tuple[RankedVariant, ...]
    pairwise: dict[str, dict[str, float | None]]
    suite_name: str | None = None
    seed: int | None = None
    ceiling: float | None = optional()
    supports_conclusion: bool | None = optional()
    misfit: dict[str, list[str]] = field(default_factory=dict)
    answers: dict[str, list[str]] = omitted_if(_no_lines, default_factory=dict)
    settings: dict[str, Any] | None = optional()
    stopped_because: str | None = optional()
    items: dict[str, int] | None = optional()
    schema: str = SCHEMA

    json_what = "variant ranking"

    def __post_init__(self) -> None:
        if self.race not in RACES:
            raise InputError(f"race {self.race!r} is not one of {RACES}", field="race")

    @classmethod
    def json_prepare(cls, d: Any, where: str | None) -> Any:
        """This schema, or an earlier one read as this one (its race from the schema); another
        is an InputError naming ``where``."""
        schema = d.get("schema") if isinstance(d, Mapping) else None
        if schema in OLD_SCHEMAS:
            return {**d, "schema": SCHEMA, "race": OLD_SCHEMAS[str(schema)]}
        if schema != SCHEMA:
            raise InputError(
                f"schema {schema!r} is not {SCHEMA!r} (or {sorted(OLD_SCHEMAS)})",
                file=where or "variant ranking",
                field="schema",
            )
        return d

    @property
    def order(self) -> list[str]:
        """The variants, best first."""
        return [r.variant for r in self.ranking]


def ranking_rows(table: Any) -> tuple[RankedVariant, ...]:
    """The rows of :func:`~primebench_tasks.place.variants.rank_variants`'s table (index:
    variant; rank, suite_score, lo, hi, n_scored), best first."""
    return tuple(
        RankedVariant(
            variant=str(v),
            rank=int(r["rank"]),
            suite_score=_num(r["suite_score"]),
            lo=_num(r["lo"]),
            hi=_num(r["hi"]),
            n_scored=int(r["n_scored"]),
        )
        for v, r in table.iterrows()
    )


def pairwise_table(pairwise: Any) -> dict[str, dict[str, float | None]]:
    """P(row beats column) of a pairwise frame, as the document keeps it."""
    return {
        str(a): {str(b): _num(pairwise.loc[a, b]) for b in pairwise.columns} for a in pairwise.index
    }
