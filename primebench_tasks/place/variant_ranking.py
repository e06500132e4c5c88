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
from pathlib import Path
from typing import Any

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


@dataclass(frozen=True)
class AdjacentPair:
    """Two neighbours of the ranking: P(``better`` beats ``worse``) and whether that separates
    them at the verdict's level."""

    better: str
    worse: str
    p_better: float
    separated: bool


@dataclass(frozen=True)
class Verdict:
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

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Verdict:
        return cls(
            level=float(d["level"]),
            threshold=float(d["threshold"]),
            adjacent=tuple(
                AdjacentPair(
                    str(p["better"]), str(p["worse"]), float(p["p_better"]), bool(p["separated"])
                )
                for p in d["adjacent"]
            ),
            indistinguishable_groups=tuple(
                tuple(str(v) for v in g) for g in d["indistinguishable_groups"]
            ),
            winner=None if d["winner"] is None else str(d["winner"]),
            fully_ordered=bool(d["fully_ordered"]),
            text=str(d["text"]),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "threshold": self.threshold,
            "adjacent": [
                {
                    "better": p.better,
                    "worse": p.worse,
                    "p_better": p.p_better,
                    "separated": p.separated,
                }
                for p in self.adjacent
            ],
            "indistinguishable_groups": [list(g) for g in self.indistinguishable_groups],
            "winner": self.winner,
            "fully_ordered": self.fully_ordered,
            "text": self.text,
        }


@dataclass(frozen=True)
class RankedVariant:
    """One variant's row, best first: its rank (1 = best), suite score with its 95 % interval
    and the items scored."""

    variant: str
    rank: int
    suite_score: float | None
    lo: float | None
    hi: float | None
    n_scored: int

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> RankedVariant:
        return cls(
            variant=str(d["variant"]),
            rank=int(d["rank"]),
            suite_score=_num(d["suite_score"]),
            lo=_num(d["lo"]),
            hi=_num(d["hi"]),
            n_scored=int(d["n_scored"]),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "rank": self.rank,
            "suite_score": self.suite_score,
            "lo": self.lo,
            "hi": self.hi,
            "n_scored": self.n_scored,
        }


@dataclass
class VariantRanking:
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
    ceiling: float | None = None
    supports_conclusion: bool | None = None
    misfit: dict[str, list[str]] = field(default_factory=dict)
    answers: dict[str, list[str]] = field(default_factory=dict)
    settings: dict[str, Any] | None = None
    stopped_because: str | None = None
    items: dict[str, int] | None = None
    schema: str = SCHEMA

    def __post_init__(self) -> None:
        if self.race not in RACES:
            raise InputError(f"race {self.race!r} is not one of {RACES}", field="race")

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "schema": self.schema,
            "race": self.race,
            "suite": self.suite,
            "suite_name": self.suite_name,
            "n_boot": self.n_boot,
            "seed": self.seed,
            "verdict": self.verdict.to_json(),
            "ranking": [r.to_json() for r in self.ranking],
            "pairwise": {a: dict(row) for a, row in self.pairwise.items()},
            "misfit": {v: list(b) for v, b in self.misfit.items()},
        }
        for k in ("ceiling", "supports_conclusion", "settings", "stopped_because", "items"):
            if getattr(self, k) is not None:
                d[k] = getattr(self, k)
        if any(self.answers.values()):
            d["answers"] = {v: list(x) for v, x in self.answers.items()}
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any], where: str = "variant ranking") -> VariantRanking:
        """The ranking ``d`` holds (this schema or an earlier one); an InputError naming
        ``where`` and the field otherwise."""
        schema = d.get("schema") if isinstance(d, Mapping) else None
        if schema == SCHEMA:
            race = d.get("race")
        elif schema in OLD_SCHEMAS:
            race = OLD_SCHEMAS[str(schema)]
        else:
            raise InputError(
                f"schema {schema!r} is not {SCHEMA!r} (or {sorted(OLD_SCHEMAS)})",
                file=where,
                field="schema",
            )
        try:
            return cls(
                race=str(race),
                suite=str(d["suite"]),
                suite_name=None if d.get("suite_name") is None else str(d["suite_name"]),
                n_boot=int(d["n_boot"]),
                seed=None if d.get("seed") is None else int(d["seed"]),
                verdict=Verdict.from_json(d["verdict"]),
                ranking=tuple(RankedVariant.from_json(r) for r in d["ranking"]),
                pairwise={
                    str(a): {str(b): _num(p) for b, p in row.items()}
                    for a, row in d["pairwise"].items()
                },
                ceiling=_num(d.get("ceiling")),
                supports_conclusion=(
                    None if d.get("supports_conclusion") is None else bool(d["supports_conclusion"])
                ),
                misfit={str(v): [str(b) for b in bs] for v, bs in (d.get("misfit") or {}).items()},
                answers={
                    str(v): [str(x) for x in xs] for v, xs in (d.get("answers") or {}).items()
                },
                settings=None if d.get("settings") is None else dict(d["settings"]),
                stopped_because=(
                    None if d.get("stopped_because") is None else str(d["stopped_because"])
                ),
                items=None
                if d.get("items") is None
                else {str(b): int(n) for b, n in d["items"].items()},
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InputError(
                f"not a variant ranking ({type(e).__name__}: {e})", file=where
            ) from None

    @property
    def order(self) -> list[str]:
        """The variants, best first."""
        return [r.variant for r in self.ranking]

    def write(self, path: str | Path) -> Path:
        """Write the document to ``path`` (canonical JSON, atomically)."""
        from primebench_tasks.data.io import write_json_document

        return write_json_document(path, self.to_json())

    @classmethod
    def read(cls, path: str | Path) -> VariantRanking:
        """The ranking written at ``path`` (``variants.json`` or ``adaptive_variants.json``,
        this schema or an earlier one)."""
        from primebench_tasks.data.io import read_json_document

        return cls.from_json(read_json_document(path, "variant ranking", None), str(path))


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
