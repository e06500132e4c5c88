"""Benchmark cards: everything the project knows about one benchmark, in one file
(``primebench_tasks/data/cards/<name>.toml``; the folder's README describes the fields).

A card holds the benchmark's catalogue entry under the names real panels give it (``name`` and
``aliases``), how the upstream lmms-eval task keys and scores its rows (``[lmms_eval]``, with the
evidence that the key was checked), how VLMEvalKit's published records of it are scored without a
judge (``[vlmeval]``), the embedded panel built from those records (``[embedded]``), the released
suites it is part of (``[[released]]``: suite, source panel, position in the manifest) and the
test stand-ins of its upstream data (``[standins]``). The catalogue's aliases, the verified
upstream row keys, the records' scoring rules, the released suites' sources and the tests'
stand-ins are all read from the cards, so adding a released benchmark is one card and a
regeneration (``tools/build_embedded.py --only``, ``tools/release_suites.py``).

The cards are data of the library; the harness adapters read their own sections
(``harness_adapters`` imports this module, never the other way round).
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from primebench_tasks.errors import InputError

METRIC_KINDS = ("binary", "continuous", "judge")
RECORDS_RULES = ("mcq", "ocrbench", "yorn")
"""How VLMEvalKit's published records of a dataset are scored without a judge: ``mcq`` (its
``can_infer`` option-letter rule), ``ocrbench`` (its OCRBench substring rule)."""


@dataclass(frozen=True)
class CatalogueEntry:
    """The catalogue entry of a card's benchmark (``[catalogue]``): category, metric, the range of
    one item's score, and its names in lmms-eval and VLMEvalKit."""

    category: str
    metric: str
    metric_kind: str
    score_min: float
    score_max: float
    lmms_eval_task: str | None
    vlmeval_dataset: str | None


ON_UNREADABLE = ("random option", "scored 0")
"""What an upstream scorer may do with an unreadable answer (``[lmms_eval] on_unreadable``)."""


@dataclass(frozen=True)
class LmmsEvalEntry:
    """``[lmms_eval]``: the upstream task whose rows carry the panel's item ids in ``key``
    (checked: ``evidence``), its item scorer, and for groups the variant or the subtask pattern."""

    task: str
    key: str
    scorer: str
    variant: str | None = None
    subtask_pattern: str | None = None
    evidence: str = ""
    text_key: str | None = None
    """A rule of :mod:`primebench_tasks.data.text_keys`: the rows carry no id of the panel's,
    ``key`` is computed from their text (the suite's manifest carries each item's key)."""
    on_unreadable: str | None = None
    """What the upstream task's scorer does with an answer whose option it cannot read:
    ``"random option"`` (it guesses one: the damage does not show in the scores) or
    ``"scored 0"``; None where not checked. The placement's response check says it in its flag
    (:mod:`primebench_tasks.place.responses`)."""


@dataclass(frozen=True)
class EmbeddedEntry:
    """``[embedded]``: the embedded panel built from VLMEvalKit's published records of the
    benchmark (``tools/build_embedded.py --only PANEL``): its one-line description, the scoring
    rule in words and what its item ids are."""

    panel: str
    description: str
    rule: str
    item_ids: str


@dataclass(frozen=True)
class Release:
    """``[[released]]``: the benchmark is in released suite ``suite``, built on embedded panel
    ``panel``, at ``position`` (1-based) in the manifest's benchmark order."""

    suite: str
    panel: str
    position: int


@dataclass(frozen=True)
class DesignOnlyCard:
    """``[design_only]``: how the benchmark joins a suite without item-level reference runs
    (#72; :mod:`primebench_tasks.suite.content_design`): the lmms-eval ``task`` that runs it and
    its item ``scorer`` (a registered one, or ``number`` for a per-item number), the fields its
    content key reads (``key_fields``, ``image_field``: the image where it is cheap and the text
    alone may repeat), the field whose values are its strata (none: one stratum), the released
    ``suites`` it is in, and the ``evidence`` that the upstream rows carry those fields."""

    task: str
    scorer: str
    key_fields: tuple[str, ...]
    suites: tuple[str, ...]
    evidence: str
    strata_field: str | None = None
    image_field: str | None = None
    view: str | None = None
    """The cross-harness view its fields name (:mod:`primebench_tasks.data.design_views`),
    so VLMEvalKit draws the same items; None: lmms-eval's own row fields."""


@dataclass(frozen=True)
class BenchmarkCard:
    """One benchmark card (see the module docstring)."""

    name: str
    aliases: tuple[str, ...]
    catalogue: CatalogueEntry
    lmms_eval: LmmsEvalEntry | None
    records_rule: str | None
    embedded: EmbeddedEntry | None
    released: tuple[Release, ...]
    standins: dict[str, str]
    file: str
    design_only: DesignOnlyCard | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """The card's name and its aliases."""
        return (self.name, *self.aliases)


_TOP = {
    "name",
    "aliases",
    "catalogue",
    "lmms_eval",
    "vlmeval",
    "embedded",
    "released",
    "standins",
    "design_only",
}


def _section(doc: dict[str, Any], key: str, cls: type, file: str, optional: set[str]) -> Any:
    sec = doc.get(key)
    if sec is None:
        return None
    if not isinstance(sec, dict):
        raise InputError(f"[{key}] must be a table", file=file, field=key)
    fields = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(sec) - fields)
    missing = sorted(fields - optional - set(sec))
    if unknown or missing:
        raise InputError(
            f"[{key}]: unknown fields {unknown}, missing fields {missing}", file=file, field=key
        )
    return cls(**sec)


def parse_card(text: str, file: str) -> BenchmarkCard:
    """A card from its TOML text; every error names the file and the field."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}", file=file) from None
    unknown = sorted(set(doc) - _TOP)
    if unknown:
        raise InputError(f"unknown fields {unknown}; known: {sorted(_TOP)}", file=file)
    name = doc.get("name")
    if not isinstance(name, str) or not name:
        raise InputError("needs a name", file=file, field="name")
    aliases = doc.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a for a in aliases):
        raise InputError("must be a list of names", file=file, field="aliases")
    cat = _section(doc, "catalogue", CatalogueEntry, file, set())
    if cat is None:
        raise InputError("needs a [catalogue] table", file=file, field="catalogue")
    if cat.metric_kind not in METRIC_KINDS:
        raise InputError(f"must be one of {METRIC_KINDS}", file=file, field="metric_kind")
    if not cat.score_min < cat.score_max:
        raise InputError("score_min must be below score_max", file=file, field="score_min")
    cat = CatalogueEntry(
        **{
            **cat.__dict__,
            "score_min": float(cat.score_min),
            "score_max": float(cat.score_max),
            "lmms_eval_task": cat.lmms_eval_task or None,
            "vlmeval_dataset": cat.vlmeval_dataset or None,
        }
    )
    lmms = _section(
        doc,
        "lmms_eval",
        LmmsEvalEntry,
        file,
        {"variant", "subtask_pattern", "evidence", "text_key", "on_unreadable"},
    )
    if lmms is not None and lmms.text_key is not None:
        from primebench_tasks.data.text_keys import TEXT_KEY_FIELD, TEXT_RULES

        if lmms.text_key not in TEXT_RULES:
            raise InputError(f"must be one of {TEXT_RULES}", file=file, field="lmms_eval.text_key")
        if lmms.key != TEXT_KEY_FIELD:
            raise InputError(
                f"a row keyed by text has key {TEXT_KEY_FIELD!r}", file=file, field="lmms_eval.key"
            )
    if lmms is not None and lmms.on_unreadable not in (None, *ON_UNREADABLE):
        raise InputError(
            f"must be one of {ON_UNREADABLE}", file=file, field="lmms_eval.on_unreadable"
        )
    if lmms is not None and lmms.task != cat.lmms_eval_task:
        raise InputError(
            f"[lmms_eval] task {lmms.task!r} is not the catalogue's lmms_eval_task "
            f"{cat.lmms_eval_task!r}",
            file=file,
            field="lmms_eval.task",
        )
    vlm = doc.get("vlmeval", {})
    if not isinstance(vlm, dict) or set(vlm) - {"records_rule"}:
        raise InputError("[vlmeval] has one field, records_rule", file=file, field="vlmeval")
    rule = vlm.get("records_rule")
    if rule is not None and rule not in RECORDS_RULES:
        raise InputError(f"must be one of {RECORDS_RULES}", file=file, field="records_rule")
    embedded = _section(doc, "embedded", EmbeddedEntry, file, set())
    released = []
    for i, r in enumerate(doc.get("released", [])):
        if not isinstance(r, dict) or set(r) != {"suite", "panel", "position"}:
            raise InputError(
                f"[[released]] #{i + 1} needs exactly suite, panel, position",
                file=file,
                field="released",
            )
        released.append(Release(str(r["suite"]), str(r["panel"]), int(r["position"])))
    standins = doc.get("standins", {})
    if not isinstance(standins, dict) or set(standins) - {"lmms_eval", "vlmeval"}:
        raise InputError("[standins] has lmms_eval and vlmeval", file=file, field="standins")
    design = _section(
        doc, "design_only", DesignOnlyCard, file, {"strata_field", "image_field", "view"}
    )
    if design is not None:
        if design.task != cat.lmms_eval_task:
            raise InputError(
                f"[design_only] task {design.task!r} is not the catalogue's lmms_eval_task "
                f"{cat.lmms_eval_task!r}",
                file=file,
                field="design_only.task",
            )
        keys = design.key_fields
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
            raise InputError(
                "must be a non-empty list of field names", file=file, field="design_only.key_fields"
            )
        design = dataclasses.replace(
            design, key_fields=tuple(keys), suites=tuple(map(str, design.suites))
        )
        if design.view is not None:
            from primebench_tasks.data.design_views import check_view

            def fail(msg: str, fld: str) -> InputError:
                return InputError(msg, file=file, field=f"design_only.{fld}")

            check_view(
                design.view, design.key_fields, design.strata_field, design.image_field, fail
            )
    return BenchmarkCard(
        name=name,
        aliases=tuple(aliases),
        catalogue=cat,
        lmms_eval=lmms,
        records_rule=rule,
        embedded=embedded,
        released=tuple(released),
        standins=dict(standins),
        file=file,
        design_only=design,
    )


def read_cards(folder: str | Path) -> tuple[BenchmarkCard, ...]:
    """The cards of ``folder`` (``*.toml``, by file name), checked with :func:`check_cards`."""
    folder = Path(folder)
    return check_cards(
        [parse_card(f.read_text("utf-8"), str(f)) for f in sorted(folder.glob("*.toml"))]
    )


def check_cards(cards: list[BenchmarkCard]) -> tuple[BenchmarkCard, ...]:
    """``cards``, refusing two that claim one name (or alias), one lmms-eval task's row key, one
    VLMEvalKit dataset's rule, one embedded panel or one position of a released suite."""
    seen: dict[tuple[str, str], str] = {}

    def claim(kind: str, value: str, card: BenchmarkCard) -> None:
        if (kind, value) in seen:
            raise InputError(
                f"{kind} {value!r} is claimed by {seen[kind, value]} too", file=card.file
            )
        seen[kind, value] = card.file

    for c in cards:
        for n in c.names:
            claim("name", n, c)
        if c.lmms_eval is not None:
            claim("lmms-eval task", c.lmms_eval.task, c)
        if c.records_rule is not None and c.catalogue.vlmeval_dataset:
            claim("VLMEvalKit dataset", c.catalogue.vlmeval_dataset, c)
        if c.embedded is not None:
            claim("embedded panel", c.embedded.panel, c)
        if c.design_only is not None:
            claim("design-only lmms-eval task", c.design_only.task, c)
        for r in c.released:
            claim(f"position in {r.suite}", str(r.position), c)
    return tuple(cards)


def cards_folder() -> Path:
    """The installed cards, ``primebench_tasks/data/cards/``."""
    return Path(str(resources.files("primebench_tasks.data").joinpath("cards")))


@lru_cache(maxsize=1)
def benchmark_cards() -> tuple[BenchmarkCard, ...]:
    """Every installed card (:func:`read_cards` of :func:`cards_folder`)."""
    return read_cards(cards_folder())


def card(name: str) -> BenchmarkCard:
    """The card whose name or alias is ``name``."""
    for c in benchmark_cards():
        if name in c.names:
            return c
    raise InputError(f"no benchmark card names {name!r}", field="benchmark")


def design_only_cards(
    suite: str, cards: tuple[BenchmarkCard, ...] | None = None
) -> tuple[BenchmarkCard, ...]:
    """The cards whose ``[design_only]`` puts them in released suite ``suite``, by name."""
    return tuple(
        c
        for c in sorted(benchmark_cards() if cards is None else cards, key=lambda c: c.name)
        if c.design_only is not None and suite in c.design_only.suites
    )


def released_sources(
    suite: str, cards: tuple[BenchmarkCard, ...] | None = None
) -> tuple[tuple[str, str], ...]:
    """``(embedded panel, benchmark)`` of released suite ``suite``, in manifest order (of the
    installed cards, or of ``cards``)."""
    rows = sorted(
        (r.position, r.panel, c.name)
        for c in (benchmark_cards() if cards is None else cards)
        for r in c.released
        if r.suite == suite
    )
    return tuple((panel, name) for _, panel, name in rows)
