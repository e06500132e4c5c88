"""Run model variants (a base model and its LoRA adapters) over a suite's documents, scoring each
answer with the suite's scorer and appending it to the record file as soon as its batch is done.

Resume: items whose ``ok`` record exists are never sent again; failed items (image that does not
decode, request error) are recorded as ``failed`` (score null: missing, not 0) and retried on the
next run.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness_adapters.lmms_eval.task_functions import exact_answer_score
from harness_adapters.suite_docs import SuiteDoc
from harness_adapters.vllm.records import RecordFile, variant_name
from harness_adapters.vllm.requests import ItemInputError, Messages, chat_messages


class Backend(Protocol):
    kind: str

    def generate(self, messages: Sequence[Messages], adapter: str | None,
                 max_new_tokens: int | None = None, regex: str | None = None
                 ) -> list[str | Exception]: ...


@dataclass
class RunSummary:
    """Per variant: items done before this run (``skipped``), newly scored, failed now."""

    skipped: dict[str, int] = field(default_factory=dict)
    scored: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)

    def lines(self) -> list[str]:
        return [f"{v}: {self.scored[v]} scored, {self.skipped[v]} already done, "
                f"{self.failed[v]} failed" for v in self.scored]


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run_variants(backend: Backend, docs: Sequence[SuiteDoc], model: str,
                 adapters: Sequence[str | None], records: RecordFile, suite_version: str,
                 batch_size: int = 32, progress: Callable[[str], None] | None = _stderr
                 ) -> RunSummary:
    """Evaluate every variant (``None`` = the base model) on ``docs``; see the module docstring.
    ``model`` names the base model in the records."""
    say = progress or (lambda _m: None)
    summary = RunSummary()
    done = records.finished()
    for adapter in adapters:
        name = variant_name(model, adapter)
        pending = [d for d in docs if (name, d.benchmark, d.item_id) not in done]
        summary.skipped[name] = len(docs) - len(pending)
        summary.scored[name] = summary.failed[name] = 0
        if not pending:
            say(f"{name}: all {len(docs)} items already done")
            continue
        say(f"{name}: {len(pending)} of {len(docs)} items to run")
        for start in range(0, len(pending), batch_size):
            batch = pending[start:start + batch_size]
            base = {"model": name, "adapter": adapter, "condition": "vl",
                    "suite": suite_version}
            rows: list[dict[str, Any]] = []
            sendable: list[tuple[SuiteDoc, Messages]] = []
            for d in batch:
                try:
                    sendable.append((d, chat_messages(d)))
                except ItemInputError as exc:
                    rows.append(_failed(base, d, str(exc)))
            if sendable:
                t0 = time.perf_counter()
                outs = backend.generate([m for _, m in sendable], adapter)
                per_item = (time.perf_counter() - t0) / len(sendable)
                for (d, _), out in zip(sendable, outs, strict=True):
                    if isinstance(out, Exception):
                        rows.append(_failed(base, d, f"{type(out).__name__}: {out}"))
                        continue
                    rows.append({**base, **_ids(d), "status": "ok", "response": out,
                                 "score": exact_answer_score(d.doc, out), "error": None,
                                 "seconds": round(per_item, 4)})
            records.append(rows)
            n_ok = sum(r["status"] == "ok" for r in rows)
            summary.scored[name] += n_ok
            summary.failed[name] += len(rows) - n_ok
            say(f"{name}: {summary.skipped[name] + summary.scored[name]}/{len(docs)} done"
                + (f", {summary.failed[name]} failed" if summary.failed[name] else ""))
    return summary


def _ids(d: SuiteDoc) -> dict[str, Any]:
    return {"benchmark": d.benchmark, "category": d.category, "item_id": d.item_id,
            "answer": str(d.doc["answer"])}


def _failed(base: dict[str, Any], d: SuiteDoc, error: str) -> dict[str, Any]:
    return {**base, **_ids(d), "status": "failed", "response": None, "score": None,
            "error": error, "seconds": None}
