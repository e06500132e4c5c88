"""The draws of a guarded adaptive run, kept beside its records (``draws.json``): per test (model,
benchmark) every item drawn, in order, with the probability it had and the prediction the design
estimate reads — so that a resumed run asks what was drawn and a re-placement reads the design."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from primebench_tasks.adaptive.design import Draw
from primebench_tasks.data.io import (
    atomic_write_text,
    canonical_json,
    content_hash,
    read_json_document,
)
from primebench_tasks.errors import InputError

LEDGER_SCHEMA = "primebench.adaptive_draws/1"
"""The schema of ``draws.json``."""


@dataclass(frozen=True)
class LedgerDraw:
    """One draw of a test: the item's id, the round it was drawn in (0, 1, …) and the
    :class:`~.design.Draw` (its ``item`` the position in the test's pool)."""

    item_id: str
    draw: Draw
    round: int = 0


@dataclass
class DrawLedger:
    """Every test's draws, in order: (model, benchmark) → :class:`LedgerDraw` list, and the
    ability each of its rounds was drawn at (``thetas``, one per round)."""

    tests: dict[tuple[str, str], list[LedgerDraw]] = field(default_factory=dict)
    thetas: dict[tuple[str, str], list[float]] = field(default_factory=dict)

    def of(self, model: str, benchmark: str) -> list[LedgerDraw]:
        return self.tests.get((model, benchmark), [])

    def rounds(
        self, model: str, benchmark: str, index: Mapping[str, int]
    ) -> tuple[list[list[Draw]], list[float]]:
        """The test's draws grouped by round (:meth:`draws`' positions) and each round's
        ability."""
        out: list[list[Draw]] = []
        for d, ld in zip(
            self.draws(model, benchmark, index), self.of(model, benchmark), strict=True
        ):
            while len(out) <= ld.round:
                out.append([])
            out[ld.round].append(d)
        return out, list(self.thetas.get((model, benchmark), []))

    def draws(self, model: str, benchmark: str, index: Mapping[str, int]) -> list[Draw]:
        """The test's draws with ``item`` the position of each item id in ``index`` (the pool
        now); an id the pool lacks is refused (the pool changed under the run)."""
        out = []
        for d in self.of(model, benchmark):
            if d.item_id not in index:
                raise InputError(
                    f"item {d.item_id!r} of {model} on {benchmark} was drawn but is not in the "
                    "benchmark's pool now: the pool changed under this run; start a new one",
                    field="item_id",
                )
            dr = d.draw
            out.append(Draw(index[d.item_id], dr.q, dr.m, dr.rest))
        return out

    def add(
        self,
        model: str,
        benchmark: str,
        ids: Sequence[str],
        draws: Sequence[Draw],
        theta: float,
    ) -> None:
        """One round's draws (their item ids), drawn at ability ``theta``."""
        r = len(self.thetas.setdefault((model, benchmark), []))
        self.thetas[(model, benchmark)].append(float(theta))
        self.tests.setdefault((model, benchmark), []).extend(
            LedgerDraw(i, d, r) for i, d in zip(ids, draws, strict=True)
        )

    def as_dict(self) -> dict:
        return {
            "schema": LEDGER_SCHEMA,
            "tests": [
                {
                    "model": model,
                    "benchmark": b,
                    "thetas": [float(f"{t:.12g}") for t in self.thetas.get((model, b), [])],
                    "draws": [
                        {
                            "item_id": d.item_id,
                            "round": d.round,
                            **dict(zip(("q", "m", "rest"), d.draw.as_list()[1:], strict=True)),
                        }
                        for d in rows
                    ],
                }
                for (model, b), rows in sorted(self.tests.items())
            ],
        }

    def write(self, path: Path) -> None:
        """Written whole, atomically (canonical JSON)."""
        atomic_write_text(path, canonical_json(self.as_dict()))

    @classmethod
    def read(cls, path: Path) -> DrawLedger:
        """The ledger at ``path`` (empty where there is none); every field checked, an error
        naming the file, the test and the field."""
        if not path.exists():
            return cls()
        doc = read_json_document(path, "adaptive draws", LEDGER_SCHEMA)
        tests = doc.get("tests")
        if not isinstance(tests, list):
            raise InputError("not a list", file=str(path), field="tests")
        out = cls()
        for t, test in enumerate(tests):
            row = f"tests[{t}]"
            if not isinstance(test, dict):
                raise InputError("not an object", file=str(path), row=row)
            model, b, draws = test.get("model"), test.get("benchmark"), test.get("draws")
            for name, value in (("model", model), ("benchmark", b)):
                if not isinstance(value, str) or not value:
                    raise InputError("not a non-empty string", file=str(path), row=row, field=name)
            if not isinstance(draws, list):
                raise InputError("not a list", file=str(path), row=row, field="draws")
            thetas = test.get("thetas")
            if not isinstance(thetas, list) or not all(
                isinstance(t, int | float) and not isinstance(t, bool) and np.isfinite(t)
                for t in thetas
            ):
                raise InputError("not a list of numbers", file=str(path), row=row, field="thetas")
            if (model, b) in out.tests:
                raise InputError(
                    f"a second entry for {model} on {b}", file=str(path), row=row, field="model"
                )
            rows: list[LedgerDraw] = []
            for j, d in enumerate(draws):
                where = f"{row}.draws[{j}]"
                if not isinstance(d, dict) or not isinstance(d.get("item_id"), str):
                    raise InputError("needs a string item_id", file=str(path), row=where)
                vals = [d.get(k) for k in ("q", "m", "rest")]
                if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in vals):
                    raise InputError(
                        "q, m and rest must be numbers", file=str(path), row=where, field="q"
                    )
                r = d.get("round")
                first, last = (rows[-1].round, rows[-1].round + 1) if rows else (0, 0)
                if type(r) is not int or not first <= r <= last or r >= len(thetas):
                    raise InputError(
                        f"rounds run 0, 1, … in order, one ability each ({len(thetas)})",
                        file=str(path),
                        row=where,
                        field="round",
                    )
                try:
                    q, m, rest = (float(v) for v in vals)  # type: ignore[arg-type]
                    rows.append(LedgerDraw(d["item_id"], Draw(0, q, m, rest), r))
                except ValueError as exc:
                    raise InputError(
                        f"{exc} (q in (0, 1], m in [0, 1], rest ≥ 0)", file=str(path), row=where
                    ) from None
            ids = [r.item_id for r in rows]
            if len(set(ids)) != len(ids):
                raise InputError("an item drawn twice", file=str(path), row=row, field="draws")
            if rows and rows[-1].round != len(thetas) - 1 or (not rows and thetas):
                raise InputError(
                    "an ability for a round without draws", file=str(path), row=row, field="thetas"
                )
            out.tests[(str(model), str(b))] = rows
            out.thetas[(str(model), str(b))] = [float(t) for t in thetas]
        return out


def draw_seed(suite: str, model: str, benchmark: str, drawn: int) -> np.random.Generator:
    """The generator of a test's next round: seeded by the suite version, the model, the
    benchmark and how many items it has drawn, so that a rerun draws the same items."""
    key = content_hash("\x00".join((suite, model, benchmark, str(drawn))).encode(), 16)
    return np.random.default_rng(int(key, 16))
