"""Run model variants (a base model and its LoRA adapters) over a suite's documents, scoring each
answer with the suite's scorer and appending it to the record file as soon as its batch is done.

Resume: items whose ``ok`` record exists are never sent again; failed items (image that does not
decode, request error) are recorded as ``failed`` (score null: missing, not 0) and retried on the
next run.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness_adapters.run.engine import Backend, checked_answers, generation_facts
from harness_adapters.run.messages import ItemInputError, Messages, chat_messages
from harness_adapters.run.records import RecordFile, RecordRow, variant_name
from harness_adapters.suites.documents import SuiteDoc
from primebench_tasks.progress import progress_bar


@dataclass
class RunSummary:
    """Per variant: items done before this run (``skipped``), newly scored, failed now."""

    skipped: dict[str, int] = field(default_factory=dict)
    scored: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)

    def lines(self) -> list[str]:
        return [
            f"{v}: {self.scored[v]} scored, {self.skipped[v]} already done, {self.failed[v]} failed"
            for v in self.scored
        ]


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run_variants(
    backend: Backend,
    docs: Sequence[SuiteDoc],
    model: str,
    adapters: Sequence[str | None],
    records: RecordFile,
    suite_version: str,
    batch_size: int = 32,
    progress: Callable[[str], None] | None = _stderr,
    bar: bool = True,
) -> RunSummary:
    """Evaluate every variant (``None`` = the base model) on ``docs``; see the module docstring.
    ``model`` names the base model in the records.

    Batch-major: each batch of documents has its requests built once (images decoded and
    encoded once, not once per variant) and is then sent for every variant that still needs it,
    each variant's answers recorded as soon as they are scored. ``bar``: show the progress bar
    (a caller with its own, such as the adaptive run's over its rounds, passes False)."""
    say = progress or (lambda _m: None)
    summary = RunSummary()
    done = records.finished()
    names = {a: variant_name(model, a) for a in adapters}
    pending = {
        a: {
            (d.benchmark, d.item_id) for d in docs if (names[a], d.benchmark, d.item_id) not in done
        }
        for a in adapters
    }
    for a in adapters:
        name = names[a]
        summary.skipped[name] = len(docs) - len(pending[a])
        summary.scored[name] = summary.failed[name] = 0
        say(
            f"{name}: all {len(docs)} items already done"
            if not pending[a]
            else f"{name}: {len(pending[a])} of {len(docs)} items to run"
        )
    todo = [d for d in docs if any((d.benchmark, d.item_id) in pending[a] for a in adapters)]
    shown = progress_bar(
        sum(len(pending[a]) for a in adapters), "run", unit="answer", disable=not bar or None
    )
    for start in range(0, len(todo), batch_size):
        batch = todo[start : start + batch_size]
        built: list[tuple[SuiteDoc, Messages | None, str | None]] = []
        for d in batch:
            try:
                built.append((d, chat_messages(d), None))
            except ItemInputError as exc:
                built.append((d, None, str(exc)))
        for adapter in adapters:
            name = names[adapter]
            mine = [t for t in built if (t[0].benchmark, t[0].item_id) in pending[adapter]]
            if not mine:
                continue
            base: dict[str, Any] = {
                "model": name,
                "adapter": adapter,
                "condition": "vl",
                "suite": suite_version,
            }
            rows: list[RecordRow] = [
                failed_record(base, d, err) for d, _m, err in mine if err is not None
            ]
            sendable = [(d, m) for d, m, err in mine if err is None and m is not None]
            if sendable:
                t0 = time.perf_counter()
                outs = checked_answers(
                    backend.generate([m for _, m in sendable], adapter),
                    len(sendable),
                    getattr(backend, "kind", type(backend).__name__),
                )
                per_item = (time.perf_counter() - t0) / len(sendable)
                for (d, _), out in zip(sendable, outs, strict=True):
                    if isinstance(out, Exception):
                        rows.append(failed_record(base, d, f"{type(out).__name__}: {out}"))
                        continue
                    rows.append(
                        RecordRow(
                            **base,
                            **item_fields(d),
                            status="ok",
                            response=str(out),
                            score=d.score(out),
                            error=None,
                            seconds=round(per_item, 4),
                            facts={**d.parse(str(out)), **generation_facts(out)},
                        )
                    )
            records.append(rows)
            n_ok = sum(r.status == "ok" for r in rows)
            summary.scored[name] += n_ok
            summary.failed[name] += len(rows) - n_ok
            shown.update(len(rows))
    shown.close()
    for adapter in adapters:
        name = names[adapter]
        say(
            f"{name}: {summary.skipped[name] + summary.scored[name]}/{len(docs)} done"
            + (f", {summary.failed[name]} failed" if summary.failed[name] else "")
        )
    return summary


def item_fields(d: SuiteDoc) -> dict[str, Any]:
    """The record fields that say which item a line is (benchmark, category, item id, answer;
    a design-only benchmark's item also its stratum and draw)."""
    return {
        "benchmark": d.benchmark,
        "category": d.category,
        "item_id": d.item_id,
        "answer": d.answer(),
        "design": dict(d.design or {}),
    }


def failed_record(base: Mapping[str, Any], d: SuiteDoc, error: str) -> RecordRow:
    """A failed item's record line (``base``: the variant's fields — model, adapter, condition,
    suite; asked again on resume)."""
    return RecordRow(
        **base,
        **item_fields(d),
        status="failed",
        response=None,
        score=None,
        error=error,
        seconds=None,
    )
