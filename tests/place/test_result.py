"""The typed placement document: what report.json is written from and read back as — a
round trip keeps every field (optional ones included), and a foreign document is refused
naming the file."""

from __future__ import annotations

import json

import pytest

from primebench_tasks.errors import InputError
from primebench_tasks.place.misfit import PersonFit
from primebench_tasks.place.responses import ResponseCheck
from primebench_tasks.place.result import (
    SCHEMA,
    BenchmarkPlacement,
    CategoryPlacement,
    Estimate,
    ModelPlacement,
    Placement,
    Rank,
    SuitePlacement,
)


def _placement() -> Placement:
    score, full = Estimate(0.5, 0.4, 0.6), Estimate(0.55, 0.45, 0.65)
    rank = Rank(3.0, 2.0, 5.0, 11)
    bench = BenchmarkPlacement(
        "panel",
        100,
        98,
        10,
        score,
        rank,
        full,
        rank,
        "interior",
        False,
        "design",
        PersonFit(-0.3, 0.4, 0.55, 98, 40, 0.01, False, signature="pattern"),
        leaderboard={"source": "lb", "column": "MMMU", "models": 5, "rank": rank.to_json()},
    )
    unplaced = BenchmarkPlacement(
        "panel",
        20,
        1,
        10,
        Estimate(None, None, None),
        Rank(None, None, None, 11),
        Estimate(None, None, None),
        Rank(None, None, None, 11),
        "too_few",
        False,
        "none",
        PersonFit(None, None, None, 1, 40, 0.01, False, why_not="1 answered item"),
        responses=ResponseCheck(
            ("40 % unreadable (fixed limit 5 %)",), False, {"unreadable": 0.4}, {"basis": "fixed"}
        ),
        no_prediction_because="1 of 20 items scored",
    )
    cats = {
        "c": CategoryPlacement(["A"], score, full, rank),
        "d": CategoryPlacement(["B"], score, full, None, no_rank_because="B: too few"),
    }
    suite = SuitePlacement(
        120,
        99,
        score,
        full,
        None,
        ["B: misfit"],
        [],
        no_rank_because="why",
        rank_basis={"benchmarks": ["A"], "imputed_cells": 0},
    )
    model = ModelPlacement(suite, cats, {"A": bench, "B": unplaced}, notes=["adapter in part"])
    return Placement(
        "v1",
        "primebench",
        "greg",
        200,
        0,
        {"A": {"panel": "p", "panel_hash": "h"}},
        {"m": model},
        missing={"m": {"B": {"missing": 19, "of": 20}}},
        conditions={"harness": "x"},
    )


def test_a_placement_round_trips_through_report_json(tmp_path):
    doc = _placement()
    path = doc.write(tmp_path / "report.json")
    back = Placement.read(path)
    assert back == doc
    raw = json.loads(path.read_text())
    assert raw["schema"] == SCHEMA and list(raw) == sorted(raw)  # canonical: sorted keys
    # optional keys are absent where unset, null where the value does not exist
    b = raw["models"]["m"]["benchmarks"]
    assert "no_prediction_because" not in b["A"] and b["B"]["score"]["value"] is None
    assert raw["models"]["m"]["categories"]["c"]["predicted_rank"]["out_of"] == 11
    assert raw["models"]["m"]["suite"]["predicted_rank"] is None
    assert back.models["m"].flagged_benchmarks() == ["B"]


def test_a_foreign_document_is_refused_naming_the_file(tmp_path):
    p = tmp_path / "report.json"
    p.write_text(json.dumps({"schema": "primebench.variants/2"}))
    with pytest.raises(InputError, match="report.json, field 'schema': schema 'primebench.variant"):
        Placement.read(p)
    p.write_text(json.dumps({"schema": SCHEMA, "suite": "v1"}))
    with pytest.raises(
        InputError, match="field 'suite_name': not a placement document: is missing"
    ):
        Placement.read(p)


A = "models.m.benchmarks.A"


@pytest.mark.parametrize(
    "edit,field,message",
    [
        (lambda d: d["models"]["m"]["benchmarks"]["A"].update(responses="flags"),
         f"{A}.responses", "is a string, not an object"),
        (lambda d: d["models"]["m"]["benchmarks"]["A"].update(misfit=[1]),
         f"{A}.misfit", "is a list, not an object"),
        (lambda d: d["models"]["m"]["benchmarks"]["A"]["misfit"].pop("level"),
         f"{A}.misfit.level", "is missing"),
        (lambda d: d["models"]["m"]["benchmarks"]["A"]["misfit"].update(flagged="yes"),
         f"{A}.misfit.flagged", "is a string, not a boolean"),
        (lambda d: d["models"]["m"]["benchmarks"]["A"]["misfit"].update(p_value="0.4"),
         f"{A}.misfit.p_value", "is a string, not a number"),
        (lambda d: d["models"]["m"]["benchmarks"]["B"]["responses"].update(flags="unreadable"),
         "models.m.benchmarks.B.responses.flags", "is a string, not a list"),
        (lambda d: d["models"]["m"]["benchmarks"]["B"]["responses"].update(comparable=0),
         "models.m.benchmarks.B.responses.comparable", "is a number, not a boolean"),
        (lambda d: d["models"]["m"]["suite"].update(answers="MMMU"),
         "models.m.suite.answers", "is a string, not a list"),
        (lambda d: d.update(conditions="vllm"), "conditions", "is a string, not an object"),
        (lambda d: d["models"]["m"]["suite"].update(no_rank_because=3),
         "models.m.suite.no_rank_because", "is a number, not a string"),
        (lambda d: d["models"]["m"].update(benchmark={}), "models.m.benchmark",
         "is not a field of this document"),
        # #79: a score as a text, a score off the scale, a rank as a word or off its range
        (lambda d: d["models"]["m"]["benchmarks"]["A"]["predicted_full"].update(value="0.9"),
         f"{A}.predicted_full.value", "is a string, not a number"),
        (lambda d: d["models"]["m"]["benchmarks"]["A"]["predicted_full"].update(hi=7.0),
         f"{A}.predicted_full", "'hi' is 7.0, not a score in"),
        (lambda d: d["models"]["m"]["categories"]["c"]["predicted_rank"].update(value="first"),
         "models.m.categories.c.predicted_rank.value", "is a string, not a number"),
        (lambda d: d["models"]["m"]["categories"]["c"]["predicted_rank"].update(value=12),
         "models.m.categories.c.predicted_rank", r"rank 'value' is 12, not a rank in \[1, 11\]"),
        (lambda d: d["models"]["m"]["suite"].update(n_items=2.5),
         "models.m.suite.n_items", "is a number, not a whole number"),
    ],
)  # fmt: skip
def test_an_edited_report_of_the_wrong_shape_is_refused_on_read(tmp_path, edit, field, message):
    """On 4d9a95b a ``responses`` string read fine and failed later with an AttributeError; each
    error is one line naming the file, the field's path and what is wrong (#81: one codec)."""
    doc = _placement().to_json()
    edit(doc)
    p = tmp_path / "report.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=f"not a placement document: {message}") as e:
        Placement.read(p)
    assert e.value.file == str(p) and e.value.field == field and "\n" not in str(e.value)


def test_the_answer_checks_are_typed_and_an_older_record_reads():
    """#73: ``misfit`` and ``responses`` are typed inside ``BenchmarkPlacement``; a misfit record
    written before the directed residuals (no ``signature``, ``directed`` or ``why_not``) reads
    with those None, not invented."""
    doc = _placement()
    back = Placement.from_json(json.loads(json.dumps(doc.to_json())))
    a, b = back.models["m"].benchmarks["A"], back.models["m"].benchmarks["B"]
    assert a.misfit == doc.models["m"].benchmarks["A"].misfit and a.responses is None
    assert isinstance(b.responses, ResponseCheck) and not b.comparable and b.flagged
    assert not a.flagged and a.comparable
    old = {"statistic": -2.5, "p_value": 0.004, "worse_than": 0.99, "items": 40}
    old |= {"reference": 60, "level": 0.01, "flagged": True}
    fit = PersonFit.from_json(old)
    assert fit.flagged and fit.signature is None and fit.directed is None and fit.why_not is None
    assert fit.to_json() == {**old, "why_not": None, "signature": None, "directed": None}
    assert "worse than 99 % of them" in (fit.line("MMMU") or "")


def test_a_deeply_nested_report_is_refused_on_read(tmp_path):
    """On 4d9a95b a deeply nested ``conditions`` gave a RecursionError."""
    raw = json.dumps(_placement().to_json())
    p = tmp_path / "report.json"
    p.write_text(raw.replace('"harness": "x"', '"harness": ' + "[" * 3000 + "]" * 3000))
    with pytest.raises(InputError, match="nests deeper than"):
        Placement.read(p)
