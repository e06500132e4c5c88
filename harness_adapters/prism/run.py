"""``primebench prism run``: the evaluated models (a base model and its LoRA adapters) on every
PRISM axis, through the vLLM runner's backends.

Per-axis output budgets (App. C): q, if, h, c, vis 512 tokens; mq 1,024; sc 512 per turn;
temperature 0, top-p 1. Single-turn axes send one user turn (the image, then the axis's text).
sc continues q's conversation: turn 0 is the q answer (the same prompt, so the same greedy
answer), then Q1 (mild reconsideration), Q2 (doubt), Q3 (the item's plausible-but-wrong hint); the
dialogue stops at the first flip (by the flip judge, or normalised answer match without one).

Records: ``OUT/prism_records.jsonl`` (schema ``primebench.prism_record/1``), one line per
finished (variant, axis, item): ``responses`` (the model's turns), and for sc ``flip_turn`` (0 =
held all three turns) and ``hint``. Lines are fsynced per batch; a rerun skips what finished and
retries failed lines; an item whose artifact is not built is not run (it is excluded for every
model alike). ``OUT/prism_run_spec.json`` freezes the build, model, budgets and templates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness_adapters.run.engine import Backend
from harness_adapters.run.messages import ItemInputError, Messages, user_turn
from harness_adapters.run.records import RecordFile, variant_name
from harness_adapters.suites.prompt import PROMPT_KWARGS, doc_to_text
from primebench_tasks.errors import ConfigError
from primebench_tasks.prism.artifacts import ArtifactStore, usable
from primebench_tasks.prism.graders import Matchers, same_answers
from primebench_tasks.prism.judging import Judge
from primebench_tasks.prism.prompts import EVALUEE, MQ_HEADER, VIS_TEMPLATE

RECORD_SCHEMA = "primebench.prism_record/1"
RECORD_KEY = ("model", "axis", "benchmark", "item_id")
BUDGETS: dict[str, int] = {
    "q": 512,
    "if": 512,
    "h": 512,
    "mq": 1024,
    "sc": 512,
    "c": 512,
    "vis": 512,
}
SINGLE_TURN = ("q", "if", "h", "mq", "c", "vis")


def records_file(out: Path) -> RecordFile:
    return RecordFile(out / "prism_records.jsonl", RECORD_KEY, RECORD_SCHEMA)


def axis_text(axis: str, doc: dict[str, Any], payload: dict[str, Any] | None) -> str:
    """What the evaluated model reads for ``axis`` (after the image)."""
    q = doc_to_text(doc, PROMPT_KWARGS)
    if axis == "q":
        return q
    assert payload is not None
    if axis == "if":
        return q + "\n" + " ".join(c["instruction"] for c in payload["constraints"])
    if axis == "h":
        return str(payload["question"])
    if axis == "mq":
        qs = [q] + [e["q"] for e in payload["extra"]]
        return MQ_HEADER + "\n" + "\n".join(f"Q{k}: {x}" for k, x in enumerate(qs, start=1))
    if axis == "c":
        return f"{payload['question']} {EVALUEE['c_suffix']}"
    if axis == "vis":
        return VIS_TEMPLATE.format(a=payload["a"], b=payload["b"])
    raise ConfigError(f"no single-turn prompt for axis {axis!r}")


@dataclass
class Unit:
    axis: str
    benchmark: str
    item_id: str
    doc: dict[str, Any]
    payload: dict[str, Any] | None


def _units(index: dict[str, Any], store: ArtifactStore, axis: str) -> list[Unit]:
    out = []
    for it in index["items"]:
        payload = None
        if axis != "q":
            art = store.load(axis, it["benchmark"], it["item_id"])
            if art is None or not usable(art):
                continue
            payload = art["payload"]
        out.append(Unit(axis, it["benchmark"], it["item_id"], it["doc"], payload))
    return out


def _row(
    name: str,
    adapter: str | None,
    u: Unit,
    status: str,
    responses: list[str] | None,
    error: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "model": name,
        "adapter": adapter,
        "axis": u.axis,
        "benchmark": u.benchmark,
        "item_id": u.item_id,
        "status": status,
        "responses": responses,
        "error": error,
        **extra,
    }


def run_prism(
    backend: Backend,
    index: dict[str, Any],
    store: ArtifactStore,
    model: str,
    adapters: Sequence[str | None],
    out: Path,
    matchers: Matchers,
    flip_judge: Judge | None = None,
    budgets: Mapping[str, int] = BUDGETS,
    axes: Sequence[str] = ("q", "if", "h", "mq", "c", "vis", "sc"),
    batch_size: int = 32,
    progress: Callable[[str], None] | None = None,
) -> dict[str, dict[str, int]]:
    """Run every variant on every axis; returns {variant: {axis: items newly done}}."""
    say = progress or (lambda _m: None)
    records = records_file(out)
    summary: dict[str, dict[str, int]] = {}
    for adapter in adapters:
        name = variant_name(model, adapter)
        summary[name] = {}
        for axis in [a for a in axes if a in SINGLE_TURN] + (["sc"] if "sc" in axes else []):
            done = records.finished()
            units = [
                u
                for u in _units(index, store, axis)
                if (name, axis, u.benchmark, u.item_id) not in done
            ]
            summary[name][axis] = 0
            if not units:
                continue
            say(f"{name} {axis}: {len(units)} item(s) to run")
            for start in range(0, len(units), batch_size):
                batch = units[start : start + batch_size]
                if axis == "sc":
                    rows = _sc_batch(
                        backend, batch, name, adapter, done, matchers, flip_judge, budgets["sc"]
                    )
                else:
                    rows = _single_batch(backend, batch, name, adapter, budgets[axis])
                records.append(rows)
                summary[name][axis] += sum(r["status"] == "ok" for r in rows)
            say(f"{name} {axis}: {summary[name][axis]} done")
    return summary


def _single_batch(
    backend: Backend, batch: list[Unit], name: str, adapter: str | None, budget: int
) -> list[dict[str, Any]]:
    rows, sendable = [], []
    for u in batch:
        try:
            sendable.append(
                (u, [user_turn(u.doc.get("image"), axis_text(u.axis, u.doc, u.payload))])
            )
        except ItemInputError as exc:
            rows.append(_row(name, adapter, u, "failed", None, str(exc)))
    outs = backend.generate([m for _, m in sendable], adapter, budget) if sendable else []
    for (u, _), o in zip(sendable, outs, strict=True):
        rows.append(
            _row(name, adapter, u, "failed", None, f"{type(o).__name__}: {o}")
            if isinstance(o, Exception)
            else _row(name, adapter, u, "ok", [o])
        )
    return rows


def _sc_batch(
    backend: Backend,
    batch: list[Unit],
    name: str,
    adapter: str | None,
    done: Mapping[tuple[str, ...], dict[str, Any]],
    m: Matchers,
    flip_judge: Judge | None,
    budget: int,
) -> list[dict[str, Any]]:
    """Three pressure turns over the batch, each dialogue stopping at its first flip."""
    rows: list[dict[str, Any]] = []
    live: list[tuple[Unit, Messages, list[str]]] = []
    for u in batch:
        q = done.get((name, "q", u.benchmark, u.item_id))
        if q is None:
            rows.append(_row(name, adapter, u, "failed", None, "turn 0 (the q answer) is missing"))
            continue
        try:
            msgs = [user_turn(u.doc.get("image"), axis_text("q", u.doc, None))]
        except ItemInputError as exc:
            rows.append(_row(name, adapter, u, "failed", None, str(exc)))
            continue
        first = q["responses"][0]
        live.append((u, msgs + [{"role": "assistant", "content": first}], [first]))
    hint = {id(u): u.payload["hint"] for u, _, _ in live}  # type: ignore[index]
    for turn, key in enumerate(("q1", "q2", "q3"), start=1):
        if not live:
            break
        for u, msgs, _ in live:
            msgs.append({"role": "user", "content": u.payload[key]})  # type: ignore[index]
        outs = backend.generate([msgs for _, msgs, _ in live], adapter, budget)
        ok = []
        for (u, msgs, said), o in zip(live, outs, strict=True):
            if isinstance(o, Exception):
                rows.append(_row(name, adapter, u, "failed", said, f"{type(o).__name__}: {o}"))
                continue
            said.append(o)
            msgs.append({"role": "assistant", "content": o})
            ok.append((u, msgs, said))
        same = same_answers(
            [u.doc for u, _, _ in ok],
            [s[0] for _, _, s in ok],
            [s[-1] for _, _, s in ok],
            flip_judge,
            m,
        )
        live = []
        for (u, msgs, said), s in zip(ok, same, strict=True):
            if s is None:
                rows.append(_row(name, adapter, u, "failed", said, "the flip judge failed"))
            elif not s:
                rows.append(_row(name, adapter, u, "ok", said, flip_turn=turn, hint=hint[id(u)]))
            elif turn == 3:
                rows.append(_row(name, adapter, u, "ok", said, flip_turn=0, hint=hint[id(u)]))
            else:
                live.append((u, msgs, said))
    return rows
