"""A model that guesses is flagged and given no standing (battery 7, the newcomer's blocker): on
the first-run suite ``primebench_mathvision`` a stub answering a random letter A–E to every
question was ranked 1 [1, 11] of 17, "comparable", unflagged. Now its answers to open questions
are read as of another type (not comparable), its score is compared with a guesser's on the same
items, and the report presents no rank of it as a standing; a constant "A" likewise. The
reference models' spread is said in the report, not only in a note."""

from __future__ import annotations

import json
import random
from types import SimpleNamespace
from typing import Any

import pytest

import harness_adapters.run.engine as engine_module
from harness_adapters.run.engine import CheckedRun
from primebench_tasks.cli import main
from primebench_tasks.place.result import Placement
from tests.harness.test_engine_protocol import StubEngine


class _Guesser:
    kind = "stub"

    def __init__(self, how: str, seed: int) -> None:
        self.how, self.rng = how, random.Random(seed)

    def generate(self, messages: Any, adapter: Any, max_new_tokens: Any = None, regex: Any = None):
        return [self.rng.choice("ABCDE") if self.how == "random" else "A" for _ in messages]


def _engine(monkeypatch, how: str, seed: int) -> None:
    engine = StubEngine()
    base = engine.check
    engine.check = lambda req: CheckedRun(spec=base(req).spec, start=lambda: _Guesser(how, seed))
    installed = engine_module.installed_engines()
    ep = SimpleNamespace(name="stub", value="tests:StubEngine", load=lambda: engine)
    monkeypatch.setattr(engine_module, "installed_engines", lambda: [*installed, ep])


@pytest.mark.parametrize("how, seed", [("random", 0), ("random", 1), ("constant", 0)])
def test_a_guessing_model_is_flagged_and_has_no_standing(tmp_path, monkeypatch, capsys, how, seed):
    _engine(monkeypatch, how, seed)
    out = tmp_path / "run"
    rc = main(
        ["run", "--engine", "stub", "--model", str(tmp_path / "m"), "--name", "m",
         "--suite", "primebench_mathvision", "--out", str(out), "--n-boot", "50"]
    )  # fmt: skip
    assert rc == 0, capsys.readouterr().err
    placed = Placement.read(out / "report.json")
    b = placed.models["m"].benchmarks["MATH-Vision_MINI"]
    assert b.flagged and not b.comparable
    assert placed.models["m"].suite.not_comparable == ["MATH-Vision_MINI"]
    report = (out / "report.md").read_text()
    assert "- predicted rank on the full suite: **no standing**" in report
    assert "of another type than the question asks" in report
    assert "**few reference models** on MATH-Vision_MINI (16 models, scoring 0.05–0.17)" in report
    if how == "random":
        # the chance check reads the score against a guesser's; whether this draw's score falls
        # inside is chance too, so the report says either verdict with the guesser's figures
        doc = json.loads((out / "report.json").read_text())
        prof = doc["models"]["m"]["benchmarks"]["MATH-Vision_MINI"]["responses"]["profile"]
        assert 0.12 < prof["chance"] < 0.14 and prof["mismatched"] > 0.3
        if b.at_chance:
            assert "(at chance: no standing)" in report
