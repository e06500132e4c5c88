"""The PRIMEBench catalogue: 43 benchmarks in 18 capability categories (paper Table 4, names as in
Table 5), with metric, metric range and item counts, plus aliases for the real data sets here."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from primebench_tasks.data.cards import METRIC_KINDS, CatalogueEntry, benchmark_cards
from primebench_tasks.errors import InputError, UnknownBenchmarkError

__all__ = [
    "CATEGORIES",
    "METRIC_KINDS",
    "BenchmarkSpec",
    "aliases",
    "category_order",
    "lookup",
    "paper_benchmarks",
]

CATEGORIES: tuple[str, ...] = (
    "Comprehensive",
    "Academic Knowledge",
    "Visual Reasoning",
    "Math Reasoning",
    "Document Understanding",
    "Text Recognition",
    "Chart Understanding",
    "Science Knowledge",
    "Object Grounding",
    "Spatial Reasoning",
    "Image Understanding",
    "Image Captioning",
    "Hallucination Detection",
    "Commonsense",
    "Multi-Turn/Multilingual",
    "Web/UI Understanding",
    "Object Recognition",
    "Instruction Following",
)
"""The 18 capability categories in Table 4 order."""


@dataclass(frozen=True)
class BenchmarkSpec(CatalogueEntry):
    """One benchmark of the catalogue: its name and catalogue entry (category, metric,
    ``metric_kind``, ``score_min``/``score_max`` — the metric range of one item score; imports
    scale it to [0, 1] —, its lmms-eval task and VLMEvalKit dataset).
    ``items``, ``all_correct``, ``blind_solvable`` and ``removed`` are the paper's Table 4/5 counts
    (zero for aliases of real data sets, which are not in the paper's panel).
    """

    benchmark: str
    items: int = 0
    all_correct: int = 0
    blind_solvable: int = 0
    removed: int = 0
    blind_runs: bool = True


def _rows(name: str) -> list[dict[str, str]]:
    text = resources.files("primebench_tasks.data").joinpath("resources", name).read_text("utf-8")
    return list(csv.DictReader(text.splitlines()))


@lru_cache(maxsize=1)
def paper_benchmarks() -> tuple[BenchmarkSpec, ...]:
    """The paper's 43 benchmarks in Table 5 order (descending item count)."""
    out = []
    for r in _rows("catalogue.csv"):
        out.append(
            BenchmarkSpec(
                benchmark=r["benchmark"],
                category=r["category"],
                metric=r["metric"],
                metric_kind=r["metric_kind"],
                score_min=float(r["score_min"]),
                score_max=float(r["score_max"]),
                lmms_eval_task=r["lmms_eval_task"] or None,
                vlmeval_dataset=r["vlmeval_dataset"] or None,
                items=int(r["items"]),
                all_correct=int(r["all_correct"]),
                blind_solvable=int(r["blind_solvable"]),
                removed=int(r["removed"]),
                blind_runs=r["blind_runs"] == "true",
            )
        )
    return tuple(out)


@lru_cache(maxsize=1)
def _aliases() -> dict[str, BenchmarkSpec]:
    """The benchmark cards' names and aliases (:mod:`primebench_tasks.data.cards`)."""
    out = {}
    for card in benchmark_cards():
        if card.catalogue.category not in CATEGORIES:
            raise InputError(
                f"category {card.catalogue.category!r} is not one of the catalogue's: "
                f"{', '.join(CATEGORIES)}",
                file=card.file,
                field="category",
            )
        for name in card.names:
            out[name] = BenchmarkSpec(benchmark=name, **card.catalogue.__dict__)
    return out


def aliases() -> dict[str, BenchmarkSpec]:
    """The catalogue's names of real data sets (``MMMU_DEV_VAL``, ``BLINK``, ...): every benchmark
    card's name and aliases."""
    return dict(_aliases())


def lookup(benchmark: str, category: str | None = None) -> BenchmarkSpec:
    """The catalogue entry of ``benchmark`` (a paper name or an alias of a real data set).

    With ``category`` given, an unknown benchmark becomes a binary [0, 1] benchmark of that
    category, and a known one is re-assigned to it. An unknown benchmark without a category raises
    :class:`UnknownBenchmarkError` that says how to give one.
    """
    if category is not None and category not in CATEGORIES:
        raise UnknownBenchmarkError(
            f"unknown category {category!r}; the categories are: {', '.join(CATEGORIES)}"
        )
    spec = {b.benchmark: b for b in paper_benchmarks()}.get(benchmark) or _aliases().get(benchmark)
    if spec is None:
        if category is None:
            raise UnknownBenchmarkError(
                f"benchmark {benchmark!r} is not in the catalogue; give its capability category "
                f"(CLI: --category CAT, Python: category=CAT), one of: {', '.join(CATEGORIES)}"
            )
        return BenchmarkSpec(
            benchmark=benchmark,
            category=category,
            metric="accuracy",
            metric_kind="binary",
            score_min=0.0,
            score_max=1.0,
            lmms_eval_task=None,
            vlmeval_dataset=None,
        )
    if category is not None and category != spec.category:
        return BenchmarkSpec(**{**spec.__dict__, "category": category})
    return spec


def category_order(categories: list[str] | set[str]) -> list[str]:
    """Categories sorted in Table 4 order; categories outside the 18 follow alphabetically."""
    known = [c for c in CATEGORIES if c in categories]
    return known + sorted(set(categories) - set(CATEGORIES))
