"""The documents of a suite — one per selected item, in manifest order — with the prompt, the
generation settings and the scorer that every runner shares.

The lmms-eval tasks (``harness_adapters.harnesses.lmms_eval.taskgen``) write these rows to their JSONL data
files and call the same ``doc_to_text`` / ``exact_answer_score``; the vLLM runner builds its chat
requests from the same rows (images first, then the text — lmms-eval's ``_build_user_turn``), so a
model scores the same on a suite whichever way it is run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from harness_adapters.suites.prompt import (
    PROMPT_KWARGS,
    doc_options,
    doc_to_text,
    exact_answer_score,
    parse_answer,
)
from primebench_tasks.data.io import canonical_json, content_hash
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError
from primebench_tasks.suite.manifest import SuiteManifest


class DocSource(Protocol):
    """How a runner asks and scores the documents of one benchmark: the prompt text, the images
    (file paths or PIL images, in order) and the item's score in [0, 1] for a response (None:
    no score — missing, never 0)."""

    def text(self, doc: dict[str, Any]) -> str: ...

    def visuals(self, doc: dict[str, Any]) -> list[Any]: ...

    def score(self, doc: dict[str, Any], response: str) -> float | None: ...

    def answer(self, doc: dict[str, Any]) -> str: ...


class SharedSource:
    """The suite's shared prompt and scorer (the generated local lmms-eval tasks' own): the
    question with lettered options and :data:`PROMPT_KWARGS`, the one image of ``doc["image"]``,
    :func:`exact_answer_score`."""

    def text(self, doc: dict[str, Any]) -> str:
        return doc_to_text(doc, PROMPT_KWARGS)

    def visuals(self, doc: dict[str, Any]) -> list[Any]:
        return [doc["image"]] if doc.get("image") else []

    def score(self, doc: dict[str, Any], response: str) -> float | None:
        return exact_answer_score(doc, response)

    def answer(self, doc: dict[str, Any]) -> str:
        return str(doc["answer"])

    def parse(self, doc: dict[str, Any], response: str) -> tuple[str, bool]:
        """(the answer the scorer read, whether its parser fell back to a guess)."""
        return parse_answer(response, doc_options(doc))


SHARED = SharedSource()


@dataclass(frozen=True)
class SuiteDoc:
    """One suite item: stable ids plus the document, and the ``source`` that asks and scores it.
    With the shared source the document is ``id``, ``question``, ``options`` (list), ``answer``,
    ``image`` (absolute path or None); an upstream source's document is the upstream dataset's
    row (:mod:`harness_adapters.lmms_eval_upstream.documents`)."""

    item_id: str
    benchmark: str
    category: str
    doc: dict[str, Any]
    source: DocSource = field(default=SHARED, compare=False, repr=False)
    design: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    """A design-only benchmark's item (#81): its ``stratum`` and the ``pool`` it was drawn from,
    recorded with its answer; None for any other item."""

    def text(self) -> str:
        return self.source.text(self.doc)

    def visuals(self) -> list[Any]:
        return self.source.visuals(self.doc)

    def score(self, response: str) -> float | None:
        return self.source.score(self.doc, response)

    def answer(self) -> str:
        return self.source.answer(self.doc)

    def parse(self, response: str) -> dict[str, Any]:
        """``parsed`` and ``parse_fallback`` of ``response`` where the source's scorer says how
        it read it (the shared scorer does; an upstream task's is lmms-eval's code: {})."""
        parse = getattr(self.source, "parse", None)
        if parse is None:
            return {}
        parsed, fell_back = parse(self.doc, response)
        return {"parsed": parsed, "parse_fallback": fell_back}


def documents_digest(docs: Sequence[SuiteDoc]) -> dict[str, str]:
    """Per benchmark, a SHA-256 prefix (16 hex digits) of what its documents ask: every item's
    id, prompt text and gold answer, in item-id order. A run's frozen spec keeps it, so a run
    resumed from another copy of a dataset that asks differently is refused, while the same
    content at another path is not. Images are not hashed: that would decode every pool image
    at every start (the ids and prompts change with a dataset's revision)."""
    by_b: dict[str, list[tuple[str, str, str]]] = {}
    for d in docs:
        by_b.setdefault(d.benchmark, []).append((d.item_id, d.text(), d.answer()))
    return {b: content_hash(canonical_json(sorted(rows))) for b, rows in sorted(by_b.items())}


def benchmark_rows(panel: Panel, benchmark: str) -> list[dict[str, Any]]:
    """Every item of ``benchmark`` as a document (image paths absolute); refuses a benchmark
    whose items carry no question/answer in the panel."""
    root = getattr(panel, "root", None)
    rows = []
    for r in panel.items_of(benchmark).itertuples(index=False):
        if r.question is None or r.answer is None:
            raise InputError(
                f"benchmark {benchmark!r} has no item text/answer in panel "
                f"{panel.name!r}, so its prompts cannot be built",
                row=str(r.item_id),
                field="question/answer",
            )
        image = None
        if r.image_ref:
            p = Path(r.image_ref)
            image = str(p if p.is_absolute() or root is None else (Path(root) / p).resolve())
        rows.append(
            {
                "id": str(r.item_id),
                "question": r.question,
                "options": json.loads(r.options) if r.options else [],
                "answer": r.answer,
                "image": image,
            }
        )
    return rows


def content_in_panel(panel: Panel, benchmark: str, upstream_task: str | None) -> bool:
    """Whether the panel holds what it takes to ask ``benchmark``'s items: the text and answer
    of every item, and their images — a panel with text but no image (VLMEvalKit's records)
    is asked from the upstream dataset when there is a verified upstream task."""
    from harness_adapters.lmms_eval_upstream.tasks import VERIFIED_UPSTREAM

    items = panel.items_of(benchmark)
    if not len(items) or not bool(items["question"].notna().all()):
        return False
    return bool(items["image_ref"].notna().any()) or (upstream_task or "") not in VERIFIED_UPSTREAM


def pool_documents(
    panel: Panel,
    benchmark: str,
    category: str,
    task: str | None = None,
    data: Mapping[str, str | Path] | None = None,
) -> list[SuiteDoc]:
    """Every item of ``benchmark`` in ``panel`` as a document, in the panel's item order (its
    score matrix's columns): an adaptive test's item pool. From the panel when it holds the
    items' content, else from the upstream lmms-eval ``task``'s dataset (``data``, as
    :func:`suite_docs`), which must hold every one of them (a missing one is refused, named)."""
    if content_in_panel(panel, benchmark, task):
        return [SuiteDoc(r["id"], benchmark, category, r) for r in benchmark_rows(panel, benchmark)]
    from harness_adapters.lmms_eval_upstream.documents import upstream_documents
    from harness_adapters.lmms_eval_upstream.tasks import VERIFIED_UPSTREAM

    ids = [str(i) for i in panel.item_ids(benchmark)]
    up = VERIFIED_UPSTREAM.get(task or "")
    text_keys = None
    if up is not None and up.text_key is not None:  # every pool item keyed by its own text
        from primebench_tasks.data.text_keys import panel_text_keys

        keys, ambiguous = panel_text_keys(panel.items_of(benchmark), up.text_key)
        if ambiguous:
            raise InputError(
                f"panel {panel.name}: {len(ambiguous)} items of {benchmark} share their text with "
                f"another (e.g. {ambiguous[:5]}): an adaptive pool read from lmms-eval's rows "
                "needs items told apart by text (the flagship's *_text panels hold only those)",
                field="item_id",
            )
        text_keys = {"rule": up.text_key, "keys": keys}
    found = upstream_documents(benchmark, ids, task, panel.name, data, text_keys=text_keys)
    return [
        SuiteDoc(i, benchmark, category, row, source)
        for i, (row, source) in zip(ids, found, strict=True)
    ]


def suite_docs(
    manifest: SuiteManifest,
    panel: Panel | Mapping[str, Panel],
    data: Mapping[str, str | Path] | None = None,
) -> list[SuiteDoc]:
    """The manifest's items as documents, in manifest order (category, benchmark, item); a
    benchmark the manifest marks ``no_lmms_eval_task`` is not asked (its items are not
    documents here).

    ``panel``: one panel, or benchmark → panel (a multi-source suite's source panels). A
    benchmark whose items carry their text and images in the panel is asked with the shared
    prompt and scorer; one whose items live in an upstream lmms-eval dataset (MathVista, MMMU,
    BLINK: the panel holds only ids, or text without images) is read from that dataset and asked and scored by the upstream task's
    own code, exactly as ``lmms-eval --tasks <suite>`` does
    (:func:`harness_adapters.lmms_eval_upstream.documents.upstream_documents`; ``data``: upstream
    lmms-eval task → a local ``datasets.save_to_disk`` copy, else the hub)."""
    out = []
    for cat, by_b in manifest.item_ids().items():
        for b, ids in by_b.items():
            p = panel if isinstance(panel, Panel) else panel.get(b)
            if p is None or b not in p.benchmark_names:
                where = p.name if p is not None else "the reference panels"
                raise InputError(
                    f"manifest benchmark {b!r} is not in {where!r}", field="categories"
                )
            entry = manifest.entry(b)
            if entry.no_lmms_eval_task:
                continue  # asked through lmms-eval's task code, which has none for it
            task = entry.lmms_eval_task
            if not content_in_panel(p, b, task):
                from harness_adapters.lmms_eval_upstream.documents import upstream_documents

                found = upstream_documents(
                    b,
                    [str(i) for i in ids],
                    task,
                    p.name,
                    data,
                    text_keys=(entry.upstream or {}).get("text_keys"),
                    score_range=entry.score_range,
                )
                out += [
                    SuiteDoc(str(i), b, cat, row, source)
                    for i, (row, source) in zip(ids, found, strict=True)
                ]
                continue
            rows = {r["id"]: r for r in benchmark_rows(p, b)}
            for i in ids:
                if str(i) not in rows:
                    raise InputError(
                        f"manifest item {i!r} of {b!r} is not in panel {p.name!r}",
                        row=str(i),
                        field="item_ids",
                    )
                out.append(SuiteDoc(str(i), b, cat, rows[str(i)]))
    return out


def design_docs(
    manifest: SuiteManifest, data: Mapping[str, str | Path] | None = None
) -> tuple[list[SuiteDoc], dict[str, str]]:
    """The suite's design-only benchmarks (#81) drawn on the user's copy of each dataset
    (``data``: upstream lmms-eval task → a ``save_to_disk`` folder, ``--dataset TASK=DIR``; else
    the hub) by the same draw as the generated lmms-eval task
    (:func:`~harness_adapters.lmms_eval_upstream.documents.design_documents`): the drawn items
    in draw order, each carrying its stratum and draw (:attr:`SuiteDoc.design`). A benchmark
    whose dataset cannot be read (or with no upstream task, or lmms-eval's task code not
    installed) is not asked: returned as benchmark → why. A pinned pool that differs from the
    dataset is an error (never a silent other draw)."""
    docs: list[SuiteDoc] = []
    unread: dict[str, str] = {}
    for e in manifest.design_only:
        if not e.upstream:
            unread[e.name] = "design-only with no upstream lmms-eval task to read its items from"
            continue
        try:
            from harness_adapters.lmms_eval_upstream.documents import design_documents

            draw = design_documents(e.name, e.design.as_document(), e.upstream, e.score_range, data)
        except (ImportError, InputError, OSError, ValueError) as exc:
            if getattr(exc, "field", None) == "design.pool":
                raise  # the dataset is not the pool the suite pins: an error, not a gap
            task = str(e.upstream.get("task"))
            unread[e.name] = (
                f"design-only: its dataset could not be read ({str(exc).splitlines()[0]}); "
                f"give a local copy with --dataset {task}=DIR"
            )
            continue
        docs += [
            SuiteDoc(key, e.name, e.category, row, draw.source, {"stratum": h, "pool": draw.pool})
            for key, h, row in draw.rows
        ]
    return docs, unread
