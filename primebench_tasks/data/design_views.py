"""Cross-harness item views of the design-only benchmarks (#81): one *canonical row* per item,
computed the same way from lmms-eval's rows (the hub datasets its tasks load) and from
VLMEvalKit's TSV rows (``$LMUData/<dataset>.tsv``) of the same items, so that a design-only
benchmark's content keys — and therefore its draw — are the same in both harnesses.

A canonical row has the fields a design's ``key_fields``, ``strata_field`` and ``image_field``
name (:mod:`primebench_tasks.suite.content_design` keys it as any row):

- ``question``: the question text (MMStar's stem, before the ``Options:`` it may inline — one
  harness's copy inlines them, the other's holds them in columns ``A``..);
- ``options``: the option texts in order (ScienceQA: lmms-eval's ``choices`` list, VLMEvalKit's
  columns ``A``–``E``);
- ``answers``: the accepted answers, sorted (a list, a Python list literal as VLMEvalKit writes
  it, or one string; ScienceQA's answer index is read as its letter);
- ``hint``: ScienceQA's context text;
- ``image``: the item's image (a PIL image; VLMEvalKit's base64, decoded by the caller), which
  ranks the rows of one text (below);
- ``stratum``: POPE's and MMStar's ``category`` (a VLMEvalKit POPE row that several of POPE's
  splits share — ``category`` ``"adversarial,popular"`` — is one canonical row per split, as
  lmms-eval holds it).

Strata are kept only where both harnesses carry them in a column of the same values (MMStar's
six categories, POPE's three splits); ChartQA's human/augmented type and ScienceQA's subject are
not verified to be in VLMEvalKit's TSVs, so those two designs are unstratified (a stratified
design would draw other items there, or fail).

Text is compared after :mod:`~primebench_tasks.suite.content_design` folds case and white
space. The image is not in the key: the rows of one text in a stratum (POPE's question in a
split, over many images) are ranked by their image's mean grey level (then R, G, B), and rank k
keys as the text's key with ``#k``. A binary mean-hash in the key would change under the
re-encoding between the harnesses (VLMEvalKit's TSVs hold JPEG in base64, the hub rows PNG or
the source JPEG) for one image in six or more; the mean levels move by hundredths of a level, so
a rank changes for about 1 % of the rows of a group of 100 photographs at JPEG quality 75
(``research/design_only/image_key.py``). Where one does, in a group the draw splits, the two
harnesses' pools differ and their fingerprints — in each report — say so; a suite pinned to its
pool refuses the other.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from primebench_tasks.data.text_keys import accepted_answers
from primebench_tasks.errors import InputError

LETTERS = "ABCDEFGHIJ"
_OPTIONS = re.compile(r"\s*options\s*:|\n\s*\(?A[.):]\s", re.IGNORECASE)


def _stem(question: Any) -> str:
    """The question before inlined options — an ``Options:`` (lmms-eval's MMStar: ``Options: A:
    ..., B: ...``) or a line that starts with option A (``A. ...``, ``(A) ...``); the whole
    question without either."""
    return _OPTIONS.split(str(question), maxsplit=1)[0]


def _sorted_answers(value: Any) -> list[str]:
    return sorted(str(a).strip() for a in accepted_answers(value))


def _columns_options(row: Mapping[str, Any]) -> list[str]:
    """The option texts of VLMEvalKit columns ``A``.. (up to the first empty one)."""
    out: list[str] = []
    for c in LETTERS:
        v = row.get(c)
        if v is None or (isinstance(v, float) and v != v) or str(v).strip() in ("", "nan"):
            break
        out.append(str(v))
    return out


def _letter(index: Any) -> str:
    k = int(index)
    if not 0 <= k < len(LETTERS):
        raise ValueError(f"answer index {index!r} is not 0–{len(LETTERS) - 1}")
    return LETTERS[k]


@dataclass(frozen=True)
class DesignView:
    """How one benchmark's rows of each harness become canonical rows (module docstring).

    ``lmms_eval_fields`` / ``vlmeval_columns``: what the two read (a row lacking one is refused
    by the caller, naming it); ``fields``: the canonical fields a design of this view may key on
    (``stratum`` among them where both harnesses carry the strata)."""

    name: str
    lmms_eval_fields: tuple[str, ...]
    vlmeval_columns: tuple[str, ...]
    fields: tuple[str, ...]
    lmms_eval_row: Callable[[Mapping[str, Any]], dict[str, Any]]
    vlmeval_rows: Callable[[Mapping[str, Any]], list[dict[str, Any]]]
    strata_column: str | None = None
    """The column both harnesses hold the strata in (the canonical ``stratum``)."""

    @property
    def stratified(self) -> bool:
        return "stratum" in self.fields


def _split_categories(value: Any) -> list[str]:
    """A comma-joined category list as its splits, each once (``adversarial,adversarial`` is one
    item, not two), in the order given."""
    parts = [p.strip() for p in str(value).split(",")]
    return list(dict.fromkeys(p for p in parts if p)) or [str(value)]


def _qa(answers: str) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """Question, the accepted answers of field ``answers`` (sorted), image."""
    return lambda r: {
        "question": r["question"],
        "answers": _sorted_answers(r[answers]),
        "image": r["image"],
    }


def _letter_in_category(r: Mapping[str, Any]) -> dict[str, Any]:
    """MMStar and POPE: the question (MMStar's stem), its one answer, image, category."""
    return {
        "question": _stem(r["question"]),
        "answers": [str(r["answer"]).strip()],
        "image": r["image"],
        "stratum": r["category"],
    }


def _per_split(r: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A VLMEvalKit POPE row: one canonical row per split it is in."""
    one = _letter_in_category(r)
    return [{**one, "stratum": c} for c in _split_categories(r["category"])]


def _scienceqa(options: list[str], answer: str, r: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "question": r["question"],
        "options": options,
        "answers": [answer],
        "hint": r["hint"],
        "image": r["image"],
    }


def _listed(row: Callable[[Mapping[str, Any]], dict[str, Any]]) -> Any:
    return lambda r: [row(r)]


_QA = ("question", "answers", "image")
_IN_CATEGORY = ("question", "answer", "image", "category")
VIEWS: dict[str, DesignView] = {
    v.name: v
    for v in (
        DesignView(
            "chartqa", ("question", "answer", "image"), ("question", "answer", "image"), _QA,
            _qa("answer"), _listed(_qa("answer")),
        ),
        DesignView(
            "textvqa", ("question", "answers", "image"), ("question", "answer", "image"), _QA,
            _qa("answers"), _listed(_qa("answer")),
        ),
        DesignView(
            "mmstar", _IN_CATEGORY, _IN_CATEGORY, (*_QA, "stratum"),
            _letter_in_category, _listed(_letter_in_category), "category",
        ),
        DesignView(
            "pope", _IN_CATEGORY, _IN_CATEGORY, (*_QA, "stratum"),
            _letter_in_category, _per_split, "category",
        ),
        DesignView(
            "scienceqa",
            ("question", "choices", "answer", "hint", "image"),
            ("question", "answer", "hint", "image", "A", "B"),
            ("question", "options", "answers", "hint", "image"),
            lambda r: _scienceqa([str(c) for c in r["choices"]], _letter(r["answer"]), r),
            lambda r: [_scienceqa(_columns_options(r), str(r["answer"]).strip(), r)],
        ),
    )
}  # fmt: skip
"""The views by name (a design document's ``view``)."""


def design_view(name: str, where: str = "design.view") -> DesignView:
    """The view ``name``; an unknown name is refused, naming the known ones."""
    if name not in VIEWS:
        raise InputError(
            f"no design view {name!r} (known: {', '.join(sorted(VIEWS))})", field=where
        )
    return VIEWS[name]


def check_view(
    name: Any,
    key_fields: tuple[str, ...],
    strata_field: str | None,
    image_field: str | None,
    fail: Callable[[str, str], Exception],
) -> None:
    """A design's ``view`` (a card's or a manifest's): a known view's name, and the design keys
    on that view's canonical fields only; ``fail(message, field)`` otherwise."""
    if not isinstance(name, str) or name not in VIEWS:
        raise fail(f"must be a view name ({', '.join(sorted(VIEWS))}), not {name!r}", "view")
    view = VIEWS[name]
    unknown = [f for f in key_fields if f not in view.fields or f in ("image", "stratum")]
    if unknown:
        raise fail(
            f"{unknown[0]!r} is not a text field of view {view.name!r} (it has "
            f"{[f for f in view.fields if f not in ('image', 'stratum')]})",
            "key_fields",
        )
    if strata_field not in ((None, "stratum") if view.stratified else (None,)):
        raise fail(
            f"view {view.name!r} "
            + ("has strata only as 'stratum'" if view.stratified else "carries no strata"),
            "strata_field",
        )
    if image_field not in (None, "image"):
        raise fail(f"view {view.name!r} holds the image as 'image'", "image_field")
