"""The single-turn PRISM axes as harness-neutral rows — what the evaluated model reads, its image,
and what the rule grader needs — shared by the lmms-eval tasks (:mod:`harness_adapters.harnesses.lmms_eval.prism_tasks`) and the
VLMEvalKit datasets (:mod:`harness_adapters.harnesses.vlmeval.prism_tasks`)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from harness_adapters.prism.run import axis_text
from harness_adapters.suites.prompt import exact_answer_score
from primebench_tasks.errors import ConfigError
from primebench_tasks.prism import graders as g
from primebench_tasks.prism.artifacts import ArtifactStore, usable


def build_id(root: str | Path) -> str:
    """A content hash of the build's index (``prism.json``)."""
    return hashlib.sha256((Path(root) / "prism.json").read_bytes()).hexdigest()[:16]


def rule_score(axis: str, grade: dict[str, Any], response: str) -> float | None:
    """The rule grader of ``axis`` (graders module) on one response; None: the item is
    excluded for every model alike (an instruction that cannot be verified)."""
    from harness_adapters.prism.score import MATCHERS

    if axis == "q":
        return exact_answer_score(grade["item"], response)
    if axis == "if":
        return g.grade_if(grade["payload"], response)
    if axis == "h":
        (h,) = g.grade_h([grade["payload"]], [response], None)
        assert h is not None  # the rule grader (no judge) scores every response
        return h
    if axis == "mq":
        out = g.grade_mq([grade["item"]], [grade["payload"]], [response], None, MATCHERS)[0]
        assert out is not None
        return out[0]
    if axis == "c":
        return g.grade_count(grade["payload"]["count"], response)
    if axis == "vis":
        return g.grade_ab(grade["payload"]["gold"], response)
    raise ConfigError(f"axis {axis!r} has no single-turn task")


def axis_rows(index: dict[str, Any], store: ArtifactStore, axis: str) -> list[dict[str, Any]]:
    """One row per usable item of ``axis``: ``key`` (``benchmark/item_id``), ``text`` (exactly
    what the vLLM runner sends), ``image`` (absolute path or None) and ``grade`` (item answer,
    options, question and the artifact's payload)."""
    rows = []
    for it in index["items"]:
        art = None if axis == "q" else store.load(axis, it["benchmark"], it["item_id"])
        if axis != "q" and not usable(art):
            continue
        doc = it["doc"]
        payload = None if art is None else art["payload"]
        rows.append(
            {
                "key": f"{it['benchmark']}/{it['item_id']}",
                "text": axis_text(axis, doc, payload),
                "image": doc.get("image") or None,
                "grade": {
                    "item": {
                        "answer": doc["answer"],
                        "options": doc.get("options") or [],
                        "question": doc["question"],
                    },
                    "payload": payload,
                },
            }
        )
    return rows
