"""The documents of a suite — one per selected item, in manifest order — with the prompt, the
generation settings and the scorer that every runner shares.

The lmms-eval tasks (``harness_adapters.lmms_eval.taskgen``) write these rows to their JSONL data
files and call the same ``doc_to_text`` / ``exact_answer_score``; the vLLM runner builds its chat
requests from the same rows (images first, then the text — lmms-eval's ``_build_user_turn``), so a
model scores the same on a suite whichever way it is run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError
from primebench_tasks.pipeline.manifest import manifest_items

PROMPT_KWARGS: dict[str, str] = {
    "mc_prompt": "Answer the question with the option's letter from the given choices directly.",
    "short_answer_prompt": "Answer the question with a number directly.",
}
"""``lmms_eval_specific_kwargs.default`` of every generated task (MATH-Vision's prompts)."""

GENERATION: dict[str, Any] = {"max_new_tokens": 64, "temperature": 0, "do_sample": False}
"""Greedy decoding, as in the generated tasks' ``generation_kwargs``."""


@dataclass(frozen=True)
class SuiteDoc:
    """One suite item: stable ids plus the document (``id``, ``question``, ``options`` (list),
    ``answer``, ``image``: absolute path or None)."""

    item_id: str
    benchmark: str
    category: str
    doc: dict[str, Any]


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


def suite_docs(manifest: dict[str, Any], panel: Panel) -> list[SuiteDoc]:
    """The manifest's items as documents, in manifest order (category, benchmark, item)."""
    out = []
    for cat, by_b in manifest_items(manifest).items():
        for b, ids in by_b.items():
            if b not in panel.benchmark_names:
                raise InputError(
                    f"manifest benchmark {b!r} is not in panel {panel.name!r}", field="categories"
                )
            rows = {r["id"]: r for r in benchmark_rows(panel, b)}
            for i in ids:
                if str(i) not in rows:
                    raise InputError(
                        f"manifest item {i!r} of {b!r} is not in panel {panel.name!r}",
                        row=str(i),
                        field="item_ids",
                    )
                out.append(SuiteDoc(str(i), b, cat, rows[str(i)]))
    return out
