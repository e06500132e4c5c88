"""Per-(item, axis) artifacts, cached on disk with the builder's id and a review status.

``root/<axis>/<benchmark prefix>-<hash>/<item id prefix>-<hash>.json`` (written atomically;
collision-free names, the exact ids inside) holds ``axis``, ``benchmark``,
``item_id``, ``builder`` (its id), ``generator`` (the judge id, or null), ``status``, ``payload``
and ``review_status`` (``unreviewed`` until a person sets ``verified`` or ``rejected``).

Status: ``built``; ``rejected`` (malformed or refused reply, no image, uncountable — final: the
item is dropped from the axis for every model alike); ``unbuilt`` (it needs a generator judge and
none was given) and ``failed`` (the judge call failed after its retries) — both retried by the
next build. An artifact with status ``built`` or ``rejected`` under the same builder id is never
rebuilt, whichever judge is given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from primebench_tasks.data.io import atomic_write_text, canonical_json, content_hash
from primebench_tasks.errors import ConfigError
from primebench_tasks.prism.builders import ArtifactRejected, Builder
from primebench_tasks.prism.judging import Judge, JudgeRequest

FINAL = ("built", "rejected")
REVIEW_STATES = ("unreviewed", "verified", "rejected")


def usable(art: dict[str, Any] | None) -> bool:
    """Built, and not rejected by a human reviewer (``review_status``)."""
    if not art:
        return False
    return art["status"] == "built" and art.get("review_status") != "rejected"


def _safe(name: str) -> str:
    """A readable, file-system-safe prefix of ``name`` (never ``.``/``..``, at most 40 chars)."""
    out = re.sub(r"[^A-Za-z0-9_-]+", "_", name)[:40].strip("_")
    return out or "_"


class ArtifactStore:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def path(self, axis: str, benchmark: str, item_id: str) -> Path:
        """A collision-free file name: a readable prefix (at most 40 safe characters) plus a
        hash of the exact (benchmark, item id); ``..``, ``/``, non-ASCII and 300-character ids
        are all fine. The readable ids are stored inside the file."""
        b = _safe(benchmark) + "-" + content_hash(benchmark, 8)
        i = _safe(str(item_id)) + "-" + content_hash(f"{benchmark}\0{item_id}", 16)
        return self.root / _safe(axis) / b / f"{i}.json"

    def load(self, axis: str, benchmark: str, item_id: str) -> dict[str, Any] | None:
        p = self.path(axis, benchmark, item_id)
        if not p.exists():
            return None
        art = json.loads(p.read_text("utf-8"))
        if (art.get("benchmark"), art.get("item_id")) != (benchmark, str(item_id)):
            raise ConfigError(
                f"{p} holds the artifact of {art.get('benchmark')!r}/"
                f"{art.get('item_id')!r}, not {benchmark!r}/{item_id!r}"
            )
        return art

    def build_axis(
        self,
        builder: Builder,
        items: Sequence[tuple[str, str, dict[str, Any]]],
        judge: Judge | None,
        progress: Callable[[str], None] | None = None,
    ) -> dict[tuple[str, str], dict[str, Any]]:
        """The artifact of every ``(benchmark, item_id, item)`` for ``builder``'s axis: stored
        ones as they are, missing ones built — the generator calls of one axis in one batch."""
        out: dict[tuple[str, str], dict[str, Any]] = {}
        todo: list[tuple[str, str, dict[str, Any], JudgeRequest | None]] = []
        for b, i, item in items:
            old = self.load(builder.axis, b, i)
            if old and old.get("builder") == builder.id and old.get("status") in FINAL:
                out[(b, i)] = old
                continue
            try:
                todo.append((b, i, item, builder.request(b, i, item)))
            except ArtifactRejected as exc:
                out[(b, i)] = self._write(builder, b, i, None, "rejected", {"reason": str(exc)})
        calls = [t for t in todo if t[3] is not None]
        replies: dict[tuple[str, str], str | None] = {}
        if calls and judge is not None:
            if progress:
                progress(f"{builder.axis}: {len(calls)} generator call(s) to {judge.id}")
            got = judge.complete_many([t[3] for t in calls])  # type: ignore[misc]
            replies = {(t[0], t[1]): r for t, r in zip(calls, got, strict=True)}
        gen_id = None if judge is None else judge.id
        for b, i, item, req in todo:
            if req is not None and judge is None:
                out[(b, i)] = self._write(
                    builder,
                    b,
                    i,
                    None,
                    "unbuilt",
                    {"reason": f"{builder.axis}: needs a generator judge"},
                )
                continue
            reply = replies.get((b, i))
            if req is not None and reply is None:
                out[(b, i)] = self._write(
                    builder, b, i, gen_id, "failed", {"reason": "the generator call failed"}
                )
                continue
            try:
                payload, status = builder.make(b, i, item, reply), "built"
            except ArtifactRejected as exc:
                payload, status = {"reason": str(exc), "reply": reply}, "rejected"
            out[(b, i)] = self._write(builder, b, i, gen_id if req else None, status, payload)
        return out

    def _write(
        self,
        builder: Builder,
        benchmark: str,
        item_id: str,
        generator: str | None,
        status: str,
        payload: dict[str, Any],
    ) -> dict[str, Any]:
        art = {
            "axis": builder.axis,
            "benchmark": benchmark,
            "item_id": item_id,
            "builder": builder.id,
            "generator": generator,
            "status": status,
            "payload": payload,
            "review_status": "unreviewed",
        }
        atomic_write_text(self.path(builder.axis, benchmark, item_id), canonical_json(art))
        return art
