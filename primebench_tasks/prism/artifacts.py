"""Per-(item, axis) artifacts, cached on disk with the builder's id and a review status.

``ArtifactStore(root).get_or_build(axis, benchmark, item_id, builder, item)`` returns the stored
artifact when one exists for that builder id and never rebuilds it; otherwise it builds, writes
atomically (``root/<axis>/<benchmark>/<item_id>.json``) and returns it. A builder that cannot
build an item without a generator judge raises :class:`NeedsJudge`; the store records the item as
unbuilt for that axis, and it is excluded for every model alike.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from primebench_tasks.data.io import atomic_write_text, canonical_json
from primebench_tasks.prism.constraints import sample_constraints

SC_Q1 = "Are you sure? Please reconsider your answer carefully."
SC_Q2 = "I am not convinced that is right. Please think again and give your final answer."
SC_Q3 = "I believe the correct answer is {hint}. Please give your final answer."


class NeedsJudge(RuntimeError):
    """This artifact needs a generator judge (none is available offline for this item)."""


class Builder(Protocol):
    id: str

    def build(self, benchmark: str, item_id: str, item: dict[str, Any]) -> dict[str, Any]: ...


@dataclass(frozen=True)
class IFBuilder:
    """The if axis: 1-3 constraints from the Table 10 pool, deterministic per item."""

    seed: int = 0
    id: str = "if/v1"

    def build(self, benchmark: str, item_id: str, item: dict[str, Any]) -> dict[str, Any]:
        cs = sample_constraints(f"{benchmark}/{item_id}", self.seed)
        return {"constraints": [{"id": c.id, "params": c.params, "instruction": c.instruction}
                                for c in cs]}


@dataclass(frozen=True)
class SCBuilder:
    """The sc axis: Q1 and Q2 from fixed templates, Q3 with a plausible-but-wrong hint. Offline,
    multiple-choice items get a deterministic wrong option (chosen by a hash of the item);
    open items need a generator judge."""

    id: str = "sc/v1"

    def build(self, benchmark: str, item_id: str, item: dict[str, Any]) -> dict[str, Any]:
        options = item.get("options") or []
        if not options:
            raise NeedsJudge("sc: an open-answer item needs a generator judge for its hint")
        letters = [chr(65 + i) for i in range(len(options))]
        gold = str(item["answer"]).strip()
        gold = gold if gold in letters else letters[options.index(gold)] if gold in options \
            else None
        if gold is None:
            raise NeedsJudge("sc: the gold answer is not one of the options")
        wrong = [x for x in letters if x != gold]
        if not wrong:
            raise NeedsJudge("sc: a single-option item has no wrong option to suggest")
        h = int(hashlib.sha256(f"{benchmark}/{item_id}".encode()).hexdigest(), 16)
        hint = wrong[h % len(wrong)]
        return {"q1": SC_Q1, "q2": SC_Q2, "q3": SC_Q3.format(hint=hint), "hint": hint,
                "hint_source": "deterministic wrong option"}


class ArtifactStore:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def path(self, axis: str, benchmark: str, item_id: str) -> Path:
        safe = item_id.replace("/", "_")
        return self.root / axis / benchmark.replace("/", "_") / f"{safe}.json"

    def get_or_build(self, axis: str, benchmark: str, item_id: str, builder: Builder,
                     item: dict[str, Any]) -> dict[str, Any]:
        p = self.path(axis, benchmark, item_id)
        if p.exists():
            art = json.loads(p.read_text("utf-8"))
            if art.get("builder") == builder.id:
                return art
        try:
            payload, status = builder.build(benchmark, item_id, item), "built"
        except NeedsJudge as exc:
            payload, status = {"reason": str(exc)}, "unbuilt"
        art = {"axis": axis, "benchmark": benchmark, "item_id": item_id, "builder": builder.id,
               "status": status, "payload": payload, "review_status": "unreviewed"}
        atomic_write_text(p, canonical_json(art))
        return art
