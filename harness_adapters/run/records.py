"""The runner's record file: one JSON line per finished (model, adapter, item), appended and
fsynced as soon as the answer is scored, so a killed run loses nothing that finished.

A line (schema ``primebench.run_record/1``): ``model`` (the variant's name: the base model's name,
or ``<base>+<adapter>``), ``adapter`` (null for the base model), ``benchmark``, ``category``,
``item_id``, ``condition`` (``vl``), ``status`` (``ok`` | ``failed``), ``score`` (in [0, 1]; null
when failed — missing, never 0), ``response`` (the model's text), ``answer`` (the gold answer),
``error``, ``suite`` (manifest version), ``seconds`` (the batch's generation time per item).

Several writers (two runs into one folder, the Ray path's driver): :meth:`RecordFile.append` takes
a file lock (``records.jsonl.lock``, ``filelock``) and, with ``skip_done``, drops ``ok`` lines
whose key another writer has recorded meanwhile — an item is never recorded ``ok`` twice.

Failed items are retried on the next run; their failed line stays (a later ``ok`` line supersedes
it). ``primebench refresh --records FILE`` and ``read_records`` take the file as it is (failed
lines are not appended to the panel).  A SIGKILL during a write can leave a partial last line
without its newline: it is dropped (that item is simply run again) and cut off before the next
append.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from primebench_tasks.data.io import jsonl_records, utf8_text
from primebench_tasks.errors import InputError

SCHEMA = "primebench.run_record/1"
REQUIRED = ("model", "item_id", "benchmark", "status")
"""The fields every line of any record file has (the run's, PRISM's): what :meth:`RecordFile.read`
checks."""
DESIGN_FIELDS = ("stratum", "pool")
"""What a design-only benchmark's record carries beside the item (#81): its stratum and the
draw it came from (``{"strata": {value: [N_h, n_h]}, "fingerprint"}``), as the generated
lmms-eval task logs them — what its placement by the design reads back."""
ANSWER_FACTS = ("parsed", "parse_fallback", "finish_reason", "output_tokens")
"""What a run may record of an answer beside its text (the source's parser, the engine's stop
reason and token count): read by the response check; absent where the engine or source does
not say."""


@dataclass(frozen=True)
class RecordRow:
    """One line of a run's record file (schema :data:`SCHEMA`), its fields declared here once
    (#73): the variant (``model``: the base model's name or ``<base>+<adapter>``; ``adapter``:
    None for the base model), the item (``benchmark``, ``category``, ``item_id``, the gold
    ``answer``), ``condition`` (``vl``), the suite version, ``status`` (``ok`` | ``failed``:
    asked again on resume), the ``response``, its ``score`` in [0, 1] (None when failed —
    missing, never 0), the ``error`` of a failed item, ``seconds`` of generation per item, and
    the :data:`ANSWER_FACTS` the run knows (``facts``). :meth:`to_json` is the line's object
    (the ``schema`` is added by :class:`RecordFile`)."""

    model: str
    adapter: str | None
    benchmark: str
    category: str
    item_id: str
    answer: Any
    condition: str
    suite: str
    status: str
    response: str | None
    score: float | None
    error: str | None
    seconds: float | None
    facts: Mapping[str, Any] = field(default_factory=dict)
    design: Mapping[str, Any] = field(default_factory=dict)
    """:data:`DESIGN_FIELDS` of a design-only benchmark's item (empty for any other)."""

    def __post_init__(self) -> None:
        if self.status not in ("ok", "failed"):
            raise ValueError(f"status {self.status!r} is not 'ok' or 'failed'")
        unknown = sorted(set(self.facts) - set(ANSWER_FACTS))
        if unknown:
            raise ValueError(f"record facts {unknown} are not among {ANSWER_FACTS}")
        if set(self.design) - set(DESIGN_FIELDS):
            raise ValueError(f"record design fields {sorted(self.design)} are not {DESIGN_FIELDS}")

    def to_json(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _OPEN}
        return {**d, **self.facts, **self.design}

    @classmethod
    def from_json(
        cls, d: Mapping[str, Any], file: str = "records", row: int | None = None
    ) -> RecordRow:
        """The row a line holds (its ``schema`` and fields of other writers left out); a
        missing field is an ``InputError`` naming the file, line and field."""
        names = [f.name for f in fields(cls) if f.name not in _OPEN]
        lacking = [n for n in names if n not in d]
        if lacking:
            raise InputError("required field is missing", file=file, row=row, field=lacking[0])
        return cls(
            **{n: d[n] for n in names},
            facts={k: d[k] for k in ANSWER_FACTS if k in d},
            design={k: d[k] for k in DESIGN_FIELDS if k in d},
        )


_OPEN = ("facts", "design")
""":class:`RecordRow`'s fields whose keys a line holds flat, where present."""
RECORD_FIELDS = (
    tuple(f.name for f in fields(RecordRow) if f.name not in _OPEN) + ANSWER_FACTS + DESIGN_FIELDS
)
"""Every field a run's record line may hold (beside ``schema``), in :class:`RecordRow`'s order."""


def records_lock(path: str | Path) -> Any:
    """The lock of the record file at ``path`` (``<path>.lock``): one reentrant instance per
    path in a process (``is_singleton``), so a caller that holds it (the training callback) can
    append."""
    from filelock import FileLock

    return FileLock(str(path) + ".lock", is_singleton=True)


def _is_score(v: Any) -> bool:
    """A score as a run records it: a real number in [0, 1] (not a bool, not NaN), or null
    (an item the scorer gave no score)."""
    return v is None or (
        isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 <= float(v) <= 1.0
    )


def variant_name(model: str, adapter: str | None) -> str:
    return model if adapter is None else f"{model}+{adapter}"


@dataclass
class RecordFile:
    """Append-only JSONL of run records at ``path``; ``key`` names the fields that identify one
    unit of work (one ``ok`` line each), ``schema`` is written into every line."""

    path: Path
    key: tuple[str, ...] = ("model", "benchmark", "item_id")
    schema: str = SCHEMA

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        self._done_keys: set[tuple[str, ...]] = set()
        self._offset = 0  # bytes of the file already folded into _done_keys

    def _recorded_ok(self) -> set[tuple[str, ...]]:
        """Keys recorded ``ok``, reading only what was appended since the last call (the whole
        file again if it shrank)."""
        if not self.path.exists():
            self._done_keys, self._offset = set(), 0
            return self._done_keys
        size = self.path.stat().st_size
        if size < self._offset:
            self._done_keys, self._offset = set(), 0
        with open(self.path, "rb") as fh:
            fh.seek(self._offset)
            data = fh.read()
        complete = data[: data.rfind(b"\n") + 1]
        for _ln, rec in jsonl_records(utf8_text(complete, str(self.path)), str(self.path)):
            if rec.get("status") == "ok":
                self._done_keys.add(tuple(str(rec.get(f)) for f in self.key))
        self._offset += len(complete)
        return self._done_keys

    def rows(self) -> list[RecordRow]:
        """The complete lines as typed rows (a run's record file: schema :data:`SCHEMA`), in
        file order; a line lacking a field of :class:`RecordRow` is an ``InputError`` naming the
        file, line and field."""
        out = []
        for ln, rec in enumerate(self.read(), start=1):
            try:
                out.append(RecordRow.from_json(rec, str(self.path), ln))
            except ValueError as exc:
                if isinstance(exc, InputError):
                    raise
                raise InputError(str(exc), file=str(self.path), row=ln) from None
        return out

    def read(self) -> list[dict[str, Any]]:
        """All complete lines, in file order. A line that is not valid JSON, or lacks a required
        field, raises ``InputError`` naming the file and line — except a partial last line left
        by a kill, which is ignored."""
        if not self.path.exists():
            return []
        data = self.path.read_bytes()
        complete = data if data.endswith(b"\n") or not data else data[: data.rfind(b"\n") + 1]
        out = []
        for ln, rec in jsonl_records(utf8_text(complete, str(self.path)), str(self.path)):
            for f in dict.fromkeys((*REQUIRED, *self.key)):
                if f not in rec:
                    raise InputError(
                        "required field is missing", file=str(self.path), row=ln, field=f
                    )
            if rec["status"] not in ("ok", "failed"):
                raise InputError(
                    f"status is {rec['status']!r}, not 'ok' or 'failed'",
                    file=str(self.path),
                    row=ln,
                    field="status",
                )
            if rec["status"] == "ok" and "score" in rec and not _is_score(rec["score"]):
                raise InputError(
                    f"score is {rec['score']!r}: an ok line's score is a number in [0, 1]",
                    file=str(self.path),
                    row=ln,
                    field="score",
                )
            out.append(rec)
        return out

    def finished(self) -> dict[tuple[str, ...], dict[str, Any]]:
        """key values (by default (variant name, benchmark, item id): benchmarks of one suite
        may share item ids) → the ``ok`` record. Two ``ok`` lines
        for one key mean an item was computed twice: an error."""
        done: dict[tuple[str, ...], dict[str, Any]] = {}
        for ln, rec in enumerate(self.read(), start=1):
            if rec["status"] != "ok":
                continue
            key = tuple(str(rec[f]) for f in self.key)
            if key in done:
                raise InputError(
                    f"{dict(zip(self.key, key, strict=True))} was recorded twice",
                    file=str(self.path),
                    row=ln,
                    field="item_id",
                )
            done[key] = rec
        return done

    def unscored(
        self, models: Iterable[str], since: int = 0
    ) -> dict[tuple[str, str], list[dict[str, Any]]]:
        """(model, benchmark) → the last ``failed`` line, from line ``since`` on, of each item
        of ``models`` that has no ``ok`` line: what a run could not score, and why."""
        lines = self.read()
        ok = {
            (str(r["model"]), str(r["benchmark"]), str(r["item_id"]))
            for r in lines
            if r["status"] == "ok"
        }
        wanted = set(models)
        out: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        for r in lines[since:]:
            key = (str(r["model"]), str(r["benchmark"]), str(r["item_id"]))
            if r["status"] != "ok" and key[0] in wanted and key not in ok:
                out.setdefault((key[0], key[1]), {})[key[2]] = r
        return {k: list(v.values()) for k, v in sorted(out.items())}

    def append(self, records: Iterable[RecordRow | dict[str, Any]], skip_done: bool = True) -> int:
        """Append ``records`` (one line each) under the file lock and fsync; with ``skip_done``,
        ``ok`` records whose key is already recorded ``ok`` are left out. Returns how many lines
        were written."""
        rows = [r.to_json() if isinstance(r, RecordRow) else r for r in records]
        if not rows:
            return 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.is_symlink():
            raise InputError(
                "the record file is a symbolic link; a run appends only to its own file "
                "(copy the file into the run folder, or give another --out)",
                file=str(self.path),
            )
        with records_lock(self.path):
            if skip_done:
                done = self._recorded_ok()
                rows = [
                    r
                    for r in rows
                    if r.get("status") != "ok" or tuple(str(r[f]) for f in self.key) not in done
                ]
            return self._append_locked(rows)

    def _append_locked(self, rows: list[dict[str, Any]]) -> int:
        lines = [
            json.dumps(
                {"schema": self.schema, **r}, ensure_ascii=False, sort_keys=True, allow_nan=False
            )
            + "\n"
            for r in rows
        ]
        if not lines:
            return 0
        with open(self.path, "a+b") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size:
                fh.seek(size - 1)
                if fh.read(1) != b"\n":  # a kill cut the last line: drop it
                    fh.seek(0)
                    fh.truncate(fh.read().rfind(b"\n") + 1)
            fh.write("".join(lines).encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        return len(lines)


def failure_digest(failed: Sequence[Mapping[str, Any]], top: int = 2) -> str:
    """ "N items failed: k× 'error', ..." — the ``top`` most frequent errors of ``failed`` record
    lines (each cut to 160 characters), for a message a user can act on."""
    from collections import Counter

    errors = Counter(str(r.get("error") or "no error recorded")[:160] for r in failed)
    shown = "; ".join(f"{n}× {e!r}" for e, n in errors.most_common(top))
    more = len(errors) - min(top, len(errors))
    return f"{len(failed)} item{'s' if len(failed) != 1 else ''} failed: {shown}" + (
        f" (and {more} other error{'s' if more != 1 else ''})" if more else ""
    )
